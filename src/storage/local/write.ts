import * as fs from 'node:fs';
import { link, lstat, open, rename, unlink, utimes, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { collisionName } from '../../domain/names.js';
import { isRoot, keyName, type StorageKey } from '../../domain/storage-path.js';
import { isStorageError, StorageError, type CommitOptions, type Entry, type StagedFile, type WriteOptions } from '../backend.js';
import { whileHeld, type HeldLease } from '../coordination.js';
import { confinedRoot, deepestExisting, ensureRoot, inspect, realRoot, walkDirs } from './confine.js';
import { durableWrite, renameNoReplace, type OpenNoLinks, type RenameNoReplace } from './fs-ops.js';
import { entryFromStats, type FileStats } from './entry.js';
import { errnoOf, fromErrno } from './errno.js';
import { shownSize, stagingPath } from './staging.js';
import { storedSizes, type SizeView } from '../size-view.js';
import { recycles } from '../body.js';

export type Dirs = {
  readonly storageDir: string;
  readonly tmpDir: string;
  /** The owners' trash (`data/trash/`, beside storage/ on the same file system); default: beside storageDir. */
  readonly trashDir?: string;
  /** Earlier contents of files (`data/versions/`, same file system: versions are hard links); default: beside storageDir. */
  readonly versionsDir?: string;
  /** How sizes are reported in events, trash and versions (size-view.ts); default: as stored. */
  readonly sizes?: SizeView;
  /** A read's open of a path without links (fs-ops.ts); default: openat2 where the native module is built. */
  readonly openNoLinks?: OpenNoLinks;
};

/** How many `name (n).ext` to try before giving up; far beyond any real folder. */
const MAX_COLLISIONS = 10_000;

/**
 * The staging file's write buffer. With Node's default (16 KiB) every 64 KiB
 * socket chunk waited for its own write; with room for a few chunks they
 * queue while a write runs and go to disk together (writev). Bounded: the
 * body is read no faster than this drains.
 */
const WRITE_HWM = 1024 * 1024;

/**
 * While receiving, ask the kernel to write the staged bytes to disk every so
 * often (fdatasync in the background), so disk writes overlap the network
 * instead of all waiting for the final fsync. Durability is unchanged: the
 * final fsync still runs before the file gets its name.
 */
const SYNC_EVERY = 32 * 1024 * 1024;

/**
 * Stage, then commit: the body streams into a fresh file in tmpDir, is
 * fsynced, and only then gets its name in the user's folder, by rename(2)
 * (atomic replace) or by a claim that takes a name only if it is free, so
 * concurrent writers can never overwrite each other: renameat2 without
 * replacing where the system has it (the staging name goes in the same
 * step), else link(2). discard (or the commit itself) removes what is left
 * of the staging name; after a successful link the file lives on under its
 * final name.
 *
 * The body is read but not destroyed on a limit or a disk failure: we stop
 * reading and leave the stream to its owner (an HTTP request must survive to
 * carry the 413 answer). Only an abort destroys it: its owner gave up on it.
 */
export async function stageFile(dirs: Dirs, key: StorageKey, body: Readable, opts: WriteOptions, hooks: CommitHooks): Promise<StagedFile> {
  if (isRoot(key)) throw new StorageError('is_a_directory', 'The user root is a folder.');
  // Fail fast on a path that can never be written (a file or a leaving link
  // on the way) before receiving a possibly large body; nothing is created yet.
  // A body declared small is received first: the commit's walk refuses the same
  // paths with the same errors, and walking twice was a tenth of a small upload's
  // system calls (docs/performance.md, "Small-file uploads").
  // A caller that has just looked (freeNameInFolder: the parent a folder, through the same walk)
  // made this probe already: an SFTP OPEN's upload, whose length nobody declares, walked twice.
  const small = opts.sizeHint !== undefined && opts.sizeHint <= SMALL_BODY && (opts.maxBytes === undefined || opts.sizeHint <= opts.maxBytes);
  const probeRoot = small || opts.freeNameInFolder === true ? undefined : await realRoot(dirs.storageDir, key.user);
  if (probeRoot !== undefined) {
    const confined = await confinedRoot(probeRoot, key);
    await deepestExisting(confined.root, confined.segments.slice(0, -1), 'invalid_path');
  }

  const staging = stagingPath(dirs.tmpDir, 'upload');
  // Its name may go with the commit, which gives it its final name by moving it (Staged).
  const staged: Staged = { path: staging, movable: true, gone: false };
  // The staging name is always a plain file of ours: unlink alone (fs.rm would lstat it first).
  const removeStaging = () =>
    staged.gone
      ? Promise.resolve()
      : unlink(staging).catch((e: unknown) => {
          if (errnoOf(e) !== 'ENOENT') throw e;
        });
  let stats: FileStats;
  let head: Buffer;
  const opened: Opened = {};
  try {
    ({ stats, head } = await receive(opened, staging, body, opts, (dirs.sizes ?? storedSizes).headBytes));
    // Dated before it takes its name: no reader sees the file with the time of its upload first.
    if (opts.modified) {
      await utimes(staging, opts.modified, opts.modified);
      stats = await lstat(staging, { bigint: true });
    }
  } catch (e) {
    // A creation still under way ends first, or the name would be removed before it exists.
    const early = await opened.created?.catch(() => undefined);
    // The name goes first: unlinking an open file is allowed, while closing it waits for the
    // writes and the fsync still running on it, seconds on a busy disk, during which the
    // aborted upload's staging file would still lie in data/tmp.
    await removeStaging();
    await opened.handle?.close().catch(() => undefined);
    // Closed before the failure is reported, so a failed upload holds no descriptor once it has failed.
    if (early !== undefined) await new Promise<void>((resolve) => fs.close(early, () => resolve()));
    throw e;
  }
  await opened.handle?.close().catch(() => undefined);
  return {
    size: Number(stats.size),
    async commit(commitOpts) {
      let removing: Promise<void> | undefined;
      const remove = () => (removing ??= removeStaging());
      // Once the file has its name by a link, the staging name goes while the index is written (on
      // SQLite in its own thread), not after it: the answer still waits for both. A move took it already.
      const named: CommitHooks = {
        ...hooks,
        committed: (c) => {
          void remove().catch(() => undefined);
          return hooks.committed(c);
        },
      };
      try {
        return await commitStaged(dirs, key, staged, stats, opts.ifExists, named, commitOpts?.beforeReplace, head);
      } finally {
        await remove();
      }
    },
    discard: removeStaging,
  };
}

/**
 * A durable staging file on its way to its name. `movable`: the commit may give it its name by
 * moving it (renameat2 without replacing), which takes the staging name away in the same step;
 * `gone` says it did (or a replacing rename did), so the caller has no name left to remove.
 * Otherwise the name is linked and the staging name stays, still naming the committed file.
 */
export type Staged = { readonly path: string; readonly movable: boolean; gone: boolean };

/**
 * Gives a durable staging file (with its stats) its name at key, creating
 * missing parents; what is left of the staging name (Staged) is the caller's
 * to remove. Shared with resumable uploads.
 */
export async function commitStaged(dirs: Dirs, key: StorageKey, staging: Staged, stats: FileStats, mode: WriteOptions['ifExists'], hooks: CommitHooks, beforeReplace?: CommitOptions['beforeReplace'], head?: Buffer) {
  const parents = key.segments.slice(0, -1);
  // Parents are created only now, so an aborted upload leaves no empty folders.
  // Through a share link (key.within), links below the shared folder stay inside it.
  const { root, segments } = await confinedRoot(await ensureRoot(dirs.storageDir, key.user), key);
  if (segments.length === 0) throw new StorageError('is_a_directory', 'A folder is at this path.');
  /**
   * Runs fn in the file's folder, made with its parents. A delete or a move (to the trash too) of that
   * folder between its making and the file's naming takes the path away (ENOENT): made again, as a
   * write makes its parents, so the write lands instead of answering 404 for a folder it was to make.
   */
  const inFolder = async <T>(fn: (dir: string) => Promise<T>): Promise<T> => {
    for (let tries = 1; ; tries++) {
      const dir = await walkDirs(root, segments.slice(0, -1), { missing: 'create', escape: 'invalid_path' });
      try {
        return await fn(dir);
      } catch (e) {
        if (tries >= FOLDER_TRIES || !isStorageError(e, 'not_found')) throw e;
      }
    }
  };
  // Only a replace can take away what is there, so only a replace needs the name's edit lock (see CommitHooks).
  const sizes = dirs.sizes ?? storedSizes;
  // Read from the staging name now: a rename takes it away.
  const shown = shownSize(sizes, staging.path, Number(stats.size), head);
  const place = () => inFolder((dir) => commit(root, staging, dir, keyName(key), mode, sizes, beforeReplace));
  // A replace onto a free name takes nothing away: link(2) claims the name only while nothing is
  // there, as a create does, so the lease (two metadata writes, and with several workers their
  // contention for the database) is left for when something is there (EEXIST). With a beforeReplace
  // (quota, versions) the locked path runs as before: it must see what is there under the lock.
  const free = mode === 'replace' && beforeReplace === undefined ? await inFolder((dir) => claimIfFree(staging, dir, keyName(key))) : undefined;
  const committed = free ?? (mode === 'replace' ? await whileHeld(hooks.lock(key), place) : await place());
  // The staging file's stats describe the committed inode: rename and link keep it.
  const entry = entryFromStats(committed.name, stats);
  await hooks.committed({ key: { user: key.user, segments: [...parents, committed.name] }, size: shown, previousSize: committed.previousSize, entry: { ...entry, size: shown } });
  return entry;
}

/** How often a commit makes its folder again when it went meanwhile (commitStaged). */
const FOLDER_TRIES = 3;

/** What a commit changed, for the storage events: sizes and entry as the backend's SizeView shows them. */
export type Committed = { readonly key: StorageKey; readonly size: number; readonly previousSize: number | undefined; readonly entry: Entry };

/**
 * What a commit needs from its backend. `lock` holds a name's edit lock,
 * which every change that can take away what is at a name holds (a
 * replace, a delete, a move from or onto it), on every worker: so the size
 * a replace reports as replaced is the size of what its rename really
 * removed, and usage, kept from events, stays exact. A create needs no
 * lock: link(2) makes it only where nothing is. `committed` reports the change.
 */
export type CommitHooks = { readonly lock: (key: StorageKey) => Promise<HeldLease>; readonly committed: (c: Committed) => void | Promise<void> };

/**
 * A body that ends within this many bytes is written with one writev and one
 * fsync, without a write stream: most uploads of a folder of documents, notes
 * or source files. The stream, its pipeline and their promises cost a 4 KiB
 * upload more CPU than its bytes (docs/performance.md, "Small-file uploads").
 * Bounded: at most this much is held per upload before it streams.
 */
export const SMALL_BODY = 256 * 1024;

/**
 * What receive has opened, for its caller to close (after removing the name, on a failure): the
 * staging file as a handle (a larger body), or its descriptor while it was created early and
 * nothing has taken it yet.
 */
type Opened = { handle?: FileHandle; created?: Promise<number> };

/**
 * Receives body into a new staging file and fsyncs it, counting bytes;
 * returns the staged file's stats. A small body is read first and written
 * whole (durableWrite); a larger one streams into a file opened as `opened.handle`.
 */
async function receive(opened: Opened, staging: string, body: Readable, opts: WriteOptions, headBytes: number): Promise<{ stats: FileStats; head: Buffer }> {
  const { maxBytes: max, signal } = opts;
  let received = 0;
  // The first headBytes of the body, copied as they pass (a body's buffers may be reused after the write).
  const first: Buffer[] = [];
  let writeError: unknown;
  // The caller gave up on the body: end it, which also ends a read waiting on it.
  const onAbort = () => body.destroy();
  signal?.addEventListener('abort', onAbort, { once: true });
  let early: NodeJS.Immediate | undefined;
  const count = (chunk: Buffer | string): Buffer => {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    if (received < headBytes) first.push(Buffer.from(bytes.subarray(0, headBytes - received)));
    received += bytes.length;
    if (max !== undefined && received > max) throw new StorageError('too_large', `The body is larger than ${max} bytes.`);
    return bytes;
  };
  try {
    if (signal?.aborted) {
      onAbort();
      throw new Error('aborted before it started');
    }
    // A body nobody declared the length of (an SFTP put, a chunked request) comes over several
    // turns of its client: its staging file is created meanwhile instead of after its end, so the
    // creation (the file system finding an inode; on some, far longer than the write) is off the
    // upload's path (docs/performance.md, "What a file's creation costs on this machine"). Not
    // when the whole body is already here (a small part of a multipart request, read before the
    // next turn of the event loop): the write's one job creates the file then, a trip less.
    if (opts.sizeHint === undefined) {
      early = setImmediate(() => {
        early = undefined;
        opened.created = createFile(staging);
        // Its failure is thrown where it is awaited (below, or by the caller's clean-up).
        opened.created.catch(() => undefined);
      });
    }
    const source = body.iterator({ destroyOnReturn: false });
    const head: Buffer[] = [];
    let ended = false;
    try {
      while (received < SMALL_BODY) {
        const next = await source.next();
        if (next.done) {
          ended = true;
          break;
        }
        head.push(count(next.value as Buffer | string));
      }
    } catch (e) {
      // Stop reading without destroying the body (destroyOnReturn: false): its owner answers on it.
      await source.return?.();
      throw e;
    }
    if (signal?.aborted) throw new Error('aborted while receiving');
    // Read before the early creation's turn: the writes below create the file.
    clearImmediate(early);
    let stats: FileStats | undefined;
    // Taken from `opened`: from here on, what is done with it closes it.
    const created = opened.created;
    opened.created = undefined;
    if (ended) {
      stats = await (created ? created.then((fd) => durableWrite(fd, head)) : durableWrite(staging, head)).catch((e: unknown) => {
        writeError = e;
        throw e;
      });
    } else {
      // Created early, the file is opened again as a handle for the stream (once an upload, a larger one).
      if (created) fs.close(await created, () => undefined);
      const handle = (opened.handle = await open(staging, created ? 'r+' : 'wx').catch((e: unknown) => {
        throw fromErrno(e, created ? 'Opening the staging file failed' : 'Creating the staging file failed');
      }));
      const failed = await stream(handle, head, { [Symbol.asyncIterator]: () => source }, count, () => received, recycles(body) ? (chunk) => body.recycle(chunk) : undefined);
      writeError = failed.writeError;
    }
    if (signal?.aborted) throw new Error('aborted while finishing');
    if (writeError !== undefined) throw writeError;
    return { stats: stats ?? (await lstat(staging, { bigint: true })), head: first.length === 1 ? first[0]! : Buffer.concat(first) };
  } catch (e) {
    if (isStorageError(e)) throw e;
    if (writeError !== undefined) throw fromErrno(writeError, (writeError as { syscall?: unknown }).syscall === 'open' ? 'Creating the staging file failed' : 'Writing the staging file failed');
    // The signal fired, or the body failed or ended early: the upload is incomplete.
    throw new StorageError('aborted', 'The body ended before it was complete.', { cause: e });
  } finally {
    // A failure before the early creation's turn: nothing was created, nothing to remove.
    clearImmediate(early);
    signal?.removeEventListener('abort', onAbort);
  }
}

/** A new file (exclusive: a staging name is never an existing file), opened for writing: its descriptor. */
function createFile(path: string): Promise<number> {
  return new Promise((resolve, reject) => fs.open(path, 'wx', (e, fd) => (e ? reject(fromErrno(e, 'Creating the staging file failed')) : resolve(fd))));
}

/**
 * A larger body: the chunks read so far, then the rest (each counted by
 * `count`, `received` the total so far), streamed into the staging file with
 * background flushes, fsynced before the stream closes.
 * Returns the write side's error, if it had one (the body's own error throws).
 * Exported for its test (write.test.ts), which writes to /dev/full.
 */
export async function stream(handle: FileHandle, head: Buffer[], rest: AsyncIterable<unknown>, count: (chunk: Buffer | string) => Buffer, received: () => number, recycle?: (chunk: Buffer) => void): Promise<{ writeError: unknown }> {
  let writeError: unknown;
  let syncedAt = 0;
  let syncing: Promise<void> | undefined;
  let syncError: unknown;
  // flush: the stream fsyncs, then closes the handle, before it finishes, so the file is
  // durable before it gets a name and a crash never leaves a named, torn file.
  const out = handle.createWriteStream({ flush: true, highWaterMark: WRITE_HWM });
  out.on('error', (e) => (writeError = e));
  // Each chunk handed back once written, when the body takes its chunks back (an encrypted
  // upload's sealed chunks, src/lib/encryption/seal-stream.ts): written, never before.
  const write = (chunk: Buffer): Promise<void> | undefined => (out.write(chunk, recycle && ((e) => e || recycle(chunk))) ? undefined : drained(out));
  try {
    for (const chunk of head) await write(chunk);
    for await (const chunk of rest) {
      const bytes = count(chunk as Buffer | string);
      if (received() - syncedAt >= SYNC_EVERY && syncing === undefined) {
        syncedAt = received();
        syncing = handle
          .datasync()
          .catch((e: unknown) => {
            syncError ??= e;
          })
          .finally(() => {
            syncing = undefined;
          });
      }
      await write(bytes);
    }
    out.end();
    await finished(out);
    await syncing;
    return { writeError: writeError ?? syncError };
  } catch (e) {
    // Not waiting for a background fsync here: the caller removes the staging name at once,
    // and closing the handle waits for the fsync to finish anyway.
    // The stream's error is its `errored` from the failed write on, but its 'error' event waits for
    // the file's closing: a write in between already fails (drained), before writeError is set.
    const failed = writeError ?? out.errored ?? undefined;
    out.destroy();
    if (failed !== undefined && !isStorageError(e)) return { writeError: failed };
    throw e;
  }
}

/** Until `out` drains; its error (or its closing first) rejects. */
function drained(out: Writable): Promise<void> {
  if (out.destroyed) return Promise.reject(out.errored ?? new Error('The staging file closed before the body was written.'));
  return new Promise((resolve, reject) => {
    const settle = (e?: unknown) => {
      out.off('drain', settle).off('error', settle).off('close', closed);
      if (e === undefined) resolve();
      else reject(e);
    };
    const closed = () => settle(out.errored ?? new Error('The staging file closed before the body was written.'));
    out.on('drain', settle).on('error', settle).on('close', closed);
  });
}

/**
 * Gives the staged file the name `target` only while nothing is there (EEXIST otherwise, as link's):
 * moved without replacing where the system can (one step, and the staging name is gone), else linked.
 * `move` is the process's renameNoReplace (a parameter for the tests of the link path).
 */
export async function claimName(staging: Staged, target: string, move: RenameNoReplace = renameNoReplace): Promise<void> {
  if (staging.movable && move(staging.path, target)) {
    staging.gone = true;
    return;
  }
  await link(staging.path, target);
}

/**
 * Gives the staged file the name if nothing is at it (no lease: claimName decides); undefined when
 * something is there (a file, a folder or a link: the locked replace sorts out which).
 */
async function claimIfFree(staging: Staged, dir: string, name: string): Promise<{ name: string; previousSize: undefined } | undefined> {
  try {
    await claimName(staging, join(dir, name));
    return { name, previousSize: undefined };
  } catch (e) {
    if (errnoOf(e) === 'EEXIST') return undefined;
    throw fromErrno(e, 'Committing the upload failed');
  }
}

/** Gives the staged file its name in `dir`; returns the name it got and the size of the file it replaced. */
async function commit(root: string, staging: Staged, dir: string, name: string, mode: WriteOptions['ifExists'], sizes: SizeView, beforeReplace?: CommitOptions['beforeReplace']): Promise<{ name: string; previousSize: number | undefined }> {
  const folderThere = async (n: string) => (await inspect(root, dir, n)).kind === 'dir';
  const isDir = () => new StorageError('is_a_directory', 'A folder is at this path, where a file is needed.');
  if (mode === 'replace') {
    // Under the name's edit lock what is there stays there; what is missing may still be created by a
    // link (a create or a move holds no lock), so a missing name is taken by link too, never by rename.
    for (;;) {
      const before = await inspect(root, dir, name);
      if (before.kind === 'dir') throw isDir();
      // Under the lock the file there stays the one the rename replaces: measured before it goes.
      const previous = before.kind === 'file' && before.stats ? shownSize(sizes, before.target, Number(before.stats.size)) : undefined;
      await beforeReplace?.(previous ?? 0);
      if (before.kind === 'missing') {
        try {
          await claimName(staging, join(dir, name));
          return { name, previousSize: undefined };
        } catch (e) {
          if (errnoOf(e) !== 'EEXIST') throw fromErrno(e, 'Committing the upload failed');
          continue;
        }
      }
      try {
        await rename(staging.path, join(dir, name));
        staging.gone = true;
      } catch (e) {
        // A folder appeared meanwhile (EISDIR), or the name is a folder reached by a link.
        throw errnoOf(e) === 'EISDIR' ? isDir() : fromErrno(e, 'Committing the upload failed');
      }
      return { name, previousSize: previous };
    }
  }
  const attempts = mode === 'fail' ? 1 : MAX_COLLISIONS;
  for (let n = 0; n < attempts; n++) {
    const candidate = collisionName(name, n);
    try {
      await claimName(staging, join(dir, candidate));
      return { name: candidate, previousSize: undefined };
    } catch (e) {
      if (errnoOf(e) !== 'EEXIST') throw fromErrno(e, 'Committing the upload failed');
      if (mode === 'fail') throw (await folderThere(candidate)) ? isDir() : new StorageError('already_exists', 'Something already exists at this path.');
    }
  }
  throw new StorageError('already_exists', `No free name for "${name}" after ${MAX_COLLISIONS} attempts.`);
}
