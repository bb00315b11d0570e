import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { Kysely, sql } from 'kysely';
import { openSqliteStore } from './sqlite.js';
import { PatientSqliteDialect, withStatementCache } from './sqlite-driver.js';
import type { Database as Schema } from './schema.js';
import { statement } from './steps.js';

/**
 * Another process (here: another connection) holds the write lock for HOLD_MS. The store's writes
 * wait for it without stopping the event loop: a timer keeps its schedule meanwhile. SQLite's own
 * busy handler slept the thread, so the timer fired only once the lock was gone (seen failing so).
 */
const HOLD_MS = 400;
const TICK_MS = 20;
/**
 * A free loop makes 20 ticks while the lock is held; a thread asleep in the busy handler makes none
 * until the lock goes. Three is a bound a starved process on a busy machine still keeps.
 */
const MIN_TICKS = 3;

async function withHeldLock(check: (store: Awaited<ReturnType<typeof openSqliteStore>>, release: () => void) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'fc-driver-'));
  const file = join(dir, 'file-cloud.db');
  const store = await openSqliteStore(file);
  const other = new Database(file, { timeout: 5000 });
  try {
    await store.users.create({ username: 'alice', passwordHash: 'h', isAdmin: false, authEpoch: 'e', now: 1 });
    other.exec('BEGIN IMMEDIATE');
    await check(store, () => other.exec('COMMIT'));
  } finally {
    if (other.inTransaction) other.exec('ROLLBACK');
    other.close();
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/** Runs `write` while the lock is held for HOLD_MS; returns how many timer ticks came meanwhile and when the write ended. */
async function underLock(store: Awaited<ReturnType<typeof openSqliteStore>>, release: () => void, write: () => Promise<unknown>) {
  let ticks = 0;
  const timer = setInterval(() => ticks++, TICK_MS);
  const started = performance.now();
  let ended = 0;
  const done = write().then(() => (ended = performance.now() - started));
  await new Promise((r) => setTimeout(r, HOLD_MS));
  const ticksWhileHeld = ticks;
  const endedWhileHeld = ended;
  release();
  await done;
  clearInterval(timer);
  return { ticksWhileHeld, endedWhileHeld, ended };
}

test('sqlite driver: a write on its own waits for another process’s write lock without stopping the event loop', async () => {
  await withHeldLock(async (store, release) => {
    const r = await underLock(store, release, () => store.usage.add('alice', 5));
    assert.equal(r.endedWhileHeld, 0, 'the write did not pass the held lock');
    assert.ok(r.ticksWhileHeld >= MIN_TICKS, `the event loop ran meanwhile (${r.ticksWhileHeld} ticks in ${HOLD_MS} ms)`);
    assert.equal((await store.usage.get('alice'))?.used, 5);
  });
});

test('sqlite driver: a transaction takes the write lock at its start, waiting on a timer', async () => {
  await withHeldLock(async (store, release) => {
    // An upload's put: in the index writer's thread (sqlite-writer.ts).
    const r = await underLock(store, release, () => store.search.put([{ user: 'alice', path: 'a.txt', isFile: true, size: 1, modified: 1 }]));
    assert.equal(r.endedWhileHeld, 0);
    assert.ok(r.ticksWhileHeld >= MIN_TICKS, `the event loop ran meanwhile (${r.ticksWhileHeld} ticks in ${HOLD_MS} ms)`);
    assert.deepEqual([...(await store.search.kinds('alice', ['a.txt']))], [['a.txt', 'file']]);
  });
  await withHeldLock(async (store, release) => {
    // A delete: a Kysely transaction on the main thread's connection (journaled even with no entry there).
    const start = await store.changes.latest();
    const r = await underLock(store, release, () => store.search.deleteWithin('alice', 'gone.txt', true));
    assert.equal(r.endedWhileHeld, 0);
    assert.ok(r.ticksWhileHeld >= MIN_TICKS, `the event loop ran meanwhile (${r.ticksWhileHeld} ticks in ${HOLD_MS} ms)`);
    assert.deepEqual((await store.changes.changesSince(start, 10)).map((c) => [c.type, c.path]), [['deleted', 'gone.txt']]);
  });
});

test('sqlite driver: a rider shares the commit of steps run in the same turn, goes alone otherwise, and fails alone', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'fc-driver-'));
  const sqlite = new Database(join(dir, 'riders.db'));
  const statements = withStatementCache(sqlite);
  const dialect = new PatientSqliteDialect(sqlite, statements);
  const db = new Kysely<Schema>({ dialect });
  try {
    sqlite.exec("CREATE TABLE t (k TEXT PRIMARY KEY, n INTEGER NOT NULL CHECK (n >= 0)); INSERT INTO t VALUES ('a', 0), ('b', 0)");
    // How many transactions began (better-sqlite3 has no commit hook): the driver's BEGINs, counted
    // (its statement is prepared once, when the writers are made).
    let begins = 0;
    const prepare = sqlite.prepare.bind(sqlite);
    sqlite.prepare = ((source: string) => {
      const statement = prepare(source);
      if (source !== 'BEGIN IMMEDIATE') return statement;
      const run = statement.run.bind(statement);
      return Object.assign(statement, { run: () => (begins++, run()) });
    }) as typeof sqlite.prepare;
    const { steps, ride } = dialect.writers(db);
    sqlite.prepare = prepare;
    const bump = (k: string, by: number) => sql`update t set n = n + ${by} where k = ${k}`.compile(db);
    const values = () => Object.fromEntries((sqlite.prepare('SELECT k, n FROM t ORDER BY k').all() as { k: string; n: number }[]).map((r) => [r.k, r.n]));

    await Promise.all([ride(bump('a', 1)), steps(function* () {
      yield* statement(bump('b', 1));
    })]);
    assert.deepEqual([begins, values()], [1, { a: 1, b: 1 }], 'one transaction for both');

    begins = 0;
    await ride(bump('a', 1));
    assert.deepEqual([begins, values()], [1, { a: 2, b: 1 }], 'a rider alone gets a transaction of its own');

    const mixed = await Promise.allSettled([ride(bump('a', -100)), ride(bump('a', 1)), steps(function* () {
      yield* statement(bump('b', 1));
    })]);
    assert.deepEqual(mixed.map((r) => r.status), ['rejected', 'fulfilled', 'fulfilled'], 'the rider that broke the CHECK, alone');
    assert.deepEqual(values(), { a: 3, b: 2 });

    const failing = await Promise.allSettled([ride(bump('a', 1)), steps(function* () {
      yield* statement(bump('b', 1));
      throw new Error('the steps fail');
    })]);
    assert.deepEqual(failing.map((r) => r.status), ['fulfilled', 'rejected'], 'the rider is committed without the failed steps');
    assert.deepEqual(values(), { a: 4, b: 2 });
  } finally {
    await db.destroy();
    await rm(dir, { recursive: true, force: true });
  }
});

