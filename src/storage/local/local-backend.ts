import { closeSync, constants, createReadStream, fstatSync, openSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { isRoot, keyName, type StorageKey } from '../../domain/storage-path.js';
import { isStorageError, StorageError, type ByteRange, type Entry, type StorageBackend } from '../backend.js';
import { checkKey, inspect, inspectRoot, realRoot, walkDirs, type Node } from './confine.js';
import { entryFromStats } from './entry.js';
import { errnoOf, fromErrno } from './errno.js';
import { deleteEntry, makeDir, moveEntry } from './mutate.js';
import { prepareDirs } from './staging.js';
import { writeFile, type Dirs } from './write.js';

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

/**
 * Bytes per read of a download. Node's default (64 KiB) makes a 1 GiB
 * download 16,384 thread-pool reads and socket writes; 512 KiB cuts that
 * eightfold. Memory stays bounded per download (one chunk read ahead).
 */
const READ_CHUNK = 512 * 1024;

/**
 * The local-disk StorageBackend: a user's files are plain files under
 * `<storageDir>/<user>/`, uploads are staged in `tmpDir` (same file system).
 * Confinement rules: see confine.ts. Staging and commit: see write.ts.
 */
export function createLocalBackend(dirs: Dirs): StorageBackend {
  /** The node at key with every link checked, or undefined when nothing usable is there. */
  async function find(key: StorageKey): Promise<(Node & { root: string }) | undefined> {
    const root = await realRoot(dirs.storageDir, key.user);
    if (root === undefined) return undefined;
    if (isRoot(key)) return { ...(await inspectRoot(root)), root };
    let dir: string;
    try {
      dir = await walkDirs(root, key.segments.slice(0, -1), { missing: 'fail', escape: 'not_found' });
    } catch (e) {
      if (isStorageError(e, 'not_found')) return undefined;
      throw e;
    }
    const node = await inspect(root, dir, keyName(key));
    return node.kind === 'file' || node.kind === 'dir' ? { ...node, root } : undefined;
  }

  const checked =
    <A extends unknown[], R>(fn: (key: StorageKey, ...rest: A) => Promise<R>) =>
    async (key: StorageKey, ...rest: A): Promise<R> => {
      checkKey(key);
      return fn(key, ...rest);
    };

  return {
    capabilities: { atomicReplace: true, emulatedDirs: false, serverSideMove: true },

    init: () => prepareDirs(dirs.storageDir, dirs.tmpDir),

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

    list: checked(async (key) => {
      const node = await find(key);
      if (!node) throw new StorageError('not_found', 'No folder exists at this path.');
      if (node.kind !== 'dir') throw new StorageError('not_a_directory', 'A file is at this path, where a folder is needed.');
      let names: string[];
      try {
        names = await readdir(node.target);
      } catch (e) {
        throw fromErrno(e, 'Listing the folder failed');
      }
      const entries: Entry[] = [];
      for (let i = 0; i < names.length; i++) {
        if (i > 0 && i % LIST_BATCH === 0) await new Promise((resolve) => setImmediate(resolve));
        const name = names[i] as string;
        const child = await inspect(node.root, node.target, name);
        // Leaving links, special files and entries deleted meanwhile are not shown.
        if ((child.kind === 'file' || child.kind === 'dir') && child.stats) entries.push(entryFromStats(name, child.stats));
      }
      return entries;
    }),

    read: checked(async (key, range?: ByteRange) => {
      const node = await find(key);
      if (!node) throw new StorageError('not_found', 'No file exists at this path.');
      if (node.kind === 'dir') throw new StorageError('is_a_directory', 'A folder is at this path, where a file is needed.');
      // open and fstat are synchronous like the lookups before them (see confine.ts:
      // microseconds on a local disk, O_NONBLOCK keeps a FIFO from blocking); the
      // bytes themselves are read asynchronously by the stream.
      let fd: number;
      try {
        fd = openSync(node.target, READ_FLAGS);
      } catch (e) {
        // Gone, or replaced by a link, since it was found: as good as not there.
        if (errnoOf(e) === 'ENOENT' || errnoOf(e) === 'ELOOP') throw new StorageError('not_found', 'No file exists at this path.', { cause: e });
        throw fromErrno(e, 'Opening the file failed');
      }
      try {
        // The entry comes from the open descriptor, so it describes exactly the
        // bytes streamed even if the name is replaced right now.
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
        // The stream owns the descriptor from here and closes it when it ends or is destroyed.
        return { stream: createReadStream(node.target, { fd, start, end, highWaterMark: READ_CHUNK }), entry };
      } catch (e) {
        try {
          closeSync(fd);
        } catch {
          // Already closed; nothing more to release.
        }
        throw fromErrno(e, 'Reading the file failed');
      }
    }),

    write: checked((key, body, opts) => writeFile(dirs, key, body, opts)),

    mkdir: checked((key, opts) => makeDir(dirs, key, opts)),

    delete: checked((key, opts) => deleteEntry(dirs, key, opts)),

    move: async (from, to, opts) => {
      checkKey(from);
      checkKey(to);
      return moveEntry(dirs, from, to, opts);
    },

    close: async () => undefined,
  };
}
