/**
 * Pure parsers for the tus 1.0 request headers (https://tus.io/protocols/resumable-upload).
 * Each returns the parsed value or a reason string, so the route turns a
 * reason into the contract's 400 without any header logic of its own.
 */

export type Parsed<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly reason: string };

const ok = <T>(value: T): Parsed<T> => ({ ok: true, value });
const fail = <T>(reason: string): Parsed<T> => ({ ok: false, reason });

/** Upload-Length and Upload-Offset: a non-negative decimal integer, nothing else (no sign, no spaces inside, no exponent). */
export function parseByteCount(raw: string | undefined, name: string): Parsed<number> {
  if (raw === undefined) return fail(`${name} is required`);
  const v = raw.trim();
  if (!/^\d{1,16}$/.test(v)) return fail(`${name} must be a non-negative whole number of bytes`);
  const n = Number(v);
  if (!Number.isSafeInteger(n)) return fail(`${name} is too large`);
  return ok(n);
}

/** Base64 as tus sends it (RFC 4648 with padding); Buffer.from would silently skip bad characters, so check first. */
function decodeBase64(v: string): Buffer | undefined {
  if (v.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(v)) return undefined;
  return Buffer.from(v, 'base64');
}

/**
 * Upload-Metadata: comma-separated `key base64value` pairs; a key may come
 * without a value. Keys are unique ASCII without spaces or commas. Values
 * are decoded as UTF-8 and must be well formed (file names are Unicode).
 */
export function parseUploadMetadata(raw: string | undefined): Parsed<ReadonlyMap<string, string>> {
  const out = new Map<string, string>();
  if (raw === undefined || raw.trim() === '') return ok(out);
  for (const pair of raw.split(',')) {
    const parts = pair.trim().split(/ +/);
    if (parts.length > 2 || parts[0] === '') return fail('Upload-Metadata must be comma-separated "key base64value" pairs');
    const [key, encoded] = parts as [string, string | undefined];
    if (!/^[\x21-\x7e]+$/.test(key)) return fail(`Upload-Metadata key "${key.slice(0, 40)}" must be printable ASCII`);
    if (out.has(key)) return fail(`Upload-Metadata key "${key}" appears twice`);
    if (encoded === undefined) {
      out.set(key, '');
      continue;
    }
    const bytes = decodeBase64(encoded);
    if (!bytes) return fail(`Upload-Metadata value of "${key}" is not valid base64`);
    const text = bytes.toString('utf8');
    // A replacement character that was not in the bytes means they were not UTF-8.
    if (!Buffer.from(text, 'utf8').equals(bytes)) return fail(`Upload-Metadata value of "${key}" is not valid UTF-8`);
    out.set(key, text);
  }
  return ok(out);
}

/** The checksum algorithms this server verifies (Tus-Checksum-Algorithm). */
export const CHECKSUM_ALGORITHMS = ['sha1'] as const;
export type ChecksumAlgorithm = (typeof CHECKSUM_ALGORITHMS)[number];

const DIGEST_BYTES: Record<ChecksumAlgorithm, number> = { sha1: 20 };

/**
 * Upload-Checksum: `<algorithm> <base64 digest>`. An algorithm we do not
 * support is its own outcome: tus answers it with 400, unlike a mismatch (460).
 */
export function parseUploadChecksum(raw: string | undefined): Parsed<{ algorithm: ChecksumAlgorithm; digest: Buffer } | undefined> {
  if (raw === undefined) return ok(undefined);
  const m = /^\s*(\S+) +(\S+)\s*$/.exec(raw);
  if (!m) return fail('Upload-Checksum must be "<algorithm> <base64 digest>"');
  const algorithm = (m[1] as string).toLowerCase();
  if (!(CHECKSUM_ALGORITHMS as readonly string[]).includes(algorithm)) return fail(`Upload-Checksum algorithm "${(m[1] as string).slice(0, 20)}" is not supported (supported: ${CHECKSUM_ALGORITHMS.join(', ')})`);
  const digest = decodeBase64(m[2] as string);
  const alg = algorithm as ChecksumAlgorithm;
  if (!digest || digest.length !== DIGEST_BYTES[alg]) return fail(`Upload-Checksum digest is not a base64 ${alg} digest`);
  return ok({ algorithm: alg, digest });
}

/** Upload-Defer-Length: only the value 1 is defined. */
export function parseDeferLength(raw: string | undefined): Parsed<boolean> {
  if (raw === undefined) return ok(false);
  if (raw.trim() === '1') return ok(true);
  return fail('Upload-Defer-Length must be 1');
}

/** Upload-Metadata `overwrite`: "true" replaces; absent or "false" keeps both (collision name). */
export function parseOverwrite(raw: string | undefined): Parsed<boolean> {
  if (raw === undefined || raw === 'false' || raw === '') return ok(false);
  if (raw === 'true') return ok(true);
  return fail('Upload-Metadata "overwrite" must be true or false');
}