test('sqlite driver: on a connection only the writers use, a transaction runs at once when the lock is free, and in turn behind one waiting', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'fc-driver-'));
  const file = join(dir, 'sole.db');
  const sqlite = new Database(file);
  sqlite.pragma('journal_mode = WAL');
  const dialect = new PatientSqliteDialect(sqlite, withStatementCache(sqlite), { sole: true });
  const db = new Kysely<Schema>({ dialect });
  const other = new Database(file);
  try {
    sqlite.exec("CREATE TABLE log (seq INTEGER PRIMARY KEY, what TEXT NOT NULL); CREATE TABLE t (k TEXT PRIMARY KEY, n INTEGER NOT NULL); INSERT INTO t VALUES ('a', 0)");
    const { steps, ride } = dialect.writers(db);
    const append = (what: string) =>
      steps(function* () {
        yield* statement(sql`insert into log (what) values (${what})`.compile(db));
      });
    const logged = () => (other.prepare('SELECT what FROM log ORDER BY seq').all() as { what: string }[]).map((r) => r.what);
    const used = () => (other.prepare("SELECT n FROM t WHERE k = 'a'").get() as { n: number }).n;

    // Free lock: committed before the call returns, with the rider asked just before it aboard.
    const riding = ride(sql`update t set n = n + 1 where k = 'a'`.compile(db));
    const first = append('first');
    assert.deepEqual([logged(), used()], [['first'], 1], 'both committed in the call, before any await');
    await Promise.all([riding, first]);

    // Held lock: the transaction waits on a timer; one asked once the lock is free again, while it still waits, comes after it.
    other.exec('BEGIN IMMEDIATE');
    const waiting = append('waited');
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(logged(), ['first'], 'nothing passed the held lock');
    other.exec('COMMIT');
    const after = append('after');
    await Promise.all([waiting, after]);
    assert.deepEqual(logged(), ['first', 'waited', 'after'], 'the later transaction did not start before the one waiting');
    assert.equal(sqlite.pragma('busy_timeout', { simple: true }), 0, 'the lock is never waited for in SQLite’s busy handler');
  } finally {
    if (other.inTransaction) other.exec('ROLLBACK');
    other.close();
    await db.destroy();
    await rm(dir, { recursive: true, force: true });
  }
});
