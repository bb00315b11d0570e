import type Database from 'better-sqlite3';
import { SqliteDialect, SqliteDriver, type CompiledQuery, type Kysely, type DatabaseConnection, type Driver, type QueryResult, type SqliteDatabase, type SqliteStatement } from 'kysely';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Database as Schema } from './schema.js';
import type { Ride, StepRunner, Steps } from './steps.js';

/** A prepared statement as Kysely runs it, and whether it only reads (a write waits for the lock, below). */
export type CachedStatement = SqliteStatement & { readonly readonly: boolean };
/** The statement cache (withStatementCache), as this driver runs it. */
export type CachedStatements = Omit<SqliteDatabase, 'prepare'> & { readonly writes: number; prepare(sql: string): CachedStatement };

/** How many distinct SQL texts keep their prepared statement. */
const STATEMENT_CACHE_SIZE = 200;

/**
 * Kysely's SQLite driver prepares every query anew, and better-sqlite3's
 * prepare (parse + plan) costs more than running the indexed lookup each
 * request makes to check its access token. This keeps the prepared
 * statement of each SQL text (bounded, least recently used out) and runs it
 * with each query's own parameters: it caches plans, never results. SQLite
 * re-prepares a statement itself after a schema change. The driver runs one
 * query at a time (it holds a connection mutex), so a shared statement is
 * never in use twice; we do not stream results (Kysely's stream() would keep
 * a statement busy).
 *
 * It also counts this connection's writes (every statement that is not
 * read-only, counted as it runs), for the change stamp below.
 */
export function withStatementCache(db: Database.Database, size = STATEMENT_CACHE_SIZE): CachedStatements {
  const cache = new Map<string, CachedStatement>();
  let writes = 0;
  const counted = (statement: Database.Statement): CachedStatement => {
    if (statement.readonly) return statement;
    return {
      readonly: false,
      reader: statement.reader,
      all: (parameters) => (writes++, statement.all(parameters)),
      run: (parameters) => (writes++, statement.run(parameters)),
      iterate: (parameters) => (writes++, statement.iterate(parameters)),
    };
  };
  return {
    get writes() {
      return writes;
    },
    close: () => db.close(),
    prepare(sql: string) {
      let statement = cache.get(sql);
      if (statement) {
        cache.delete(sql);
      } else {
        statement = counted(db.prepare(sql));
        if (cache.size >= size) cache.delete(cache.keys().next().value as string);
      }
      cache.set(sql, statement);
      return statement;
    },
  };
}

/** How long a write waits for another process's write lock before it fails with SQLITE_BUSY (as busy_timeout did). */
export const LOCK_WAIT_MS = 5000;

/**
 * Retries after a mere turn of the event loop before the first timer. The other process holds the
 * lock for one transaction, a fraction of a millisecond (a checkpoint longer), while a timer waits
 * at least 1 ms: a closed-loop client's connection would sit idle that long on every collision.
 */
const TURNS = 8;

/** The pause before the n-th retry: TURNS turns of the event loop, then timers growing to 8 ms. */
const pause = (n: number): number => (n < TURNS ? 0 : Math.min(8, 2 ** Math.floor((n - TURNS) / 2)));

const isBusy = (e: unknown): boolean => (e as { code?: string }).code === 'SQLITE_BUSY';

/** Runs `attempt` once the write lock is free (it throws SQLITE_BUSY until then). */
type Patience = <T>(attempt: () => T) => Promise<T>;

/**
 * Waits for SQLite's write lock on a timer instead of in SQLite's busy handler. That handler
 * sleeps the thread (1, 2, 5, 10 … ms), and better-sqlite3 is synchronous: with two workers on one
 * file, every collision stopped the whole event loop of the worker that lost — every request it
 * held — while its CPU sat idle (docs/performance.md, "Figures behind the code"). On a timer the worker goes on
 * with its other requests meanwhile; Kysely's connection mutex holds this process's other queries.
 * `sole` (a connection only the writers use, PatientSqliteDialect): busy_timeout stays 0.
 */
function createPatience(sqlite: Database.Database, sole = false): Patience {
  const toggle = sole ? undefined : busyToggle(sqlite);
  if (sole) sqlite.pragma('busy_timeout = 0');
  return async function patiently<T>(attempt: () => T): Promise<T> {
    const deadline = Date.now() + LOCK_WAIT_MS;
    for (let n = 0; ; n++) {
      toggle?.off.get();
      try {
        return attempt();
      } catch (e) {
        if (!isBusy(e) || Date.now() >= deadline) throw e;
      } finally {
        toggle?.on.get();
      }
      const ms = pause(n);
      await (ms === 0 ? new Promise((resolve) => setImmediate(resolve)) : sleep(ms));
    }
  };
}

