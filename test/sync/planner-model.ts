// A pure model of the two sides for the planner's tests: it applies a plan the way the executor
// does (same rules for the base, the sync trash and what the server keeps), without I/O.
import { plan, type Op, type PlanInput } from '../../packages/sync/src/planner.js';
import type { BaseRecord, FileVersion, LocalFile } from '../../packages/sync/src/tree.js';

export interface World {
  local: Map<string, LocalFile>;
  base: Map<string, BaseRecord>;
  remote: Map<string, FileVersion>;
  /** Bytes the sync trash kept. */
  syncTrash: string[];
  /** Bytes the server kept as a version or in its trash when they were replaced or deleted. */
  serverKept: string[];
  nextIno: number;
  nextId: number;
}

export const v = (content: string, id?: string): FileVersion => ({ sha256: content, size: content.length, id });
export const lf = (content: string, ino: number, mtimeMs = 1): LocalFile => ({ sha256: content, size: content.length, ino, mtimeMs });
export const br = (content: string, id: string | undefined, ino: number, mtimeMs = 1): BaseRecord => ({ sha256: content, size: content.length, id, ino, mtimeMs });

const holds = (w: World, sha: string): boolean => [...w.remote.values()].some((r) => r.sha256 === sha);

export function applyOp(w: World, op: Op): void {
  switch (op.kind) {
    case 'download': {
      if (op.replaces && !holds(w, op.replaces.sha256)) w.syncTrash.push(op.replaces.sha256);
      const l = { ...op.remote, ino: w.nextIno++, mtimeMs: 1 };
      w.local.set(op.path, l);
      w.base.set(op.path, { ...op.remote, ino: l.ino, mtimeMs: 1 });
      return;
    }
    case 'upload': {
      const old = w.remote.get(op.path);
      if (old) w.serverKept.push(old.sha256);
      const stored = { sha256: op.local.sha256, size: op.local.size, id: old?.id ?? `id${w.nextId++}` };
      w.remote.set(op.path, stored);
      w.base.set(op.path, { ...stored, ino: op.local.ino, mtimeMs: op.local.mtimeMs, ctimeMs: op.local.ctimeMs });
      return;
    }
    case 'delete-local':
      if (!holds(w, op.local.sha256)) w.syncTrash.push(op.local.sha256);
      w.local.delete(op.path);
      w.base.delete(op.path);
      return;
    case 'delete-remote': {
      const old = w.remote.get(op.path);
      if (old) w.serverKept.push(old.sha256);
      w.remote.delete(op.path);
      w.base.delete(op.path);
      return;
    }
    case 'move-local':
      move(w.local, op.from, op.to);
      move(w.base, op.from, op.to);
      return;
    case 'move-remote':
      move(w.remote, op.from, op.to);
      move(w.base, op.from, op.to);
      return;
    case 'move-remote-folder':
      for (const f of op.files) applyOp(w, f);
      return;
    case 'conflict':
      move(w.local, op.path, op.copy);
      return;
    case 'record':
      w.base.set(op.path, { ...op.remote, ino: op.local.ino, mtimeMs: op.local.mtimeMs, ctimeMs: op.local.ctimeMs });
      return;
    case 'forget':
      w.base.delete(op.path);
      return;
  }
}

function move<T>(m: Map<string, T>, from: string, to: string): void {
  const x = m.get(from);
  if (x === undefined) return;
  m.delete(from);
  m.set(to, x);
}

/**
 * Plans and applies until the plan is empty; returns every op in order, or throws if it never settles.
 * `planner`: another plan function (a deliberately broken one: test/helpers/sync-mutants.ts).
 */
export function syncToRest(w: World, opts: { noDeletes?: boolean; device?: string; planner?: (input: PlanInput) => Op[] } = {}, rounds = 10): Op[] {
  const all: Op[] = [];
  for (let i = 0; i < rounds; i++) {
    const ops = (opts.planner ?? plan)({ local: w.local, base: w.base, remote: w.remote, noDeletes: opts.noDeletes ?? false, device: opts.device ?? 'laptop', now: new Date(Date.UTC(2026, 11, 2, 4, 5, 6)) });
    if (ops.length === 0) return all;
    for (const op of ops) applyOp(w, op);
    all.push(...ops);
  }
  throw new Error(`no rest after ${rounds} rounds`);
}
