import { randomUUID } from 'node:crypto';
import { closeSync, constants, openSync, readSync } from 'node:fs';
import { lstat, mkdir, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { storedSizes, type SizeView } from '../size-view.js';
import { errnoOf, fromErrno } from './errno.js';

/**
 * data/tmp holds only our own short-lived files: upload staging and entries
 * moved aside before they are deleted. Random names so that concurrent
 * requests (and processes) never share one.
 */
export const stagingPath = (tmpDir: string, kind: 'upload' | 'aside'): string => join(tmpDir, `${kind}-${randomUUID()}`);

/**
 * The folder in tmpDir for resumable uploads: they outlive a restart, so
 * startup and the stale-staging sweep leave it alone; their expiry (upload
 * state in the metadata store) removes them instead.
 */
export const RESUMABLE_DIR = 'tus';

/** Creates the directories and removes whatever a crash left in tmpDir (resumable uploads excepted). */
export async function prepareDirs(storageDir: string, tmpDir: string): Promise<void> {
  await mkdir(storageDir, { recursive: true });
  await mkdir(tmpDir, { recursive: true });
  for (const name of await readdir(tmpDir)) {
    if (name === RESUMABLE_DIR) continue;
    await rm(join(tmpDir, name), { recursive: true, force: true });
  }
}

/**
 * Removes a file or folder tree so that it disappears from its folder at
 * once: renamed into tmpDir first (atomic, same file system), then deleted
 * there, where a crash halfway leaves nothing a user can see and init()
 * finishes the job. `rm` removes links, never what they point to.
 *
 * Returns the bytes of the files the tree held when it went, counted in
 * tmpDir where no writer can reach them any more (see bytesBelow); on
 * another file system, counted just before (undefined if that count failed).
 */
export async function discard(tmpDir: string, path: string, sizes: SizeView = storedSizes): Promise<number | undefined> {
  const aside = stagingPath(tmpDir, 'aside');
  try {
    await rename(path, aside);
  } catch (e) {
    // Another file system (an unusual data dir layout): counted, then deleted in place.
    if (errnoOf(e) !== 'EXDEV') throw fromErrno(e, 'Deleting failed');
    const bytes = await bytesBelow(path, sizes);
    await rm(path, { recursive: true, force: true });
    return bytes;
  }
  const bytes = await bytesBelow(aside, sizes).catch(() => undefined);
  // The entry is already gone from the user's folder; a leftover in tmpDir
  // is harmless and init() removes it, so a failure here is not the caller's.
  await rm(aside, { recursive: true, force: true }).catch(() => undefined);
  return bytes;
}

/**
 * Bytes of the regular files in a tree as `sizes` shows them, links not
 * followed: what the backend's walk counts (it skips links), so usage and a
 * recount agree.
 */
export async function bytesBelow(path: string, sizes: SizeView = storedSizes): Promise<number> {
  const s = await lstat(path);
  if (s.isFile()) return shownSize(sizes, path, s.size);
  if (!s.isDirectory()) return 0;
  let bytes = 0;
  for (const name of await readdir(path)) bytes += await bytesBelow(join(path, name), sizes);
  return bytes;
}

/**
 * The size `sizes` shows for the file at path of `stored` bytes, reading its
 * first bytes only when the view needs them. Synchronous like the lookups
 * around it (confine.ts): a read of a few bytes, microseconds on a local disk.
 * `known`: the first bytes, when the caller has them (a write just made the file).
 */
export function shownSize(sizes: SizeView, path: string, stored: number, known?: Buffer): number {
  if (!sizes.needsHead(stored)) return stored;
  // The file's first bytes as its writer sent them (all of them when the file is shorter): no read.
  if (known !== undefined && (known.length >= sizes.headBytes || known.length === stored)) return sizes.shown(stored, known);
  let head: Buffer | undefined;
  try {
    const fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    try {
      const buf = Buffer.alloc(sizes.headBytes);
      head = buf.subarray(0, readSync(fd, buf, 0, buf.length, 0));
    } finally {
      closeSync(fd);
    }
  } catch {
    // Gone or not a file: shown as stored, as without a view.
    head = undefined;
  }
  return sizes.shown(stored, head);
}

/**
 * Removes staging that made no progress for staleMs: a writer that died
 * (another worker, killed) cannot finish it. A live upload writes at least
 * every idle timeout, so its mtime stays fresh.
 */
export async function sweepStaging(tmpDir: string, staleMs: number): Promise<void> {
  const before = Date.now() - staleMs;
  for (const name of await readdir(tmpDir).catch(() => [])) {
    if (name === RESUMABLE_DIR) continue;
    const path = join(tmpDir, name);
    const s = await lstat(path).catch(() => undefined);
    if (s && s.mtimeMs < before) await rm(path, { recursive: true, force: true }).catch(() => undefined);
  }
}
