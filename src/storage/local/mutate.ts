import { link, lstat, mkdir, readdir, rename, rm, rmdir, unlink } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { isRoot, isSameOrInside, keyName, type StorageKey } from '../../domain/storage-path.js';
import { holdsSource, isStorageError, StorageError } from '../backend.js';
import { confinedRoot, deepestExisting, ensureRoot, inspect, inspectRoot, isWithin, realRoot, userRootPath, walkDirs, type Node } from './confine.js';
import { errnoOf, fromErrno, fsCall } from './errno.js';
import { bytesBelow, discard, shownSize, stagingPath } from './staging.js';
import { storedSizes } from '../size-view.js';
import type { Dirs } from './write.js';
import { entryFromStats } from './entry.js';

const notFound = () => new StorageError('not_found', 'No file or folder exists at this path.');
const taken = (why = 'Something already exists at this path.') => new StorageError('already_exists', why);
/** A real folder, not a link to one: the only kind whose contents move with it. */
const isRealDir = (n: Node) => n.kind === 'dir' && !n.link;

/**
 * The existing entry a delete or move acts on: parents resolved (links
 * followed only inside the root), the last name not followed. Whatever
 * makes it unreachable — a missing or non-folder parent, a leaving link —
 * is `not_found`, as for a read.
 */
async function locateExisting(root: string, key: StorageKey): Promise<Node> {
  let dir: string;
  try {
    dir = await walkDirs(root, key.segments.slice(0, -1), { missing: 'fail', escape: 'not_found' });
  } catch (e) {
    if (isStorageError(e, 'not_a_directory')) throw notFound();
    throw e;
  }
  const node = await inspect(root, dir, keyName(key));
  if (node.kind !== 'file' && node.kind !== 'dir') throw notFound();
  return node;
}

/**
 * Makes the folder at key (with `parents`, the missing ones above it). Returns the folders above key
 * that it made itself, outermost first, when they are the innermost ones above key (as a storage
 * event's madeFolders are); else none.
 */
export async function makeDir(dirs: Dirs, key: StorageKey, opts: { parents: boolean; existOk: boolean }): Promise<string[]> {
  if (isRoot(key)) {
    if (opts.parents) await fsCall('Creating the storage folder failed', () => mkdir(dirs.storageDir, { recursive: true }));
    try {
      await mkdir(userRootPath(dirs.storageDir, key.user));
      return [];
    } catch (e) {
      if (errnoOf(e) !== 'EEXIST') throw fromErrno(e, 'Creating the user root failed');
    }
    const root = await realRoot(dirs.storageDir, key.user);
    if (opts.existOk && root !== undefined && (await inspectRoot(root)).kind === 'dir') return [];
    throw taken();
  }
  const owner = opts.parents ? await ensureRoot(dirs.storageDir, key.user) : await realRoot(dirs.storageDir, key.user);
  if (owner === undefined) throw notFound();
  // Through a share link (key.within), links below the shared folder stay inside it.
  const { root, segments } = await confinedRoot(owner, key);
  // The shared folder itself: it exists (confinedRoot found it).
  if (segments.length === 0) {
    if (opts.existOk) return [];
    throw taken();
  }
  const made: { index: number; path: string }[] = [];
  const above = segments.length - 1;
  const dir = await walkDirs(root, segments.slice(0, -1), { missing: opts.parents ? 'create' : 'fail', escape: 'invalid_path', made });
  const innermost = made.every((m, i) => m.index === above - made.length + i);
  try {
    await mkdir(join(dir, keyName(key)));
    return innermost ? made.map((m) => m.path) : [];
  } catch (e) {
    if (errnoOf(e) !== 'EEXIST') throw fromErrno(e, 'Creating the folder failed');
  }
  const node = await inspect(root, dir, keyName(key));
  if (opts.existOk && node.kind === 'dir') return [];
  // existOk means "use it as the folder": a leaving link cannot be that.
  if (opts.existOk && node.kind === 'escaping') throw new StorageError('invalid_path', 'A link that leads outside the user root is at this path.');
  throw taken();
}

/**
 * What a delete or a move took away, for the storage events: `bytes` of the
 * files, counted as the backend's walk counts them (links count nothing),
 * undefined only when counting a set-aside tree failed.
 */
export type Removed = { readonly isFile: boolean; readonly bytes: number | undefined };

/**
 * A file's bytes as inspected, as the backend shows them (Dirs.sizes). The
 * caller holds the name's edit lock, so the file inspected is the one the
 * next rename or unlink removes; it is measured before that.
 */
const fileBytes = (dirs: Dirs, n: Node): number => (n.kind === 'file' && !n.link && n.stats ? shownSize(dirs.sizes ?? storedSizes, n.path, Number(n.stats.size)) : 0);

