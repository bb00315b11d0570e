import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runStoreConformance, runAccountsConformance, runOidcConformance, runSearchConformance } from './conformance/index.test-suite.js';
import Database from 'better-sqlite3';
import { foldWriteAheadLog, openSqliteStore, smallCacheWhile, StoreOpenError } from './sqlite.js';
import { AUTH_TABLES, SEARCH_TEXT_BATCH, USER_AUTH_COLUMNS, USER_USAGE_COLUMNS } from './migrations.js';
import type { MetadataStore } from './metadata-store.js';
import type { User } from './users.js';
import { ROUNDING_ALLOWANCE, UNITS_PER_DOWNLOAD } from '../domain/download-units.js';

const openTemp = async () => {
  const dir = await mkdtemp(join(tmpdir(), 'fc-store-'));
  return { store: await openSqliteStore(join(dir, 'file-cloud.db')), cleanup: () => rm(dir, { recursive: true, force: true }) };
};
runStoreConformance('sqlite', openTemp);
runAccountsConformance('sqlite', openTemp);
runOidcConformance('sqlite', openTemp);

runSearchConformance('sqlite', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'fc-store-'));
  return { store: await openSqliteStore(join(dir, 'file-cloud.db')), cleanup: () => rm(dir, { recursive: true, force: true }) };
});

test('sqlite: data survives closing and reopening the file', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'fc-store-'));
  try {
    const file = join(dir, 'file-cloud.db');
    const a = await openSqliteStore(file);
    await a.users.create({ username: 'alice', passwordHash: 'h', isAdmin: false, authEpoch: 'e', now: 1 });
    await a.close();
    const b = await openSqliteStore(file);
    assert.equal((await b.users.getByName('alice'))?.passwordHash, 'h');
    await b.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('sqlite: a file that is not a database gives a clear StoreOpenError', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'fc-store-'));
  try {
    const file = join(dir, 'file-cloud.db');
    await writeFile(file, 'this is not a database '.repeat(100));
    await assert.rejects(openSqliteStore(file), (e: unknown) => e instanceof StoreOpenError && /cannot (open|prepare) the database/.test(e.message));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

/** Two connections to one file (two workers, or a server and the CLI) and a user, alice, made by `server`. */
async function withTwoConnections(fn: (c: { server: MetadataStore; other: MetadataStore; user: User; file: string }) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'fc-store-'));
  const file = join(dir, 'file-cloud.db');
  const server = await openSqliteStore(file);
  const other = await openSqliteStore(file);
  try {
    const user = await server.users.create({ username: 'alice', passwordHash: 'h', isAdmin: false, authEpoch: 'e', now: 1 });
    await fn({ server, other, user, file });
  } finally {
    await other.close();
    await server.close();
    await rm(dir, { recursive: true, force: true });
  }
}

test('sqlite: a cached access token stops working at once when another connection or this one revokes it', () =>
  withTwoConnections(async ({ server, other, user }) => {
    const live = async (n: number) => {
      const s = await server.sessions.create({ userId: user.id, refreshHash: `r${n}`, now: 1, expiresAt: 1e12 });
      await server.sessions.addAccessToken({ tokenHash: `a${n}`, sessionId: s.id, expiresAt: 1000 });
      // Looked up twice, so the second answer comes from the cache.
      for (let i = 0; i < 2; i++) assert.equal((await server.sessions.findAccess(`a${n}`, 10))?.session.id, s.id);
      return s;
    };
    const s1 = await live(1);
    await other.sessions.delete(s1.id);
    assert.equal(await server.sessions.findAccess('a1', 10), undefined, 'a session ended by another connection');

    const s2 = await live(2);
    await server.sessions.delete(s2.id);
    assert.equal(await server.sessions.findAccess('a2', 10), undefined, 'a session ended by this connection');

    await live(3);
    assert.ok(await other.users.setDisabled('alice', true));
    assert.equal((await server.sessions.findAccess('a3', 10))?.user.disabled, true, 'the user disabled by another connection');

    assert.equal(await server.sessions.findAccess('a3', 1000), undefined, 'a cached token still expires on time');

    // App passwords are cached the same way.
    assert.ok(await other.users.setDisabled('alice', false));
    await server.apiKeys.create({ id: 'k1', userId: user.id, name: 'sync', keyHash: 'k1h', readOnly: false, createdAt: 1, expiresAt: 1000, lastUsedAt: undefined });
    for (let i = 0; i < 2; i++) assert.equal((await server.apiKeys.findByHash('k1h', 10))?.key.id, 'k1');
    assert.equal(await server.apiKeys.findByHash('k1h', 1000), undefined, 'a cached key still expires on time');
    assert.ok(await other.apiKeys.delete('k1', user.id));
    assert.equal(await server.apiKeys.findByHash('k1h', 10), undefined, 'a key deleted by another connection');
  }));

