import { closeSync, constants, createWriteStream, fstatSync, openSync, readSync, type Dir } from 'node:fs';
import { access, link, lstat, mkdir, open, opendir, readdir, rename, rm, rmdir, utimes } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { basename, dirname, join, relative, sep } from 'node:path';
import { Readable } from 'node:stream';
import { nameProblem } from '../../domain/names.js';
import { isRoot, isSameOrInside, keyChild, keyFolders, keyName, keyParent, type StorageKey } from '../../domain/storage-path.js';
import { holdsSource, isStorageError, listAll, lookByStat, openedBytes, WHOLE_READ_MAX, stageAndCommit, StorageError, type ByteRange, type CopyOptions, type Entry, type ListedEntry, type Opened, type StorageBackend, type IndexedKind, type TrashArea, type VersionArea, type WalkEntry, type WriteLook } from '../backend.js';
import { holdAll, holdInside, waitFreeWithin, whileHeld, type Leasing } from '../coordination.js';
import { createEventHub } from '../events.js';
import { checkKey, confinedRoot, inspect, inspectRoot, isWithin, linklessPath, realRoot, walkDirs, type Node } from './confine.js';
import { openNoLinks } from './fs-ops.js';
import { entryFromStats } from './entry.js';
import { sortedEntries } from './sorted-listing.js';
import { errnoOf, fromErrno } from './errno.js';
import { deleteEntry, makeDir, moveEntry, moveIn, moveOut } from './mutate.js';
import { isValidUsername } from '../../domain/names.js';
import { bytesBelow, prepareDirs, shownSize, stagingPath, sweepStaging } from './staging.js';
import { storedSizes, type SizeView } from '../size-view.js';
import { holdingBodyErrors, peek } from '../body.js';
import { FileReader } from './file-reader.js';
import { stageFile, type CommitHooks, type Committed, type Dirs } from './write.js';
import { createLocalResumable } from './resumable.js';

/**
 * How many entries of one folder list() inspects before it lets other
 * requests run (inspect's calls are synchronous, see confine.ts): about a
 * millisecond of work on a local disk.
 */
const LIST_BATCH = 128;

/**
 * Opening with O_NOFOLLOW refuses a link swapped in after the path was
 * checked; O_NONBLOCK keeps a FIFO planted on disk from hanging the open
 * (it has no effect on regular files).
 */
const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** Bytes start..end of the open file; fewer if the file shrank meanwhile. */
function readWhole(fd: number, start: number, end: number, into?: Buffer): Buffer {
  const length = end - start + 1;
  const bytes = into && into.length >= length ? into.subarray(0, length) : Buffer.allocUnsafe(length);
  let got = 0;
  while (got < bytes.length) {
    const n = readSync(fd, bytes, got, bytes.length - got, start + got);
    if (n === 0) break;
    got += n;
  }
  return got === bytes.length ? bytes : bytes.subarray(0, got);
}

/**
 * The local-disk StorageBackend: a user's files are plain files under
 * `<storageDir>/<user>/`, uploads are staged in `tmpDir` (same file system).
 * Confinement rules: see confine.ts. Staging and commit: see write.ts.
 * `leasing` gives the edit locks (CommitHooks) that keep the sizes in
 * events exact when workers change one name at once.
 */
