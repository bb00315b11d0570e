import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runStoreConformance } from './conformance.js';
import { runAccountsConformance } from './accounts-conformance.js';
import { openSqliteStore, StoreOpenError } from './sqlite.js';

const openTemp = async () => {
  const dir = await mkdtemp(join(tmpdir(), 'fc-store-'));
  return { store: await openSqliteStore(join(dir, 'file-cloud.db')), cleanup: () => rm(dir, { recursive: true, force: true }) };
};
runStoreConformance('sqlite', openTemp);
runAccountsConformance('sqlite', openTemp);

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