test('sqlite: a cached share link is seen revoked, used up or its owner disabled at once, from another connection or this one', () =>
  withTwoConnections(async ({ server, other, user }) => {
    const link = (id: string, maxDownloads?: number) =>
      server.shares.create({ id, ownerId: user.id, owner: 'alice', path: 'a.txt', isFile: true, uploadOnly: false, passwordHash: undefined, maxDownloads, downloadUnits: 0, expiresAt: undefined, createdAt: 1 });
    /** Looked up twice, so the second answer comes from the cache. */
    const seen = async (id: string) => {
      await server.shares.get(id);
      return server.shares.get(id);
    };
    await link('s1');
    assert.equal((await seen('s1'))?.id, 's1');
    assert.ok(await other.shares.delete('s1', user.id));
    assert.equal(await server.shares.get('s1'), undefined, 'revoked by another connection');

    await link('s2', 1);
    assert.equal((await seen('s2'))?.downloadUnits, 0);
    assert.ok(await other.shares.claimUnits('s2', UNITS_PER_DOWNLOAD));
    assert.equal((await server.shares.get('s2'))?.downloadUnits, UNITS_PER_DOWNLOAD, 'used up by another connection');

    await link('s3');
    assert.equal((await seen('s3'))?.downloadUnits, 0);
    await server.shares.addUnits('s3', 5);
    assert.equal((await server.shares.get('s3'))?.downloadUnits, 5, 'counted by this connection');
    assert.ok(await other.users.setDisabled('alice', true));
    assert.equal((await server.shares.get('s3'))?.ownerDisabled, true, 'the owner disabled by another connection');
  }));

test('sqlite: the token cache outlives commits that are not about accounts (usage, index, journal) and no commit to an account column, from any connection', () =>
  withTwoConnections(async ({ server, other, user, file }) => {
    const raw = new Database(file);
    try {
      // Every users column is either read by a cached lookup or one of the usage counters every upload writes.
      const columns = (raw.prepare('PRAGMA table_info(users)').all() as { name: string }[]).map((c) => c.name).sort();
      assert.deepEqual(columns, [...USER_AUTH_COLUMNS, ...USER_USAGE_COLUMNS].sort(), 'a new users column belongs in USER_AUTH_COLUMNS or USER_USAGE_COLUMNS (migrations.ts)');
      const s = await server.sessions.create({ userId: user.id, refreshHash: 'r', now: 1, expiresAt: 1e12 });
      let n = 0;
      /**
       * A token looked up (so cached), then taken out of the database behind the cache's back (its
       * trigger dropped for the moment): a later lookup finds it only in the cache. So whether `commit`
       * dropped the cache shows as whether the token is still found.
       */
      const cachedAfter = async (commit: () => unknown): Promise<boolean> => {
        const token = `t${++n}`;
        await server.sessions.addAccessToken({ tokenHash: token, sessionId: s.id, expiresAt: 1000 });
        assert.equal((await server.sessions.findAccess(token, 10))?.session.id, s.id);
        const trigger = raw.prepare("SELECT sql FROM sqlite_master WHERE name = 'access_tokens_auth_delete'").pluck().get() as string;
        raw.exec('DROP TRIGGER access_tokens_auth_delete');
        raw.prepare('DELETE FROM access_tokens WHERE token_hash = ?').run(token);
        raw.exec(trigger);
        assert.equal((await server.sessions.findAccess(token, 10))?.session.id, s.id, 'the token is still in the cache');
        await commit();
        return (await server.sessions.findAccess(token, 10)) !== undefined;
      };
      // What an upload commits, from this connection and from another one (a second worker).
      assert.equal(await cachedAfter(() => server.usage.add('alice', 4096)), true, 'usage, this connection');
      assert.equal(await cachedAfter(() => other.usage.add('alice', 4096)), true, 'usage, another connection');
      assert.equal(await cachedAfter(() => other.search.put([{ user: 'alice', path: 'a.txt', isFile: true, size: 1, modified: 1, etag: '"e"' }])), true, 'index and journal');
      for (const column of USER_USAGE_COLUMNS) assert.equal(await cachedAfter(() => raw.prepare(`UPDATE users SET ${column} = ${column}`).run()), true, column);
      // Every account column, every account table.
      for (const column of USER_AUTH_COLUMNS) assert.equal(await cachedAfter(() => raw.prepare(`UPDATE users SET ${column} = ${column}`).run()), false, column);
      // A row in each table, so that an update of it changes something.
      await server.sessions.addAccessToken({ tokenHash: 'kept', sessionId: s.id, expiresAt: 1000 });
      await server.apiKeys.create({ id: 'k1', userId: user.id, name: 'sync', keyHash: 'k1h', readOnly: false, createdAt: 1, expiresAt: undefined, lastUsedAt: undefined });
      await server.shares.create({ id: 's1', ownerId: user.id, owner: 'alice', path: 'a.txt', isFile: true, uploadOnly: false, passwordHash: undefined, maxDownloads: undefined, downloadUnits: 0, expiresAt: undefined, createdAt: 1 });
      for (const table of AUTH_TABLES) {
        const first = (raw.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[])[0]?.name as string;
        assert.equal(await cachedAfter(() => raw.prepare(`UPDATE ${table} SET ${first} = ${first}`).run()), false, `update of ${table}`);
      }
      assert.equal(await cachedAfter(() => other.sessions.create({ userId: user.id, refreshHash: 'r2', now: 1, expiresAt: 1e12 })), false, 'a new session');
      assert.equal(await cachedAfter(() => other.users.create({ username: 'bob', passwordHash: 'h', isAdmin: false, authEpoch: 'e', now: 1 })), false, 'a new user');
    } finally {
      raw.close();
    }
  }));

