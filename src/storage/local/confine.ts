/**
 * Physical confinement of the local backend: nothing outside
 * `<storageDir>/<user>/` is ever read, listed, written, moved or deleted.
 *
 * Keys are already checked lexically (parseStoragePath: no `.`/`..`, no `/`
 * inside a segment), so the only way out is a symbolic link that someone
 * with disk access planted inside a user's folder — to /etc, to another
 * user's folder, to `../other/file`. The API itself never creates links.
 *
 * Decision: a symbolic link is followed only when its real target (realpath)
 * stays inside the real path of the same user's root (for a visitor of a
 * share link: of the shared folder, see confinedRoot), compared segment by
 * segment (`path.relative`, not a bare `startsWith`, so `storage/al` never
 * admits `storage/alice`). A link that leads outside, dangles or loops
 * behaves as if nothing were there: reads get `not_found` and listings omit
 * it; a write, mkdir or move destination *through* such a link as a parent
 * gets `invalid_path`. Its own name still exists in the folder, so the
 * operations that act on names do what they do to any taken name: a `fail`
 * write or a no-overwrite move is `already_exists`, a `rename` write picks
 * the next free name, a `replace` write or an overwrite move replaces the
 * link itself — never what it points to.
 *
 * Mutations act on names, never through a final link: delete unlinks a link
 * (even one to a folder), move moves the link, `rm -r` never follows links.
 *
 * How: the path is resolved one segment at a time from the real user root;
 * every link met is resolved with realpath and checked, and its real path
 * replaces it, so the physical path an operation finally touches contains no
 * link at all. Files are opened with O_NOFOLLOW.
 *
 * Reads take a shorter way where they can: a path with no link in it is
 * opened at once by openat2 with RESOLVE_NO_SYMLINKS (linklessPath here,
 * fs-ops.ts `openNoLinks`), which the kernel refuses if any component is a
 * link, even one swapped in during the call; any refusal sends the read
 * down the walk.
 *
 * Known limit (a race, documented rather than closed): someone with disk
 * access who swaps a checked folder for a link between our check and the
 * system call could redirect that one call (not the linkless open of a
 * read). Node has no openat()/O_BENEATH to close it for the other calls;
 * the threat model is links planted in advance. Hard links made on disk
 * cannot be told apart from the user's own files.
 *
 * Performance decision: the metadata calls of this walk (lstat, stat,
 * realpath of the root and of links) are synchronous. On a local disk each
 * takes a few microseconds, while the promise API sends every call through
 * libuv's 4-thread pool, which costs more per call than the call itself (a
 * thread wake-up and a completion back to the loop; docs/performance.md,
 * optimization 3) and
 * made the walk the largest cost of a small GET. The checks are exactly the
 * same. The price: on a slow or network file system a cold lookup blocks
 * the event loop for its duration; list() yields between batches, and
 * opening, reading, writing, fsync and renames stay asynchronous.
 */
import { lstatSync, realpathSync, statSync, type BigIntStats, type Stats } from 'node:fs';
import { mkdir, realpath } from 'node:fs/promises';
import { isAbsolute, join, relative, sep } from 'node:path';
import { isValidUsername, nameProblem } from '../../domain/names.js';
import type { StorageKey } from '../../domain/storage-path.js';
import { StorageError } from '../backend.js';
import { errnoOf, fromErrno } from './errno.js';

/** `p` is `root` or lies below it, by whole path segments. Both must be real, absolute paths. */
export function isWithin(root: string, p: string): boolean {
  const rel = relative(root, p);
  return rel === '' || (!isAbsolute(rel) && rel !== '..' && !rel.startsWith(`..${sep}`));
}

/** Refuses a key no parser should have made: the backend does not trust its callers blindly. */
export function checkKey(key: StorageKey): void {
  if (!isValidUsername(key.user) || key.segments.some((s) => nameProblem(s) !== undefined)) {
    throw new StorageError('invalid_path', 'The key is not a valid storage path.');
  }
}

/** What is at one name inside a folder, with links resolved under the rule above. */
export type Node = {
  /**
   * `missing`: nothing; `escaping`: a link leading outside the root, dangling or looping;
   * `other`: a socket, FIFO or device (never served, treated as nothing).
   */
  readonly kind: 'missing' | 'escaping' | 'file' | 'dir' | 'other';
  /** The name itself (a link's own path): what delete and move act on. */
  readonly path: string;
  /** Where reads go: `path` itself, or a link's real, checked target. */
  readonly target: string;
  readonly link: boolean;
  /** Of the target, for file/dir/other. */
  readonly stats?: BigIntStats;
};

