import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A random opaque token: `prefix` + base64url of `bytes` random bytes. */
export function randomToken(prefix: string, bytes: number): string {
  return prefix + randomBytes(bytes).toString('base64url');
}

/** SHA-256 of the UTF-8 string, hex; the one-shot `hash` is a third of createHash's cost (it runs on every token check). */
export function sha256Hex(s: string): string {
  return hash('sha256', s, 'hex');
}

/** Constant-time equality of two strings (false for different lengths without early exit on content). */
export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a, 'utf8');
  const bb = Buffer.from(b, 'utf8');
  if (ab.length !== bb.length) {
    timingSafeEqual(ab, ab);
    return false;
  }
  return timingSafeEqual(ab, bb);
}
