/**
 * The index writer's thread (sqlite-writer.ts): its own connection to the store's file, on which it
 * runs the upload's transaction (search-repo.ts createPutSteps) and the riders that share its commit
 * (sqlite-driver.ts), as the main thread did before. The main thread sends what to write and gets
 * the result back; the SQL, its locks and its commits are this thread's CPU, on the other core.
 */
import Database from 'better-sqlite3';
import { CompiledQuery, Kysely } from 'kysely';
import { parentPort, workerData } from 'node:worker_threads';
import type { Database as Schema } from './schema.js';
import { createPutSteps } from './search-repo.js';
import type { IndexedEntry } from './search.js';
import { LOCK_WAIT_MS, PatientSqliteDialect, withStatementCache } from './sqlite-driver.js';
import type { FromWriter, ToWriter, WriterOptions } from './sqlite-writer.js';

/**
 * The page cache of this connection, in KiB (SQLite's default size): it only writes uploads' entries,
 * whose transactions touch the few pages on their paths through the indexes (a walk's batches are
 * written on the main connection; sqlite.ts PAGE_CACHE_KIB is the reading side's).
 */
const CACHE_KIB = 2048;

const port = parentPort;
if (!port) throw new Error('sqlite-writer-thread.js runs as a worker thread (sqlite-writer.ts)');
const { file, journal } = workerData as WriterOptions;

/** The connection and what runs on it; an open that fails is told to the main thread, which fails the writes it sent. */
function open() {
  const sqlite = new Database(file, { fileMustExist: true, timeout: LOCK_WAIT_MS });
  // Per connection (journal_mode = WAL is the file's, set by the main thread's open).
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma(`cache_size = -${CACHE_KIB}`);
  const dialect = new PatientSqliteDialect(sqlite, withStatementCache(sqlite));
  const db = new Kysely<Schema>({ dialect });
  return { db, ...dialect.writers(db), putSteps: createPutSteps(db, journal) };
}

let writer: ReturnType<typeof open> | undefined;
try {
  writer = open();
} catch (e) {
  // Nothing listens after this: the thread ends once the message is out.
  port.postMessage({ id: 0, fatal: String((e as Error).message ?? e) } satisfies FromWriter);
}

const running = new Set<Promise<void>>();

function answer(id: number, work: Promise<unknown>): void {
  const done = work.then(
    (value) => port?.postMessage({ id, value } satisfies FromWriter),
    (e: unknown) => {
      const { message, name, code } = e as { message?: unknown; name?: unknown; code?: unknown };
      port?.postMessage({ id, error: { message: String(message ?? e), name: typeof name === 'string' ? name : 'Error', ...(typeof code === 'string' ? { code } : {}) } } satisfies FromWriter);
    },
  );
  running.add(done);
  void done.finally(() => running.delete(done));
}

if (writer) {
  const { db, steps, ride, putSteps } = writer;
  port.on('message', (m: ToWriter) => {
    if (m.put) {
      const batch: readonly IndexedEntry[] = m.put;
      answer(m.id, steps(() => putSteps(batch)));
    } else if (m.ride) {
      answer(m.id, ride(CompiledQuery.raw(m.ride.sql, [...m.ride.parameters])));
    } else if (m.close) {
      // Every write sent before the close is answered first; then the connection closes, and the thread ends.
      void Promise.allSettled([...running])
        .then(() => db.destroy())
        .finally(() => port.close());
    }
  });
}