/** busy_timeout is per connection: off only for the one synchronous step that may meet the lock. */
function busyToggle(sqlite: Database.Database): { off: Database.Statement; on: Database.Statement } {
  // Plucked: the answer's row is never read, and a row object for each of two statements a write cost more than the pragma.
  const off = sqlite.prepare('PRAGMA busy_timeout = 0').pluck();
  const on = sqlite.prepare(`PRAGMA busy_timeout = ${LOCK_WAIT_MS}`).pluck();
  // SQLite sets this pragma while it compiles the statement, and a run marks the statement to be
  // compiled again at its next run: the first run of a fresh one sets nothing. Without these two,
  // the first wait of a new connection met `on`'s 5 s in SQLite's busy handler, the loop stopped.
  off.get();
  on.get();
  return { off, on };
}

/** Runs a compiled statement as Kysely's SqliteConnection does. */
function runStatement<R>(statement: CachedStatement, parameters: readonly unknown[]): QueryResult<R> {
  if (statement.reader) return { rows: statement.all(parameters) as R[] };
  const { changes, lastInsertRowid } = statement.run(parameters);
  return { insertId: lastInsertRowid === undefined ? undefined : BigInt(lastInsertRowid), numAffectedRows: changes === undefined ? undefined : BigInt(changes), rows: [] };
}

/**
 * Steps (steps.ts) as one synchronous run between BEGIN IMMEDIATE and COMMIT. better-sqlite3 is
 * synchronous anyway; what an awaited Kysely transaction adds is time under the write lock: a turn
 * through Kysely's async layers per statement, and whatever else of this process's work is ready at
 * each of those awaits (docs/performance.md, "Figures behind the code"). Every other process waits
 * that long for the lock. Only the wait for the lock is asynchronous (on a timer, as every write here),
 * inside Kysely's connection mutex so no other query of this process runs in between.
 *
 * Riders (`ride`): single writes that need no answer but their commit, such as an upload's
 * `used_bytes + size`. Each goes into the next of these transactions, after its steps, or into
 * one of their own at the next turn of the event loop when none starts before: an upload's usage
 * and its index entries (both written when its storage event comes) share one commit instead of
 * two (an autocommit's time and write-ahead-log page, docs/performance.md, "Figures behind the code").
 * Riders are under a savepoint: one that fails is rolled back and rejected alone, the steps stay.
 *
 * `sole`: nothing but these writers runs on the connection (the index writer's thread,
 * sqlite-writer-thread.ts). A transaction then starts at once, without Kysely's connection and its
 * turns, when none of these is waiting for the lock and the lock is free: all of it is one
 * synchronous run, so nothing can come between (docs/performance.md, "The thread's transaction
 * without Kysely's turns"). Otherwise it waits its turn as on a shared connection.
 */
function sqliteWriters(db: Kysely<Schema>, sqlite: Database.Database, statements: CachedStatements, patiently: Patience, sole = false): { steps: StepRunner; ride: Ride } {
  type Rider = { readonly query: CompiledQuery; readonly resolve: () => void; readonly reject: (e: unknown) => void };
  // Prepared once: `exec` parses its text at every call, and every upload's transaction runs these.
  const begin = sqlite.prepare('BEGIN IMMEDIATE');
  const commit = sqlite.prepare('COMMIT');
  const savepoint = sqlite.prepare('SAVEPOINT rider');
  const release = sqlite.prepare('RELEASE rider');
  const rollbackTo = sqlite.prepare('ROLLBACK TO rider');
  let riders: Rider[] = [];
  let alone: NodeJS.Immediate | undefined;

  /** Runs the riders waiting now, after the steps, before COMMIT; returns what to tell them after it. */
  function board(): { aboard: Rider[]; failed: Map<Rider, unknown> } {
    const aboard = riders;
    riders = [];
    const failed = new Map<Rider, unknown>();
    for (const r of aboard) {
      savepoint.run();
      try {
        runStatement(statements.prepare(r.query.sql), r.query.parameters);
        release.run();
      } catch (e) {
        rollbackTo.run();
        release.run();
        failed.set(r, e);
      }
    }
    return { aboard, failed };
  }

  /** The steps and the riders waiting now, after BEGIN, to COMMIT; throws (rolled back) when they fail. */
  function runBegun<T>(steps: (() => Steps<T>) | undefined): T | undefined {
    let boarded: ReturnType<typeof board> | undefined;
    let value: T | undefined;
    try {
      if (steps) {
        const run = steps();
        let next = run.next();
        while (!next.done) next = run.next(runStatement(statements.prepare(next.value.sql), next.value.parameters));
        value = next.value;
      }
      boarded = board();
      commit.run();
    } catch (e) {
      if (sqlite.inTransaction) sqlite.exec('ROLLBACK');
      for (const r of boarded?.aboard ?? []) r.reject(e);
      throw e;
    }
    for (const r of boarded.aboard) {
      const error = boarded.failed.get(r);
      if (error === undefined) r.resolve();
      else r.reject(error);
    }
    return value;
  }

  /** Transactions of these writers waiting for their turn (a later one never starts before them). */
  let waitingTurns = 0;

  function transact<T>(steps: (() => Steps<T>) | undefined): Promise<T | undefined> {
    if (sole && waitingTurns === 0 && !sqlite.inTransaction) {
      if (!steps && riders.length === 0) return Promise.resolve(undefined);
      let began = false;
      try {
        begin.run();
        began = true;
      } catch (e) {
        if (!isBusy(e)) return Promise.reject(e);
      }
      if (began) {
        try {
          return Promise.resolve(runBegun(steps));
        } catch (e) {
          return Promise.reject(e);
        }
      }
    }
    waitingTurns++;
    return db
      .connection()
      .execute(async () => {
        // A turn of riders alone that an earlier transaction took on already: nothing to do.
        if (!steps && riders.length === 0) return undefined;
        await patiently(() => begin.run());
        return runBegun(steps);
      })
      .finally(() => waitingTurns--);
  }

  return {
    steps: <T>(steps: () => Steps<T>) => transact(steps) as Promise<T>,
    ride: (query) =>
      new Promise<void>((resolve, reject) => {
        riders.push({ query, resolve, reject });
        alone ??= setImmediate(() => {
          alone = undefined;
          // A failure is each rider's own (rejected above).
          transact(undefined).catch(() => undefined);
        });
      }),
  };
}