/** Deletes the file or folder at key; a folder tree is counted once out of every writer's reach (discard). */
export async function deleteEntry(dirs: Dirs, key: StorageKey, opts: { recursive: boolean }): Promise<Removed> {
  const root = await realRoot(dirs.storageDir, key.user);
  if (root === undefined) throw notFound();
  // The root is acted on by its own path: a link there (the administrator's
  // choice of where a user's files live) is removed, its target kept.
  const node: Node = isRoot(key) ? { ...(await inspectRoot(root)), path: userRootPath(dirs.storageDir, key.user), link: false } : await locateExisting(root, key);
  if (!isRealDir(node)) {
    const bytes = fileBytes(dirs, node);
    await fsCall('Deleting the file failed', () => unlink(node.path));
    return { isFile: node.kind === 'file', bytes };
  }
  if (opts.recursive) return { isFile: false, bytes: await discard(dirs.tmpDir, node.path, dirs.sizes) };
  // ENOTEMPTY → already_exists: the folder still holds something.
  await fsCall('Deleting the folder failed', () => rmdir(node.path));
  return { isFile: false, bytes: 0 };
}

/**
 * Moves the entry at key out of the user's tree to `dest` (the trash, on the
 * same file system) by one rename(2): after a crash it is at one place or the
 * other, never both. Its bytes are counted first (the caller holds the name's
 * edit lock, so what is counted is what moves).
 */
export async function moveOut(dirs: Dirs, key: StorageKey, dest: string): Promise<{ isFile: boolean; bytes: number; etag?: string; files?: Map<string, string> }> {
  if (isRoot(key)) throw notFound();
  const root = await realRoot(dirs.storageDir, key.user);
  if (root === undefined) throw notFound();
  const node = await locateExisting(root, key);
  // A file is measured under its lock; a folder once it is in the trash, where no writer reaches it any
  // more: measured before, a file replaced below it in between (under that file's lock alone) went into
  // the trash at a size the trash did not count.
  const fileSize = isRealDir(node) ? undefined : fileBytes(dirs, node);
  await fsCall('Moving to the trash failed', () => mkdir(dirname(dest), { recursive: true }));
  await fsCall('Moving to the trash failed', () => rename(node.path, dest));
  const bytes = fileSize ?? (await bytesBelow(dest, dirs.sizes));
  if (node.kind !== 'file') return { isFile: false, bytes, files: await etagsBelow(dest) };
  // A rename keeps the inode, size and mtime the ETag is made of: the moved file's own ETag.
  const moved = await lstat(dest, { bigint: true }).catch(() => undefined);
  return { isFile: true, bytes, ...(moved?.isFile() ? { etag: entryFromStats(keyName(key), moved).etag } : {}) };
}

/**
 * The ETag of every file below a folder moved into the trash, by its path below it ('x/y.txt'): taken
 * there, where no writer reaches them, and a rename keeps what an ETag is made of.
 */
async function etagsBelow(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const e of await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => [])) {
    if (!e.isFile()) continue;
    const st = await lstat(join(e.parentPath, e.name), { bigint: true }).catch(() => undefined);
    if (st?.isFile()) out.set(relative(dir, join(e.parentPath, e.name)).split(sep).join('/'), entryFromStats(e.name, st).etag);
  }
  return out;
}

/** Moves `src` (outside the user's tree, same file system) to the free name `to`; `already_exists` when it is taken. */
export async function moveIn(dirs: Dirs, src: string, to: StorageKey): Promise<{ isFile: boolean; bytes: number }> {
  if (isRoot(to)) throw taken('The user root always exists and cannot be replaced.');
  const root = await ensureRoot(dirs.storageDir, to.user);
  const dir = await walkDirs(root, to.segments.slice(0, -1), { missing: 'create', escape: 'invalid_path' });
  const dst = await inspect(root, dir, keyName(to));
  if (dst.kind !== 'missing') throw taken();
  const stats = await fsCall('Restoring failed', () => lstat(src));
  const kind = stats.isDirectory() ? 'dir' : 'file';
  const node = { kind, path: src, target: src, link: stats.isSymbolicLink() } as Node;
  const bytes = kind === 'dir' || stats.isFile() ? await bytesBelow(src, dirs.sizes) : 0;
  if (!(await claimFree(node, dst.path))) throw taken();
  return { isFile: kind === 'file', bytes };
}

