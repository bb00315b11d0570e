import { sql, type Kysely } from 'kysely';
import { isPostgres } from './dialect.js';
import type { Database } from './schema.js';
import type { RateRepo } from './rate.js';

/**
 * A sliding-window log in SQL, exact across processes and nodes: every
 * attempt is inserted first (an atomic step that gives it a place in line,
 * `seq`), then counts the attempts in the window that are ahead of it. The
 * 11th gets rank 11 whichever node it reached. A refused attempt removes its
 * row, so being refused does not extend the wait.
 *
 * On PostgreSQL a row's `seq` is taken when it is inserted but seen only once
 * it commits, so attempt 11 could count before attempt 5 was visible and both
 * pass: there the hits of one bucket go one at a time, in a transaction under
 * an advisory lock on the bucket (SQLite's writes are one at a time anyway).
 */
export function createRateRepo(db: Kysely<Database>): RateRepo {
  const postgres = isPostgres(db);
  return {
    async hit(bucket, now, windowMs, limit) {
      if (!postgres) return hitIn(db, bucket, now, windowMs, limit);
      return db.transaction().execute(async (trx) => {
        await sql`SELECT pg_advisory_xact_lock(${RATE_LOCK_CLASS}, hashtext(${bucket}))`.execute(trx);
        return hitIn(trx, bucket, now, windowMs, limit);
      });
    },

    async release(bucket, at) {
      const one = (q: Kysely<Database>) =>
        q.deleteFrom('rate_hits').where('seq', '=', (eb) => eb.selectFrom('rate_hits').select('seq').where('bucket', '=', bucket).where('at', '=', at).orderBy('seq', 'desc').limit(1)).execute();
      if (!postgres) return void (await one(db));
      // Under the bucket's lock, as hits are: two releases of one bucket never pick the same row.
      await db.transaction().execute(async (trx) => {
        await sql`SELECT pg_advisory_xact_lock(${RATE_LOCK_CLASS}, hashtext(${bucket}))`.execute(trx);
        await one(trx);
      });
    },

    async deleteBefore(before) {
      await db.deleteFrom('rate_hits').where('at', '<', before).execute();
    },
  };
}

/** The first key of the two-key advisory locks of rate buckets ("FCRT"), apart from the one-key locks of migrations and the journal. */
const RATE_LOCK_CLASS = 0x46435254;

async function hitIn(db: Kysely<Database>, bucket: string, now: number, windowMs: number, limit: number): Promise<number> {
  const since = now - windowMs;
  await db.deleteFrom('rate_hits').where('bucket', '=', bucket).where('at', '<=', since).execute();
  const { seq } = await db.insertInto('rate_hits').values({ bucket, at: now }).returning('seq').executeTakeFirstOrThrow();
  const ahead = await db
    .selectFrom('rate_hits')
    .select((eb) => [eb.fn.countAll<number | string>().as('n'), eb.fn.min('at').as('oldest')])
    .where('bucket', '=', bucket)
    .where('at', '>', since)
    .where('seq', '<=', seq)
    .executeTakeFirstOrThrow();
  if (Number(ahead.n) <= limit) return 0;
  await db.deleteFrom('rate_hits').where('seq', '=', seq).execute();
  return Math.max(1, Math.ceil((Number(ahead.oldest) + windowMs - now) / 1000));
}
