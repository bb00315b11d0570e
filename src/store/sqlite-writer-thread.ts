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
  // Only the writers run on this connection: a transaction starts without Kysely's turns when it can.
  const dialect = new PatientSqliteDialect(sqlite, withStatementCache(sqlite), { sole: true });
  const db = new Kysely<Schema>({ dialect });
  return { db, ...dialect.writers(db), putSteps: createPutSteps(db, journal) };
}

let writer: ReturnType<typeof open> | undefined;
try {
  writer = open();
} catch (e) {
  // Nothing listens after this: the thread ends once the message is out.
  port.postMessage([{ id: 0, fatal: String((e as Error).message ?? e) }] satisfies FromWriter[]);
}

const running = new Set<Promise<void>>();

/** Answers not yet sent: those that settle in one turn (an upload's put and its rider share a commit) go in one message. */
let answers: FromWriter[] = [];
function reply(a: FromWriter): void {
  if (answers.length === 0)
    queueMicrotask(() => {
      const sent = answers;
      answers = [];
      port?.postMessage(sent);
    });
  answers.push(a);
}

function answer(id: number, work: Promise<unknown>): void {
  const done = work.then(
    (value) => reply({ id, value }),
    (e: unknown) => {
      const { message, name, code } = e as { message?: unknown; name?: unknown; code?: unknown };
      reply({ id, error: { message: String(message ?? e), name: typeof name === 'string' ? name : 'Error', ...(typeof code === 'string' ? { code } : {}) } });
    },
  );
  running.add(done);
  void done.finally(() => running.delete(done));
}

if (writer) {
  const { db, steps, ride, putSteps } = writer;
  port.on('message', (requests: readonly ToWriter[]) => {
    // The riders first: a put's transaction may run at once (sqlite-driver.ts, `sole`), and the riders
    // that came with it (its upload's usage) board it. A rider is a single write that no put reads.
    for (const m of requests) if (m.ride) answer(m.id, ride(CompiledQuery.raw(m.ride.sql, [...m.ride.parameters])));
    for (const m of requests) {
      if (m.put) {
        const batch: readonly IndexedEntry[] = m.put;
        answer(m.id, steps(() => putSteps(batch)));
      } else if (m.close) {
        // Every write sent before the close is answered first (its answer's message was queued as it settled);
        // then the connection closes, and the thread ends.
        void Promise.allSettled([...running])
          .then(() => db.destroy())
          .finally(() => port.close());
      }
    }
  });
}
