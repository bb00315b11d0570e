import { sql, type CompiledQuery, type Kysely, type QueryResult } from 'kysely';
import type { Database } from './schema.js';
import type { StoredLeaseRepo } from './leases.js';
import { holdsOf } from '../lib/process-id.js';

/**
 * Runs statements in order, each its own transaction, and returns their results: on PostgreSQL in one
 * flight (sent without waiting for the answers before, so the set costs one round trip), elsewhere one
 * after another.
 */
export type Flight = (queries: readonly CompiledQuery[]) => Promise<QueryResult<unknown>[]>;

/**
 * Leases as rows: one INSERT … ON CONFLICT DO UPDATE … WHERE decides who
 * holds a name, atomically on SQLite and PostgreSQL alike (no read-then-write).
 */
export function createLeaseRepo(db: Kysely<Database>, flight: Flight = oneByOne(db)): StoredLeaseRepo {
  return {
    async acquire(name, owner, now, expiresAt) {
      const r = await db
        .insertInto('leases')
        .values({ name, owner, expires_at: expiresAt })
        .onConflict((oc) =>
          oc
            .column('name')
            .doUpdateSet({ owner, expires_at: expiresAt })
            .where((eb) => eb.or([eb('leases.expires_at', '<=', now), eb('leases.owner', '=', owner)])),
        )
        .executeTakeFirst();
      return Number(r.numInsertedOrUpdatedRows ?? 0) > 0;
    },

    async renew(name, owner, expiresAt) {
      const r = await db.updateTable('leases').set({ expires_at: expiresAt }).where('name', '=', name).where('owner', '=', owner).executeTakeFirst();
      return Number(r.numUpdatedRows) > 0;
    },

    async release(name, owner) {
      await db.deleteFrom('leases').where('name', '=', name).where('owner', '=', owner).execute();
    },

    async acquireAll(names, owner, now, expiresAt, around) {
      const own = [...new Set(names)].sort();
      if (own.length === 0) return true;
      // In sorted order: two takers of overlapping sets on PostgreSQL insert their rows in one order, never in a circle.
      const values = sql.join(own.map((n) => sql`(${n})`));
      const free = around.length === 0 ? sql`1 = 1` : sql`NOT EXISTS (SELECT 1 FROM leases AS h WHERE h.name IN (${sql.join(around)}) AND h.expires_at > ${now})`;
      // The names, taken where free, expired or own, and only while none around is held: the common case decided here.
      const take = sql`INSERT INTO leases (name, owner, expires_at)
        SELECT v.column1, CAST(${owner} AS text), CAST(${expiresAt} AS bigint) FROM (VALUES ${values}) AS v WHERE ${free}
        ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
        WHERE leases.expires_at <= ${now} OR leases.owner = ${owner}`.compile(db);
      // Read again after the names are committed (a statement of its own, in the same flight): a change of a folder
      // around that took its lease while the statement above ran is seen here, or it sees these names (coordination.ts
      // holdInside). One statement alone would read around before its own names are visible to anyone.
      const queries = around.length === 0 ? [take] : [take, db.selectFrom('leases').select('name').where('name', 'in', around).where('expires_at', '>', now).limit(1).compile()];
      const [taken, busy] = await flight(queries);
      if (Number(taken?.numAffectedRows ?? 0) === own.length && (busy?.rows.length ?? 0) === 0) return true;
      await db.deleteFrom('leases').where('name', 'in', own).where('owner', '=', owner).execute();
      return false;
    },

    async releaseAll(names, owner) {
      if (names.length === 0) return;
      await db.deleteFrom('leases').where('name', 'in', [...names]).where('owner', '=', owner).execute();
    },

    async heldOf(names, now) {
      const held: string[] = [];
      // In slices: a statement's parameters are bounded (SQLite's limit, PostgreSQL's message size).
      for (let i = 0; i < names.length; i += HELD_OF_SLICE) {
        const rows = await db.selectFrom('leases').select('name').where('name', 'in', names.slice(i, i + HELD_OF_SLICE)).where('expires_at', '>', now).execute();
        held.push(...rows.map((r) => r.name));
      }
      return held;
    },

    async heldWithin(prefix, now) {
      // substr, not LIKE: a file name may hold % or _, and SQLite's LIKE ignores case.
      const rows = await db
        .selectFrom('leases')
        .select('name')
        .where((eb) => eb(eb.fn('substr', ['name', eb.val(1), eb.val(prefix.length)]), '=', prefix))
        .where('expires_at', '>', now)
        .execute();
      return rows.map((r) => r.name);
    },

    async releaseHeldBy(process) {
      const start = holdsOf(process);
      // substr, not LIKE: an owner is ours to name, but the same rule as heldWithin keeps one way to ask.
      const r = await db
        .deleteFrom('leases')
        .where((eb) => eb(eb.fn('substr', ['owner', eb.val(1), eb.val(start.length)]), '=', start))
        .executeTakeFirst();
      return Number(r.numDeletedRows);
    },

    async takeExpired(prefix, now) {
      // One DELETE … RETURNING: a row goes to whichever statement deletes it, never to two.
      const rows = await db.deleteFrom('leases').where('name', 'like', likePrefix('takeExpired', prefix)).where('expires_at', '<=', now).returning(['name', 'owner', 'expires_at']).execute();
      return rows.map((r) => ({ name: r.name, owner: r.owner, expiresAt: Number(r.expires_at) }));
    },

    async held(prefix, now) {
      const rows = await db.selectFrom('leases').select('name').where('name', 'like', likePrefix('held', prefix)).where('expires_at', '>', now).execute();
      return rows.map((r) => r.name);
    },
  };
}

/** A Flight for a database in the process (SQLite): nothing to save by sending at once. */
function oneByOne(db: Kysely<Database>): Flight {
  return async (queries) => {
    const results: QueryResult<unknown>[] = [];
    for (const q of queries) results.push(await db.executeQuery(q));
    return results;
  };
}

/** Names one heldOf statement asks about. */
const HELD_OF_SLICE = 500;

/** `prefix%` for LIKE; a prefix that holds a wildcard itself is a bug of the caller. */
function likePrefix(what: string, prefix: string): string {
  if (/[%_\\]/.test(prefix)) throw new Error(`${what}: the prefix ${JSON.stringify(prefix)} holds a LIKE wildcard`);
  return `${prefix}%`;
}
