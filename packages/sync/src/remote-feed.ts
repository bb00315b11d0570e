import { ancestorsOf, isUnder, renameDirs, type FileVersion } from './tree.js';

/** One entry of `GET /api/changes` (docs/api.md "Changes") with the fields sync needs. */
export interface ChangeEntry {
  readonly type: 'created' | 'modified' | 'deleted' | 'moved';
  readonly path: string;
  readonly from?: string;
  readonly is_file: boolean;
  readonly size?: number;
  readonly sha256?: string;
  readonly id?: string;
  readonly origin?: string;
  readonly etag?: string;
}

export class MissingServerFields extends Error {}

/** A file a change entry named without its SHA-256: its version is learnt from its bytes. */
export type UnhashedFile = { readonly path: string; readonly id: string | undefined };

/** `/<owner>/<path>` → the path below `root`, '' for the root itself, undefined outside it. */
export function relativeTo(root: string, path: string): string | undefined {
  const p = path.normalize('NFC');
  if (p === root) return '';
  return p.startsWith(`${root}/`) ? p.slice(root.length + 1) : undefined;
}

/**
 * Applies feed entries to the remote tree (in place). Entries the client wrote itself (its own
 * `origin`) are skipped: the tree took them when the server confirmed them, and replaying an echo
 * after a later local step (a move) would bring back a path that is gone. Returns the folders that
 * arrived whole (moved in from outside the root, or created) and must be listed once. `dirs`, the
 * server's folders, follows the same entries (a file's folders exist wherever it is).
 */
export function applyChanges(
  remote: Map<string, FileVersion>,
  entries: readonly ChangeEntry[],
  root: string,
  origin: string,
  unhashed: UnhashedFile[] = [],
  dirs: Set<string> = new Set(),
): string[] {
  const toList: string[] = [];
  for (const e of entries) {
    if (e.origin !== undefined && e.origin === origin) continue;
    const to = relativeTo(root, e.path);
    const from = e.from === undefined ? undefined : relativeTo(root, e.from);
    if (e.type === 'deleted') {
      if (to !== undefined) removeUnder(remote, dirs, to, e.is_file);
      continue;
    }
    if (e.type === 'moved' && from !== undefined) {
      if (!e.is_file && to !== undefined) {
        moveUnder(remote, dirs, from, to);
        continue;
      }
      removeUnder(remote, dirs, from, e.is_file);
    }
    if (to === undefined || to === '') continue;
    for (const d of ancestorsOf(to)) dirs.add(d);
    if (!e.is_file) {
      dirs.add(to);
      if (e.type !== 'modified') toList.push(to);
      continue;
    }
    if (typeof e.sha256 !== 'string' || typeof e.size !== 'number') {
      // The server does not know this file's hash yet (docs/api.md "Sync fields": a tus upload spread
      // over processes, a file another tool put there): the caller reads it from the bytes.
      remote.delete(to);
      unhashed.push({ path: to, id: e.id });
      continue;
    }
    remote.set(to, { sha256: e.sha256, size: e.size, id: e.id, etag: e.etag });
  }
  return toList;
}

function removeUnder(remote: Map<string, FileVersion>, dirs: Set<string>, path: string, isFile: boolean): void {
  if (isFile) {
    remote.delete(path);
    return;
  }
  for (const p of [...remote.keys()]) if (isUnder(p, path)) remote.delete(p);
  for (const d of [...dirs]) if (isUnder(d, path)) dirs.delete(d);
}

function moveUnder(remote: Map<string, FileVersion>, dirs: Set<string>, from: string, to: string): void {
  const moved: [string, FileVersion][] = [];
  for (const [p, v] of remote) if (isUnder(p, from)) moved.push([p, v]);
  for (const [p] of moved) remote.delete(p);
  for (const [p, v] of moved) remote.set(to + p.slice(from.length), v);
  renameDirs(dirs, from, to);
}