const kindOf = (s: BigIntStats): Node['kind'] => (s.isFile() ? 'file' : s.isDirectory() ? 'dir' : 'other');

/**
 * `<dir>/<name>`, for a real, absolute `dir` and a name checkKey or readdir gave (no `/`, never `.`
 * or `..`): what path.join makes of them, without its normalizing pass (a GET walks two or more names).
 */
export const childPath = (dir: string, name: string): string => (dir.endsWith(sep) ? dir + name : dir + sep + name);

/** Inspects `<dir>/<name>`; `dir` must be a real, checked path inside `root`. */
export async function inspect(root: string, dir: string, name: string): Promise<Node> {
  const path = childPath(dir, name);
  let own: BigIntStats | undefined;
  try {
    own = lstatSync(path, { bigint: true, throwIfNoEntry: false });
  } catch (e) {
    if (errnoOf(e) === 'ENOTDIR') return { kind: 'missing', path, target: path, link: false };
    throw fromErrno(e, 'Inspecting an entry failed');
  }
  if (own === undefined) return { kind: 'missing', path, target: path, link: false };
  if (!own.isSymbolicLink()) return { kind: kindOf(own), path, target: path, link: false, stats: own };
  return followLink(root, path, true);
}

/**
 * As `inspect`, for a folder on the way, where only the kind and the real path count: no stats in the
 * node, and the number-valued lstat, which makes one small object where the bigint one makes a BigInt
 * a field (docs/performance.md, "What a 4 KiB GET allocates"). The same rule for links.
 */
export async function inspectStep(root: string, dir: string, name: string): Promise<Node> {
  const path = childPath(dir, name);
  let own: Stats | undefined;
  try {
    own = lstatSync(path, { throwIfNoEntry: false });
  } catch (e) {
    if (errnoOf(e) === 'ENOTDIR') return { kind: 'missing', path, target: path, link: false };
    throw fromErrno(e, 'Inspecting an entry failed');
  }
  if (own === undefined) return { kind: 'missing', path, target: path, link: false };
  if (!own.isSymbolicLink()) return { kind: own.isFile() ? 'file' : own.isDirectory() ? 'dir' : 'other', path, target: path, link: false };
  return followLink(root, path, false);
}

/** A link at `path`: its real target when that stays inside `root`, else `escaping` (dangling and looping ones too). */
function followLink(root: string, path: string, withStats: boolean): Node {
  let target: string;
  let stats: BigIntStats;
  try {
    target = realpathSync.native(path);
    if (!isWithin(root, target)) return { kind: 'escaping', path, target: path, link: true };
    stats = statSync(target, { bigint: true });
  } catch (e) {
    // Dangling or looping: where it would lead cannot be proven to be inside.
    const errno = errnoOf(e);
    if (errno === 'ENOENT' || errno === 'ELOOP' || errno === 'ENOTDIR') return { kind: 'escaping', path, target: path, link: true };
    throw fromErrno(e, 'Resolving a symbolic link failed');
  }
  return withStats ? { kind: kindOf(stats), path, target, link: true, stats } : { kind: kindOf(stats), path, target, link: true };
}

/** The user root as a node (a link there is the administrator's choice, so it is followed). */
export async function inspectRoot(root: string): Promise<Node> {
  const stats = statSync(root, { bigint: true });
  return { kind: kindOf(stats), path: root, target: root, link: false, stats };
}

/** Path of a user's root inside storageDir (not resolved). */
export const userRootPath = (storageDir: string, user: string): string => join(storageDir, user);

/**
 * Real paths of storage dirs, resolved once per process: the administrator's
 * configuration, which does not move while the server runs. A user root is
 * then `<real storageDir>/<user>` unless the root itself is a link, which one
 * lstat tells, where realpath of the whole path walked every component on
 * every request (docs/performance.md "Figures behind the code").
 */
const realStorageDirs = new Map<string, string>();

function realStorageDir(storageDir: string): string {
  let base = realStorageDirs.get(storageDir);
  if (base === undefined) {
    base = realpathSync.native(storageDir);
    realStorageDirs.set(storageDir, base);
  }
  return base;
}

/** Real path of a user's root, or undefined when it does not exist. */
export async function realRoot(storageDir: string, user: string): Promise<string | undefined> {
  try {
    const root = join(realStorageDir(storageDir), user);
    // A link there is the administrator's choice: followed, to wherever it leads.
    return lstatSync(root).isSymbolicLink() ? realpathSync.native(root) : root;
  } catch (e) {
    if (errnoOf(e) === 'ENOENT') return undefined;
    throw fromErrno(e, 'Opening the user root failed');
  }
}

