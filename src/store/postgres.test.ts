import assert from 'node:assert/strict';
import { test } from 'node:test';
import { newDatabase, skipReason } from '../../test/helpers/services.js';
import { runStoreConformance } from './conformance.js';
import { runSearchConformance } from './search-conformance.js';
import { MIGRATION_NAMES } from './migrations.js';
import { openPostgresStore } from './postgres.js';
import { StoreOpenError } from './sqlite.js';

const skip = skipReason('PostgreSQL');

if (skip) test('postgres store conformance', { skip }, () => undefined);
else runStoreConformance('postgres', async () => ({ store: await openPostgresStore(await newDatabase('conf')), cleanup: async () => undefined }));

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
