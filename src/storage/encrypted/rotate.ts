import { Readable } from 'node:stream';
import type { StorageKey } from '../../domain/storage-path.js';
import { HEADER_SIZE, hasMagic, headerFor, headerKeyId, openHeader, plainSize, type MasterKey } from '../../lib/encryption/format.js';
import type { StorageBackend } from '../backend.js';
import { skipBytes } from './open.js';
import { peek } from '../body.js';
import { eachFile, replaceIfUnchanged } from './replace-if-unchanged.js';

export type RotateCount = { rewrapped: number; already: number; plain: number; changed: number };

/**
 * Re-wraps the data key of every encrypted file below `root` under `to`:
 * each file is written again with a new header and the same chunks, byte
 * for byte (the contents' ciphertext never changes), replacing it only if it
 * is still the version read. Files already under `to` are skipped, so a run
 * killed midway is finished by running it again.
 */
export async function rewrapTree(stored: StorageBackend, root: StorageKey, from: readonly MasterKey[], to: MasterKey, onFile?: (key: StorageKey) => void): Promise<RotateCount> {
  const count: RotateCount = { rewrapped: 0, already: 0, plain: 0, changed: 0 };
  count.changed = await eachFile(stored, root, async (key, entry) => {
    if (plainSize(entry.size) === undefined) {
      count.plain++;
      return;
    }
    const opened = await stored.read(key);
    const { head, all } = await peek(opened.stream, HEADER_SIZE);
    const header = head.subarray(0, HEADER_SIZE);
    if (!hasMagic(header) || headerKeyId(header)?.equals(to.id)) {
      opened.stream.destroy();
      if (hasMagic(header)) count.already++;
      else count.plain++;
      return;
    }
    const body = Readable.from(
      (async function* () {
        yield headerFor(to, openHeader(header, from));
        yield* skipBytes(all, HEADER_SIZE);
      })(),
      { objectMode: false },
    );
    await replaceIfUnchanged(stored, stored, key, body, opened.entry.etag, opened.entry.size);
    count.rewrapped++;
    onFile?.(key);
  });
  return count;
}
