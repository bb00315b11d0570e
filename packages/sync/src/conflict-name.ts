import { parentOf } from './tree.js';

const pad = (n: number): string => String(n).padStart(2, '0');

/** `YYYY-MM-DD HHMMSS` in UTC: the same instant reads the same on every device. */
export function conflictStamp(at: Date): string {
  return `${at.getUTCFullYear()}-${pad(at.getUTCMonth() + 1)}-${pad(at.getUTCDate())} ${pad(at.getUTCHours())}${pad(at.getUTCMinutes())}${pad(at.getUTCSeconds())}`;
}

/**
 * `<name> (conflict <device> <YYYY-MM-DD HHMMSS>)<.ext>`, in the same folder. The extension is the
 * part after the last dot, so the copy still opens with the same program; a leading dot (a
 * dot-file) is part of the name, not an extension. `taken` says whether a name is in use, and a
 * counter keeps a second conflict in the same second from reusing a name.
 */
export function conflictName(path: string, device: string, at: Date, taken: (p: string) => boolean = () => false): string {
  const folder = parentOf(path);
  const file = folder === '' ? path : path.slice(folder.length + 1);
  const dot = file.lastIndexOf('.');
  const [stem, ext] = dot > 0 ? [file.slice(0, dot), file.slice(dot)] : [file, ''];
  const safeDevice = device.replace(/[/\\\0]/g, '_');
  for (let n = 1; ; n++) {
    const tag = n === 1 ? '' : ` ${n}`;
    const name = `${stem} (conflict ${safeDevice} ${conflictStamp(at)}${tag})${ext}`;
    const candidate = folder === '' ? name : `${folder}/${name}`;
    if (!taken(candidate)) return candidate;
  }
}