test('sqlite: names reach the text index in batches, a search finds them at once, and deleting or renaming a waiting one keeps the index whole', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'fc-store-'));
  const file = join(dir, 'file-cloud.db');
  const store = await openSqliteStore(file);
  const raw = new Database(file);
  try {
    const entry = (path: string) => ({ user: 'alice', path, isFile: true, size: 1, modified: 1, created: true });
    /** What the trigram index alone holds for `text` (a search would first bring it up to date). */
    const inTextIndex = (text: string) => (raw.prepare('SELECT count(*) FROM search_fts WHERE search_fts MATCH ?').pluck().get(`"${text}"`) as number);
    const found = async (text: string) => (await store.search.search({ user: 'alice', text, within: '', type: undefined, limit: 1000 })).entries.map((e) => e.path).sort();
    /** FTS5's own check of the index against search_entries; throws when they differ. */
    const whole = () => raw.exec("INSERT INTO search_fts(search_fts) VALUES ('integrity-check')");

    await store.search.put(['report-1.pdf', 'report-2.pdf', 'report-3.pdf'].map(entry));
    assert.equal(inTextIndex('report'), 0, 'waiting, not indexed with each upload');
    assert.deepEqual(await found('report'), ['report-1.pdf', 'report-2.pdf', 'report-3.pdf'], 'a search finds them at once');
    assert.equal(inTextIndex('report'), 3, 'the search indexed them');
    whole();

    // Waiting entries deleted and renamed (a move to a new name) leave nothing behind.
    await store.search.put(['draft-1.txt', 'draft-2.txt', 'draft-3.txt'].map(entry));
    await store.search.deleteWithin('alice', 'draft-1.txt', true);
    await store.search.moveWithin('alice', 'draft-2.txt', 'final-2.txt');
    assert.deepEqual(await found('draft'), ['draft-3.txt']);
    assert.deepEqual(await found('final'), ['final-2.txt']);
    whole();
    // An indexed entry renamed and deleted.
    await store.search.moveWithin('alice', 'report-1.pdf', 'summary-1.pdf');
    await store.search.deleteWithin('alice', 'report-2.pdf', true);
    assert.deepEqual(await found('report'), ['report-3.pdf']);
    assert.deepEqual(await found('summary'), ['summary-1.pdf']);
    whole();

    // A batch goes in with the upload that fills it, without a search.
    const many = Array.from({ length: SEARCH_TEXT_BATCH }, (_, i) => `photo-${i}.jpg`);
    for (const path of many) await store.search.put([entry(path)]);
    assert.equal(inTextIndex('photo'), SEARCH_TEXT_BATCH, 'indexed by the insert that made the batch full');
    whole();

    // The highest entry deleted after it was indexed: the next entry takes its id and is indexed at once.
    const top = raw.prepare('SELECT max(id) FROM search_entries').pluck();
    const highest = top.get() as number;
    raw.prepare('DELETE FROM search_entries WHERE id = ?').run(highest);
    await store.search.put([entry('again-1.txt')]);
    assert.equal(top.get(), highest, 'the id was taken again');
    assert.equal(inTextIndex('again'), 1);
    whole();

    // A rescan's sweep finds the marked entries through the partial index.
    const plan = raw.prepare("EXPLAIN QUERY PLAN SELECT path FROM search_entries WHERE user_name = 'alice' AND scan = 'x'").all() as { detail: string }[];
    assert.match(plan.map((p) => p.detail).join('; '), /search_entries_user_scan/);
  } finally {
    raw.close();
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
});

