import qrcode from 'qrcode-generator';
import { useMemo } from 'react';

/** Modules of white border that scanners need around the code. */
const QUIET = 4;

/**
 * A QR code of `text` drawn as one SVG path, computed here in the browser
 * (nothing is sent anywhere). Always dark on white, also in dark mode:
 * phone cameras read that best.
 */
export function QrCode({ text, size = 184, label }: { text: string; size?: number; label: string }) {
  const { d, n } = useMemo(() => {
    // Type 0 = the smallest version that fits; level M survives a smudge or a glare spot.
    const qr = qrcode(0, 'M');
    // The library writes each character's low byte: hand it the UTF-8 bytes, one per character.
    qr.addData(String.fromCharCode(...new TextEncoder().encode(text)), 'Byte');
    qr.make();
    const count = qr.getModuleCount();
    let path = '';
    for (let r = 0; r < count; r++) {
      for (let c = 0; c < count; c++) {
        if (qr.isDark(r, c)) path += `M${c + QUIET} ${r + QUIET}h1v1h-1z`;
      }
    }
    return { d: path, n: count + 2 * QUIET };
  }, [text]);
  return (
    <svg className="qr-code" role="img" aria-label={label} width={size} height={size} viewBox={`0 0 ${n} ${n}`} shapeRendering="crispEdges" data-text={text}>
      <rect width={n} height={n} fill="#fff" />
      <path d={d} fill="#000" />
    </svg>
  );
}
