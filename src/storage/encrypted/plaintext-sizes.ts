import { HEADER_SIZE, couldBeEncrypted, plainSizeOf } from '../../lib/encryption/format.js';
import type { SizeView } from '../size-view.js';

/**
 * The plaintext size of every file, as the backends report it with
 * --encryption-key-file: an encrypted file (the header's magic) shows its
 * plaintext size, a plain one written before the key its own. A size no
 * encrypted file can have is plain without a read.
 */
export const plaintextSizes: SizeView = {
  headBytes: HEADER_SIZE,
  needsHead: couldBeEncrypted,
  shown: (stored, head) => (head === undefined ? undefined : plainSizeOf(stored, head)) ?? stored,
};
