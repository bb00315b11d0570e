import { keyChild, keyId, type StorageKey } from '../../domain/storage-path.js';
import { HEADER_SIZE, hasMagic, plainSize } from '../../lib/encryption/format.js';
import { isStorageError, type StorageBackend } from '../backend.js';
import { bytesOf } from './open.js';

/** What a migrate pass did. */
export type MigrateCount = { encrypted: number; already: number; changed: number };

/** The file changed while it was being encrypted: left for the next pass (the new bytes are the writer's). */
class ChangedMeanwhile extends Error {}

async function isEncrypted(plain: StorageBackend, key: StorageKey, size: number): Promise<boolean> {
  if (plainSize(size) === undefined) return false;
  return hasMagic(await bytesOf(await plain.read(key, { start: 0, end: HEADER_SIZE - 1 })));
}

/**
 * Encrypts every plain file below `root`: each is read from the storage
 * below (`plain`) and written back through the encryption layer
 * (`encrypted`), replacing it only if it is still the version read (checked
 * with its name held, so a writer's newer bytes are never overwritten). A
 * pass killed at any point leaves every file whole, plain or encrypted; the
 * next pass skips what is done.
 */
export async function migrateTree(plain: StorageBackend, encrypted: StorageBackend, root: StorageKey, onFile?: (key: StorageKey) => void): Promise<MigrateCount> {
  const count: MigrateCount = { encrypted: 0, already: 0, changed: 0 };
  for await (const w of plain.walk(root)) {
    if (!w.entry.isFile) continue;
    const key = w.path.reduce((k, name) => keyChild(k, name), root);
    try {
      if (await isEncrypted(plain, key, w.entry.size)) {
        count.already++;
        continue;
      }
      const opened = await plain.read(key);
      const version = opened.entry.etag;
      const staged = await encrypted.stage(key, opened.stream, { ifExists: 'replace', sizeHint: opened.entry.size });
      try {
        await staged.commit({
          beforeReplace: async () => {
            if ((await plain.stat(key))?.etag !== version) throw new ChangedMeanwhile(keyId(key));
          },
        });
      } catch (e) {
        await staged.discard().catch(() => undefined);
        throw e;
      }
      count.encrypted++;
      onFile?.(key);
    } catch (e) {
      // Deleted, moved or rewritten since the walk saw it: whatever is there now is another pass's.
      if (e instanceof ChangedMeanwhile || isStorageError(e, 'not_found') || isStorageError(e, 'is_a_directory')) count.changed++;
      else throw e;
    }
  }
  return count;
}
