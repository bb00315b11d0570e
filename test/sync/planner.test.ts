import { test } from 'node:test';
import assert from 'node:assert/strict';
import { conflictName } from '../../packages/sync/src/conflict-name.js';
import { guardReason, type GuardInput } from '../../packages/sync/src/guards.js';
import { plan, type Op } from '../../packages/sync/src/planner.js';
import { sameStat, type StatStamp } from '../../packages/sync/src/tree.js';
import { br, lf, syncToRest, v, type World } from './planner-model.js';

const AT = new Date(Date.UTC(2026, 11, 2, 4, 5, 6));
const world = (local: World['local'], base: World['base'], remote: World['remote']): World => ({ local, base, remote, syncTrash: [], serverKept: [], nextIno: 100, nextId: 100 });
const m = <T>(entries: [string, T][] = []): Map<string, T> => new Map(entries);
const kinds = (ops: readonly Op[]): string[] => ops.map((o) => ('path' in o ? `${o.kind} ${o.path}` : `${o.kind} ${o.from}>${o.to}`));
const contents = (t: ReadonlyMap<string, { sha256: string }>): Record<string, string> => Object.fromEntries([...t].map(([p, x]) => [p, x.sha256]).sort());

const CASES: { name: string; local: World['local']; base: World['base']; remote: World['remote']; ops: string[]; after?: Record<string, string>; noDeletes?: boolean }[] = [
  { name: 'nothing changed: no step', local: m([['a', lf('x', 1)]]), base: m([['a', br('x', 'i1', 1)]]), remote: m([['a', v('x', 'i1')]]), ops: [], after: { a: 'x' } },
  { name: 'same bytes, only the ctime moved (a write that kept size and mtime, then undone): the base takes the new stat', local: m([['a', { ...lf('x', 1), ctimeMs: 5 }]]), base: m([['a', { ...br('x', 'i1', 1), ctimeMs: 4 }]]), remote: m([['a', v('x', 'i1')]]), ops: ['record a'], after: { a: 'x' } },
  { name: 'local edit: upload with If-Match on the base version', local: m([['a', lf('y', 1, 2)]]), base: m([['a', br('x', 'i1', 1)]]), remote: m([['a', v('x', 'i1')]]), ops: ['upload a'], after: { a: 'y' } },
  { name: 'remote edit: download over the unchanged local file', local: m([['a', lf('x', 1)]]), base: m([['a', br('x', 'i1', 1)]]), remote: m([['a', v('y', 'i1')]]), ops: ['download a'], after: { a: 'y' } },
  { name: 'edit/edit: the local version becomes the conflict copy, the server\'s keeps the name', local: m([['a.txt', lf('L', 1, 2)]]), base: m([['a.txt', br('x', 'i1', 1)]]), remote: m([['a.txt', v('R', 'i1')]]), ops: ['conflict a.txt'], after: { 'a (conflict laptop 2026-12-02 040506).txt': 'L', 'a.txt': 'R' } },
  { name: 'edit/edit to equal contents: no conflict', local: m([['a', lf('y', 1, 2)]]), base: m([['a', br('x', 'i1', 1)]]), remote: m([['a', v('y', 'i1')]]), ops: ['record a'], after: { a: 'y' } },
  { name: 'new on both sides, different: conflict', local: m([['a', lf('L', 1)]]), base: m(), remote: m([['a', v('R', 'i1')]]), ops: ['conflict a'], after: { a: 'R', 'a (conflict laptop 2026-12-02 040506)': 'L' } },
  { name: 'new on both sides, equal: recorded', local: m([['a', lf('x', 1)]]), base: m(), remote: m([['a', v('x', 'i1')]]), ops: ['record a'], after: { a: 'x' } },
  { name: 'local delete: delete on the server', local: m(), base: m([['a', br('x', 'i1', 1)]]), remote: m([['a', v('x', 'i1')]]), ops: ['delete-remote a'], after: {} },
  { name: 'remote delete: delete here (to the sync trash)', local: m([['a', lf('x', 1)]]), base: m([['a', br('x', 'i1', 1)]]), remote: m(), ops: ['delete-local a'], after: {} },
  { name: 'local edit beats remote delete', local: m([['a', lf('y', 1, 2)]]), base: m([['a', br('x', 'i1', 1)]]), remote: m(), ops: ['upload a'], after: { a: 'y' } },
  { name: 'remote edit beats local delete', local: m(), base: m([['a', br('x', 'i1', 1)]]), remote: m([['a', v('y', 'i1')]]), ops: ['download a'], after: { a: 'y' } },
  { name: 'deleted on both sides: the base forgets', local: m(), base: m([['a', br('x', 'i1', 1)]]), remote: m(), ops: ['forget a'], after: {} },
  { name: 'remote rename (same id): a local move, no download', local: m([['a', lf('x', 1)]]), base: m([['a', br('x', 'i1', 1)]]), remote: m([['d/b', v('x', 'i1')]]), ops: ['move-local a>d/b'], after: { 'd/b': 'x' } },
  { name: 'local rename (same inode): a server move, no upload', local: m([['d/b', lf('x', 1)]]), base: m([['a', br('x', 'i1', 1)]]), remote: m([['a', v('x', 'i1')]]), ops: ['move-remote a>d/b'], after: { 'd/b': 'x' } },
  {
    name: 'a local folder rename: one folder move on the server',
    local: m([['B/x', lf('1', 1)], ['B/s/y', lf('2', 2)]]),
    base: m([['A/x', br('1', 'i1', 1)], ['A/s/y', br('2', 'i2', 2)]]),
    remote: m([['A/x', v('1', 'i1')], ['A/s/y', v('2', 'i2')]]),
    ops: ['move-remote-folder A>B'],
    after: { 'B/s/y': '2', 'B/x': '1' },
  },
  {
    name: 'a local folder rename while the server has a new file in it: file by file',
    local: m([['B/x', lf('1', 1)]]),
    base: m([['A/x', br('1', 'i1', 1)]]),
    remote: m([['A/x', v('1', 'i1')], ['A/new', v('3', 'i3')]]),
    ops: ['move-remote A/x>B/x', 'download A/new'],
    after: { 'A/new': '3', 'B/x': '1' },
  },
  { name: 'remote rename of a file edited here: move, then the edit goes up at the new name', local: m([['a', lf('y', 1, 2)]]), base: m([['a', br('x', 'i1', 1)]]), remote: m([['b', v('x', 'i1')]]), ops: ['move-local a>b', 'upload b'], after: { b: 'y' } },
  { name: 'no deletes (lost cursor): a file gone locally comes back', local: m(), base: m([['a', br('x', 'i1', 1)]]), remote: m([['a', v('x', 'i1')]]), ops: ['download a'], after: { a: 'x' }, noDeletes: true },
  { name: 'no deletes (new epoch): a file gone on the server goes back up', local: m([['a', lf('x', 1)]]), base: m([['a', br('x', 'i1', 1)]]), remote: m(), ops: ['upload a'], after: { a: 'x' }, noDeletes: true },
];