export function createLocalBackend(dirs: Dirs, leasing: Leasing): StorageBackend {
  const events = createEventHub();
  const sizes = dirs.sizes ?? storedSizes;
  const openLinkless = dirs.openNoLinks ?? openNoLinks;
  const editLease = (k: StorageKey) => `local-edit:${k.user}/${k.segments.join('/')}`;
  /** The edit locks of these names, held together (see CommitHooks): a change of whole folders names them and the folders around. */
  const lock = (...keys: StorageKey[]) => holdAll(leasing, keys.map(editLease));
  /**
   * The edit lock of one name, for a change of what is at that name alone (a replace, a delete, a
   * time set), once no change of a folder around it is under way (holdInside): a folder moved or
   * deleted meanwhile, and made again by a writer, took the file measured here along, and the change
   * then acted at the new folder's name and reported what it never removed.
   */
  const lockOne = (key: StorageKey) => holdInside(leasing, [editLease(key)], keyFolders(key).map(editLease));
  /**
   * Run by a change of a whole folder at key (into the trash, deleted, moved, moved over), holding
   * key's lock (and alsoHeld's): waits for the changes below it that took their lock before it
   * (lockOne steps back for the ones after), so what it counts is what it moves or removes.
   */
  const settleBelow = (key: StorageKey, ...alsoHeld: StorageKey[]) => waitFreeWithin(leasing, isRoot(key) ? editLease(key) : `${editLease(key)}/`, [key, ...alsoHeld].map(editLease));
  /** The node at key with every link checked, or undefined when nothing usable is there. */
  async function find(key: StorageKey): Promise<(Node & { root: string }) | undefined> {
    const owner = await realRoot(dirs.storageDir, key.user);
    if (owner === undefined) return undefined;
    let root: string;
    let dir: string;
    let segments: readonly string[];
    try {
      ({ root, segments } = await confinedRoot(owner, key));
      if (segments.length === 0) return { ...(await inspectRoot(root)), root };
      dir = await walkDirs(root, segments.slice(0, -1), { missing: 'fail', escape: 'not_found' });
    } catch (e) {
      if (isStorageError(e, 'not_found')) return undefined;
      throw e;
    }
    const node = await inspect(root, dir, segments[segments.length - 1] as string);
    return node.kind === 'file' || node.kind === 'dir' ? { ...node, root } : undefined;
  }

  /**
   * lookBeforeWrite in one walk: the folders above the parent once, then the parent's own look and
   * the name's, where two stats walked the same folders twice (a WebDAV PUT and an SFTP open for
   * writing ask it before every new file). What each finds is what stat would: a missing folder, a
   * file in the way or a link that leads outside on the way is nothing there. A name directly below
   * a share link's root (whose parent is that root, or above it) takes the two stats.
   */
  async function look(key: StorageKey): Promise<WriteLook> {
    if (isRoot(key) || (key.within !== undefined && key.segments.length - 1 <= key.within)) return lookByStat(backend, key);
    const kind = (n: Node): IndexedKind | undefined => (n.kind === 'file' ? 'file' : n.kind === 'dir' ? 'folder' : undefined);
    const owner = await realRoot(dirs.storageDir, key.user);
    if (owner === undefined) return { at: undefined, parent: undefined };
    let parent: Node;
    let root: string;
    try {
      let segments: readonly string[];
      ({ root, segments } = await confinedRoot(owner, key));
      parent = segments.length === 1 ? await inspectRoot(root) : await inspect(root, await walkDirs(root, segments.slice(0, -2), { missing: 'fail', escape: 'not_found' }), segments[segments.length - 2] as string);
    } catch (e) {
      if (isStorageError(e, 'not_found') || isStorageError(e, 'not_a_directory')) return { at: undefined, parent: undefined };
      throw e;
    }
    if (parent.kind !== 'dir') return { at: undefined, parent: kind(parent) };
    return { at: kind(await inspect(root, parent.target, keyName(key))), parent: 'folder' };
  }

  const checked =
    <A extends unknown[], R>(fn: (key: StorageKey, ...rest: A) => Promise<R>) =>
    async (key: StorageKey, ...rest: A): Promise<R> => {
      checkKey(key);
      return fn(key, ...rest);
    };

  /** The folder at key, its entries in pages of LIST_BATCH. */
  async function* listPages(key: StorageKey): AsyncGenerator<Entry[]> {
    checkKey(key);
    const node = await find(key);
    if (!node) throw new StorageError('not_found', 'No folder exists at this path.');
    if (node.kind !== 'dir') throw new StorageError('not_a_directory', 'A file is at this path, where a folder is needed.');
    // Read as it goes, a page at a time: a folder of 100,000 names is never held whole (a rescan walks
    // every folder this way; docs/performance.md "The peak over the whole bench").
    let dir: Dir;
    try {
      dir = await opendir(node.target, { bufferSize: LIST_BATCH });
    } catch (e) {
      throw fromErrno(e, 'Listing the folder failed');
    }
    try {
      for (let done = false; !done; ) {
        const page: Entry[] = [];
        for (let n = 0; n < LIST_BATCH && !done; n++) {
          const found = await dir.read().catch((e: unknown) => {
            throw fromErrno(e, 'Listing the folder failed');
          });
          if (!found) done = true;
          else {
            const child = await inspect(node.root, node.target, found.name);
            // Leaving links, special files and entries deleted meanwhile are not shown.
            if ((child.kind === 'file' || child.kind === 'dir') && child.stats) page.push(entryFromStats(found.name, child.stats));
          }
        }
        if (page.length > 0) yield page;
        // inspect's calls are synchronous (confine.ts): let other requests run between pages.
        if (!done) await new Promise((resolve) => setImmediate(resolve));
      }
    } finally {
      await dir.close().catch(() => undefined);
    }
  }

  /** The folder at key in the listing order (sorted-listing.ts). */
  async function* sortedPages(key: StorageKey, etags: boolean): AsyncGenerator<ListedEntry[]> {
    checkKey(key);
    const node = await find(key);
    if (!node) throw new StorageError('not_found', 'No folder exists at this path.');
    if (node.kind !== 'dir') throw new StorageError('not_a_directory', 'A file is at this path, where a folder is needed.');
    yield* sortedEntries(node.root, node.target, { etags });
  }

  /** Depth first, each folder before its contents; links are never followed (nor listed). */
  async function* walk(dir: StorageKey, prefix: readonly string[]): AsyncGenerator<WalkEntry> {
    const node = await find(dir);
    if (!node || node.kind !== 'dir') return;
    for await (const page of listPages(dir)) {
      for (const entry of page) {
        const child = await inspect(node.root, node.target, entry.name);
        if (child.link) continue;
        const path = [...prefix, entry.name];
        yield { path, entry };
        // A folder another tool named against our rules (`a\b`) is reported but not entered: no key can name what is inside.
        if (!entry.isFile && nameProblem(entry.name) === undefined) yield* walk(keyChild(dir, entry.name), path);
      }
    }
  }

  /**
   * A folder's entries without the links in it: a copy treats links as walk (and so the quota
   * check before a copy, and usage) does, it never follows them (docs/storage.md "Symbolic links").
   */
  async function unlinkedChildren(dir: StorageKey): Promise<Entry[]> {
    const node = await find(dir);
    if (!node || node.kind !== 'dir') throw new StorageError('not_found', 'No folder exists at this path.');
    const out: Entry[] = [];
    for await (const page of listPages(dir)) {
      for (const entry of page) if (!(await inspect(node.root, node.target, entry.name)).link) out.push(entry);
    }
    return out;
  }

  /** Bytes of every file below the folder at key, as a recount walks them (and as Dirs.sizes shows them). */
  async function walkedBytes(key: StorageKey): Promise<number> {
    let size = 0;
    for await (const w of walk(key, [])) {
      if (!w.entry.isFile) continue;
      const node = sizes.needsHead(w.entry.size) ? await find(w.path.reduce((k, name) => keyChild(k, name), key)) : undefined;
      size += node ? shownSize(sizes, node.target, w.entry.size) : w.entry.size;
    }
    return size;
  }

  const hooks: CommitHooks = {
    lock: lockOne,
    committed: (c: Committed) =>
      events.emit(c.previousSize === undefined ? { type: 'created', key: c.key, isFile: true, size: c.size, entry: c.entry } : { type: 'replaced', key: c.key, size: c.size, previousSize: c.previousSize, entry: c.entry }),
  };
  const stage = checked((key: StorageKey, body: Readable, opts: Parameters<StorageBackend['stage']>[2]) => holdingBodyErrors(body, () => stageFile(dirs, key, body, opts, hooks)));

  /** A file outside the tree (a version, a trash item's file) opened for reading, named `name` in its entry. */
  function openWhole(path: string, missing: string, name = basename(path), range?: ByteRange): Promise<Opened> {
    let fd: number;
    try {
      fd = openSync(path, READ_FLAGS);
    } catch (e) {
      if (errnoOf(e) === 'ENOENT') return Promise.reject(new StorageError('not_found', missing, { cause: e }));
      return Promise.reject(fromErrno(e, 'Opening the file failed'));
    }
    const entry = entryFromStats(name, fstatSync(fd, { bigint: true }));
    const start = range?.start ?? 0;
    const end = Math.min(range?.end ?? entry.size - 1, entry.size - 1);
    if (end < start) {
      closeSync(fd);
      return Promise.resolve({ stream: Readable.from([]), entry });
    }
    return Promise.resolve({ stream: new FileReader(fd, start, end), entry });
  }

  /** Replaces a file outside the tree whole: staged, synced, then renamed over it (`not_found` when it is gone). */
  async function replaceWhole(dest: string, body: Readable, missing: string): Promise<void> {
    const staging = stagingPath(dirs.tmpDir, 'upload');
    try {
      await pipeline(body, createWriteStream(staging, { flags: 'wx' }));
      // Durable before it takes the name: a crash leaves the old bytes or the new, never a cut file.
      const handle = await open(staging, 'r');
      await handle.sync().finally(() => handle.close());
      await lstat(dest).catch((e: unknown) => {
        throw errnoOf(e) === 'ENOENT' ? new StorageError('not_found', missing, { cause: e }) : fromErrno(e, 'Rewriting a file failed');
      });
      await rename(staging, dest);
    } catch (e) {
      await rm(staging, { force: true });
      throw fromErrno(e, 'Rewriting a file failed');
    }
  }

  const trashDir = dirs.trashDir ?? join(dirname(dirs.storageDir), 'trash');
  /** `<trashDir>/<owner>/<id>/`: the owner and id are checked, so the area never leaves trashDir. */
  const trashAreaOf = (owner: string, id: string): string => {
    if (!isValidUsername(owner) || !/^[A-Za-z0-9_-]{1,64}$/.test(id)) throw new StorageError('invalid_path', 'Not a valid trash item.');
    return join(trashDir, owner, id);
  };
  /** A file inside a trash item: a path `files` gave, which never leaves the item's area. */
  const trashFilePath = (owner: string, id: string, path: string): string => {
    const area = trashAreaOf(owner, id);
    const at = join(area, ...path.split('/'));
    if (path.split('/').some((p) => p === '' || p === '.' || p === '..') || !at.startsWith(area + sep)) throw new StorageError('invalid_path', 'Not a file of a trash item.');
    return at;
  };
  const trashedName = async (area: string): Promise<string | undefined> => (await readdir(area).catch(() => [] as string[]))[0];
  /** The trash (TrashArea) on disk: one rename in, one rename out (mutate.ts moveOut / moveIn). */
  const trash: TrashArea = {
    async put(key, id) {
      checkKey(key);
      const area = trashAreaOf(key.user, id);
      const moved = await whileHeld(lock(key, ...keyFolders(key)), async () => {
        await settleBelow(key);
        return moveOut(dirs, key, join(area, keyName(key)));
      });
      await events.emit({ type: 'deleted', key, isFile: moved.isFile, size: moved.bytes, kept: true });
      return { isFile: moved.isFile, size: moved.bytes, etag: moved.etag, files: moved.files };
    },
    async find(owner, id) {
      const area = trashAreaOf(owner, id);
      const name = await trashedName(area);
      if (name === undefined) return undefined;
      const stats = await lstat(join(area, name));
      return { isFile: !stats.isDirectory(), size: await bytesBelow(join(area, name), sizes) };
    },
    async restore(owner, id, to) {
      checkKey(to);
      const area = trashAreaOf(owner, id);
      const name = await trashedName(area);
      if (name === undefined) throw new StorageError('not_found', 'No such item in the trash.');
      const moved = await whileHeld(lock(to, ...keyFolders(to)), () => moveIn(dirs, join(area, name), to));
      await rmdir(area).catch(() => undefined);
      await events.emit({ type: 'created', key: to, isFile: moved.isFile, size: moved.bytes, kept: true });
      return { isFile: moved.isFile, size: moved.bytes };
    },
    async remove(owner, id) {
      const area = trashAreaOf(owner, id);
      const bytes = await bytesBelow(area, sizes).catch(() => 0);
      await rm(area, { recursive: true, force: true }).catch((e: unknown) => {
        throw fromErrno(e, 'Deleting from the trash failed');
      });
      return bytes;
    },
    async removeOwner(owner) {
      if (!isValidUsername(owner)) throw new StorageError('invalid_path', 'Not a valid user.');
      await rm(join(trashDir, owner), { recursive: true, force: true }).catch((e: unknown) => {
        throw fromErrno(e, 'Deleting the trash failed');
      });
    },
    async *files(owner, id) {
      const area = trashAreaOf(owner, id);
      for (const e of await readdir(area, { recursive: true, withFileTypes: true }).catch(() => [])) {
        if (e.isFile()) yield relative(area, join(e.parentPath, e.name)).split(sep).join('/');
      }
    },
    readFile: async (owner, id, path) => openWhole(trashFilePath(owner, id, path), 'No such item in the trash.'),
    rewriteFile: async (owner, id, path, body) => replaceWhole(trashFilePath(owner, id, path), body, 'No such item in the trash.'),
  };

  const versionsDir = dirs.versionsDir ?? join(dirname(dirs.storageDir), 'versions');
  const versionPath = (owner: string, id: string): string => {
    if (!isValidUsername(owner) || !/^[A-Za-z0-9_-]{1,64}$/.test(id)) throw new StorageError('invalid_path', 'Not a valid version.');
    return join(versionsDir, owner, id);
  };
  /**
   * Versions on disk (VersionArea): `data/versions/<owner>/<id>`, a hard link to the replaced file's
   * inode. Every write replaces a file by rename(2) and never writes into it, so the link keeps exactly
   * the old bytes, without copying them.
   */
  const versions: VersionArea = {
    async keep(key, id) {
      checkKey(key);
      const node = await find(key);
      if (!node || node.kind !== 'file' || node.link || !node.stats) return undefined;
      const dest = versionPath(key.user, id);
      await mkdir(dirname(dest), { recursive: true }).catch((e: unknown) => {
        throw fromErrno(e, 'Keeping a version failed');
      });
      try {
        await link(node.path, dest);
      } catch (e) {
        // The file went since it was found (its folder deleted or moved meanwhile): nothing is there to keep,
        // as when nothing was found; the write that asked goes on and makes its folder again (write.ts).
        if (errnoOf(e) === 'ENOENT') return undefined;
        throw fromErrno(e, 'Keeping a version failed');
      }
      // The link holds exactly the bytes kept, whatever replaces the name next.
      return shownSize(sizes, dest, Number(node.stats.size));
    },
    read: (owner, id, name, range) => openWhole(versionPath(owner, id), 'No such version.', name, range),
    rewrite: (owner, id, body) => replaceWhole(versionPath(owner, id), body, 'No such version.'),
    async remove(owner, id) {
      await rm(versionPath(owner, id), { force: true }).catch((e: unknown) => {
        throw fromErrno(e, 'Deleting a version failed');
      });
    },
    async removeOwner(owner) {
      if (!isValidUsername(owner)) throw new StorageError('invalid_path', 'Not a valid user.');
      await rm(join(versionsDir, owner), { recursive: true, force: true }).catch((e: unknown) => {
        throw fromErrno(e, 'Deleting versions failed');
      });
    },
  };

  const backend: StorageBackend = {
    capabilities: { atomicReplace: true, emulatedDirs: false, serverSideMove: true, atomicFolderMove: true, keepsModified: true },

    events,

    init: () => prepareDirs(dirs.storageDir, dirs.tmpDir),

    sweep: ({ staleMs }) => sweepStaging(dirs.tmpDir, staleMs),

    stat: checked(async (key) => {
      try {
        const node = await find(key);
        return node?.stats ? entryFromStats(keyName(key), node.stats) : undefined;
      } catch (e) {
        // A file in the middle of the path: nothing can be at the key.
        if (isStorageError(e, 'not_a_directory')) return undefined;
        throw e;
      }
    }),

    parents: checked(async (key) => {
      const root = await realRoot(dirs.storageDir, key.user);
      const found: Entry[] = [];
      if (root === undefined) return found;
      let dir = root;
      for (const name of key.segments.slice(0, -1)) {
        const node = await inspect(root, dir, name);
        if (node.kind !== 'dir' || !node.stats) break;
        found.push(entryFromStats(name, node.stats));
        dir = node.target;
      }
      return found;
    }),

    list: (key) => listPages(key),

    // With etags every entry is made by entryFromStats (sorted-listing.ts), so the overload for Entry holds.
    listSorted: ((key: StorageKey, opts?: { etags?: boolean }) => sortedPages(key, opts?.etags === true)) as StorageBackend['listSorted'],

    walk: (key) => walk(key, []),

    lookBeforeWrite: checked(look),

    read: checked(async (key, range?: ByteRange) => {
      // open and fstat are synchronous like the lookups before them (see confine.ts:
      // microseconds on a local disk, O_NONBLOCK keeps a FIFO from blocking); the
      // bytes themselves are read asynchronously by the stream. A path without links
      // opens in one call; anything else takes the walk.
      const linkless = linklessPath(dirs.storageDir, key);
      let fd = linkless === undefined ? undefined : openLinkless(linkless);
      if (fd === undefined) {
        const node = await find(key);
        if (!node) throw new StorageError('not_found', 'No file exists at this path.');
        if (node.kind === 'dir') throw new StorageError('is_a_directory', 'A folder is at this path, where a file is needed.');
        try {
          fd = openSync(node.target, READ_FLAGS);
        } catch (e) {
          // Gone, or replaced by a link, since it was found: as good as not there.
          if (errnoOf(e) === 'ENOENT' || errnoOf(e) === 'ELOOP') throw new StorageError('not_found', 'No file exists at this path.', { cause: e });
          throw fromErrno(e, 'Opening the file failed');
        }
      }
      try {
        // The entry comes from the open descriptor, so it describes exactly the
        // bytes streamed even if the name is replaced right now. A file another
        // program shortens in place (logrotate's copytruncate) is the exception:
        // a short read is retried on a fresh fstat, and a stream that comes up
        // short fails, which cuts the answer instead of leaving the client
        // waiting for bytes its Content-Length promised.
        for (let attempt = 1; ; attempt++) {
          const stats = fstatSync(fd, { bigint: true });
          if (stats.isDirectory()) throw new StorageError('is_a_directory', 'A folder is at this path, where a file is needed.');
          if (!stats.isFile()) throw new StorageError('not_found', 'No file exists at this path.');
          const entry = entryFromStats(keyName(key), stats);
          const start = range?.start ?? 0;
          // The range was checked against an earlier stat; the file may have shrunk since.
          const end = Math.min(range?.end ?? entry.size - 1, entry.size - 1);
          if (end < start) {
            closeSync(fd);
            return { stream: Readable.from([]), entry };
          }
          // Read whole with one synchronous read, like the metadata calls before it (see confine.ts): from the page
          // cache a few microseconds, where a stream costs two thread-pool round trips (read, close) and the piping
          // around them. A cold read of at most WHOLE_READ_MAX blocks the event loop for one disk read.
          if (end - start + 1 > WHOLE_READ_MAX) {
            // The stream owns the descriptor from here and closes it when it ends or is destroyed.
            return { stream: new FileReader(fd, start, end), entry };
          }
          const bytes = readWhole(fd, start, end, range?.into);
          if (bytes.length === end - start + 1) {
            closeSync(fd);
            return openedBytes(entry, bytes);
          }
          if (attempt === 3) throw new StorageError('unavailable', 'The file kept changing while it was read.');
        }
      } catch (e) {
        try {
          closeSync(fd);
        } catch {
          // Already closed; nothing more to release.
        }
        throw fromErrno(e, 'Reading the file failed');
      }
    }),

    stage,

    write: (key, body, opts) => stageAndCommit({ stage }, key, body, opts),

    resumable: createLocalResumable(dirs, hooks),

    mkdir: checked(async (key, opts) => {
      const existed = opts.existOk && (await backend.stat(key).catch(() => undefined)) !== undefined;
      const made = await makeDir(dirs, key, opts);
      // The folders made on the way are this writer's too (their journal entries carry its origin).
      const madeFolders = await Promise.all(made.map(async (p) => entryFromStats(basename(p), await lstat(p, { bigint: true }))));
      if (!existed && !isRoot(key)) await events.emit({ type: 'created', key, isFile: false, size: 0, ...(madeFolders.length > 0 ? { madeFolders } : {}) });
    }),

    delete: checked(async (key, opts) => {
      const gone = await whileHeld(lockOne(key), async () => {
        await settleBelow(key);
        // A user root may be a link: its files stay behind, but leave the user all the same (counted by a walk first).
        const all = isRoot(key) ? await walkedBytes(key) : undefined;
        const removed = await deleteEntry(dirs, key, opts);
        return { isFile: removed.isFile, size: all ?? removed.bytes ?? 0 };
      });
      await events.emit({ type: 'deleted', key, ...gone });
    }),

    redate: checked(async (key, modified) => {
      const entry = await whileHeld(lockOne(key), async () => {
        const node = await find(key);
        if (node?.kind === 'dir') throw new StorageError('is_a_directory', 'A folder is at this path, where a file is needed.');
        if (node?.kind !== 'file') throw new StorageError('not_found', 'No file exists at this path.');
        await utimes(node.target, modified, modified).catch((e: unknown) => {
          throw fromErrno(e, 'Setting the file\'s time failed');
        });
        const stored = entryFromStats(keyName(key), await lstat(node.target, { bigint: true }));
        return { stored, shown: { ...stored, size: shownSize(sizes, node.target, stored.size) } };
      });
      await events.emit({ type: 'replaced', key, size: entry.shown.size, previousSize: entry.shown.size, entry: entry.shown, copyOf: { from: key, to: key } });
      return entry.stored;
    }),

    move: async (from, to, opts) => {
      checkKey(from);
      checkKey(to);
      // The folders around both names too: a move takes steps (link then unlink, or a destination set aside
      // first), and a delete or move of such a folder between them took the file along under two names (a
      // delete counted it twice, a folder move kept both) or left a set-aside destination nowhere to go back to.
      const held = [from, to, ...keyFolders(from), ...keyFolders(to)];
      const { isFile, replaced } = await whileHeld(lock(...held), async () => {
        await settleBelow(from, ...held);
        await settleBelow(to, ...held);
        return moveEntry(dirs, from, to, opts);
      });
      await events.emit({ type: 'moved', from, to, isFile, replacedSize: replaced ?? 0 });
    },

    copy: async (from, to, opts) => {
      checkKey(from);
      checkKey(to);
      // Keys can differ and still meet on disk through a link inside the root (`loop -> .`): a folder
      // copied into its own real tree would copy itself until the path limit.
      const source = await find(from);
      if (source?.kind === 'dir' && from.user === to.user) {
        const dest = await find(keyParent(to)).catch(() => undefined);
        if (dest?.kind === 'dir' && isWithin(source.target, dest.target)) throw new StorageError('into_itself', 'A folder cannot be copied into itself.');
      }
      await copyTree(backend, from, to, opts, unlinkedChildren, sizes);
    },

    trash,

    versions,

    ping: async () => {
      await access(dirs.storageDir, constants.R_OK | constants.W_OK).catch((e: unknown) => {
        throw fromErrno(e, 'The storage folder cannot be used');
      });
    },

    close: async () => undefined,
  };
  return backend;
}

