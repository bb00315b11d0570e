import { CompiledQuery, type Kysely } from 'kysely';
import { lockQuery } from './changes-repo.js';
import type { Database } from './schema.js';
import type { Ride, StepRunner, Steps } from './steps.js';

type Rider = { readonly query: CompiledQuery; readonly resolve: () => void; readonly reject: (e: unknown) => void };

/**
 * The upload's index transaction on PostgreSQL (steps.ts), with fewer round trips and commits:
 * - BEGIN goes in one simple query with the journal's lock, whose answer no step reads;
 * - riders (`ride`: single writes that need no answer but their commit, such as an upload's
 *   `used_bytes + size`) go into the next of these transactions, after its steps, or alone at the
 *   next turn of the event loop when none starts before: an upload's usage and its index entries
 *   share one commit, and so one write-ahead-log flush, instead of two.
 * PostgreSQL aborts a whole transaction at a failed statement: a transaction whose riders failed
 * is written again without them, and each rider then runs alone, so one rider's failure is its own.
 */
export function postgresWriters(db: Kysely<Database>): { steps: StepRunner; ride: Ride } {
  let riders: Rider[] = [];
  let alone: NodeJS.Immediate | undefined;

  async function transact<T>(steps: () => Steps<T>, aboard: readonly Rider[]): Promise<T> {
    return db.connection().execute(async (conn) => {
      const run = steps();
      let next = run.next();
      if (!next.done && next.value === lockQuery) {
        next = run.next(await conn.executeQuery(CompiledQuery.raw(`BEGIN; ${lockQuery.sql}`)));
      } else {
        await conn.executeQuery(CompiledQuery.raw('BEGIN'));
      }
      try {
        while (!next.done) next = run.next(await conn.executeQuery(next.value));
        for (const r of aboard) await conn.executeQuery(r.query);
        await conn.executeQuery(CompiledQuery.raw('COMMIT'));
      } catch (e) {
        await conn.executeQuery(CompiledQuery.raw('ROLLBACK')).catch(() => undefined);
        throw e;
      }
      return next.value;
    });
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
