import { conflictName } from './conflict-name.js';
import { foldCase } from './names.js';
import { ancestorsOf, renameDirs, sameContent, sameStat, type BaseRecord, type FileVersion, type LocalFile, type Tree } from './tree.js';

/** One step of a plan. Each names what it expects to find, and the executor re-checks it before acting. */
export type Op =
  | { readonly kind: 'download'; readonly path: string; readonly remote: FileVersion; readonly replaces?: LocalFile }
  /** `expect` absent: a new name on the server (If-None-Match: *); present: If-Match on that version. */
  | { readonly kind: 'upload'; readonly path: string; readonly local: LocalFile; readonly expect?: FileVersion }
  | { readonly kind: 'delete-local'; readonly path: string; readonly local: LocalFile }
  | { readonly kind: 'delete-remote'; readonly path: string; readonly expect: FileVersion }
  | { readonly kind: 'move-local'; readonly from: string; readonly to: string; readonly local: LocalFile }
  | { readonly kind: 'move-remote'; readonly from: string; readonly to: string; readonly expect: FileVersion }
  /** A whole folder renamed here: one move on the server, whatever the number of files in it. */
  | { readonly kind: 'move-remote-folder'; readonly from: string; readonly to: string; readonly files: readonly MoveRemote[] }
  /** The local file takes `copy` (and is uploaded there in a later step); the server's version keeps the name. */
  | { readonly kind: 'conflict'; readonly path: string; readonly local: LocalFile; readonly remote: FileVersion; readonly copy: string }
  /** Both sides already hold the same bytes: the base takes them. */
  | { readonly kind: 'record'; readonly path: string; readonly local: LocalFile; readonly remote: FileVersion }
  /** Gone on both sides: the base forgets the path. */
  | { readonly kind: 'forget'; readonly path: string }
  /** A folder to make on one side (with its parents); it exists on the other. */
  | { readonly kind: 'mkdir-local' | 'mkdir-remote'; readonly path: string }
  /** A folder the other side removed, left empty here by the plan: removed only if still empty. */
  | { readonly kind: 'rmdir-local'; readonly path: string }
  /** The same on the server, with the folders below it that go too (`below`: one removal for a whole chain). */
  | { readonly kind: 'rmdir-remote'; readonly path: string; readonly below?: readonly string[] }
  /** A folder on both sides (the base takes it), or on neither (the base forgets it). */
  | { readonly kind: 'record-folder' | 'forget-folder'; readonly path: string };

export type MoveRemote = Extract<Op, { kind: 'move-remote' }>;

export interface PlanInput {
  readonly local: Tree<LocalFile>;
  readonly base: Tree<BaseRecord>;
  readonly remote: Tree<FileVersion>;
  /** Folders, each side's and the base's; absent: none tracked (only files are planned). */
  readonly localDirs?: ReadonlySet<string> | undefined;
  readonly baseDirs?: ReadonlySet<string> | undefined;
  readonly remoteDirs?: ReadonlySet<string> | undefined;
  /**
   * The base cannot explain a disappearance (lost base, expired cursor, new server epoch): nothing is
   * deleted on either side, a file missing on one side is copied back from the other.
   */
  readonly noDeletes: boolean;
  readonly device: string;
  readonly now: Date;
}

const KIND_ORDER: Record<Op['kind'], number> = {
  'move-local': 0,
  'move-remote': 0,
  'move-remote-folder': 0,
  conflict: 1,
  download: 2,
  upload: 2,
  'mkdir-local': 2,
  'mkdir-remote': 2,
  'delete-local': 3,
  'delete-remote': 3,
  'rmdir-local': 3.5,
  'rmdir-remote': 3.5,
  record: 4,
  forget: 4,
  'record-folder': 4,
  'forget-folder': 4,
};
/** Folders are removed deepest first, so each is empty when its turn comes. */
const isRmdir = (op: Op): boolean => op.kind === 'rmdir-local' || op.kind === 'rmdir-remote';
const opPath = (op: Op): string => ('path' in op ? op.path : op.to);