/**
 * Copies through the seam itself (read → write), so every file copied is
 * staged and committed like an upload and reported as created. A folder
 * copy is not atomic: its files appear one by one.
 */
export async function copyTree(
  backend: StorageBackend,
  from: StorageKey,
  to: StorageKey,
  opts: CopyOptions,
  children: (dir: StorageKey) => Promise<Entry[]> = (dir) => listAll(backend, dir),
  sizes: SizeView = storedSizes,
  copied = { bytes: 0 },
): Promise<void> {
  const source = await backend.stat(from);
  if (!source) throw new StorageError('not_found', 'No file or folder exists at this path.');
  if (to.user === from.user && to.segments.length >= from.segments.length && from.segments.every((s, i) => to.segments[i] === s)) {
    throw new StorageError('into_itself', 'A folder cannot be copied into itself.');
  }
  const target = await backend.stat(to);
  if (target) {
    if (!opts.overwrite) throw new StorageError('already_exists', 'Something already exists at this path.');
    // Removing the destination would take the source with it (as a move refuses, mutate.ts).
    if (isSameOrInside(from, to)) throw holdsSource();
    if (!(source.isFile && target.isFile)) await backend.delete(to, { recursive: true });
  }
  if (source.isFile) {
    // The opened entry is exactly the bytes the stream yields (the version read, whatever replaces it meanwhile): what is metered is what is written.
    const opened = await backend.read(from);
    const { entry } = opened;
    let stream = opened.stream;
    let shown = entry.size;
    if (sizes.needsHead(entry.size)) {
      // Measured from the very bytes copied: the version read, whatever replaces the name meanwhile.
      const { head, all } = await peek(stream, sizes.headBytes);
      shown = sizes.shown(entry.size, head);
      stream = Readable.from(all, { objectMode: false });
    }
    try {
      await opts.beforeFile?.(copied.bytes + shown);
    } catch (e) {
      stream.destroy();
      throw e;
    }
    await backend.write(to, stream, { ifExists: 'replace', maxBytes: entry.size });
    copied.bytes += shown;
    return;
  }
  await backend.mkdir(to, { parents: true, existOk: false });
  for (const child of await children(from)) {
    await copyTree(backend, keyChild(from, child.name), keyChild(to, child.name), { overwrite: false, beforeFile: opts.beforeFile }, children, sizes, copied);
  }
}
