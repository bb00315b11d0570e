import { randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { Semaphore } from '../lib/semaphore.js';

/**
 * Password hashing with scrypt (node:crypto). Stored as a self-describing
 * string `scrypt$N=<n>,r=<r>,p=<p>$<salt b64>$<hash b64>`, so the cost can
 * rise later: old hashes keep verifying with their own parameters.
 *
 * Parameters: OWASP's scrypt row N=2^15, r=8, p=3 — the same work as
 * N=2^17, p=1 but 32 MiB of memory per hash instead of 128 MiB, so the
 * bounded concurrency below keeps a login flood well under 100 MiB.
 */
export type ScryptParams = { readonly N: number; readonly r: number; readonly p: number };
export const DEFAULT_PARAMS: ScryptParams = { N: 2 ** 15, r: 8, p: 3 };
const KEY_LEN = 32;
const SALT_LEN = 16;

function scrypt(password: string, salt: Buffer, params: ScryptParams): Promise<Buffer> {
  const opts: ScryptOptions = { N: params.N, r: params.r, p: params.p, maxmem: 128 * params.N * params.r * 2 };
  return new Promise((resolve, reject) => scryptCb(password.normalize('NFC'), salt, KEY_LEN, opts, (err, key) => (err ? reject(err) : resolve(key))));
}

export type PasswordHasher = {
  hash(password: string): Promise<string>;
  /** Runs the full hash even for a malformed stored string, so timing does not tell them apart. */
  verify(password: string, stored: string): Promise<boolean>;
  /** A hash of a random password, for comparing against when the user does not exist. */
  readonly dummyHash: Promise<string>;
};

/** At most `concurrency` hashes run at once and `maxQueue` wait; more → QueueFullError. */
export function createPasswordHasher(opts: { params?: ScryptParams; concurrency?: number; maxQueue?: number } = {}): PasswordHasher {
  const params = opts.params ?? DEFAULT_PARAMS;
  const gate = new Semaphore(opts.concurrency ?? 2, opts.maxQueue ?? 64);

  const hash = (password: string) =>
    gate.run(async () => {
      const salt = randomBytes(SALT_LEN);
      const key = await scrypt(password, salt, params);
      return `scrypt$N=${params.N},r=${params.r},p=${params.p}$${salt.toString('base64')}$${key.toString('base64')}`;
    });

  const verify = (password: string, stored: string) =>
    gate.run(async () => {
      const parsed = parseHash(stored);
      const key = await scrypt(password, parsed?.salt ?? Buffer.alloc(SALT_LEN), parsed?.params ?? params);
      if (!parsed || parsed.key.length !== key.length) return false;
      return timingSafeEqual(parsed.key, key);
    });

  let dummy: Promise<string> | undefined;
  return {
    hash,
    verify,
    get dummyHash() {
      dummy ??= hash(randomBytes(16).toString('hex'));
      return dummy;
    },
  };
}

function parseHash(stored: string): { params: ScryptParams; salt: Buffer; key: Buffer } | undefined {
  const m = /^scrypt\$N=(\d+),r=(\d+),p=(\d+)\$([A-Za-z0-9+/=]+)\$([A-Za-z0-9+/=]+)$/.exec(stored);
  if (!m) return undefined;
  const [N, r, p] = [Number(m[1]), Number(m[2]), Number(m[3])];
  // Refuse absurd costs from a tampered database rather than hang or exhaust memory.
  if (N < 2 || N > 2 ** 20 || (N & (N - 1)) !== 0 || r < 1 || r > 32 || p < 1 || p > 16) return undefined;
  return { params: { N, r, p }, salt: Buffer.from(m[4] as string, 'base64'), key: Buffer.from(m[5] as string, 'base64') };
}