/**
 * Decides every path from the local tree, the base (the last synced state) and the remote tree.
 * Pure: the same three trees give the same plan. Renames are found first (by the server's stable id
 * for remote ones, by inode for local ones) and become moves, then every path is decided on its own:
 * one side changed → that side wins; both changed to the same bytes → nothing to move; both changed
 * differently → a conflict copy; an edit beats a delete.
 */
export function plan(input: PlanInput): Op[] {
  const local = new Map(input.local);
  const base = new Map(input.base);
  const remote = new Map(input.remote);
  const ops: Op[] = [];

  // Remote renames: the id a base path had now sits at a new path.
  const baseById = new Map<string, string>();
  for (const [p, b] of base) if (b.id !== undefined) baseById.set(b.id, p);
  for (const [to, r] of input.remote) {
    if (r.id === undefined || base.has(to)) continue;
    const from = baseById.get(r.id);
    if (from === undefined || from === to || remote.has(from)) continue;
    const l = local.get(from);
    if (l === undefined || local.has(to)) continue;
    ops.push({ kind: 'move-local', from, to, local: l });
    renameIn(local, from, to);
    renameIn(base, from, to);
    baseById.set(r.id, to);
  }

  // Local renames: a new local path holds the inode of a base path that is gone locally, or its
  // bytes under the same name in another case (a case-only rename, which a case-insensitive disk
  // may do as a new file).
  const remoteMoves: MoveRemote[] = [];
  const goneByIno = new Map<number, string>();
  const goneByFold = new Map<string, string>();
  for (const [p, b] of base) {
    if (local.has(p)) continue;
    if (b.ino !== undefined) goneByIno.set(b.ino, p);
    goneByFold.set(foldCase(p), p);
  }
  for (const [to, l] of input.local) {
    if (base.has(to) || !local.has(to)) continue;
    const sameName = goneByFold.get(foldCase(to));
    const from = goneByIno.get(l.ino) ?? (sameName !== undefined && sameContent(base.get(sameName), l) ? sameName : undefined);
    if (from === undefined) continue;
    const b = base.get(from);
    const r = remote.get(from);
    if (b === undefined || !sameContent(r, b) || remote.has(to) || r === undefined) continue;
    remoteMoves.push({ kind: 'move-remote', from, to, expect: r });
    if (b.ino !== undefined) goneByIno.delete(b.ino);
    goneByFold.delete(foldCase(from));
    renameIn(remote, from, to);
    renameIn(base, from, to);
  }

  const moves = folderMoves(remoteMoves, input.base, input.remote);
  ops.push(...moves);

  const taken = new Set<string>([...local.keys(), ...base.keys(), ...remote.keys()]);
  const paths = [...taken].sort();
  for (const path of paths) {
    const op = decide(path, local.get(path), base.get(path), remote.get(path), input, taken);
    if (op) ops.push(op);
  }
  if (input.localDirs && input.baseDirs && input.remoteDirs) ops.push(...planFolders(input, local, remote, moves, ops));
  return ops.sort((a, b) => KIND_ORDER[a.kind] - KIND_ORDER[b.kind] || (isRmdir(a) ? -1 : 1) * (opPath(a) < opPath(b) ? -1 : opPath(a) > opPath(b) ? 1 : 0));
}

/**
 * The folders' own steps, after the files'. A folder on one side only is made on the other, unless
 * the base had it: then the other side removed it, and it goes here too — only when the plan leaves
 * nothing in it (a file kept or new in it keeps it, and it is made again over there: an edit beats
 * a delete). A folder move on the server renames its folders in the base and remote sets first.
 */