/**
 * The key's path made of names alone: the real storage dir, the user, the segments. Where no
 * component of it is a link (fs-ops.ts `openNoLinks` asks the kernel), it is the path the walk
 * would reach, inside the user root and inside a share link's shared folder, with nothing to
 * resolve: a read opens it without the walk. undefined where the walk checks more than names:
 * the user root itself, and a share link's shared item as the key (the walk requires a folder there).
 */
export function linklessPath(storageDir: string, key: StorageKey): string | undefined {
  if (key.segments.length === 0 || (key.within ?? 0) >= key.segments.length) return undefined;
  let base: string;
  try {
    base = realStorageDir(storageDir);
  } catch {
    // No storage dir: the walk says what that means.
    return undefined;
  }
  let path = childPath(base, key.user);
  for (const name of key.segments) path = childPath(path, name);
  return path;
}

/** Real path of a user's root, created first when missing (storageDir must exist). */
export async function ensureRoot(storageDir: string, user: string): Promise<string> {
  const existing = await realRoot(storageDir, user);
  if (existing !== undefined) return existing;
  try {
    await mkdir(userRootPath(storageDir, user));
  } catch (e) {
    if (errnoOf(e) !== 'EEXIST') throw fromErrno(e, 'Creating the user root failed');
  }
  return realpath(userRootPath(storageDir, user));
}

export type WalkOptions = {
  /** A missing folder on the way: `fail` → not_found; `create` → made. */
  readonly missing: 'fail' | 'create';
  /** The code for a folder on the way that is a link leading outside. */
  readonly escape: 'not_found' | 'invalid_path';
  /** Takes the folders this walk made itself (not one a concurrent request made first): segment index and path. */
  readonly made?: { index: number; path: string }[];
};

/**
 * The root a key's links are confined to, and the key's segments below it.
 * For the owner that is the user root and all segments. For a key reached
 * through a share link (StorageKey.within) the shared folder is resolved
 * under the owner's rule and its real path becomes the root: below it, a
 * link is followed only while its real target stays inside the shared
 * folder, so `shared/link -> ../private` is as nothing to a visitor.
 * A missing shared folder, or a file where it should be, is `not_found`.
 */
export async function confinedRoot(root: string, key: StorageKey): Promise<{ root: string; segments: readonly string[] }> {
  const within = key.within;
  if (within === undefined || within <= 0) return { root, segments: key.segments };
  let shared: string;
  try {
    shared = await walkDirs(root, key.segments.slice(0, within), { missing: 'fail', escape: 'not_found' });
  } catch (e) {
    if (e instanceof StorageError && e.code === 'not_a_directory') throw new StorageError('not_found', 'The shared folder does not exist.');
    throw e;
  }
  return { root: shared, segments: key.segments.slice(within) };
}

/**
 * Resolves folder segments below the real root to a real, checked folder
 * path with no link in it. A file on the way → `not_a_directory`.
 */
export async function walkDirs(root: string, segments: readonly string[], opts: WalkOptions): Promise<string> {
  let dir = root;
  for (const [index, name] of segments.entries()) {
    let node = await inspectStep(root, dir, name);
    if (node.kind === 'missing' && opts.missing === 'create') {
      try {
        await mkdir(node.path);
        opts.made?.push({ index, path: node.path });
      } catch (e) {
        // EEXIST: a concurrent request made it (or something else) first; look again.
        if (errnoOf(e) !== 'EEXIST') throw fromErrno(e, 'Creating a folder failed');
      }
      node = await inspectStep(root, dir, name);
    }
    switch (node.kind) {
      case 'dir':
        dir = node.target;
        break;
      case 'missing':
        throw new StorageError('not_found', 'A folder on the path does not exist.');
      case 'escaping':
        throw new StorageError(opts.escape, 'A folder on the path is a link that leads outside the user root.');
      default:
        throw new StorageError('not_a_directory', 'A file is in the way where a folder is needed.');
    }
  }
  return dir;
}

/**
 * The deepest existing folder on the way to `segments`, and the segments
 * below it that do not exist yet (nothing is created).
 */
export async function deepestExisting(root: string, segments: readonly string[], escape: WalkOptions['escape']): Promise<{ dir: string; missing: readonly string[] }> {
  let dir = root;
  for (let i = 0; i < segments.length; i++) {
    const node = await inspectStep(root, dir, segments[i] as string);
    if (node.kind === 'missing') return { dir, missing: segments.slice(i) };
    if (node.kind === 'escaping') throw new StorageError(escape, 'A folder on the path is a link that leads outside the user root.');
    if (node.kind !== 'dir') throw new StorageError('not_a_directory', 'A file is in the way where a folder is needed.');
    dir = node.target;
  }
  return { dir, missing: [] };
}
