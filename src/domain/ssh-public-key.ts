import { createHash } from 'node:crypto';
import { sentence } from '../lib/i18n/sentences.js';

/** A public key as `ssh-keygen` and `authorized_keys` write it, checked. */
export type SshPublicKey = {
  readonly algorithm: string;
  /** The wire blob, base64 (as in the line). */
  readonly blob: string;
  /** `SHA256:…`, as `ssh-keygen -l` prints it. */
  readonly fingerprint: string;
  /** The line's comment, if any (`user@host`). */
  readonly comment: string | undefined;
};

/** The key types sign-in accepts: the modern ones, and RSA of at least 2048 bits (DSA and short RSA are refused). */
export const SSH_KEY_TYPES = ['ssh-ed25519', 'ecdsa-sha2-nistp256', 'ecdsa-sha2-nistp384', 'ecdsa-sha2-nistp521', 'ssh-rsa'] as const;
const MIN_RSA_BITS = 2048;
/** Longer than any key of the types above (RSA 16384 is about 2.8 KB of base64). */
export const MAX_SSH_KEY_LINE = 8192;

const CURVE_POINT: Record<string, number> = { nistp256: 65, nistp384: 97, nistp521: 133 };

/** The SSH wire format's length-prefixed fields (RFC 4251 §5), or undefined when the blob is not made of them exactly. */
function fields(blob: Buffer): Buffer[] | undefined {
  const out: Buffer[] = [];
  let at = 0;
  while (at < blob.length) {
    if (at + 4 > blob.length) return undefined;
    const len = blob.readUInt32BE(at);
    at += 4;
    if (at + len > blob.length) return undefined;
    out.push(blob.subarray(at, at + len));
    at += len;
  }
  return out;
}

/** Bits of an mpint (RFC 4251 §5): its length less a leading zero byte and the top byte's unused bits. */
function mpintBits(m: Buffer): number {
  let i = 0;
  while (i < m.length && m[i] === 0) i++;
  if (i === m.length) return 0;
  return (m.length - i) * 8 - (Math.clz32(m[i] as number) - 24);
}

/** Why the blob is not a usable key of `type`, or undefined when it is. */
function blobProblem(type: string, f: Buffer[]): string | undefined {
  if (f[0]?.toString('latin1') !== type) return 'its type does not match the key data';
  if (type === 'ssh-ed25519') return f.length === 2 && f[1]?.length === 32 ? undefined : 'the Ed25519 key data is malformed';
  if (type === 'ssh-rsa') {
    if (f.length !== 3) return 'the RSA key data is malformed';
    const bits = mpintBits(f[2] as Buffer);
    return bits < MIN_RSA_BITS ? `RSA keys need at least ${MIN_RSA_BITS} bits (this one has ${bits}); an Ed25519 key is better` : undefined;
  }
  const curve = type.slice('ecdsa-sha2-'.length);
  if (f.length !== 3 || f[1]?.toString('latin1') !== curve || f[2]?.length !== CURVE_POINT[curve] || f[2]?.[0] !== 4) return 'the ECDSA key data is malformed';
  return undefined;
}

/**
 * Parses one public key line (`ssh-ed25519 AAAA… comment`, as in `~/.ssh/id_ed25519.pub`): the
 * key's type, its wire blob checked field by field, and its fingerprint. Throws an Error whose
 * message says what is wrong, for the caller to answer as a bad request.
 */
export function parseSshPublicKey(line: string): SshPublicKey {
  const text = line.trim();
  if (text === '') throw new Error(sentence('apiDetail.sshKeyEmpty'));
  if (text.length > MAX_SSH_KEY_LINE) throw new Error(sentence('apiDetail.sshKeyTooLong', { max: MAX_SSH_KEY_LINE }));
  if (/[\r\n]/.test(text)) throw new Error(sentence('apiDetail.sshKeyOneLine'));
  if (text.startsWith('-----')) throw new Error(sentence('apiDetail.sshKeyPem'));
  const [type, data, ...rest] = text.split(/[ \t]+/);
  if (!type || !data) throw new Error(sentence('apiDetail.sshKeyShape', { shape: '<type> <base64 key> [comment]' }));
  if (!(SSH_KEY_TYPES as readonly string[]).includes(type)) throw new Error(sentence('apiDetail.sshKeyType', { type: type.slice(0, 40), types: SSH_KEY_TYPES.join(', ') }));
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(data) || data.length % 4 !== 0) throw new Error(sentence('apiDetail.sshKeyBase64'));
  const blob = Buffer.from(data, 'base64');
  const f = fields(blob);
  const problem = f ? blobProblem(type, f) : 'the key data is malformed';
  if (problem) throw new Error(sentence('apiDetail.sshKeyInvalid', { problem }));
  return { algorithm: type, blob: blob.toString('base64'), fingerprint: sshFingerprint(blob), comment: rest.length > 0 ? rest.join(' ') : undefined };
}

/** `SHA256:` and the unpadded base64 of the blob's SHA-256 (OpenSSH's default fingerprint). */
export const sshFingerprint = (blob: Buffer): string => `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;