function planFolders(input: PlanInput, local: Tree<LocalFile>, remote: Tree<FileVersion>, moves: readonly Op[], fileOps: readonly Op[]): Op[] {
  const localDirs = input.localDirs ?? new Set<string>();
  const baseDirs = new Set(input.baseDirs);
  const remoteDirs = new Set(input.remoteDirs);
  for (const m of moves) {
    if (m.kind !== 'move-remote-folder') continue;
    renameDirs(baseDirs, m.from, m.to);
    renameDirs(remoteDirs, m.from, m.to);
  }
  // A folder stays on a side while something the plan keeps there is in it.
  const deleted = new Set(fileOps.filter((o) => o.kind === 'delete-local' || o.kind === 'delete-remote').map((o) => `${o.kind}:${opPath(o)}`));
  const keptLocal = new Set<string>();
  const keptRemote = new Set<string>();
  const keep = (kept: Set<string>, path: string): void => ancestorsOf(path).forEach((d) => kept.add(d));
  for (const p of local.keys()) if (!deleted.has(`delete-local:${p}`)) keep(keptLocal, p);
  for (const p of remote.keys()) if (!deleted.has(`delete-remote:${p}`)) keep(keptRemote, p);

  const ops: Op[] = [];
  const depth = (p: string): number => p.split('/').length;
  const all = [...new Set([...localDirs, ...baseDirs, ...remoteDirs])].sort((a, b) => depth(b) - depth(a) || (a < b ? -1 : 1));
  for (const path of all) {
    const l = localDirs.has(path);
    const r = remoteDirs.has(path);
    const b = baseDirs.has(path) && !input.noDeletes;
    let kind: Op['kind'] | undefined;
    if (l && r) kind = baseDirs.has(path) ? undefined : 'record-folder';
    else if (!l && !r) kind = baseDirs.has(path) ? 'forget-folder' : undefined;
    else if (l) kind = b && !keptLocal.has(path) ? 'rmdir-local' : 'mkdir-remote';
    else kind = b && !keptRemote.has(path) ? 'rmdir-remote' : 'mkdir-local';
    if (l && kind !== 'rmdir-local') keep(keptLocal, path);
    if (r && kind !== 'rmdir-remote') keep(keptRemote, path);
    if (kind !== undefined) ops.push({ kind, path } as Op);
  }
  // Making a folder makes its parents: a parent made because of a deeper one needs no step of its own.
  const made = new Set(ops.filter((o) => o.kind === 'mkdir-local' || o.kind === 'mkdir-remote').map((o) => `${o.kind}:${opPath(o)}`));
  const covered = new Set<string>();
  for (const key of made) {
    const [kind, path] = [key.slice(0, key.indexOf(':')), key.slice(key.indexOf(':') + 1)];
    for (const d of ancestorsOf(path)) covered.add(`${kind}:${d}`);
  }
  return chainRemovals(ops.filter((o) => !covered.has(`${o.kind}:${opPath(o)}`)));
}

/**
 * The local tree is the base itself: the same paths, each file the base's own record (a scan keeps it
 * for a file whose stat did not change), the same folders.
 */
export function sameAsBase(local: Tree<LocalFile>, localDirs: ReadonlySet<string>, base: Tree<BaseRecord>, baseDirs: ReadonlySet<string>): boolean {
  if (local.size !== base.size || localDirs.size !== baseDirs.size) return false;
  for (const [p, f] of local) if (base.get(p) !== f) return false;
  for (const d of localDirs) if (!baseDirs.has(d)) return false;
  return true;
}

/**
 * A folder removed on the server takes the folders below it, all of which the plan removes too (it
 * removes one only when nothing stays in it): one step for the topmost, whose tree ETag covers the
 * rest, instead of a listing and a delete per level.
 */
