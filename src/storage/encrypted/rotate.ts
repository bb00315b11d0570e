import { Readable } from 'node:stream';
import type { StorageKey } from '../../domain/storage-path.js';
import { HEADER_SIZE, hasMagic, headerFor, headerKeyId, openHeader, couldBeEncrypted, type MasterKey } from '../../lib/encryption/format.js';
import type { Opened, StorageBackend } from '../backend.js';
import { skipBytes } from './open.js';
import { peek } from '../body.js';
import { eachFile, replaceIfUnchanged } from './replace-if-unchanged.js';
import { eachStored, eachTrashItem, openTrashFile, openVersion, type HoldItem, type TrashFileRef, type VersionRef } from './migrate.js';

/** The stored bytes `all` (header first) with the header's data key wrapped under `to` instead. */
function rewrapped(header: Buffer, all: AsyncIterable<Buffer>, from: readonly MasterKey[], to: MasterKey): Readable {
  return Readable.from(
    (async function* () {
      yield headerFor(to, openHeader(header, from));
      yield* skipBytes(all, HEADER_SIZE);
    })(),
    { objectMode: false },
  );
}

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
    if (!couldBeEncrypted(entry.size)) {
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
    await replaceIfUnchanged(stored, stored, key, rewrapped(header, all, from, to), opened.entry.etag, opened.entry.size);
    count.rewrapped++;
    onFile?.(key);
  });
  return count;
}

/** Re-wraps what `refs` name (opened and rewritten below any layer), as rewrapTree does for files. */
async function rewrapStored<R>(refs: AsyncIterable<R> | Iterable<R>, open: (ref: R) => Promise<Opened>, rewrite: (ref: R, body: Readable) => Promise<void>, from: readonly MasterKey[], to: MasterKey, onDone?: (ref: R) => void): Promise<RotateCount> {
  let plain = 0;
  const c = await eachStored(refs, open, async (ref, head, all) => {
    const header = head.subarray(0, HEADER_SIZE);
    if (!hasMagic(header)) plain++;
    if (!hasMagic(header) || headerKeyId(header)?.equals(to.id)) return false;
    await rewrite(ref, rewrapped(header, all, from, to));
    onDone?.(ref);
    return true;
  });
  return { rewrapped: c.rewritten, already: c.left - plain, plain, changed: c.changed };
}

/**
 * Re-wraps the data key of every encrypted version under `to`, as rewrapTree
 * does for files: a new header, the same chunks byte for byte. Plain
 * versions and those under `to` already are left; a run killed midway is
 * finished by running it again.
 */
export const rewrapVersions = (stored: StorageBackend, versions: readonly VersionRef[], from: readonly MasterKey[], to: MasterKey, onVersion?: (v: VersionRef) => void): Promise<RotateCount> =>
  rewrapStored(versions, openVersion(stored), (v, body) => stored.versions.rewrite(v.owner, v.id, body), from, to, onVersion);

/** Re-wraps the data key of every encrypted file of the trash items `items` the same way, each item held while its files are. */
export const rewrapTrash = async (stored: StorageBackend, items: readonly VersionRef[], holdItem: HoldItem, from: readonly MasterKey[], to: MasterKey, onFile?: (t: TrashFileRef) => void): Promise<RotateCount> =>
  (await eachTrashItem(stored, items, holdItem, (files) => rewrapStored(files, openTrashFile(stored), (t, body) => stored.trash.rewriteFile(t.owner, t.id, t.path, body), from, to, onFile))) ?? { rewrapped: 0, already: 0, plain: 0, changed: 0 };
