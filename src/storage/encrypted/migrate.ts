import type { StorageKey } from '../../domain/storage-path.js';
import { HEADER_SIZE, hasMagic, plainSize } from '../../lib/encryption/format.js';
import type { StorageBackend } from '../backend.js';
import { bytesOf } from './open.js';
import { eachFile, replaceIfUnchanged } from './replace-if-unchanged.js';

/** What a migrate pass did. */
export type MigrateCount = { encrypted: number; already: number; changed: number };

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
  count.changed = await eachFile(plain, root, async (key, entry) => {
    if (await isEncrypted(plain, key, entry.size)) {
      count.already++;
      return;
    }
    const opened = await plain.read(key);
    await replaceIfUnchanged(encrypted, plain, key, opened.stream, opened.entry.etag, opened.entry.size);
    count.encrypted++;
    onFile?.(key);
  });
  return count;
}
