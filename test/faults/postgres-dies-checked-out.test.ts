// PostgreSQL dies while File Cloud holds one of its connections (inside a transaction, between two
// statements, nothing in flight). The driver reports that as an 'error' event on the connection, and
// the pool listens only on idle ones: unheard, it ended the whole worker (a service-outages run: the
// upload in flight and /api/health got ECONNRESET). It must be the next statement's 503 instead.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { openPostgresStore } from '../../src/store/postgres.js';
import { DependencyError } from '../../src/lib/dependency-error.js';
import { privatePostgres, type PrivateService } from '../helpers/private-services.js';
import { skipReason } from '../helpers/services.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('PostgreSQL killed while a connection is checked out: the next statement fails as database unavailable, the process lives on, and the store serves once it is back', { skip: skipReason('PostgreSQL'), timeout: 120_000 }, async () => {
  let pg: PrivateService | undefined;
  let store: Awaited<ReturnType<typeof openPostgresStore>> | undefined;
  try {
    pg = await privatePostgres();
    store = await openPostgresStore(pg.url, { timeoutMs: 2000 });
    const db = store.db;
    const failed = await db
      .transaction()
      .execute(async (trx) => {
        await sql`SELECT 1`.execute(trx);
        await pg!.kill();
        // The connection learns of it (reset or end of stream) while no statement is in flight.
        await sleep(1000);
        return sql`SELECT 1`.execute(trx);
      })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    assert.ok(failed instanceof DependencyError, `expected the database's DependencyError, got ${String(failed)}`);
    assert.equal(failed.dependency, 'database');
    // Back on the same port: the broken connection was dropped, not handed out again.
    await pg.restart();
    let answer: unknown;
    for (const started = Date.now(); answer === undefined; await sleep(200)) {
      answer = await sql<{ one: number }>`SELECT 1 AS one`.execute(db).then((r) => r.rows[0]?.one, (e: unknown) => {
        assert.ok(Date.now() - started < 30_000, `the store still fails 30 s after the database came back: ${String(e)}`);
        return undefined;
      });
    }
    assert.equal(answer, 1);
  } finally {
    await store?.close().catch(() => undefined);
    await pg?.dispose();
  }
});