function chainRemovals(ops: Op[]): Op[] {
  const removed = new Set(ops.filter((o) => o.kind === 'rmdir-remote').map(opPath));
  const below = new Map<string, string[]>();
  for (const d of removed) {
    const top = ancestorsOf(d).find((a) => removed.has(a));
    if (top !== undefined) below.set(top, [...(below.get(top) ?? []), d]);
  }
  return ops.flatMap((o): Op[] => {
    if (o.kind !== 'rmdir-remote') return [o];
    if (ancestorsOf(o.path).some((a) => removed.has(a))) return [];
    const under = below.get(o.path);
    return [under ? { ...o, below: under } : o];
  });
}

/** The folders a move renames: `A/x/y` → `B/x/y` is folder `A` → `B` (the shared tail dropped). */
function movedFolders(from: string, to: string): [string, string] | undefined {
  const f = from.split('/');
  const t = to.split('/');
  let k = 0;
  while (k < f.length - 1 && k < t.length - 1 && f[f.length - 1 - k] === t[t.length - 1 - k]) k++;
  return k === 0 ? undefined : [f.slice(0, f.length - k).join('/'), t.slice(0, t.length - k).join('/')];
}

/**
 * Local renames that are one folder's rename become one folder move on the server: every file the
 * base and the server have in the old folder moves, with the same relative path, and the new
 * folder is free on the server. Others stay moves of single files.
 */
function folderMoves(moves: readonly MoveRemote[], base: Tree<BaseRecord>, remote: Tree<FileVersion>): Op[] {
  const groups = new Map<string, { from: string; to: string; files: MoveRemote[] }>();
  const single: Op[] = [];
  for (const m of moves) {
    const dirs = movedFolders(m.from, m.to);
    if (!dirs) {
      single.push(m);
      continue;
    }
    const k = JSON.stringify(dirs);
    const g = groups.get(k) ?? { from: dirs[0], to: dirs[1], files: [] };
    g.files.push(m);
    groups.set(k, g);
  }
  const under = (tree: Tree, dir: string): string[] => [...tree.keys()].filter((p) => p.startsWith(`${dir}/`));
  for (const g of groups.values()) {
    const moved = new Set(g.files.map((f) => f.from));
    const whole = under(base, g.from).every((p) => moved.has(p)) && under(remote, g.from).every((p) => moved.has(p)) && under(remote, g.to).length === 0 && !remote.has(g.to);
    if (whole) single.push({ kind: 'move-remote-folder', from: g.from, to: g.to, files: g.files });
    else single.push(...g.files);
  }
  return single;
}

function renameIn<T>(tree: Map<string, T>, from: string, to: string): void {
  const v = tree.get(from);
  if (v === undefined) return;
  tree.delete(from);
  tree.set(to, v);
}

function decide(path: string, l: LocalFile | undefined, b: BaseRecord | undefined, r: FileVersion | undefined, input: PlanInput, taken: Set<string>): Op | undefined {
  if (l && r && sameContent(l, r)) {
    // Equal contents are no conflict; the base only needs to say so (and learn the id and stat).
    const current = b && sameContent(b, l) && b.id === r.id && sameStat(b, l);
    return current ? undefined : { kind: 'record', path, local: l, remote: r };
  }
  if (!l && !r) return b ? { kind: 'forget', path } : undefined;
  if (!l && r) {
    if (b && sameContent(b, r) && !input.noDeletes) return { kind: 'delete-remote', path, expect: r };
    return { kind: 'download', path, remote: r }; // new on the server, or edited there: an edit beats a delete
  }
  if (l && !r) {
    if (b && sameContent(b, l) && !input.noDeletes) return { kind: 'delete-local', path, local: l };
    return { kind: 'upload', path, local: l }; // new here, or edited here: an edit beats a delete
  }
  // Both present, different bytes.
  if (!l || !r) return undefined;
  if (b && sameContent(b, l)) return { kind: 'download', path, remote: r, replaces: l };
  if (b && sameContent(b, r)) return { kind: 'upload', path, local: l, expect: r };
  const copy = conflictName(path, input.device, input.now, (p) => taken.has(p));
  taken.add(copy);
  return { kind: 'conflict', path, local: l, remote: r, copy };
}
