import type { Kysely } from 'kysely';
import type { Database } from './schema.js';
import { isUniqueViolation } from './sql-errors.js';
import { StoreConflictError } from './metadata-store.js';
import type { OidcLink, OidcRepo } from './oidc.js';

const toLink = (r: { user_id: string; username: string; issuer: string; subject: string; groups: string; last_login_at: number | string | bigint }): OidcLink => ({
  userId: r.user_id,
  username: r.username,
  issuer: r.issuer,
  subject: r.subject,
  groups: JSON.parse(r.groups) as string[],
  lastLoginAt: Number(r.last_login_at),
});

/** Links of accounts to an OpenID provider's subjects, local-account marks, and sign-ins under way (migration 0014). */
export function createOidcRepo(db: Kysely<Database>): OidcRepo {
  const linked = () =>
    db
      .selectFrom('oidc_accounts')
      .innerJoin('users', 'users.id', 'oidc_accounts.user_id')
      .select(['oidc_accounts.user_id', 'users.username', 'oidc_accounts.issuer', 'oidc_accounts.subject', 'oidc_accounts.groups', 'oidc_accounts.last_login_at']);
  return {
    async findBySubject(issuer, subject) {
      const r = await linked().where('oidc_accounts.issuer', '=', issuer).where('oidc_accounts.subject', '=', subject).executeTakeFirst();
      return r ? toLink(r) : undefined;
    },

    async linkOf(userId) {
      const r = await linked().where('oidc_accounts.user_id', '=', userId).executeTakeFirst();
      return r ? toLink(r) : undefined;
    },

    async link(l, now) {
      try {
        await db.insertInto('oidc_accounts').values({ user_id: l.userId, issuer: l.issuer, subject: l.subject, groups: JSON.stringify(l.groups), created_at: now, last_login_at: now }).execute();
      } catch (e) {
        if (isUniqueViolation(e)) throw new StoreConflictError('the account or the subject is linked already');
        throw e;
      }
    },

    async recordLogin(userId, groups, now) {
      await db.updateTable('oidc_accounts').set({ groups: JSON.stringify(groups), last_login_at: now }).where('user_id', '=', userId).execute();
    },

    async linkedUserIds() {
      const rows = await db.selectFrom('oidc_accounts').select('user_id').execute();
      return new Set(rows.map((r) => r.user_id));
    },

    async isLocal(userId) {
      return (await db.selectFrom('local_accounts').select('user_id').where('user_id', '=', userId).executeTakeFirst()) !== undefined;
    },

    async setLocal(userId, local) {
      if (!local) return void (await db.deleteFrom('local_accounts').where('user_id', '=', userId).execute());
      await db.insertInto('local_accounts').values({ user_id: userId }).onConflict((oc) => oc.column('user_id').doNothing()).execute();
    },

    async localUserIds() {
      const rows = await db.selectFrom('local_accounts').select('user_id').execute();
      return new Set(rows.map((r) => r.user_id));
    },

    async setLinkPending(userId, pending) {
      if (!pending) return void (await db.deleteFrom('oidc_link_pending').where('user_id', '=', userId).execute());
      await db.insertInto('oidc_link_pending').values({ user_id: userId }).onConflict((oc) => oc.column('user_id').doNothing()).execute();
    },

    async linkPending(l, now) {
      try {
        return await db.transaction().execute(async (trx) => {
          // Taking the mark first: of two sign-ins racing for one pending account, one links it.
          const taken = await trx.deleteFrom('oidc_link_pending').where('user_id', '=', l.userId).executeTakeFirst();
          if (Number(taken.numDeletedRows) === 0) return false;
          await trx.insertInto('oidc_accounts').values({ user_id: l.userId, issuer: l.issuer, subject: l.subject, groups: JSON.stringify(l.groups), created_at: now, last_login_at: now }).execute();
          return true;
        });
      } catch (e) {
        if (isUniqueViolation(e)) return false;
        throw e;
      }
    },

    async putRequest(id, kind, data, expiresAt) {
      await db.insertInto('oidc_requests').values({ id, kind, data, expires_at: expiresAt }).execute();
    },

    async takeRequest(id, kind, now) {
      // One DELETE … RETURNING: of two callbacks with the same state (a replay, or two nodes), exactly one gets the row.
      const r = await db.deleteFrom('oidc_requests').where('id', '=', id).where('kind', '=', kind).returning(['data', 'expires_at']).executeTakeFirst();
      if (!r || Number(r.expires_at) <= now) return undefined;
      return r.data;
    },

    async deleteExpired(now) {
      await db.deleteFrom('oidc_requests').where('expires_at', '<=', now).execute();
    },
  };
}
