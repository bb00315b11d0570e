import type { RemoteApi } from './remote-api.js';
import type { MoveRemote } from './planner.js';
import type { FileVersion } from './tree.js';

/**
 * What the server holds now, asked when a conditional step was refused or needs an ETag. A refused
 * step may already be done: an earlier run did it and was killed before its journal line said so,
 * and the feed does not replay it (the client skips its own echoes). Such a step is adopted, never
 * retried, so a crash at any point converges.
 */

/** The same file version: the same bytes, and the same server id when both are known. */
const sameVersion = (a: FileVersion | undefined, b: FileVersion): a is FileVersion =>
  a !== undefined && a.sha256 === b.sha256 && a.size === b.size && (a.id === undefined || b.id === undefined || a.id === b.id);

/**
 * The ETag to send as If-Match so that only `expect` is replaced: the one the feed, a listing or
 * an upload gave with those bytes, else what the server lists at the path now if that is still
 * `expect`. undefined: it holds something else (or nothing) now; the next round decides again.
 */
export async function etagOf(api: RemoteApi, rel: string, expect: FileVersion): Promise<string | undefined> {
  if (expect.etag) return expect.etag;
  const now = await api.stat(rel);
  return sameVersion(now, expect) ? now.etag : undefined;
}

/** Nothing is at the path: a delete of it is done. */
export async function deletedAlready(api: RemoteApi, rel: string): Promise<boolean> {
  return (await api.stat(rel)) === undefined;
}

/** The version now at `to` when the move is done (nothing left at `from`, the moved version at `to`). */
export async function movedAlready(api: RemoteApi, m: MoveRemote): Promise<FileVersion | undefined> {
  if ((await api.stat(m.from)) !== undefined) return undefined;
  const at = await api.stat(m.to);
  return sameVersion(at, m.expect) ? at : undefined;
}

/** The new folder's files when the folder move is done (the old folder empty or gone, every moved version in the new one). */
export async function folderMovedAlready(api: RemoteApi, from: string, to: string, files: readonly MoveRemote[]): Promise<Map<string, FileVersion> | undefined> {
  if ((await api.list(from)).size > 0) return undefined;
  const now = await api.list(to);
  return files.every((f) => sameVersion(now.get(f.to), f.expect)) ? now : undefined;
}
