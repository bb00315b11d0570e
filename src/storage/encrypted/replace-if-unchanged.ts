import type { Readable } from 'node:stream';
import { keyChild, keyId, type StorageKey } from '../../domain/storage-path.js';
import type { Entry } from '../entry.js';
import { isStorageError, type StorageBackend } from '../backend.js';

/** The file changed while a pass rewrote it: the writer's newer bytes stand, the next pass looks again. */
class ChangedMeanwhile extends Error {}

/**
 * Writes body over the file at key through `writer`, only if the file (as
 * `stored`, the storage below any layer, sees it) is still the version
 * `etag`: checked with the name held, so a writer's newer bytes are never
 * overwritten by a pass that read the old ones.
 */
export async function replaceIfUnchanged(writer: StorageBackend, stored: StorageBackend, key: StorageKey, body: Readable, etag: string, sizeHint: number): Promise<void> {
  const staged = await writer.stage(key, body, { ifExists: 'replace', sizeHint });
  try {
    await staged.commit({
      beforeReplace: async () => {
        if ((await stored.stat(key))?.etag !== etag) throw new ChangedMeanwhile(keyId(key));
      },
    });
  } catch (e) {
    await staged.discard().catch(() => undefined);
    throw e;
  }
}

/** A pass's failure on one file that means only "it is no longer the file read": deleted, moved or rewritten. */
export const changedMeanwhile = (e: unknown): boolean => e instanceof ChangedMeanwhile || isStorageError(e, 'not_found') || isStorageError(e, 'is_a_directory');

/**
 * Visits every file below root as `stored` walks it; a visit that fails
 * because the file is no longer the one walked (changedMeanwhile) is
 * counted and the pass goes on. Returns that count.
 */
export async function eachFile(stored: StorageBackend, root: StorageKey, visit: (key: StorageKey, entry: Entry) => Promise<void>): Promise<number> {
  let changed = 0;
  for await (const w of stored.walk(root)) {
    if (!w.entry.isFile) continue;
    try {
      await visit(
        w.path.reduce((k, name) => keyChild(k, name), root),
        w.entry,
      );
    } catch (e) {
      if (!changedMeanwhile(e)) throw e;
      changed++;
    }
  }
  return changed;
}
