import { sql, type Kysely, type Selectable } from 'kysely';
import type { Database } from './schema.js';
import type { DavLock, DavLockRepo } from './dav-locks.js';
import { preparedQuery } from './prepared.js';
import { ancestorsOf, atOrBelow, below } from './tree-sql.js';
import { createStampedCache, type ChangeStamp } from './stamped-cache.js';

type Row = Selectable<Database['dav_locks']>;

const fromRow = (r: Row): DavLock => ({
  token: r.token,
  user: r.user_name,
  path: r.path,
  depth: r.depth === 'infinity' ? 'infinity' : 0,
  scope: r.scope === 'shared' ? 'shared' : 'exclusive',
  owner: r.owner,
  principal: r.principal,
  timeoutSeconds: Number(r.timeout_seconds),
  createdAt: Number(r.created_at),
  expiresAt: Number(r.expires_at),
});

/**
 * WebDAV locks as rows. Creation inserts first and then looks for a
 * conflicting live lock, removing its own row if there is one: of two
 * conflicting creations, the later check always sees the earlier insert, so
 * at most one survives on SQLite and PostgreSQL alike, with no transaction
 * and no read-then-write race (at worst both give way).
 */
export function createDavLockRepo(db: Kysely<Database>, changeStamp?: ChangeStamp): DavLockRepo {
  // Whether a user has any lock row, kept while no lock changed (0030_dav_lock_stamp): almost no
  // tree has one, and every WebDAV and SFTP write asks. Without a stamp (PostgreSQL) not asked at all.
  const holders = changeStamp && createStampedCache<boolean>(changeStamp);
  const anyRow = async (user: string) => (await db.selectFrom('dav_locks').select('token').where('user_name', '=', user).limit(1).executeTakeFirst()) !== undefined;
  const live = (user: string, now: number) => db.selectFrom('dav_locks').selectAll().where('user_name', '=', user).where('expires_at', '>', now);

  /**
   * Locks on `path`, or on one of its `ancestors` with depth infinity; with `andBelow`, also locks
   * anywhere below `path`. Values or a prepared query's placeholders (then without `andBelow`).
   */
  const applying = (user: string, path: string, now: number, andBelow: boolean, ancestors: readonly string[] = ancestorsOf(path)) =>
    live(user, now).where((eb) =>
      eb.or([
        eb('path', '=', path),
        ...(ancestors.length > 0 ? [eb.and([eb('depth', '=', 'infinity'), eb('path', 'in', ancestors)])] : []),
        ...(andBelow ? [below(path)] : []),
      ]),
    );

  // Every WebDAV write asks it (checkLocks): compiled once per number of ancestors (prepared.ts).
  // Ordered here, not by SQL: SQLite's ORDER BY sets up a sorter on every run, even for the few (almost
  // always no) locks it finds (docs/performance.md "Figures behind the code").
  const covering = preparedQuery((p, n) => applying(p.value('user'), p.value('path'), p.value('now'), false, p.list('ancestors', n)));

  return {
    async create(lock, now, maxLive) {
      await db
        .insertInto('dav_locks')
        .values({
          token: lock.token,
          user_name: lock.user,
          path: lock.path,
          depth: lock.depth === 0 ? '0' : 'infinity',
          scope: lock.scope,
          owner: lock.owner,
          principal: lock.principal,
          timeout_seconds: lock.timeoutSeconds,
          created_at: lock.createdAt,
          expires_at: lock.expiresAt,
        })
        .execute();
      if (maxLive !== undefined) {
        const held = await db.selectFrom('dav_locks').select(sql<number | string>`count(*)`.as('n')).where('user_name', '=', lock.user).where('expires_at', '>', now).executeTakeFirst();
        if (Number(held?.n ?? 0) > maxLive) {
          await db.deleteFrom('dav_locks').where('token', '=', lock.token).execute();
          return { created: false, tooMany: true };
        }
      }
      // A depth-infinity lock also conflicts with locks inside the tree it would cover.
      let q = applying(lock.user, lock.path, now, lock.depth === 'infinity').where('token', '<>', lock.token);
      if (lock.scope === 'shared') q = q.where('scope', '=', 'exclusive');
      const conflict = await q.limit(1).executeTakeFirst();
      if (!conflict) return { created: true };
      await db.deleteFrom('dav_locks').where('token', '=', lock.token).execute();
      return { created: false, conflict: fromRow(conflict) };
    },

    async mayHold(user) {
      return holders ? (await holders.get(user, () => anyRow(user))) === true : true;
    },

    async get(token, now) {
      const r = await db.selectFrom('dav_locks').selectAll().where('token', '=', token).where('expires_at', '>', now).executeTakeFirst();
      return r && fromRow(r);
    },

    async covering(user, path, now) {
      const ancestors = ancestorsOf(path);
      return (await covering.run(db, { user, path, now, ancestors }, ancestors.length)).rows.map(fromRow).sort((a, b) => a.createdAt - b.createdAt);
    },

    async within(user, path, now) {
      return (await live(user, now).where(atOrBelow(path)).orderBy('created_at').execute()).map(fromRow);
    },

    async refresh(token, timeoutSeconds, now) {
      const r = await db
        .updateTable('dav_locks')
        .set({ timeout_seconds: timeoutSeconds, expires_at: now + timeoutSeconds * 1000 })
        .where('token', '=', token)
        .where('expires_at', '>', now)
        .executeTakeFirst();
      if (Number(r.numUpdatedRows) === 0) return undefined;
      return this.get(token, now);
    },

    async delete(token) {
      const r = await db.deleteFrom('dav_locks').where('token', '=', token).executeTakeFirst();
      return Number(r.numDeletedRows) > 0;
    },

    async deleteWithin(user, path) {
      const r = await db.deleteFrom('dav_locks').where('user_name', '=', user).where(atOrBelow(path)).executeTakeFirst();
      return Number(r.numDeletedRows);
    },

    async heldElsewhere(principal, owner) {
      let q = db.selectFrom('dav_locks').selectAll().where('principal', '=', principal).where('user_name', '<>', principal);
      if (owner !== undefined) q = q.where('user_name', '=', owner);
      return (await q.orderBy('created_at').execute()).map(fromRow);
    },

    async deleteExpired(now) {
      const r = await db.deleteFrom('dav_locks').where('expires_at', '<=', now).executeTakeFirst();
      return Number(r.numDeletedRows);
    },
  };
}
