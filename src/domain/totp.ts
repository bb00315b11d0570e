import { createHmac } from 'node:crypto';

/**
 * HOTP (RFC 4226) and TOTP (RFC 6238) with the parameters every authenticator
 * app uses by default: HMAC-SHA-1, 6 digits, 30-second steps from the Unix
 * epoch. Pure functions of the secret and the time: tests pass any time.
 */
export const TOTP_PERIOD_SECONDS = 30;
export const TOTP_DIGITS = 6;
/** Steps either side of now that are accepted (clock drift, a code typed as it rolls over). */
export const TOTP_WINDOW = 1;

/** RFC 4226 §5.3: HMAC-SHA-1 of the 8-byte counter, dynamic truncation, `digits` decimal digits. */
export function hotp(secret: Buffer, counter: number, digits = TOTP_DIGITS): string {
  const msg = Buffer.alloc(8);
  msg.writeBigUInt64BE(BigInt(counter));
  const mac = createHmac('sha1', secret).update(msg).digest();
  const offset = (mac[mac.length - 1] as number) & 0x0f;
  const binary = mac.readUInt32BE(offset) & 0x7fffffff;
  return String(binary % 10 ** digits).padStart(digits, '0');
}

/** The time step of a moment (epoch milliseconds): RFC 6238 §4.2 T = floor((now - T0) / X). */
export const timeStep = (nowMs: number, period = TOTP_PERIOD_SECONDS) => Math.floor(nowMs / 1000 / period);

/** RFC 6238: the code of the step that holds `nowMs`. */
export function totp(secret: Buffer, nowMs: number, digits = TOTP_DIGITS, period = TOTP_PERIOD_SECONDS): string {
  return hotp(secret, timeStep(nowMs, period), digits);
}

/**
 * The step whose code `code` is, within ±window of now, or undefined. The
 * latest matching step wins, so a caller that remembers the last step used
 * refuses every earlier one (a code is never accepted twice).
 */
export function matchTotp(secret: Buffer, code: string, nowMs: number, window = TOTP_WINDOW): number | undefined {
  if (!/^[0-9]{6}$/.test(code)) return undefined;
  const now = timeStep(nowMs);
  for (let step = now + window; step >= now - window; step--) {
    if (step >= 0 && constantTimeEqual(hotp(secret, step), code)) return step;
  }
  return undefined;
}

function constantTimeEqual(a: string, b: string): boolean {
  let diff = a.length ^ b.length;
  for (let i = 0; i < Math.min(a.length, b.length); i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** RFC 4648 base32 without padding (what otpauth:// URLs and authenticator apps use). */
export function base32Encode(bytes: Buffer): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
}

/** Decodes base32 (case-insensitive, spaces and padding ignored); undefined for any other character. */
export function base32Decode(text: string): Buffer | undefined {
  const clean = text.replace(/[\s=]/g, '').toUpperCase();
  const out: number[] = [];
  let bits = 0;
  let value = 0;
  for (const ch of clean) {
    const v = BASE32.indexOf(ch);
    if (v < 0) return undefined;
    value = ((value << 5) | v) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}

/** The Key URI Format authenticator apps scan as a QR code: otpauth://totp/ISSUER:ACCOUNT?secret=…&issuer=…. */
export function otpauthUrl(opts: { issuer: string; account: string; secret: string }): string {
  const label = `${encodeURIComponent(opts.issuer)}:${encodeURIComponent(opts.account)}`;
  const params = new URLSearchParams({ secret: opts.secret, issuer: opts.issuer, algorithm: 'SHA1', digits: String(TOTP_DIGITS), period: String(TOTP_PERIOD_SECONDS) });
  return `otpauth://totp/${label}?${params.toString()}`;
}

/** Recovery codes: 16 base32 characters (80 bits) shown as XXXX-XXXX-XXXX-XXXX. */
export function formatRecoveryCode(bytes: Buffer): string {
  return (base32Encode(bytes).slice(0, 16).match(/.{4}/g) as string[]).join('-');
}

/** A typed recovery code as stored: dashes and spaces dropped, upper case; undefined when it cannot be one. */
export function normalizeRecoveryCode(input: string): string | undefined {
  const clean = input.replace(/[\s-]/g, '').toUpperCase();
  return /^[A-Z2-7]{16}$/.test(clean) ? clean : undefined;
}
