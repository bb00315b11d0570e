import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { openSqliteStore } from './sqlite.js';
import { semiSpaceFlag, sqliteIndexWriter } from './sqlite-writer.js';
import type { IndexedEntry } from './search.js';

const entry = (path: string): IndexedEntry => ({ user: 'alice', path, isFile: true, size: 4, modified: 1, etag: '"e"', created: true });

async function inTempDir(run: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'fc-writer-'));
  try {
    await run(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

test('index writer thread: puts from many callers land whole, each journaled once, and the main connection reads them at once', () =>
  inTempDir(async (dir) => {
    const store = await openSqliteStore(join(dir, 'db'));
    try {
      await store.users.create({ username: 'alice', passwordHash: 'h', isAdmin: false, authEpoch: 'e', now: 1 });
      const start = await store.changes.latest();
      const paths = Array.from({ length: 200 }, (_, i) => `f${i}.txt`);
      // Together, as uploads in flight are: they wait while the thread writes and go in its next transaction.
      const [written] = await Promise.all([Promise.all(paths.map((p) => store.search.put([entry(p)]))), ...paths.map(() => store.usage.add('alice', 4))]);
      assert.equal(written.length, 200);
      for (const [i, w] of written.entries()) assert.match(w.get(`alice\0${paths[i]}`)?.id ?? '', /^[0-9a-f]{32}$/, 'each put gets its entry back');
      assert.equal((await store.search.kinds('alice', paths)).size, 200, 'every entry, read by the main connection');
      assert.equal((await store.usage.get('alice'))?.used, 800, 'every rider');
      const changes = await store.changes.changesSince(start, 1000);
      assert.deepEqual(changes.map((c) => c.path).sort(), [...paths].sort(), 'one journal entry each');
    } finally {
      await store.close();
    }
  }));

test('index writer thread: a thread that cannot start fails the writes it was given, with its reason, and the next write starts a new one', () =>
  inTempDir(async (dir) => {
    const file = join(dir, 'db');
    // No database there yet: the thread's open fails (it never creates one; the store's open does).
    const writer = sqliteIndexWriter({ file, journal: true });
    try {
      const failed = await Promise.allSettled([writer.write([entry('a.txt')]), writer.write([entry('b.txt')])]);
      for (const f of failed) {
        assert.equal(f.status, 'rejected');
        assert.match(String((f as PromiseRejectedResult).reason), /the index writer thread stopped: .*unable to open database file/);
      }
      await (await openSqliteStore(file)).close();
      const written = await writer.write([entry('c.txt')]);
      assert.equal(written.get('alice\0c.txt')?.size, 4, 'a new thread wrote it');
      const raw = new Database(file, { readonly: true });
      try {
        assert.deepEqual(raw.prepare('SELECT path FROM search_entries ORDER BY path').pluck().all(), ['c.txt'], 'nothing of the failed writes');
      } finally {
        raw.close();
      }
    } finally {
      await writer.close();
    }
  }));

test('index writer thread: a put fails whole with SQLite’s own error code, and the thread goes on', () =>
  inTempDir(async (dir) => {
    const file = join(dir, 'db');
    const store = await openSqliteStore(file);
    const raw = new Database(file);
    try {
      // A trigger that refuses one name: the transaction (entry, journal, stamps) rolls back whole.
      raw.exec("CREATE TRIGGER refuse BEFORE INSERT ON search_entries WHEN NEW.path = 'bad.txt' BEGIN SELECT RAISE(ABORT, 'refused by the test'); END");
      const start = await store.changes.latest();
      await assert.rejects(store.search.put([entry('bad.txt')]), (e: Error & { code?: string }) => e.code === 'SQLITE_CONSTRAINT_TRIGGER' && /refused by the test/.test(e.message));
      assert.deepEqual(await store.changes.changesSince(start, 10), [], 'no journal entry of the failed put');
      await store.search.put([entry('good.txt')]);
      assert.deepEqual([...(await store.search.kinds('alice', ['bad.txt', 'good.txt'])).keys()], ['good.txt']);
    } finally {
      raw.close();
      await store.close();
    }
  }));

test('index writer thread: a delete or a move asked after puts comes after them, and a put asked after it comes after it', () =>
  inTempDir(async (dir) => {
    const store = await openSqliteStore(join(dir, 'db'));
    try {
      // None awaited before the next is asked: the puts go to the thread, the delete and the move run on the main connection.
      const asked = [
        store.search.put([entry('gone.txt')]),
        store.search.put([entry('moved.txt')]),
        store.search.deleteWithin('alice', 'gone.txt', true),
        store.search.moveWithin('alice', 'moved.txt', 'there.txt'),
        store.search.put([entry('gone.txt')]),
      ];
      await Promise.all(asked);
      assert.deepEqual([...(await store.search.kinds('alice', ['gone.txt', 'moved.txt', 'there.txt'])).keys()].sort(), ['gone.txt', 'there.txt']);
    } finally {
      await store.close();
    }
  }));

test('index writer thread: writes sent before close are answered, writes after it are refused, and an unclosed store does not keep its process alive', () =>
  inTempDir(async (dir) => {
    const file = join(dir, 'db');
    await (await openSqliteStore(file)).close();
    const writer = sqliteIndexWriter({ file, journal: true });
    const puts = [writer.write([entry('a.txt')]), writer.write([entry('b.txt')])];
    await writer.close();
    assert.deepEqual((await Promise.all(puts)).map((w) => [...w.keys()]), [['alice\0a.txt'], ['alice\0b.txt']]);
    await assert.rejects(writer.write([entry('c.txt')]), /the store is closed/);

    // A process that writes and never closes its store (a CLI command that throws) still ends.
    const script = `import { openSqliteStore } from ${JSON.stringify(new URL('./sqlite.js', import.meta.url).href)};
const s = await openSqliteStore(${JSON.stringify(file)});
await s.search.put([{ user: 'alice', path: 'd.txt', isFile: true, size: 1, modified: 1 }]);
console.log('written');`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    // Generous: a process start on a busy machine; a thread holding the process open never ends.
    const code = await new Promise<number | null | 'timeout'>((resolve) => {
      const t = setTimeout(() => resolve('timeout'), 30_000);
      child.once('exit', (c) => (clearTimeout(t), resolve(c)));
    });
    if (code === 'timeout') child.kill('SIGKILL');
    assert.deepEqual([code, out.trim()], [0, 'written']);
    const raw = new Database(file, { readonly: true });
    try {
      assert.deepEqual(raw.prepare('SELECT path FROM search_entries ORDER BY path').pluck().all(), ['a.txt', 'b.txt', 'd.txt']);
    } finally {
      raw.close();
    }
  }));

test('semiSpaceFlag: the last --max-semi-space-size among the flags', () => {
  const cases: [string[], string | undefined][] = [
    [[], undefined],
    [['--max-old-space-size=100'], undefined],
    [['--max-semi-space-size=16'], '--max-semi-space-size=16'],
    [['--max_semi_space_size=8'], '--max-semi-space-size=8'],
    [['--max-semi-space-size', '4'], '--max-semi-space-size=4'],
    [['--max-semi-space-size=16', '', '--max-semi-space-size=2'], '--max-semi-space-size=2'],
    [['--max-semi-space-size=lots'], undefined],
    [['--max-semi-space-sizes=3'], undefined],
  ];
  for (const [flags, want] of cases) assert.equal(semiSpaceFlag(flags), want, flags.join(' '));
});

test('index writer thread: its young generation keeps its own limit under the server’s --max-semi-space-size, and the flag is set back for the process', async () => {
  // In a process of its own started as the server is; each thread reports the largest its young generation grew to.
  const script = `import { Worker } from 'node:worker_threads';
import { withThreadHeapLimits } from ${JSON.stringify(new URL('./sqlite-writer.js', import.meta.url).href)};
const code = "const v8 = require('node:v8'); const keep = []; for (let i = 0; i < 3e6; i++) { const o = { i, s: 'x' + i }; if (i % 5000 === 0) keep.push(o); } require('node:worker_threads').parentPort.postMessage(v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size);";
const young = (w) => new Promise((resolve, reject) => w.once('message', resolve).once('error', reject));
const limits = { maxYoungGenerationSizeMb: 4, maxOldGenerationSizeMb: 64 };
const limited = await young(withThreadHeapLimits(() => new Worker(code, { eval: true, execArgv: [], resourceLimits: limits })));
const after = await young(new Worker(code, { eval: true, execArgv: [], resourceLimits: limits }));
console.log(JSON.stringify([limited, after]));`;
  const child = spawn(process.execPath, ['--max-semi-space-size=16', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  assert.equal(code, 0);
  const [limited, after] = JSON.parse(out) as [number, number];
  const MiB = 1024 * 1024;
  assert.ok(limited <= 4 * MiB, `the thread's young generation stayed within its limit: ${limited / MiB} MiB`);
  assert.ok(after > 4 * MiB, `a thread made after it has the process's flag again: ${after / MiB} MiB`);
});

test('index writer thread: a tree’s batches (main connection) and uploads’ puts (the thread) queued together all land, each journaled once', () =>
  inTempDir(async (dir) => {
    const store = await openSqliteStore(join(dir, 'db'));
    try {
      await store.users.create({ username: 'alice', passwordHash: 'h', isAdmin: false, authEpoch: 'e', now: 1 });
      const start = await store.changes.latest();
      const uploads = Array.from({ length: 60 }, (_, i) => `u${i}.txt`);
      const trees = Array.from({ length: 6 }, (_, t) => Array.from({ length: 50 }, (_, i) => `tree${t}/f${i}.txt`));
      // Interleaved in the queue, as a rescan's batches and uploads are.
      const asked: Promise<ReadonlyMap<string, unknown>>[] = [];
      for (let i = 0; i < uploads.length; i++) {
        asked.push(store.search.put([entry(uploads[i] as string)]));
        if (i % 10 === 0) asked.push(store.search.put((trees[i / 10] as string[]).map(entry), { tree: true }));
      }
      const written = await Promise.all(asked);
      assert.equal(written.length, 66);
      const all = [...uploads, ...trees.flat()];
      assert.equal((await store.search.kinds('alice', all)).size, all.length, 'every entry');
      const changes = await store.changes.changesSince(start, 1000);
      assert.deepEqual(changes.map((c) => c.path).sort(), [...all].sort(), 'one journal entry each');
    } finally {
      await store.close();
    }
  }));
