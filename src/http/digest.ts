/**
 * Digest fields (RFC 9530) for SHA-256: `Repr-Digest: sha-256=:<base64>:`
 * on file answers, and the one a PUT may send to have its bytes checked.
 */

/** The Repr-Digest value of a SHA-256 given in hex. */
export function reprDigest(sha256Hex: string): string {
  return `sha-256=:${Buffer.from(sha256Hex, 'hex').toString('base64')}:`;
}

/**
 * The SHA-256 (hex) a digest field names: undefined when the field is
 * absent or names only other algorithms (RFC 9530 §5: a recipient ignores
 * what it does not support); 'malformed' when its sha-256 member is not a
 * byte sequence of 32 bytes or the field is not a dictionary of such
 * members. Members are `key=:base64:` separated by commas (RFC 8941 §3.2);
 * parameters after a member (`;…`) are allowed and ignored.
 */
export function parseSha256Digest(field: string | undefined): string | undefined | 'malformed' {
  if (field === undefined) return undefined;
  let found: string | undefined;
  for (const raw of field.split(',')) {
    const member = raw.trim();
    if (member === '') return 'malformed';
    const m = /^([a-z*][a-z0-9_.*-]*)=:([A-Za-z0-9+/]*={0,2}):(;.*)?$/.exec(member);
    if (!m) return 'malformed';
    if (m[1] !== 'sha-256') continue;
    const bytes = Buffer.from(m[2] as string, 'base64');
    if (bytes.length !== 32 || bytes.toString('base64') !== m[2]) return 'malformed';
    if (found !== undefined && found !== bytes.toString('hex')) return 'malformed';
    found = bytes.toString('hex');
  }
  return found;
}
