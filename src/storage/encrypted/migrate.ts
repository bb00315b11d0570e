import { Readable } from 'node:stream';
import type { StorageKey } from '../../domain/storage-path.js';
import { HEADER_SIZE, hasMagic, couldBeEncrypted } from '../../lib/encryption/format.js';
import { isStorageError, type StorageBackend } from '../backend.js';
import { peek } from '../body.js';
import { bytesOf } from './open.js';
import { eachFile, replaceIfUnchanged } from './replace-if-unchanged.js';

/** What a migrate pass did. */
export type MigrateCount = { encrypted: number; already: number; changed: number };

async function isEncrypted(plain: StorageBackend, key: StorageKey, size: number): Promise<boolean> {
  if (!couldBeEncrypted(size)) return false;
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

/** A version as the metadata store records it: its owner and id. */
export type VersionRef = { readonly owner: string; readonly id: string };

/**
 * Visits each version's stored bytes (through `stored`, below any layer):
 * `visit` gets its first HEADER_SIZE bytes and a stream of all of them, and
 * rewrites it or returns false to leave it. A version gone meanwhile
 * (thinned, purged) is counted as changed. Each rewrite is atomic
 * (VersionArea.rewrite), so a pass killed at any point leaves every
 * version whole, and the next pass skips what is done.
 */
export async function eachVersion(stored: StorageBackend, versions: readonly VersionRef[], visit: (v: VersionRef, head: Buffer, all: AsyncGenerator<Buffer>) => Promise<boolean>): Promise<{ rewritten: number; left: number; changed: number }> {
  const count = { rewritten: 0, left: 0, changed: 0 };
  for (const v of versions) {
    try {
      const opened = await stored.versions.read(v.owner, v.id, v.id);
      const { head, all } = await peek(opened.stream, HEADER_SIZE);
      if (await visit(v, head, all)) count.rewritten++;
      else {
        await all.return(undefined);
        count.left++;
      }
    } catch (e) {
      if (!isStorageError(e, 'not_found')) throw e;
      count.changed++;
    }
  }
  return count;
}

/** Encrypts every version kept before the key: read as stored, written back through the encryption layer (`encrypted`). */
export async function migrateVersions(stored: StorageBackend, encrypted: StorageBackend, versions: readonly VersionRef[], onVersion?: (v: VersionRef) => void): Promise<MigrateCount> {
  const c = await eachVersion(stored, versions, async (v, head, all) => {
    if (hasMagic(head)) return false;
    await encrypted.versions.rewrite(v.owner, v.id, Readable.from(all, { objectMode: false }));
    onVersion?.(v);
    return true;
  });
  return { encrypted: c.rewritten, already: c.left, changed: c.changed };
}
