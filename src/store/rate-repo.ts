import type { Kysely } from 'kysely';
import type { Database } from './schema.js';
import type { RateRepo } from './types.js';

/**
 * A sliding-window log in SQL, exact across processes and nodes: every
 * attempt is inserted first (an atomic step that gives it a place in line,
 * `seq`), then counts the attempts in the window that are ahead of it. The
 * 11th gets rank 11 whichever node it reached. A refused attempt removes its
 * row, so being refused does not extend the wait.
 */
export function createRateRepo(db: Kysely<Database>): RateRepo {
  return {
    async hit(bucket, now, windowMs, limit) {
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
    },

    async deleteBefore(before) {
      await db.deleteFrom('rate_hits').where('at', '<', before).execute();
    },
  };
}
