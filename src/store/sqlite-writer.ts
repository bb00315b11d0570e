import { setFlagsFromString } from 'node:v8';
import { Worker } from 'node:worker_threads';
import type { CompiledQuery } from 'kysely';
import type { IndexWrite } from './search-repo.js';
import type { EntryIdentity, IndexedEntry } from './search.js';
import type { Ride } from './steps.js';

/** What the thread is started with. */
export type WriterOptions = { readonly file: string; readonly journal: boolean };
/** A request to the thread: a batch of index puts, a rider, or the close. Each message is the requests of one turn, in order. */
export type ToWriter = { id: number; put?: readonly IndexedEntry[]; ride?: { sql: string; parameters: readonly unknown[] }; close?: true };
/** The thread's answer to one request, or why it cannot write at all (its connection did not open). Each message is the answers of one turn. */
export type FromWriter = { id: number; value?: unknown; error?: { message: string; name: string; code?: string }; fatal?: string };

/** The index writer seen from the main thread. */
export type IndexWriter = { readonly write: IndexWrite; readonly ride: Ride; close(): Promise<void> };

/**
 * The thread's heap: its garbage is a transaction's statements and values, so V8's default young
 * generation (sized for a whole server) only held memory; the old generation holds its compiled
 * statements (what the thread costs: docs/performance.md, "The upload's transaction in a thread").
 * A thread that passes them dies, its writes fail, and the next write starts another.
 */
const LIMITS = { maxYoungGenerationSizeMb: 4, maxOldGenerationSizeMb: 64 } as const;

/**
 * V8's semi-space flag is the process's, and it overrides a thread's own young-generation limit: the
 * server's `--max-semi-space-size` (src/cli/server-flags.ts) gave this thread the main thread's
 * young generation, which its first burst of writes filled and V8 kept (docs/performance.md, "The
 * upload's transaction in a thread"). So the flag is unset while the thread's heap is made, which
 * happens before it runs its first line, and set back once it runs; the main thread's heap was made
 * at start and does not read it again.
 */
export function withThreadHeapLimits(start: () => Worker): Worker {
  const given = semiSpaceFlag([...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)]);
  if (given === undefined) return start();
  setFlagsFromString('--max-semi-space-size=0');
  let worker: Worker;
  try {
    worker = start();
  } catch (e) {
    setFlagsFromString(given);
    throw e;
  }
  let restored = false;
  const restore = () => {
    if (!restored) setFlagsFromString(given);
    restored = true;
  };
  // 'exit' for a thread that never ran (its module failed to load).
  worker.once('online', restore).once('exit', restore);
  return worker;
}

/** The last `--max-semi-space-size` among the process's flags, as one `--name=value` string. */
export function semiSpaceFlag(flags: readonly string[]): string | undefined {
  let found: string | undefined;
  for (const [i, f] of flags.entries()) {
    const m = /^--max[-_]semi[-_]space[-_]size(?:=(\d+))?$/.exec(f);
    const value = m ? (m[1] ?? flags[i + 1]) : undefined;
    if (value !== undefined && /^\d+$/.test(value)) found = `--max-semi-space-size=${value}`;
  }
  return found;
}

type Pending = Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>;
/** A running thread, the writes it holds, the requests of this turn not yet sent, and its end. */
type Running = { readonly worker: Worker; readonly pending: Pending; outbox: ToWriter[]; readonly exited: Promise<void> };

/**
 * SQLite's upload transaction in a thread of its own (sqlite-writer-thread.ts). On one process the
 * main thread is what a small upload waits for, and the index transaction (BEGIN, the upsert, the
 * journal's entry, the folder stamps, the usage rider, COMMIT and its write-ahead-log pages) was a
 * quarter of its time there while the second core sat mostly idle (docs/performance.md, "The
 * upload's transaction in a thread"). The thread holds a second connection to the same file, so
 * SQLite's one write lock orders it against the main thread's writes exactly as it orders another
 * process's. Puts that wait while the thread writes go together into its next transaction (the
 * group commit of search-repo.ts): the wait is real work now, not a deferral.
 *
 * The requests of one turn go in one message, and the thread answers the requests of one of its
 * turns in one: an upload's storage event asks for its index put and its usage rider in the same
 * turn, and a message each way is a wake-up of a sleeping thread each (docs/performance.md, "One
 * message to the index thread a turn").
 *
 * Started at the first write (a CLI command that writes no index starts no thread); kept from
 * holding the process open while nothing is in flight. A thread that dies fails the writes it held
 * with its reason, and the next write starts a new one: an index write is one transaction, so a
 * failed one changed nothing.
 */
export function sqliteIndexWriter(options: WriterOptions): IndexWriter {
  let current: Running | undefined;
  let closing: Promise<void> | undefined;
  let next = 1;

  function start(): Running {
    // No flags of this process's (a test runner's, `--input-type`, a profiler's): the thread runs plain module code.
    const worker = withThreadHeapLimits(() => new Worker(new URL('./sqlite-writer-thread.js', import.meta.url), { workerData: options, execArgv: [], resourceLimits: LIMITS }));
    const run: Running = { worker, pending: new Map(), outbox: [], exited: new Promise<void>((resolve) => worker.once('exit', () => resolve())) };
    /** This thread is done: its writes fail with `why`, and the next write starts another. */
    const stopped = (why: string): void => {
      if (current === run) current = undefined;
      for (const p of run.pending.values()) p.reject(new Error(`the index writer thread stopped: ${why}`));
      run.pending.clear();
    };
    worker.unref();
    worker.on('message', (answers: readonly FromWriter[]) => {
      for (const m of answers) {
        if (m.fatal !== undefined) return stopped(m.fatal);
        const p = run.pending.get(m.id);
        if (!p) continue;
        run.pending.delete(m.id);
        if (m.error) p.reject(Object.assign(new Error(m.error.message), { name: m.error.name }, m.error.code === undefined ? {} : { code: m.error.code }));
        else p.resolve(m.value);
      }
      // While closing, the thread holds the process open until it has exited (close() waits for that).
      if (run.pending.size === 0 && !closing) worker.unref();
    });
    worker.on('error', (e) => stopped(e.message));
    worker.on('exit', (code) => stopped(`it exited with code ${code}`));
    return run;
  }

  /** Sends the requests of this turn, in order. */
  function post(run: Running): void {
    const requests = run.outbox;
    if (requests.length === 0) return;
    run.outbox = [];
    run.worker.postMessage(requests);
  }

  function send<T>(message: Omit<ToWriter, 'id'>): Promise<T> {
    if (closing) return Promise.reject(new Error('the store is closed'));
    const run = (current ??= start());
    const id = next++;
    return new Promise<T>((resolve, reject) => {
      if (run.pending.size === 0) run.worker.ref();
      run.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      // After this turn's synchronous work: every listener of a storage event asks in the same turn.
      if (run.outbox.length === 0) queueMicrotask(() => post(run));
      run.outbox.push({ id, ...message });
    });
  }

  return {
    write: (batch) => send<Map<string, EntryIdentity>>({ put: batch }),
    ride: (query: CompiledQuery) => send<void>({ ride: { sql: query.sql, parameters: query.parameters } }),
    close() {
      closing ??= (async () => {
        const run = current;
        if (!run) return;
        run.worker.ref();
        // After what is sent: the thread answers every request before the close.
        run.outbox.push({ id: 0, close: true });
        post(run);
        await run.exited;
      })();
      return closing;
    },
  };
}