/**
 * Kysely's SQLite driver with two changes, both about the one write lock that every process on the
 * file shares:
 * - a transaction begins IMMEDIATE: it takes the write lock before it reads. A deferred one that
 *   read first and then wrote failed at once with SQLITE_BUSY_SNAPSHOT when another process committed
 *   in between (busy_timeout does not wait for that), and its write was lost (the change-feed bench
 *   found it with two workers). Transactions that only read take the lock too; the store has few;
 * - the lock, for a transaction or for a write on its own, is waited for on a timer (createPatience).
 */
class PatientDriver extends SqliteDriver {
  readonly #sqlite: Database.Database;
  readonly #connection: DatabaseConnection;
  readonly #patiently: Patience;

  constructor(sqlite: Database.Database, statements: CachedStatements, patiently: Patience) {
    super({ database: statements });
    this.#sqlite = sqlite;
    this.#patiently = patiently;
    // As Kysely's SqliteConnection runs a query, but a write on its own waits for the lock patiently.
    const run = runStatement;
    this.#connection = {
      async executeQuery<R>({ sql, parameters }: CompiledQuery): Promise<QueryResult<R>> {
        const statement = statements.prepare(sql);
        // Inside a transaction the lock is held (IMMEDIATE); a read never needs it (WAL).
        if (sqlite.inTransaction || statement.readonly) return run<R>(statement, parameters);
        return patiently(() => run<R>(statement, parameters));
      },
      streamQuery() {
        throw new Error('streamed queries are not used with SQLite');
      },
    };
  }

  override async acquireConnection(): Promise<DatabaseConnection> {
    return this.#connection;
  }

  override async beginTransaction(): Promise<void> {
    const sqlite = this.#sqlite;
    await this.#patiently(() => sqlite.exec('BEGIN IMMEDIATE'));
  }
}

export class PatientSqliteDialect extends SqliteDialect {
  readonly #sqlite: Database.Database;
  readonly #statements: CachedStatements;
  // One per connection: busy_timeout is the connection's.
  readonly #patiently: Patience;
  readonly #sole: boolean;
  /**
   * `sole`: only `writers` runs on this connection (the index writer's thread). Its lock is then
   * never waited for in SQLite's busy handler (busy_timeout 0 throughout, no toggling a statement), only on timers.
   */
  constructor(sqlite: Database.Database, statements: CachedStatements, opts: { sole?: boolean } = {}) {
    super({ database: statements });
    this.#sqlite = sqlite;
    this.#statements = statements;
    this.#sole = opts.sole === true;
    this.#patiently = createPatience(sqlite, this.#sole);
  }
  override createDriver(): Driver {
    return new PatientDriver(this.#sqlite, this.#statements, this.#patiently);
  }
  /** Runs Steps (steps.ts) and riders on this connection without a pause under the lock (sqliteWriters). */
  writers(db: Kysely<Schema>): { steps: StepRunner; ride: Ride } {
    return sqliteWriters(db, this.#sqlite, this.#statements, this.#patiently, this.#sole);
  }
}
