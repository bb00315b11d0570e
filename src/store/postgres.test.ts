import assert from 'node:assert/strict';
import { test } from 'node:test';
import { newDatabase, skipReason } from '../../test/helpers/services.js';
import { runStoreConformance, runAccountsConformance, runOidcConformance, runSearchConformance } from './conformance/index.test-suite.js';
import { LastAdminError } from './users.js';
import { MIGRATION_NAMES } from './migrations.js';
import { corkingTick, openPostgresStore } from './postgres.js';
import { StoreOpenError } from './sqlite.js';

const skip = skipReason('PostgreSQL');

if (skip) test('postgres store conformance', { skip }, () => undefined);
else runStoreConformance('postgres', async () => ({ store: await openPostgresStore(await newDatabase('conf')), cleanup: async () => undefined }));
if (!skip) runAccountsConformance('postgres', async () => ({ store: await openPostgresStore(await newDatabase('acct')), cleanup: async () => undefined }));
if (!skip) runOidcConformance('postgres', async () => ({ store: await openPostgresStore(await newDatabase('oidc')), cleanup: async () => undefined }));

test('postgres: two nodes demoting the last two administrators at once never leave none; a TOTP step is claimed once across nodes', { skip }, async () => {
  const url = await newDatabase('admins');
  const [n1, n2] = await Promise.all([openPostgresStore(url), openPostgresStore(url)]);
  try {
    for (let round = 0; round < 10; round++) {
      await n1!.users.create({ username: `a${round}`, passwordHash: 'h', isAdmin: true, authEpoch: 'e', now: 1 });
      await n1!.users.create({ username: `b${round}`, passwordHash: 'h', isAdmin: true, authEpoch: 'e', now: 1 });
      if (round > 0) for (const n of [`a${round - 1}`, `b${round - 1}`]) await n1!.users.delete(n);
      const results = await Promise.allSettled([n1!.users.setAdmin(`a${round}`, false), n2!.users.setAdmin(`b${round}`, false)]);
      assert.deepEqual(results.map((r) => r.status).sort(), ['fulfilled', 'rejected'], `round ${round}`);
      const failed = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
      assert.ok(failed.reason instanceof LastAdminError, String(failed.reason));
      const admins = (await n1!.users.list()).filter((u) => u.isAdmin);
      assert.equal(admins.length, 1, `round ${round}`);
      await n1!.users.setAdmin(admins[0]!.username === `a${round}` ? `b${round}` : `a${round}`, true);
    }
    const u = await n1!.users.create({ username: 'totp', passwordHash: 'h', isAdmin: false, authEpoch: 'e', now: 1 });
    await n1!.totp.setPending(u.id, 'S');
    await n1!.totp.enable(u.id, 'S', 1, []);
    for (let step = 2; step < 22; step++) {
      const claims = await Promise.all([n1!.totp.claimStep(u.id, step), n2!.totp.claimStep(u.id, step)]);
      assert.deepEqual(claims.sort(), [false, true], `step ${step}`);
    }
  } finally {
    await Promise.all([n1!.close(), n2!.close()]);
  }
});

if (skip) test('postgres search conformance', { skip }, () => undefined);
else runSearchConformance('postgres', async () => ({ store: await openPostgresStore(await newDatabase('search')), cleanup: async () => undefined }));

test('postgres: nodes starting together migrate once, under the advisory lock', { skip }, async () => {
  const url = await newDatabase('migrate');
  const stores = await Promise.all(Array.from({ length: 6 }, () => openPostgresStore(url)));
  try {
    const [first] = stores;
    const applied = await first!.db.selectFrom('kysely_migration' as never).selectAll().execute();
    assert.equal(applied.length, MIGRATION_NAMES.length, 'each migration recorded once');
    await first!.users.create({ username: 'alice', passwordHash: 'h', isAdmin: false, authEpoch: 'e', now: 1 });
    for (const s of stores) assert.equal((await s.users.getByName('alice'))?.passwordHash, 'h', 'every node sees one database');
  } finally {
    await Promise.all(stores.map((s) => s.close()));
  }
});

test('postgres: times and flags read back as numbers and booleans (int8 arrives as text)', { skip }, async () => {
  const store = await openPostgresStore(await newDatabase('types'));
  try {
    const big = 1_790_000_000_123;
    const u = await store.users.create({ username: 'bob', passwordHash: 'h', isAdmin: true, authEpoch: 'e', now: big });
    assert.deepEqual(await store.users.getByName('bob'), u);
    assert.equal((await store.users.getByName('bob'))?.createdAt, big);
    assert.equal((await store.users.getByName('bob'))?.isAdmin, true);
  } finally {
    await store.close();
  }
});

test('postgres: an unreachable server gives a clear StoreOpenError without the password', { skip }, async () => {
  await assert.rejects(openPostgresStore('postgres://fc:s3cret@127.0.0.1:9/nowhere'), (e: unknown) => {
    assert.ok(e instanceof StoreOpenError);
    assert.match(e.message, /cannot open the database postgres:\/\/fc:\*\*\*@127\.0\.0\.1:9\/nowhere/);
    assert.doesNotMatch(e.message, /s3cret/);
    return true;
  });
});

test('postgres: statements a connection sends in one turn of the event loop go out in one write (corkingTick)', { skip }, async () => {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: await newDatabase('cork'), pipeline: true });
  await client.connect();
  try {
    // The driver's socket, its writes counted as they reach it (write and writev alike).
    type Write = (...a: unknown[]) => unknown;
    const stream = (client as unknown as { connection: { stream: import('node:net').Socket & { _write: Write; _writev: Write } } }).connection.stream;
    let writes = 0;
    for (const m of ['_write', '_writev'] as const) {
      const original = stream[m].bind(stream);
      stream[m] = (...a: unknown[]) => {
        writes++;
        return original(...a);
      };
    }
    const flight = () => [client.query('BEGIN'), client.query('SELECT $1::int AS n', [1]), client.query('SELECT $1::int AS n', [2]), client.query('COMMIT')];
    writes = 0;
    await Promise.all(flight());
    assert.ok(writes >= 4, `without the cork the driver writes each statement (${writes} writes)`);
    const cork = corkingTick(stream);
    writes = 0;
    cork();
    const answers = await Promise.all(flight());
    assert.equal(writes, 1, 'one write for the four statements of the flight');
    assert.deepEqual(answers.slice(1, 3).map((r) => r.rows[0].n), [1, 2], 'each statement answered, in order');
    // Nothing waits for the next turn longer than that turn: a statement sent later is written then.
    writes = 0;
    cork();
    assert.equal((await client.query('SELECT 3 AS n')).rows[0].n, 3);
    assert.equal(writes, 1);
  } finally {
    await client.end();
  }
});
