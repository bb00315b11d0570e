import { Kysely, PostgresDialect, sql, type PostgresPool, type PostgresPoolClient, type QueryResult } from 'kysely';
import type { Flight } from './leases-repo.js';
import type { Writable } from 'node:stream';
import type pg from 'pg';
import { StoreOpenError } from './sqlite.js';
import type { Database as Schema } from './schema.js';
import type { MetadataStore } from './metadata-store.js';
import { migrateToLatest } from './migrations.js';
import { postgresWriters } from './postgres-writers.js';
import { createRepositories, type StoreOptions } from './repositories.js';
import { DependencyError } from '../lib/dependency-error.js';
import { serviceCall } from '../lib/progress.js';

/** pg_advisory_lock key for migrations: "FCMIGRAT" as a 64-bit number, the same on every node. */
const MIGRATION_LOCK = 0x46434d4947524154n;

/**
 * Opens the PostgreSQL metadata store and migrates it. The same repositories
 * and migrations as SQLite (one SQL through Kysely); nodes starting together
 * migrate one after another under an advisory lock, so each migration runs once.
 */
export async function openPostgresStore(url: string, opts: { poolSize?: number; timeoutMs?: number } & StoreOptions = {}): Promise<MetadataStore & { readonly kind: 'postgres'; readonly db: Kysely<Schema> }> {
  const timeoutMs = Math.round(opts.timeoutMs ?? 4000);
  // Loaded here: a deployment on SQLite never holds the driver.
  const { default: pg } = await import('pg');
  // Every wait on PostgreSQL is bounded (docs/operations.md, "When a service fails"): a connection
  // from the pool or a new one (connectionTimeoutMillis), a statement on the server (statement_timeout:
  // a slow query or a lock wait), and the answer on our side (query_timeout: a paused or unreachable
  // server never sends one, so only the client can give up).
  // pipeline: a statement is sent without waiting for the answers before it; only the index
  // transaction sends several at once (postgres-writers.ts), every other query waits as before.
  const pool = new pg.Pool({ connectionString: url, pipeline: true, max: opts.poolSize ?? 10, connectionTimeoutMillis: timeoutMs, idleTimeoutMillis: 30_000, statement_timeout: timeoutMs, query_timeout: timeoutMs + 500 });
  // An idle connection the server closed must not crash the process; the next query reconnects.
  pool.on('error', () => undefined);
  const served = reportingUnavailable(pool);
  const db = new Kysely<Schema>({ dialect: new PostgresDialect({ pool: served }) });
  // Migrations wait for another node's under an advisory lock, and one may rightly run longer than a
  // request's statement: their own short-lived connection, without the timeouts.
  const migrationPool = new pg.Pool({ connectionString: url, max: 1, connectionTimeoutMillis: Math.max(timeoutMs, 5000) });
  migrationPool.on('error', () => undefined);
  const migrator = new Kysely<Schema>({ dialect: new PostgresDialect({ pool: migrationPool }) });
  try {
    await migrator.connection().execute(async (conn) => {
      await sql`SELECT pg_advisory_lock(${MIGRATION_LOCK})`.execute(conn);
      try {
        await migrateToLatest(conn as unknown as Kysely<unknown>);
      } finally {
        await sql`SELECT pg_advisory_unlock(${MIGRATION_LOCK})`.execute(conn);
      }
    });
  } catch (e) {
    await migrator.destroy().catch(() => undefined);
    await db.destroy().catch(() => undefined);
    const where = redactUrl(url);
    throw new StoreOpenError(`cannot open the database ${where}: ${(e as Error).message}`, { cause: e });
  }
  await migrator.destroy();
  return {
    kind: 'postgres',
    db,
    ...createRepositories(db, { ...postgresWriters(db, served), flight: postgresFlight(served) }, opts),
    close: () => db.destroy(),
  };
}

/**
 * Statements sent on one connection without waiting for the answers before (the pool's pipeline),
 * each its own transaction (its own Sync): one round trip for the set, and each sees what the ones
 * before it committed.
 */
