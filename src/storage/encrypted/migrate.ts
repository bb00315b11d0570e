import { Readable } from 'node:stream';
import type { StorageKey } from '../../domain/storage-path.js';
import { HEADER_SIZE, hasMagic, couldBeEncrypted } from '../../lib/encryption/format.js';
import { isStorageError, type Opened, type StorageBackend } from '../backend.js';
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

/** A file of a trash item: the item's owner and id, and the file's path in it (TrashArea.files). */
export type TrashFileRef = { readonly owner: string; readonly id: string; readonly path: string };

/** What eachStored did: rewritten, left as they were, gone meanwhile. */
export type StoredCount = { rewritten: number; left: number; changed: number };

/**
 * Visits stored files outside the tree (versions, trash items' files), each
 * opened by `open` below any layer: `visit` gets its first HEADER_SIZE bytes
 * and a stream of all of them, and rewrites it or returns false to leave
 * it. One gone meanwhile (thinned, purged, restored) is counted as changed.
 * Each rewrite is atomic (VersionArea.rewrite, TrashArea.rewriteFile), so a
 * pass killed at any point leaves every file whole, and the next pass skips
 * what is done.
 */
export async function eachStored<R>(refs: AsyncIterable<R> | Iterable<R>, open: (ref: R) => Promise<Opened>, visit: (ref: R, head: Buffer, all: AsyncGenerator<Buffer>) => Promise<boolean>): Promise<StoredCount> {
  const count = { rewritten: 0, left: 0, changed: 0 };
  for await (const ref of refs) {
    try {
      const opened = await open(ref);
      const { head, all } = await peek(opened.stream, HEADER_SIZE);
      if (await visit(ref, head, all)) count.rewritten++;
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

export const openVersion = (stored: StorageBackend) => (v: VersionRef) => stored.versions.read(v.owner, v.id, v.id);
export const openTrashFile = (stored: StorageBackend) => (t: TrashFileRef) => stored.trash.readFile(t.owner, t.id, t.path);

/** Holds a trash item against a restore or purge while its files are rewritten (the trash service's lease). */
export type HoldItem = (id: string) => Promise<{ release(): Promise<void> }>;

/**
 * Runs `pass` over the files of each trash item `items` (one owner's, as the
 * metadata store lists them) with the item held, and adds up the counts.
 */
export async function eachTrashItem<C extends Record<string, number>>(stored: StorageBackend, items: readonly VersionRef[], holdItem: HoldItem, pass: (files: AsyncIterable<TrashFileRef>) => Promise<C>): Promise<C | undefined> {
  let sum: C | undefined;
  for (const { owner, id } of items) {
    const held = await holdItem(id);
    try {
      const c = await pass((async function* () {
        for await (const path of stored.trash.files(owner, id)) yield { owner, id, path };
      })());
      sum = sum ? (Object.fromEntries(Object.entries(sum).map(([k, v]) => [k, v + c[k]!])) as C) : c;
    } finally {
      await held.release();
    }
  }
  return sum;
}

/** Encrypts what was kept before the key: read as stored, written back through the encryption layer by `rewrite`. */
async function migrateStored<R>(refs: AsyncIterable<R> | Iterable<R>, open: (ref: R) => Promise<Opened>, rewrite: (ref: R, body: Readable) => Promise<void>, onDone?: (ref: R) => void): Promise<MigrateCount> {
  const c = await eachStored(refs, open, async (ref, head, all) => {
    if (hasMagic(head)) return false;
    await rewrite(ref, Readable.from(all, { objectMode: false }));
    onDone?.(ref);
    return true;
  });
  return { encrypted: c.rewritten, already: c.left, changed: c.changed };
}

/** Encrypts every version kept before the key. */
export const migrateVersions = (stored: StorageBackend, encrypted: StorageBackend, versions: readonly VersionRef[], onVersion?: (v: VersionRef) => void): Promise<MigrateCount> =>
  migrateStored(versions, openVersion(stored), (v, body) => encrypted.versions.rewrite(v.owner, v.id, body), onVersion);

/** Encrypts every file of the trash items kept before the key, each item held while its files are. */
export const migrateTrash = async (stored: StorageBackend, encrypted: StorageBackend, items: readonly VersionRef[], holdItem: HoldItem, onFile?: (t: TrashFileRef) => void): Promise<MigrateCount> =>
  (await eachTrashItem(stored, items, holdItem, (files) => migrateStored(files, openTrashFile(stored), (t, body) => encrypted.trash.rewriteFile(t.owner, t.id, t.path, body), onFile))) ?? { encrypted: 0, already: 0, changed: 0 };