for (const c of CASES) {
  test(`planner: ${c.name}`, () => {
    const ops = plan({ local: c.local, base: c.base, remote: c.remote, noDeletes: c.noDeletes ?? false, device: 'laptop', now: AT });
    assert.deepEqual(kinds(ops), c.ops);
    if (c.after) {
      const w = world(new Map(c.local), new Map(c.base), new Map(c.remote));
      syncToRest(w, { noDeletes: c.noDeletes ?? false });
      assert.deepEqual(contents(w.local), c.after, 'local side');
      assert.deepEqual(contents(w.remote), c.after, 'server side');
    }
  });
}

test('planner: a conflict uploads the copy as a new file (If-None-Match) and downloads the server version', () => {
  const w = world(m([['a.txt', lf('L', 1, 2)]]), m([['a.txt', br('x', 'i1', 1)]]), m([['a.txt', v('R', 'i1')]]));
  const ops = syncToRest(w);
  const copy = 'a (conflict laptop 2026-12-02 040506).txt';
  const upload = ops.find((o) => o.kind === 'upload');
  assert.ok(upload && upload.kind === 'upload' && upload.path === copy && upload.expect === undefined, 'the copy goes up under a new name');
  assert.ok(ops.some((o) => o.kind === 'download' && o.path === 'a.txt' && o.replaces === undefined), 'the server version comes down to a free name');
  assert.deepEqual(w.syncTrash, [], 'nothing was replaced');
});

