import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomFillSync, type Cipheriv } from 'node:crypto';

/**
 * Cursors as clients see them (docs/api.md "Changes"): a journal position
 * sealed to one account. The journal's positions count every write of every
 * user, so a plain number would let a caller count other users' writes
 * between two of their reads; sealed, a cursor tells its holder nothing but
 * where to resume.
 *
 * One AES-256 block (encode-then-encipher): 6 bytes of position, 4 random
 * bytes, so the same place sealed twice reads differently, and 6 bytes that
 * depend on the account, so that a changed, made-up or another account's
 * cursor fails to open (a chance of 2^-48 per guess). The block is
 * base64url, 22 characters.
 */
export type CursorCodec = {
  /** Seals each position for `userId`, in one pass over the batch (a page seals every entry's). */
  seal(userId: string, positions: readonly number[]): string[];
  /**
   * The position inside a sealed cursor; `foreign` when it has the shape but does not open for
   * `userId` (another server's or account's, or changed), `malformed` when it is not of that shape.
   */
  open(userId: string, cursor: string): number | 'foreign' | 'malformed';
};

const BLOCK = 16;
const POSITION = 6;
const SALT = 4;
const SHAPE = /^[A-Za-z0-9_-]{22}$/;

/** A key of its own for each use of the server key. */
const derive = (secret: Buffer, info: string) => Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), `file-cloud change cursor: ${info}`, 32));

// ECB over whole blocks keeps no state between calls: one cipher object serves every block.
const blockCipher = (key: Buffer) => createCipheriv('aes-256-ecb', key, null).setAutoPadding(false);

/**
 * One block per position, the position in its first bytes, the others random or zero and then
 * passed to `rest`, enciphered in one call; each block as base64url.
 */
function encipher(cipher: Cipheriv, positions: readonly number[], fill: 'random' | 'zero', rest: (block: Buffer) => void = () => undefined): string[] {
  const plain = Buffer.alloc(positions.length * BLOCK);
  if (fill === 'random') randomFillSync(plain);
  positions.forEach((p, i) => {
    if (!Number.isSafeInteger(p) || p < 0 || p >= 2 ** (8 * POSITION)) throw new Error(`journal position ${p} does not fit a cursor`);
    const block = plain.subarray(i * BLOCK, (i + 1) * BLOCK);
    block.writeUIntBE(p, 0, POSITION);
    rest(block);
  });
  const sealed = cipher.update(plain);
  return positions.map((_, i) => sealed.toString('base64url', i * BLOCK, (i + 1) * BLOCK));
}

export function createCursorCodec(secret: Buffer): CursorCodec {
  const key = derive(secret, 'cipher');
  const accountKey = derive(secret, 'account');
  const cipher = blockCipher(key);
  const decipher = createDecipheriv('aes-256-ecb', key, null).setAutoPadding(false);
  const tagOf = (userId: string) => createHmac('sha256', accountKey).update(userId).digest().subarray(0, BLOCK - POSITION - SALT);
  return {
    seal(userId, positions) {
      const tag = tagOf(userId);
      return encipher(cipher, positions, 'random', (block) => tag.copy(block, POSITION + SALT));
    },
    open(userId, cursor) {
      if (!SHAPE.test(cursor)) return 'malformed';
      const plain = decipher.update(Buffer.from(cursor, 'base64url'));
      if (!plain.subarray(POSITION + SALT).equals(tagOf(userId))) return 'foreign';
      return plain.readUIntBE(0, POSITION);
    },
  };
}

/**
 * Journal positions as they show in folder ETags (folder-etags.ts): the same position always gives
 * the same tag, so a tag changes exactly when the folder's position does, and says nothing else
 * (one AES-256 block of the position under a key of its own: equal or not, no order, no distance).
 */
export function createTreeTags(secret: Buffer): (positions: readonly number[]) => string[] {
  const cipher = blockCipher(derive(secret, 'tree tag'));
  return (positions) => encipher(cipher, positions, 'zero');
}
