import { HEADER_SIZE, hasMagic, plainSize } from '../../lib/encryption/format.js';
import type { SizeView } from '../size-view.js';

/**
 * The plaintext size of every file, as the backends report it with
 * --encryption-key-file: an encrypted file (the header's magic) shows its
 * plaintext size, a plain one written before the key its own. A size no
 * encrypted file can have is plain without a read.
 */
export const plaintextSizes: SizeView = {
  headBytes: HEADER_SIZE,
  needsHead: (stored) => plainSize(stored) !== undefined,
  shown(stored, head) {
    const plain = plainSize(stored);
    return plain !== undefined && head !== undefined && hasMagic(head) ? plain : stored;
  },
};
