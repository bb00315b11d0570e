import type { CompiledQuery, Kysely, QueryResult } from 'kysely';
import type { Database } from './schema.js';

/**
 * A transaction's work written once for both databases: a generator that yields each statement
 * (compiled, with its values) and gets its result back. The logic between statements is plain
 * code, so the runner decides how the statements run: on SQLite all of them synchronously under
 * the write lock (sqlite-driver.ts), on PostgreSQL one by one over the network.
 */
export type Steps<T> = Generator<CompiledQuery, T, QueryResult<unknown>>;

/** Runs the steps in one transaction and returns what they return; a throw anywhere rolls it back. */
export type StepRunner = <T>(steps: () => Steps<T>) => Promise<T>;

/**
 * Runs one write that needs no answer but its commit, possibly in one transaction with other
 * writes of this process (SQLite: sqlite-driver.ts sqliteWriters); resolves once it is committed.
 */
export type Ride = (query: CompiledQuery) => Promise<void>;

/** One statement of a Steps generator, typed by its query: `const r = yield* statement(q)`. */
export function* statement<O>(query: CompiledQuery<O>): Generator<CompiledQuery, QueryResult<O>, QueryResult<unknown>> {
  return (yield query) as QueryResult<O>;
}

const unread = new WeakSet<object>();

/**
 * A statement whose answer no step reads (`yield* blind(q)`): a runner over the network sends it
 * without waiting (postgres-writers.ts), in one flight with the statements after it up to the next
 * one whose answer is read. Its failure still fails the transaction. Its result is an empty one.
 */
export function* blind(query: CompiledQuery): Steps<void> {
  // A copy marks this use only: a compiled query is shared by every run of its statement (prepared.ts).
  const marked = { ...query };
  unread.add(marked);
  yield marked;
}

/** Was this step yielded by `blind`? */
export const isBlind = (query: CompiledQuery): boolean => unread.has(query);

/** Runs steps on a transaction already open (or any executor), each statement awaited. */
export async function awaitSteps<T>(on: { executeQuery<R>(query: CompiledQuery<R>): Promise<QueryResult<R>> }, run: Steps<T>): Promise<T> {
  let next = run.next();
  while (!next.done) next = run.next(await on.executeQuery(next.value));
  return next.value;
}

/** Steps in a Kysely transaction, each statement awaited: for a database over the network. */
export function kyselyStepRunner(db: Kysely<Database>): StepRunner {
  return (steps) => db.transaction().execute((trx) => awaitSteps(trx, steps()));
}