function postgresFlight(pool: PostgresPool): Flight {
  return async (queries) => {
    const client = await pool.connect();
    try {
      const answers = queries.map((q) => client.query<unknown>(q.sql, [...q.parameters]));
      for (const a of answers) a.catch(() => undefined);
      const results: QueryResult<unknown>[] = [];
      for (const a of answers) {
        const r = await a;
        results.push({ rows: r.rows ?? [], numAffectedRows: BigInt(r.rowCount ?? 0) });
      }
      return results;
    } finally {
      client.release();
    }
  };
}

/**
 * SQLSTATE classes that say the server cannot serve us now, not that the statement was wrong:
 * 08 connection exception, 53 insufficient resources, 57 operator intervention (57014: our
 * statement_timeout), 58 system error. A constraint violation (23…) and the like pass through.
 */
const UNAVAILABLE_CLASSES = new Set(['08', '53', '57', '58']);

export function isUnavailable(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  // Errors of the server carry a five-character SQLSTATE; anything else (a refused or reset socket,
  // "Query read timeout", "Connection terminated") means it did not answer.
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return UNAVAILABLE_CLASSES.has(code.slice(0, 2));
  return true;
}

/** How long after a failure to answer the database is not asked again. */
const QUIET_MS = 2000;

/**
 * The pool as Kysely sees it, with the failures of an unreachable or hung server turned into
 * DependencyError('database') (503 database_unavailable), and a connection whose query timed out
 * dropped instead of returned to the pool: its late answer would otherwise hold the next query.
 */
function reportingUnavailable(pool: pg.Pool): PostgresPool {
  // After the database failed to answer, the next moments' requests are told so at once instead of
  // each waiting out its own timeout (a request with three queries would wait three times).
  let quietUntil = 0;
  const wrap = (e: unknown) => {
    if (!isUnavailable(e)) return e;
    quietUntil = performance.now() + QUIET_MS;
    return new DependencyError('database', `The database did not answer: ${(e as Error)?.message ?? String(e)}`, { cause: e });
  };
  return {
    options: pool.options,
    async connect(): Promise<PostgresPoolClient> {
      if (performance.now() < quietUntil) throw new DependencyError('database', 'The database did not answer a moment ago.');
      let client: pg.PoolClient;
      try {
        client = await serviceCall(() => pool.connect());
      } catch (e) {
        throw wrap(e);
      }
      let broken = false;
      // The pool listens for errors only on idle connections: a server that dies while this one is
      // checked out (between a transaction's statements, or with nothing in flight) would emit an
      // 'error' nobody hears, which ends the process. Heard here, the connection is dropped on release.
      const onError = () => (broken = true);
      client.on('error', onError);
      const cork = corkingTick((client as unknown as { connection?: { stream?: Writable } }).connection?.stream);
      return {
        processID: (client as unknown as { processID?: number }).processID,
        query: ((text: unknown, params?: unknown) => {
          // A cursor (streamed rows) is passed through as it is.
          if (typeof text !== 'string') return (client.query as (c: unknown) => unknown)(text);
          cork();
          return serviceCall(() => client.query(text, params as unknown[])).catch((e: unknown) => {
            const w = wrap(e);
            if (w !== e) broken = true;
            throw w;
          });
        }) as PostgresPoolClient['query'],
        release: () => {
          // A broken connection keeps the listener while the pool ends it: its socket may still report.
          if (!broken) client.removeListener('error', onError);
          client.release(broken ? true : undefined);
        },
      };
    },
    end: () => pool.end(),
  };
}

/** The URL without its password, for messages and logs. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'postgres://…';
  }
}

/**
 * What a connection sends in one turn of the event loop goes out in one write: the driver writes
 * each statement as it is queued (a write(2) each), and the index transaction queues several at
 * once (postgres-writers.ts), which then cost one system call instead of three or four (on a busy
 * machine each is a chance to lose the core: docs/performance.md, "Fourteenth change"). Nothing
 * waits longer: the socket is uncorked before the loop looks for I/O. Without a socket (a driver
 * that keeps it elsewhere) it does nothing.
 */
export function corkingTick(socket: Writable | undefined): () => void {
  let corked = false;
  const uncork = () => {
    corked = false;
    socket?.uncork();
  };
  return () => {
    if (!socket || corked) return;
    corked = true;
    socket.cork();
    process.nextTick(uncork);
  };
}