test('conflict names keep the extension, a dot-file\'s name, the folder, and never reuse a name', () => {
  const rows: [string, string, string][] = [
    ['report.docx', 'laptop', 'report (conflict laptop 2026-12-02 040506).docx'],
    ['a/b/notes', 'pc', 'a/b/notes (conflict pc 2026-12-02 040506)'],
    ['.bashrc', 'pc', '.bashrc (conflict pc 2026-12-02 040506)'],
    ['x.tar.gz', 'my/pc', 'x.tar (conflict my_pc 2026-12-02 040506).gz'],
  ];
  for (const [path, device, want] of rows) assert.equal(conflictName(path, device, AT), want, path);
  const first = conflictName('a.txt', 'pc', AT);
  assert.equal(conflictName('a.txt', 'pc', AT, (p) => p === first), 'a (conflict pc 2026-12-02 040506 2).txt');
});

const guard = (over: Partial<GuardInput>): string | undefined =>
  guardReason({ ops: [], localFiles: 100, remoteFiles: 100, baseFiles: 100, rootExists: true, markerPresent: true, synced: true, allowDeletes: false, ...over });
const deletes = (n: number, kind: 'delete-local' | 'delete-remote'): Op[] =>
  Array.from({ length: n }, (_, i) => (kind === 'delete-local' ? { kind, path: `f${i}`, local: lf('x', i) } : { kind, path: `f${i}`, expect: v('x') }));

test('guards: a mass delete, a missing or emptied root and a missing marker pause; --allow-deletes lets them pass', () => {
  const rows: [string, Partial<GuardInput>, boolean][] = [
    ['51 of 100 local files deleted', { ops: deletes(51, 'delete-local') }, true],
    ['51 of 100 server files deleted', { ops: deletes(51, 'delete-remote') }, true],
    ['50 of 60 (not more than 50)', { ops: deletes(50, 'delete-local'), localFiles: 60 }, false],
    ['51 of 200 (not more than 30 %)', { ops: deletes(51, 'delete-remote'), remoteFiles: 200 }, false],
    ['the local folder is missing', { rootExists: false }, true],
    ['the local folder is missing on a first sync (nothing to lose)', { rootExists: false, synced: false }, false],
    ['the marker is missing', { markerPresent: false }, true],
    ['the local folder was emptied', { localFiles: 0 }, true],
    ['an empty folder that was empty at the last sync', { localFiles: 0, baseFiles: 0 }, false],
    ['a mass delete with --allow-deletes', { ops: deletes(90, 'delete-local'), allowDeletes: true }, false],
    ['a missing root with --allow-deletes', { rootExists: false, allowDeletes: true }, false],
  ];
  for (const [name, over, pauses] of rows) assert.equal(guard(over) !== undefined, pauses, name);
});

test('sameStat: a file is unchanged only when size, mtime, inode and ctime all match', () => {
  const at: StatStamp = { size: 3, mtimeMs: 1000, ino: 7, ctimeMs: 2000 };
  const rows: [string, StatStamp, boolean][] = [
    ['the same stat', { ...at }, true],
    ['another size', { ...at, size: 4 }, false],
    ['another mtime, earlier (a clock behind)', { ...at, mtimeMs: 1000 - 3 * 3_600_000 }, false],
    ['another mtime, later', { ...at, mtimeMs: 1001 }, false],
    ['another inode (replaced by a rename)', { ...at, ino: 8 }, false],
    ['the mtime set back, the ctime moved (cp -p, touch -r)', { ...at, ctimeMs: 2001 }, false],
    ['no ctime known (a base from before it was kept)', { ...at, ctimeMs: undefined }, false],
  ];
  for (const [name, now, same] of rows) assert.equal(sameStat(at, now), same, name);
});

const folderKinds = (over: { local?: string[]; base?: string[]; remote?: string[]; files?: Partial<Pick<World, 'local' | 'base' | 'remote'>>; noDeletes?: boolean }): string[] =>
  kinds(
    plan({
      local: over.files?.local ?? m(),
      base: over.files?.base ?? m(),
      remote: over.files?.remote ?? m(),
      localDirs: new Set(over.local),
      baseDirs: new Set(over.base),
      remoteDirs: new Set(over.remote),
      noDeletes: over.noDeletes ?? false,
      device: 'laptop',
      now: AT,
    }),
  );

