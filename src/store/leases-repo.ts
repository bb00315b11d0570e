import type { Kysely } from 'kysely';
import type { Database } from './schema.js';
import type { StoredLeaseRepo } from './leases.js';

/**
 * Leases as rows: one INSERT … ON CONFLICT DO UPDATE … WHERE decides who
 * holds a name, atomically on SQLite and PostgreSQL alike (no read-then-write).
 */
export function createLeaseRepo(db: Kysely<Database>): StoredLeaseRepo {
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

/** Names one heldOf statement asks about. */
const HELD_OF_SLICE = 500;

/** `prefix%` for LIKE; a prefix that holds a wildcard itself is a bug of the caller. */
function likePrefix(what: string, prefix: string): string {
  if (/[%_\\]/.test(prefix)) throw new Error(`${what}: the prefix ${JSON.stringify(prefix)} holds a LIKE wildcard`);
  return `${prefix}%`;
}