/** Moves from to to. Returns whether a file moved and what it replaced at to (Removed's bytes). */
export async function moveEntry(dirs: Dirs, from: StorageKey, to: StorageKey, opts: { overwrite: boolean }): Promise<{ isFile: boolean; replaced: number | undefined }> {
  if (from.user !== to.user) throw new StorageError('invalid_path', 'A move cannot leave the user root.');
  if (isSameOrInside(to, from)) throw new StorageError('into_itself', 'A folder cannot be moved into itself.');
  if (isRoot(to)) throw taken('The user root always exists and cannot be replaced.');
  const root = await realRoot(dirs.storageDir, from.user);
  if (root === undefined) throw notFound();
  const src = await locateExisting(root, from);
  const parents = to.segments.slice(0, -1);
  // Keys can differ and still meet on disk through a link that stays inside:
  // check physically too, before any destination parent is created.
  const existing = await deepestExisting(root, parents, 'invalid_path');
  const into = () => new StorageError('into_itself', 'A folder cannot be moved into itself.');
  if (isRealDir(src) && isWithin(src.path, existing.dir)) throw into();
  const dir = await walkDirs(root, parents, { missing: 'create', escape: 'invalid_path' });
  const dst = await inspect(root, dir, keyName(to));
  if (dst.path === src.path) throw into();
  const isFile = src.kind === 'file';
  if (dst.kind === 'missing' && (await claimFree(src, dst.path))) return { isFile, replaced: 0 };
  if (!opts.overwrite) throw taken();
  const current = await inspect(root, dir, keyName(to));
  if (isWithin(current.path, src.path)) throw holdsSource();
  return { isFile, replaced: await replace(dirs, src, current) };
}

/**
 * Moves src to a free name; false when the name turned out to be taken.
 * A file moves by link(2) + unlink, which never replaces. Folders (and
 * links) cannot be hard-linked and Node has no rename without replace
 * (renameat2 RENAME_NOREPLACE), so they are renamed after the caller's
 * check. The race left: an *empty* folder created at the destination in
 * between is silently replaced; anything else there makes rename fail.
 */
async function claimFree(src: Node, dstPath: string): Promise<boolean> {
  try {
    if (src.kind === 'file' && !src.link) {
      await link(src.path, dstPath);
      // ENOENT: only another program can have taken the old name meanwhile (the move holds the edit leases of
      // the name and of every folder around it); the file is moved either way.
      await unlink(src.path).catch((e: unknown) => {
        if (errnoOf(e) !== 'ENOENT') throw e;
      });
    } else {
      await rename(src.path, dstPath);
    }
    return true;
  } catch (e) {
    const errno = errnoOf(e);
    if (errno === 'EEXIST' || errno === 'ENOTEMPTY' || errno === 'ENOTDIR' || errno === 'EISDIR') return false;
    if (errno === 'EINVAL') throw new StorageError('into_itself', 'A folder cannot be moved into itself.', { cause: e });
    throw fromErrno(e, 'Moving failed');
  }
}

/** How often a destination made again by a writer is set aside before a move gives up. */
const MAX_REMADE = 8;

/**
 * Replaces dst by src. Between files (or links) one rename(2) does it
 * atomically. Otherwise rename(2) cannot (folder over file, anything over a
 * folder): dst is first renamed aside into tmpDir, then src into place, then
 * the aside copy deleted — at no moment is the data of both gone, and if the
 * second step fails the first is undone.
 *
 * An upload into dst makes its folders on demand, so in between it can make
 * dst again and put its file there: that is set aside too and replaced, as
 * if the upload had come just before the move (not undoing the first step
 * over it, which would leave the old folder in tmpDir, gone uncounted).
 * Returns the bytes of what it replaced: everything set aside, counted
 * there, out of every writer's reach; or the file one rename replaced.
 */
async function replace(dirs: Dirs, src: Node, dst: Node): Promise<number | undefined> {
  const { tmpDir } = dirs;
  if (!isRealDir(src) && !isRealDir(dst)) {
    const bytes = fileBytes(dirs, dst);
    await fsCall('Moving failed', () => rename(src.path, dst.path));
    return bytes;
  }
  const asides: string[] = [];
  const setAside = async () => {
    const aside = stagingPath(tmpDir, 'aside');
    await rename(dst.path, aside);
    asides.push(aside);
  };
  await fsCall('Moving the destination aside failed', setAside);
  for (;;) {
    try {
      await rename(src.path, dst.path);
      break;
    } catch (e) {
      const remade = ['ENOTEMPTY', 'EEXIST', 'EISDIR', 'ENOTDIR'].includes(errnoOf(e) ?? '');
      if (remade && asides.length < MAX_REMADE && (await setAside().then(() => true, () => false))) continue;
      // Undone: the first aside (what dst held) goes back where nothing is in its way.
      await rename(asides[0] as string, dst.path).catch(() => undefined);
      throw fromErrno(e, 'Moving failed');
    }
  }
  let bytes: number | undefined = 0;
  for (const aside of asides) {
    const b = await bytesBelow(aside, dirs.sizes).catch(() => undefined);
    bytes = bytes === undefined || b === undefined ? undefined : bytes + b;
    // Done for the user; a leftover in tmpDir is removed by init().
    await rm(aside, { recursive: true, force: true }).catch(() => undefined);
  }
  return bytes;
}
