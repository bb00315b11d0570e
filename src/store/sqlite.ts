import Database from 'better-sqlite3';
import { Kysely } from 'kysely';
import { LOCK_WAIT_MS, PatientSqliteDialect, withStatementCache } from './sqlite-driver.js';
import type { ChangeStamp } from './stamped-cache.js';
import type { Database as Schema } from './schema.js';
import type { MetadataStore } from './metadata-store.js';
import { migrateToLatest } from './migrations.js';
import { createRepositories, type StoreOptions } from './repositories.js';
import { sqliteIndexWriter } from './sqlite-writer.js';

export class StoreOpenError extends Error {}

/**
 * The stamp of what the cached lookups read (stamped-cache.ts): the counter
 * that triggers move with every commit to the sessions, access tokens, app
 * passwords, share links and the users' account columns (0023_auth_stamp),
 * and to the WebDAV locks (0030_dav_lock_stamp),
 * whichever process or tool commits. Asked only when the database may have
 * changed at all: `PRAGMA data_version` moves when another connection
 * commits (another worker, node process or the CLI on the same file), and
 * the write count when this one writes; otherwise the last counter stands.
 * So an upload's commits (usage, index, journal) no longer drop a cached
 * token, and a revocation still does, at once.
 */
export function sqliteAuthStamp(db: Database.Database, own: { readonly writes: number }): ChangeStamp {
  const version = db.prepare('PRAGMA data_version').pluck();
  const counter = db.prepare('SELECT n FROM auth_stamp WHERE id = 1').pluck();
  let seen = '';
  let stamp = '';
  return () => {
    const now = `${String(version.get())}:${own.writes}`;
    if (now !== seen) {
      // Read after the version: a commit between the two moves the version again, and the next call reads once more.
      stamp = String(counter.get());
      seen = now;
    }
    return stamp;
  };
}

/**
 * Opens and closes `file` as a reader. When no other connection is open,
 * SQLite's close folds the write-ahead log into the file and removes the
 * -wal and -shm. Connections that close at the same instant each see the
 * other's lock and both leave them (docs/performance.md, "Figures behind the
 * code"), so a cluster primary calls this once its workers are gone. A
 * connection still open elsewhere (the CLI) keeps them.
 */
export function foldWriteAheadLog(file: string): void {
  const db = new Database(file, { fileMustExist: true, timeout: 5000 });
  try {
    // The log is opened, and so folded at close, only by a connection that has read the file.
    db.prepare('SELECT count(*) FROM sqlite_master').get();
  } finally {
    db.close();
  }
}

/**
 * The connection's page cache, in KiB: while the store opens (the
 * quick_check reads the whole file, the migrations what they touch) SQLite's
 * own default, so opening leaves no more than that held, whatever the size
 * of the database; then the size better-sqlite3 builds SQLite with, which
 * holds only pages that queries read and pays for itself on a search that
 * reads every name (docs/performance.md "Memory with the default settings").
 */
const OPENING_CACHE_KIB = 2048;
const PAGE_CACHE_KIB = 16384;

/**
 * A pass over every entry (a rescan: SearchRepo.sweeping) runs with the
 * opening's small page cache: it reads and writes each page about once, so
 * the 16 MiB would fill with pages nothing reads again, on top of the heap
 * the pass itself takes (measured: docs/performance.md "The peak over the
 * whole bench"). Queries meanwhile get the small cache too; the size comes
 * back when the last pass ends (they do not overlap: the leader runs one).
 */
export function smallCacheWhile(sqlite: Database.Database): <T>(run: () => Promise<T>) => Promise<T> {
  let running = 0;
  return async (run) => {
    if (running++ === 0) sqlite.pragma(`cache_size = -${OPENING_CACHE_KIB}`);
    try {
      return await run();
    } finally {
      if (--running === 0) sqlite.pragma(`cache_size = -${PAGE_CACHE_KIB}`);
    }
  };
}

/**
 * Opens (creating if needed) the SQLite metadata store and migrates it.
 * WAL lets the CLI change users while a server runs on the same file;
 * A writer waits for another process's write lock instead of failing: on a
 * timer for the app's queries (sqlite-driver.ts), busy_timeout elsewhere.
 */
export async function openSqliteStore(file: string, opts: StoreOptions = {}): Promise<MetadataStore> {
  let sqlite: Database.Database;
  try {
    sqlite = new Database(file, { timeout: LOCK_WAIT_MS });
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('synchronous = NORMAL');
    sqlite.pragma('foreign_keys = ON');
    // Before the first read: the check below reads through it (see OPENING_CACHE_KIB).
    sqlite.pragma(`cache_size = -${OPENING_CACHE_KIB}`);
    // Reading the schema surfaces a file that is not a database before any migration runs.
    sqlite.prepare('SELECT count(*) FROM sqlite_master').get();
    // A damaged page would otherwise surface only later, as 500s on the logins that touch it.
    const check = sqlite.pragma('quick_check(1)', { simple: true });
    if (check !== 'ok') throw Object.assign(new Error(`the file is damaged (${String(check).replace(/\s+/g, ' ').trim()}); restore it from a backup`), { code: 'SQLITE_CORRUPT' });
    // Another process holding the write lock (an open transaction) would otherwise surface only
    // later, as failing logins; take and release it now, waiting busy_timeout like any writer.
    sqlite.exec('BEGIN IMMEDIATE; ROLLBACK');
  } catch (e) {
    const code = (e as { code?: string }).code;
    const why = code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED' ? 'it is locked by another process (an open sqlite3 transaction or another program)' : (e as Error).message;
    throw new StoreOpenError(`cannot open the database ${file}: ${why}`, { cause: e });
  }
  const statements = withStatementCache(sqlite);
  const dialect = new PatientSqliteDialect(sqlite, statements);
  const db = new Kysely<Schema>({ dialect });
  try {
    await migrateToLatest(db as Kysely<unknown>);
  } catch (e) {
    await db.destroy();
    throw new StoreOpenError(`cannot prepare the database ${file}: ${(e as Error).message}`, { cause: e });
  }
  sqlite.pragma(`cache_size = -${PAGE_CACHE_KIB}`);
  const authStamp = sqliteAuthStamp(sqlite, statements);
  // The upload's transaction and its riders run in a thread with a connection of its own (sqlite-writer.ts).
  const writer = sqliteIndexWriter({ file, journal: opts.journal ?? true });
  return {
    ...createRepositories(db, { changeStamp: authStamp, sweeping: smallCacheWhile(sqlite), steps: dialect.writers(db).steps, write: writer.write, ride: writer.ride }, opts),
    close: async () => {
      await writer.close();
      await db.destroy();
    },
  };
}
