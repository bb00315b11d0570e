import Database from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import type { Database as Schema } from './schema.js';
import type { MetadataStore } from './types.js';
import { migrateToLatest } from './migrations.js';
import { createUserRepo } from './users-repo.js';
import { createSessionRepo } from './sessions-repo.js';

export class StoreOpenError extends Error {}

/**
 * Opens (creating if needed) the SQLite metadata store and migrates it.
 * WAL lets the CLI change users while a server runs on the same file;
 * busy_timeout makes a writer wait for the other process instead of failing.
 */
export async function openSqliteStore(file: string): Promise<MetadataStore> {
  let sqlite: Database.Database;
  try {
    sqlite = new Database(file, { timeout: 5000 });
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('synchronous = NORMAL');
    sqlite.pragma('foreign_keys = ON');
    // Reading the schema surfaces a file that is not a database before any migration runs.
    sqlite.prepare('SELECT count(*) FROM sqlite_master').get();
  } catch (e) {
    throw new StoreOpenError(`cannot open the database ${file}: ${(e as Error).message}`, { cause: e });
  }
  const db = new Kysely<Schema>({ dialect: new SqliteDialect({ database: sqlite }) });
  try {
    await migrateToLatest(db as Kysely<unknown>);
  } catch (e) {
    await db.destroy();
    throw new StoreOpenError(`cannot prepare the database ${file}: ${(e as Error).message}`, { cause: e });
  }
  return {
    users: createUserRepo(db),
    sessions: createSessionRepo(db),
    close: () => db.destroy(),
  };
}
