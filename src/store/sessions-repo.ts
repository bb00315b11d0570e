import { randomUUID } from 'node:crypto';
import type { Kysely, Selectable } from 'kysely';
import { preparedQuery } from './prepared.js';
import type { Database } from './schema.js';
import type { Session, SessionRepo } from './sessions.js';
import type { User } from './users.js';
import { toUser } from './users-repo.js';
import { stampedLookup, type ChangeStamp } from './stamped-cache.js';

function toSession(r: Omit<Selectable<Database['sessions']>, 'client' | 'address'> & { client?: string | null; address?: string | null }): Session {
  return {
    id: r.id,
    userId: r.user_id,
    createdAt: Number(r.created_at),
    lastUsedAt: Number(r.last_used_at),
    expiresAt: Number(r.expires_at),
    client: r.client ?? null,
    address: r.address ?? null,
  };
}

/** Longest User-Agent kept: the sessions list shows it, nothing needs more. */
const MAX_CLIENT = 512;

type Access = { session: Session; user: User; tokenExpiresAt: number };

/**
 * `changeStamp` (a store that has a cheap one: SQLite) turns on the cache of
 * verified access tokens: a token's session and user are kept, keyed by the
 * token's hash, while the database is unchanged (stamped-cache.ts). Every
 * request still checks the token's expiry against its own time.
 */
export function createSessionRepo(db: Kysely<Database>, changeStamp?: ChangeStamp): SessionRepo {
  // Every authenticated request runs this lookup; building and compiling it
  // with Kysely cost more than SQLite's indexed read, so it is compiled once
  // and run with each request's own parameters (the same SQL, the same checks).
  const findAccess = preparedQuery((p) =>
    db
      .selectFrom('access_tokens as a')
      .innerJoin('sessions as s', 's.id', 'a.session_id')
      .innerJoin('users as u', 'u.id', 's.user_id')
      .select([
        's.id as s_id', 's.user_id as s_user_id', 's.created_at as s_created_at', 's.last_used_at as s_last_used_at', 's.expires_at as s_expires_at',
        'u.id', 'u.username', 'u.password_hash', 'u.is_admin', 'u.auth_epoch', 'u.created_at', 'u.disabled',
        'a.expires_at as a_expires_at',
      ])
      .where('a.token_hash', '=', p.value<string>('tokenHash'))
      .where('a.expires_at', '>', p.value<number>('now')),
  );

  async function queryAccess(tokenHash: string, now: number): Promise<Access | undefined> {
    const r = (await findAccess.run(db, { tokenHash, now })).rows[0];
    if (!r) return undefined;
    return {
      // client/address are not read here (the hot path needs none); the sessions list reads them.
      session: toSession({ id: r.s_id, user_id: r.s_user_id, refresh_hash: '', created_at: r.s_created_at, last_used_at: r.s_last_used_at, expires_at: r.s_expires_at }),
      user: toUser(r),
      tokenExpiresAt: Number(r.a_expires_at),
    };
  }
  const cache = stampedLookup<Access>(changeStamp);

  return {
    async create(s) {
      const row = {
        id: randomUUID(), user_id: s.userId, refresh_hash: s.refreshHash, created_at: s.now, last_used_at: s.now, expires_at: s.expiresAt,
        client: s.client?.slice(0, MAX_CLIENT) ?? null, address: s.address ?? null,
      };
      await db.insertInto('sessions').values(row).execute();
      return toSession(row);
    },

    async findByRefreshHash(refreshHash, now) {
      const r = await db.selectFrom('sessions').selectAll().where('refresh_hash', '=', refreshHash).where('expires_at', '>', now).executeTakeFirst();
      return r ? toSession(r) : undefined;
    },

    async touch(sessionId, now, expiresAt, address) {
      await db.updateTable('sessions').set({ last_used_at: now, expires_at: expiresAt, ...(address === undefined ? {} : { address }) }).where('id', '=', sessionId).execute();
    },

    async markUsed(sessionId, now, address, minIntervalMs) {
      await db.updateTable('sessions').set({ last_used_at: now, ...(address === undefined ? {} : { address }) }).where('id', '=', sessionId).where('last_used_at', '<=', now - minIntervalMs).execute();
    },

    async listByUser(userId, now) {
      const rows = await db.selectFrom('sessions').selectAll().where('user_id', '=', userId).where('expires_at', '>', now).orderBy('last_used_at', 'desc').orderBy('id').execute();
      return rows.map(toSession);
    },

    async deleteOwned(sessionId, userId) {
      return db.transaction().execute(async (trx) => {
        const owned = await trx.selectFrom('sessions').select('id').where('id', '=', sessionId).where('user_id', '=', userId).executeTakeFirst();
        if (!owned) return false;
        await trx.deleteFrom('access_tokens').where('session_id', '=', sessionId).execute();
        await trx.deleteFrom('sessions').where('id', '=', sessionId).execute();
        return true;
      });
    },

    async addAccessToken(a) {
      await db.insertInto('access_tokens').values({ token_hash: a.tokenHash, session_id: a.sessionId, expires_at: a.expiresAt }).execute();
    },

    async findAccess(tokenHash, now) {
      const found = await cache.get(tokenHash, () => queryAccess(tokenHash, now));
      if (!found || found.tokenExpiresAt <= now) return undefined;
      return { session: found.session, user: found.user };
    },

    async delete(sessionId) {
      await db.transaction().execute(async (trx) => {
        await trx.deleteFrom('access_tokens').where('session_id', '=', sessionId).execute();
        await trx.deleteFrom('sessions').where('id', '=', sessionId).execute();
      });
    },

    async deleteExpired(now) {
      return db.transaction().execute(async (trx) => {
        const expiredSessions = trx.selectFrom('sessions').select('id').where('expires_at', '<=', now);
        const a = await trx.deleteFrom('access_tokens').where((eb) => eb.or([eb('expires_at', '<=', now), eb('session_id', 'in', expiredSessions)])).executeTakeFirst();
        const s = await trx.deleteFrom('sessions').where('expires_at', '<=', now).executeTakeFirst();
        return Number(a.numDeletedRows) + Number(s.numDeletedRows);
      });
    },
  };
}
