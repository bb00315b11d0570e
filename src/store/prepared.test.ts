import { test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { Kysely, sql, SqliteDialect } from 'kysely';
import { preparedQuery } from './prepared.js';

type Db = { t: { id: number; name: string } };

async function withDb(fn: (db: Kysely<Db>) => Promise<void>): Promise<void> {
  const db = new Kysely<Db>({ dialect: new SqliteDialect({ database: new Database(':memory:') }) });
  try {
    await sql`CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT NOT NULL)`.execute(db);
    await db.insertInto('t').values([{ id: 1, name: 'a' }, { id: 2, name: 'b' }, { id: 3, name: 'c' }]).execute();
    await fn(db);
  } finally {
    await db.destroy();
  }
}

test('prepared query: each run binds its own values and list items, per shape', async () => {
  await withDb(async (db) => {
    const q = preparedQuery((p, n) => db.selectFrom('t').select('name').where('id', 'in', p.list<number>('ids', n)).where('name', '<>', p.value<string>('not')).orderBy('id'));
    const cases: [number[], string, string[]][] = [
      [[1, 2], 'x', ['a', 'b']],
      [[1, 2, 3], 'b', ['a', 'c']],
      [[3], 'x', ['c']],
      [[2, 3], 'c', ['b']],
    ];
    for (const [ids, not, want] of cases) assert.deepEqual((await q.run(db, { ids, not }, ids.length)).rows.map((r) => r.name), want, `ids ${ids.join(',')}, not ${not}`);
  });
});

test('prepared query: a value the builder writes into the SQL instead of binding it is refused at once', async () => {
  await withDb(async (db) => {
    const q = preparedQuery((p) => db.selectFrom('t').select('name').where('name', '=', sql.lit(p.value<string>('name'))));
    await assert.rejects(q.run(db, { name: 'a' }), /not bound as parameters: name/);
  });
});

test('prepared query: a missing value is an error, not a NULL', async () => {
  await withDb(async (db) => {
    const q = preparedQuery((p) => db.selectFrom('t').select('name').where('id', '=', p.value<number>('id')));
    await assert.rejects(q.run(db, {}), /no value for id/);
  });
});
