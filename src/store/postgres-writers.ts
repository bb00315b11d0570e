import { CompiledQuery, type Kysely, type PostgresPool, type PostgresQueryResult, type QueryResult } from 'kysely';
import { lockQuery } from './changes-repo.js';
import type { Database } from './schema.js';
import { isBlind, type Ride, type StepRunner, type Steps } from './steps.js';

/** What a blind step (steps.ts) is given back: its answer is not waited for. */
const UNREAD: QueryResult<unknown> = { rows: [] };

type Rider = { readonly query: CompiledQuery; readonly resolve: () => void; readonly reject: (e: unknown) => void };

/**
 * The upload's index transaction on PostgreSQL (steps.ts), with fewer round trips and commits:
 * - BEGIN goes in one simple query with the journal's lock, whose answer no step reads;
 * - statements whose answer no step reads (steps.ts `blind`), the riders and COMMIT are sent without
 *   waiting, so the driver's pipeline carries them in one flight with the next statement that is
 *   waited for: an upload's transaction waits twice (its journal entry's cursor, the COMMIT), not
 *   once per statement;
 * - riders (`ride`: single writes that need no answer but their commit, such as an upload's
 *   `used_bytes + size`) go into the next of these transactions to begin, after its steps, or alone
 *   at the next turn of the event loop when none begins before: a rider shares that commit, and so
 *   its write-ahead-log flush. An upload's usage is asked just after its own index transaction
 *   began (its storage event's listeners run in turn), so it mostly commits alone or with another
 *   upload's; made to board its own, it measured slower with a provider's latency on every store
 *   request (docs/performance.md, "Stop 80").
 * PostgreSQL aborts a whole transaction at a failed statement: a transaction whose riders failed
 * is written again without them, and each rider then runs alone, so one rider's failure is its own.
 */
export function postgresWriters(db: Kysely<Database>, pool: PostgresPool): { steps: StepRunner; ride: Ride } {
  let riders: Rider[] = [];
  let alone: NodeJS.Immediate | undefined;

  async function transact<T>(steps: () => Steps<T>, aboard: readonly Rider[]): Promise<T> {
    // The pool's own client, not Kysely's connection: Kysely runs one query at a time on a connection.
    const client = await pool.connect();
    // Sent and not yet waited for, in the order sent: the driver pipelines them (postgres.ts).
    const inFlight: Promise<PostgresQueryResult<unknown>>[] = [];
    const send = (query: CompiledQuery): Promise<PostgresQueryResult<unknown>> => {
      const answer = client.query<unknown>(query.sql, [...query.parameters]);
      // Read at the next wait (landed), in order: the first failure is the one thrown.
      answer.catch(() => undefined);
      inFlight.push(answer);
      return answer;
    };
    const landed = async (): Promise<void> => {
      for (const answer of inFlight.splice(0)) await answer;
    };
    try {
      const run = steps();
      let next = run.next();
      if (!next.done && next.value === lockQuery) {
        send(CompiledQuery.raw(`BEGIN; ${lockQuery.sql}`));
        next = run.next(UNREAD);
      } else {
        send(CompiledQuery.raw('BEGIN'));
      }
      try {
        while (!next.done) {
          const answer = send(next.value);
          if (isBlind(next.value)) {
            next = run.next(UNREAD);
          } else {
            await landed();
            next = run.next({ rows: (await answer).rows ?? [] });
          }
        }
        for (const r of aboard) send(r.query);
        const commit = send(CompiledQuery.raw('COMMIT'));
        await landed();
        // PostgreSQL ends a transaction that a failed statement aborted with ROLLBACK, not COMMIT.
        if ((await commit).command === 'ROLLBACK') throw new Error('The index transaction was rolled back.');
      } catch (e) {
        await Promise.allSettled(inFlight.splice(0));
        await client.query('ROLLBACK', []).catch(() => undefined);
        throw e;
      }
      return next.value;
    } finally {
      client.release();
    }
  }

  const runAlone = (r: Rider) => db.executeQuery(r.query).then(() => r.resolve(), r.reject);

  return {
    async steps<T>(steps: () => Steps<T>): Promise<T> {
      const aboard = riders;
      riders = [];
      let value: T;
      try {
        value = await transact(steps, aboard);
      } catch (e) {
        if (aboard.length === 0) throw e;
        // Whose failure it was is not known: the steps again on their own, then each rider alone.
        try {
          value = await transact(steps, []);
        } finally {
          await Promise.all(aboard.map(runAlone));
        }
        return value;
      }
      for (const r of aboard) r.resolve();
      return value;
    },
    ride: (query) =>
      new Promise<void>((resolve, reject) => {
        riders.push({ query, resolve, reject });
        alone ??= setImmediate(() => {
          alone = undefined;
          const left = riders;
          riders = [];
          for (const r of left) void runAlone(r);
        });
      }),
  };
}