test('planner: empty folders are made, removed and renamed both ways; a folder with a kept file stays', () => {
  const rows: [string, Parameters<typeof folderKinds>[0], string[]][] = [
    ['new here: made on the server', { local: ['e'] }, ['mkdir-remote e']],
    ['new on the server: made here', { remote: ['e'] }, ['mkdir-local e']],
    ['on both sides, new: the base takes it', { local: ['e'], remote: ['e'] }, ['record-folder e']],
    ['on both sides, known: nothing', { local: ['e'], base: ['e'], remote: ['e'] }, []],
    ['gone on both sides: the base forgets it', { base: ['e'] }, ['forget-folder e']],
    ['removed here: removed on the server, the chain as one step of its topmost folder', { base: ['e', 'e/f'], remote: ['e', 'e/f'] }, ['rmdir-remote e']],
    ['removed on the server: removed here', { local: ['e'], base: ['e'] }, ['rmdir-local e']],
    ['renamed here (an empty one): removed and made', { local: ['new'], base: ['old'], remote: ['old'] }, ['mkdir-remote new', 'rmdir-remote old']],
    ['renamed on the server: removed and made here', { local: ['old'], base: ['old'], remote: ['new'] }, ['mkdir-local new', 'rmdir-local old']],
    ['removed on the server, a new file in it here: it stays and is made again', { local: ['e'], base: ['e'], files: { local: m([['e/new', lf('n', 1)]]) } }, ['mkdir-remote e', 'upload e/new']],
    ['removed here, a file edited in it on the server: it comes back', { base: ['e'], remote: ['e'], files: { base: m([['e/x', br('x', 'i1', 1)]]), remote: m([['e/x', v('y', 'i1')]]) } }, ['mkdir-local e', 'download e/x']],
    ['removed here with its file: file, then folder', { base: ['e'], remote: ['e'], files: { base: m([['e/x', br('x', 'i1', 1)]]), remote: m([['e/x', v('x', 'i1')]]) } }, ['delete-remote e/x', 'rmdir-remote e']],
    ['no deletes (lost cursor): a folder gone on one side is made again', { local: ['e'], base: ['e'], noDeletes: true }, ['mkdir-remote e']],
    [
      'a folder moved on the server by a local folder rename: its subfolders move along',
      { local: ['B', 'B/sub'], base: ['A', 'A/sub'], remote: ['A', 'A/sub'], files: { local: m([['B/x', lf('1', 1)]]), base: m([['A/x', br('1', 'i1', 1)]]), remote: m([['A/x', v('1', 'i1')]]) } },
      ['move-remote-folder A>B'],
    ],
  ];
  for (const [name, over, want] of rows) assert.deepEqual(folderKinds(over), want, name);
});

test('guards: removing more than 50 folders and 30 % of one side\'s folders pauses; so does a root emptied of folders', () => {
  const rmdirs = (n: number): Op[] => Array.from({ length: n }, (_, i) => ({ kind: 'rmdir-remote', path: `d${i}` }));
  assert.match(guard({ ops: rmdirs(51), remoteDirs: 100 }) ?? '', /removes 51 of 100 folders on the server/);
  assert.equal(guard({ ops: rmdirs(51), remoteDirs: 200 }), undefined);
  assert.match(guard({ localFiles: 0, baseFiles: 0, localDirs: 0, baseDirs: 3 }) ?? '', /empty/);
});

test('planner: a chain removed here is one removal on the server, naming the folders it takes along; a folder with something kept below is not part of it', () => {
  const removals = (remote: string[], files: Partial<Pick<World, 'local' | 'base' | 'remote'>> = {}) =>
    plan({ local: files.local ?? m(), base: files.base ?? m(), remote: files.remote ?? m(), localDirs: new Set(), baseDirs: new Set(remote), remoteDirs: new Set(remote), noDeletes: false, device: 'laptop', now: AT })
      .flatMap((o) => (o.kind === 'rmdir-remote' ? [[o.path, ...[...(o.below ?? [])].sort()].join(' ')] : []))
      .sort();
  assert.deepEqual(removals(['a', 'a/b', 'a/b/c', 'a/b/c/d', 'x']), ['a a/b a/b/c a/b/c/d', 'x']);
  // A file new on the server in a/b keeps a and a/b there: only a/b/c (with d) goes.
  const v = { sha256: 's', size: 1, id: 'i' };
  assert.deepEqual(removals(['a', 'a/b', 'a/b/c', 'a/b/c/d'], { remote: m([['a/b/new.txt', v]]) }), ['a/b/c a/b/c/d']);
});
