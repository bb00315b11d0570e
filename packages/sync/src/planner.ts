import { conflictName } from './conflict-name.js';
import { sameContent, sameStat, type BaseRecord, type FileVersion, type LocalFile, type Tree } from './tree.js';

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
  | { readonly kind: 'forget'; readonly path: string };

export type MoveRemote = Extract<Op, { kind: 'move-remote' }>;

export interface PlanInput {
  readonly local: Tree<LocalFile>;
  readonly base: Tree<BaseRecord>;
  readonly remote: Tree<FileVersion>;
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
  'delete-local': 3,
  'delete-remote': 3,
  record: 4,
  forget: 4,
};
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

  // Local renames: a new local path holds the inode of a base path that is gone locally.
  const remoteMoves: MoveRemote[] = [];
  const goneByIno = new Map<number, string>();
  for (const [p, b] of base) if (!local.has(p) && b.ino !== undefined) goneByIno.set(b.ino, p);
  for (const [to, l] of input.local) {
    if (base.has(to) || !local.has(to)) continue;
    const from = goneByIno.get(l.ino);
    if (from === undefined) continue;
    const b = base.get(from);
    const r = remote.get(from);
    if (b === undefined || !sameContent(r, b) || remote.has(to) || r === undefined) continue;
    remoteMoves.push({ kind: 'move-remote', from, to, expect: r });
    goneByIno.delete(l.ino);
    renameIn(remote, from, to);
    renameIn(base, from, to);
  }

  ops.push(...folderMoves(remoteMoves, input.base, input.remote));

  const taken = new Set<string>([...local.keys(), ...base.keys(), ...remote.keys()]);
  const paths = [...taken].sort();
  for (const path of paths) {
    const op = decide(path, local.get(path), base.get(path), remote.get(path), input, taken);
    if (op) ops.push(op);
  }
  return ops.sort((a, b) => KIND_ORDER[a.kind] - KIND_ORDER[b.kind] || (opPath(a) < opPath(b) ? -1 : opPath(a) > opPath(b) ? 1 : 0));
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
