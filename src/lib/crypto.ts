import { createHash, hash, randomBytes, randomFillSync, timingSafeEqual } from 'node:crypto';

/** A random opaque token: `prefix` + base64url of `bytes` random bytes. */
export function randomToken(prefix: string, bytes: number): string {
  return prefix + randomBytes(bytes).toString('base64url');
}

/**
 * Random bytes, in hex, for ids made on a hot path (an upload's new entry id), taken from a pool that one
 * `randomFillSync` refills: each `randomBytes` call goes to OpenSSL on its own, and that call
 * cost more than the SQL statement that stores the id (docs/performance.md, "Sixteenth change").
 * The same CSPRNG as `randomBytes`; every byte is handed out once. Not for keys or secrets, which
 * should not sit in a pool in memory before use.
 */
export function pooledRandomHex(poolBytes = 4096): (bytes: number) => string {
  const pool = Buffer.allocUnsafeSlow(poolBytes);
  let at = poolBytes;
  return (bytes) => {
    if (bytes > poolBytes) return randomBytes(bytes).toString('hex');
    if (at + bytes > poolBytes) {
      randomFillSync(pool);
      at = 0;
    }
    at += bytes;
    return pool.toString('hex', at - bytes, at);
  };
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

/** SHA-256's block size: HMAC pads its key to it (RFC 2104). */
const SHA256_BLOCK = 64;

/**
 * HMAC-SHA256 under one key, for a hot path: RFC 2104's construction over two
 * plain SHA-256 hashes with the key's inner and outer pads computed once.
 * The same bytes as `createHmac('sha256', key)`, at a fraction of its cost per
 * call: createHmac sets the key up in OpenSSL on every call
 * (docs/performance.md, "Figures behind the code").
 */
export function hmacSha256(key: Buffer): (...parts: string[]) => Buffer {
  const k = Buffer.alloc(SHA256_BLOCK);
  (key.length > SHA256_BLOCK ? createHash('sha256').update(key).digest() : key).copy(k);
  const inner = Buffer.from(k.map((b) => b ^ 0x36));
  const outer = Buffer.from(k.map((b) => b ^ 0x5c));
  return (...parts) => {
    const h = createHash('sha256').update(inner);
    for (const part of parts) h.update(part, 'utf8');
    return createHash('sha256').update(outer).update(h.digest()).digest();
  };
}