test('sqlite: foldWriteAheadLog folds a log left behind into the file and removes it, and creates no file', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'fc-store-'));
  const file = join(dir, 'file-cloud.db');
  try {
    await (await openSqliteStore(file)).close();
    // A process that writes and dies without closing leaves its log, as two workers closing at once do.
    const writer = spawn(process.execPath, ['--input-type=module', '-e', `
      import Database from 'better-sqlite3';
      const db = new Database(${JSON.stringify(file)});
      db.prepare("INSERT INTO settings (name, value) VALUES ('left', 'in the log')").run();
      process.stdout.write('written');
      // The timer holds the connection: unreachable, it was collected and closed (which folds the log
      // away) before the kill, now and then on Node 22 on a busy machine.
      setInterval(() => db, 1000);`], { stdio: ['ignore', 'pipe', 'inherit'] });
    await once(writer.stdout, 'data');
    writer.kill('SIGKILL');
    await once(writer, 'exit');
    const beside = async () => (await readdir(dir)).filter((n) => n !== 'file-cloud.db').sort();
    assert.deepEqual(await beside(), ['file-cloud.db-shm', 'file-cloud.db-wal'], 'the killed writer left its log');

    foldWriteAheadLog(file);
    assert.deepEqual(await beside(), [], 'folded and removed');
    const after = new Database(file);
    try {
      assert.equal(after.prepare("SELECT value FROM settings WHERE name = 'left'").pluck().get(), 'in the log', 'the log was folded, not dropped');
    } finally {
      after.close();
    }
    assert.throws(() => foldWriteAheadLog(join(dir, 'missing.db')));
    assert.deepEqual(await beside(), [], 'a missing file is not created');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('sqlite: migration 0022 takes AUTOINCREMENT off the journal and never hands out a cursor again, also when every entry was purged', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'fc-store-'));
  const file = join(dir, 'file-cloud.db');
  const entry = (path: string) => ({ user: 'alice', path, isFile: true, size: 1, modified: 1, created: true });
  try {
    await (await openSqliteStore(file)).close();
    // The journal as 0018 made it: AUTOINCREMENT, cursors 1–7 handed out; `kept` holds 5–7, `purged` nothing (horizon 7).
    for (const state of ['kept', 'purged'] as const) {
      const raw = new Database(file);
      // 0022 and every later migration run again, as on an upgrade from 0021 (the later ones are idempotent).
      raw.prepare("DELETE FROM kysely_migration WHERE name >= '0022_changes_plain_cursor'").run();
      raw.exec(`DROP TABLE changes; CREATE TABLE changes (cursor INTEGER PRIMARY KEY AUTOINCREMENT, owner TEXT NOT NULL, type TEXT NOT NULL, path TEXT NOT NULL,
        from_path TEXT, is_file INTEGER NOT NULL, size BIGINT, modified BIGINT, etag TEXT, created_at BIGINT NOT NULL); CREATE INDEX changes_owner_cursor ON changes (owner, cursor)`);
      const insert = raw.prepare("INSERT INTO changes (owner, type, path, is_file, created_at) VALUES ('alice', 'created', ?, 1, 1)");
      for (let i = 1; i <= 7; i++) insert.run(`old${i}.txt`);
      raw.prepare(state === 'kept' ? 'DELETE FROM changes WHERE cursor < 5' : 'DELETE FROM changes').run();
      raw.prepare('UPDATE changes_horizon SET purged_through = ? WHERE id = 1').run(state === 'kept' ? 4 : 7);
      raw.close();
      const store = await openSqliteStore(file);
      try {
        assert.equal(await store.changes.latest(), 7, state);
        assert.deepEqual((await store.changes.changesSince(4, 10)).map((c) => c.path), state === 'kept' ? ['old5.txt', 'old6.txt', 'old7.txt'] : [], state);
        await store.search.put([entry(`new-${state}.txt`)]);
        const after = await store.changes.changesSince(0, 10);
        assert.deepEqual(after.map((c) => [c.cursor, c.path]).slice(-1), [[8, `new-${state}.txt`]], `${state}: the next cursor follows the last one handed out`);
        assert.equal(after.length, state === 'kept' ? 4 : 1, `${state}: no placeholder in the feed`);
      } finally {
        await store.close();
      }
      const check = new Database(file, { readonly: true });
      assert.doesNotMatch(String((check.prepare("SELECT sql FROM sqlite_master WHERE name = 'changes'").get() as { sql: string }).sql), /AUTOINCREMENT/i);
      check.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('sqlite: migration 0012 turns whole download counts into units and caps limits at the new maximum', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'fc-store-'));
  const file = join(dir, 'file-cloud.db');
  try {
    const store = await openSqliteStore(file);
    const user = await store.users.create({ username: 'alice', passwordHash: 'x', isAdmin: false, authEpoch: 'e', now: 1 });
    const link = (id: string, maxDownloads?: number) =>
      store.shares.create({ id, ownerId: user.id, owner: 'alice', path: 'a.txt', isFile: true, uploadOnly: false, passwordHash: undefined, maxDownloads, downloadUnits: 0, expiresAt: undefined, createdAt: 1 });
    await link('counted', 5);
    await link('huge', 50_000_000);
    await store.close();
    // As a database before 0012 held them: whole downloads, any limit.
    const raw = new Database(file);
    raw.prepare("UPDATE shares SET downloads = 3 WHERE id = 'counted'").run();
    // Migrations apply in name order, so the ones after 0012 run again too: undo what they made.
    raw.prepare("DELETE FROM kysely_migration WHERE name >= '0012_share_download_units'").run();
    raw.exec('DROP INDEX tus_uploads_user; ALTER TABLE users DROP COLUMN staged_bytes; DROP TABLE grants; DROP TABLE group_members; DROP TABLE groups; ALTER TABLE tus_uploads DROP COLUMN uploader');
    raw.exec('DROP TABLE oidc_accounts; DROP TABLE local_accounts; DROP TABLE oidc_link_pending; DROP TABLE oidc_requests');
    raw.exec('DROP TABLE webhook_deliveries; DROP TABLE webhook_cursors; DROP TABLE webhooks; DROP TABLE audit_head; DROP TABLE audit_events');
    raw.exec('DROP TABLE changes; DROP TABLE changes_horizon; ALTER TABLE search_entries DROP COLUMN etag; ALTER TABLE search_entries DROP COLUMN tree_cursor');
    raw.exec('DROP TABLE trash_items; DROP TABLE file_versions');
    raw.close();
    const again = await openSqliteStore(file);
    try {
      assert.equal((await again.shares.get('counted'))?.downloadUnits, 3 * UNITS_PER_DOWNLOAD);
      assert.equal((await again.shares.get('counted'))?.maxDownloads, 5);
      assert.equal((await again.shares.get('huge'))?.maxDownloads, 1_000_000);
      assert.equal(await again.shares.claimUnits('counted', 2 * UNITS_PER_DOWNLOAD), true);
      assert.equal(await again.shares.claimUnits('counted', ROUNDING_ALLOWANCE + 1), false, 'used up: 5 of 5');
    } finally {
      await again.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a rescan runs with the small page cache and gives the big one back after it, also when it fails or passes overlap', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'fc-store-'));
  const { store, cleanup } = { store: await openSqliteStore(join(dir, 'file-cloud.db')), cleanup: () => rm(dir, { recursive: true, force: true }) };
  // The store's own connection is not reachable from here: a second one, wrapped the way openSqliteStore wraps its own.
  const sqlite = new Database(join(dir, 'file-cloud.db'));
  try {
    const sweeping = smallCacheWhile(sqlite);
    const size = () => sqlite.pragma('cache_size', { simple: true });
    sqlite.pragma('cache_size = -16384');
    assert.equal(await sweeping(async () => size()), -2048);
    assert.equal(size(), -16384);
    await assert.rejects(sweeping(() => Promise.reject(new Error('walk failed'))), /walk failed/);
    assert.equal(size(), -16384);
    // Two at once: the big cache comes back when the last ends.
    let endFirst: () => void = () => undefined;
    const first = sweeping(() => new Promise<void>((r) => (endFirst = r)));
    assert.equal(await sweeping(async () => size()), -2048);
    assert.equal(size(), -2048, 'the first pass still runs');
    endFirst();
    await first;
    assert.equal(size(), -16384);
    // The store's rescan asks for it through the search repository (what the leader's rescanAll runs in).
    assert.equal(await store.search.sweeping(async () => 'ran'), 'ran');
  } finally {
    sqlite.close();
    await store.close();
    await cleanup();
  }
});
