// A seeded, replayable randomized run of the planner: random edits, creations, deletions and
// renames on both sides of a synced base, then plan → apply until rest. After each run no version
// that existed on either side is lost, and the sides are the same. A failure prints its seed and
// path; FC_SYNC_SEED=<seed> replays it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { syncToRest, type World } from './planner-model.js';
import { MUTANTS, mutated, type Mutant } from '../helpers/sync-mutants.js';
import { plan, type Op, type PlanInput } from '../../packages/sync/src/planner.js';
import type { BaseRecord, FileVersion, LocalFile } from '../../packages/sync/src/tree.js';

// d/… and e/… share tails, so renames between them are folder renames too.
const PATHS = ['a', 'b.txt', 'd/c', 'd/e.txt', 'd/f/g', 'e/c', 'e/e.txt', 'h'];
const CONTENTS = ['v0', 'v1', 'v2', 'v3', 'v4', 'v5', 'v6'];

type Mutation = { kind: 'edit' | 'delete' | 'create' | 'rename' | 'save-as-new'; at: number; to: number; content: number };
const mutation = fc.record({
  kind: fc.constantFrom<Mutation['kind']>('edit', 'delete', 'create', 'rename', 'save-as-new'),
  at: fc.nat(PATHS.length - 1),
  to: fc.nat(PATHS.length - 1),
  content: fc.nat(CONTENTS.length - 1),
});
const scenario = fc.record({
  base: fc.array(fc.option(fc.nat(CONTENTS.length - 1), { nil: undefined }), { minLength: PATHS.length, maxLength: PATHS.length }),
  local: fc.array(mutation, { maxLength: 5 }),
  remote: fc.array(mutation, { maxLength: 5 }),
});

type Scenario = { base: (number | undefined)[]; local: Mutation[]; remote: Mutation[] };

function build(s: Scenario): World {
  const w: World = { local: new Map(), base: new Map(), remote: new Map(), syncTrash: [], serverKept: [], nextIno: 1000, nextId: 1000 };
  s.base.forEach((c, i) => {
    const p = PATHS[i]!;
    if (c === undefined) return;
    const content = CONTENTS[c]!;
    const rec: BaseRecord = { sha256: content, size: content.length, id: `id${i}`, ino: i + 1, mtimeMs: 1 };
    w.base.set(p, rec);
    w.local.set(p, { sha256: content, size: content.length, ino: i + 1, mtimeMs: 1 });
    w.remote.set(p, { sha256: content, size: content.length, id: `id${i}` });
  });
  for (const mu of s.local) mutateLocal(w, mu);
  for (const mu of s.remote) mutateRemote(w, mu);
  return w;
}

function free(tree: ReadonlyMap<string, unknown>, p: string): boolean {
  // A file and a folder cannot share a name: d/c and d cannot both exist.
  for (const q of tree.keys()) if (q === p || q.startsWith(`${p}/`) || p.startsWith(`${q}/`)) return false;
  return true;
}

function mutateLocal(w: World, mu: Mutation): void {
  const p = PATHS[mu.at]!;
  const q = PATHS[mu.to]!;
  const c = CONTENTS[mu.content]!;
  const cur = w.local.get(p);
  const file = (ino: number, mtimeMs: number): LocalFile => ({ sha256: c, size: c.length, ino, mtimeMs });
  if (mu.kind === 'edit' && cur) w.local.set(p, file(cur.ino, cur.mtimeMs + 1));
  else if (mu.kind === 'save-as-new' && cur) w.local.set(p, file(w.nextIno++, 1)); // an editor's atomic save
  else if (mu.kind === 'delete') w.local.delete(p);
  else if (mu.kind === 'create' && free(w.local, p)) w.local.set(p, file(w.nextIno++, 1));
  else if (mu.kind === 'rename' && cur && p !== q) {
    w.local.delete(p);
    if (free(w.local, q)) w.local.set(q, cur);
    else w.local.set(p, cur);
  }
}

function mutateRemote(w: World, mu: Mutation): void {
  const p = PATHS[mu.at]!;
  const q = PATHS[mu.to]!;
  const c = CONTENTS[mu.content]!;
  const cur = w.remote.get(p);
  const version = (id: string): FileVersion => ({ sha256: c, size: c.length, id });
  if ((mu.kind === 'edit' || mu.kind === 'save-as-new') && cur) w.remote.set(p, version(cur.id!));
  else if (mu.kind === 'delete') w.remote.delete(p);
  else if (mu.kind === 'create' && free(w.remote, p)) w.remote.set(p, version(`id${w.nextId++}`));
  else if (mu.kind === 'rename' && cur && p !== q) {
    w.remote.delete(p);
    if (free(w.remote, q)) w.remote.set(q, cur);
    else w.remote.set(p, cur);
  }
}

const shas = (...trees: ReadonlyMap<string, { sha256: string }>[]): Set<string> => new Set(trees.flatMap((t) => [...t.values()].map((x) => x.sha256)));
const contents = (t: ReadonlyMap<string, { sha256: string }>): Record<string, string> => Object.fromEntries([...t].map(([p, x]) => [p, x.sha256]).sort());

/** The model's property: after sync, the sides match, no version is lost and every edit is live. */
const property = (planner?: (input: PlanInput) => Op[]) =>
  fc.property(scenario, fc.boolean(), (s, noDeletes) => {
    const w = build(s);
    const before = shas(w.local, w.remote);
    const baseShas = shas(w.base);
    const ops = syncToRest(w, { noDeletes, ...(planner ? { planner } : {}) });
    assert.deepEqual(contents(w.local), contents(w.remote), 'the sides match');
    const live = shas(w.local, w.remote);
    for (const x of before) assert.ok(live.has(x) || w.syncTrash.includes(x) || w.serverKept.includes(x), `version ${x} was lost`);
    // Bytes that were at no path of the last synced state are edits: an edit is never only in a trash.
    for (const x of before) if (!baseShas.has(x)) assert.ok(live.has(x), `the edit ${x} is not live`);
    if (noDeletes) assert.deepEqual(ops.filter((o) => o.kind === 'delete-local' || o.kind === 'delete-remote'), [], 'no deletes');
  });

test('planner model: after any edits on both sides, no version is lost, every new version is live, and the sides match', () => {
  const seed = process.env.FC_SYNC_SEED === undefined ? Date.now() ^ (Math.random() * 0x7fffffff) : Number(process.env.FC_SYNC_SEED);
  fc.assert(property(), { seed, numRuns: 2000 });
});

test('planner model: a planner that breaks one rule fails the same property', (t) => {
  for (const name of Object.keys(MUTANTS) as Mutant[]) {
    const r = fc.check(property(mutated(plan, name)), { seed: 55, numRuns: 2000 });
    assert.ok(r.failed, `${name}: the model did not catch it in 2000 runs`);
    t.diagnostic(`${name}: caught after ${r.numRuns} runs: ${String((r.errorInstance as Error | undefined)?.message).split('\n')[0]}`);
  }
});
