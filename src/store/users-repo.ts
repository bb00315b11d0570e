import { randomUUID } from 'node:crypto';
import type { Kysely, Selectable } from 'kysely';
import type { Database } from './schema.js';
import { stampedLookup, type ChangeStamp } from './stamped-cache.js';
import { LastAdminError, type User, type UserRepo } from './users.js';
import { StoreConflictError } from './metadata-store.js';
import { isUniqueViolation } from './sql-errors.js';

type UserRow = Selectable<Database['users']>;

/** A user row as read; `disabled` (migration 0008) may be absent from a row read for another purpose. */
export function toUser(r: Omit<UserRow, 'totp_secret' | 'totp_pending' | 'totp_last_step' | 'quota' | 'used_bytes' | 'reserved_bytes' | 'staged_bytes'> & { totp_secret?: string | null; disabled?: number | string | null }): User {
  return {
    id: r.id,
    username: r.username,
    passwordHash: r.password_hash,
    isAdmin: Number(r.is_admin) === 1,
    authEpoch: r.auth_epoch,
    createdAt: Number(r.created_at),
    totpEnabled: r.totp_secret != null,
    disabled: Number(r.disabled) === 1,
  };
}

/** The row every change of the admin set locks first, so the last-admin check holds across nodes. */
const ADMIN_LOCK = 'lock:admins';

/**
 * Runs `fn` in a transaction that holds the admin-set lock: on PostgreSQL a row lock on one
 * settings row (READ COMMITTED would let two demotions each see the other admin still there);
 * on SQLite the write makes it a write transaction, which SQLite runs one at a time anyway.
 */
async function withAdminLock<T>(db: Kysely<Database>, fn: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
  await db.insertInto('settings').values({ name: ADMIN_LOCK, value: '' }).onConflict((oc) => oc.column('name').doNothing()).execute();
  return db.transaction().execute(async (trx) => {
    await trx.updateTable('settings').set({ value: '' }).where('name', '=', ADMIN_LOCK).execute();
    return fn(trx);
  });
}

async function otherAdmins(db: Kysely<Database>, userId: string): Promise<number> {
  const r = await db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('is_admin', '=', 1)
    .where('id', '<>', userId)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/**
 * With a `changeStamp` (SQLite), users found by name are cached while the
 * database is unchanged (stamped-cache.ts): a path-token GET looks up its
 * owner's auth epoch on every request.
 */
export function createUserRepo(db: Kysely<Database>, changeStamp?: ChangeStamp): UserRepo {
  const byName = stampedLookup<User>(changeStamp, 1000);
  const queryByName = async (username: string) => {
    const r = await db.selectFrom('users').selectAll().where('username', '=', username).executeTakeFirst();
    return r ? toUser(r) : undefined;
  };
  return {
    async create(u) {
      const row: Omit<UserRow, 'quota' | 'used_bytes' | 'reserved_bytes' | 'staged_bytes'> = {
        id: randomUUID(),
        username: u.username,
        password_hash: u.passwordHash,
        is_admin: u.isAdmin ? 1 : 0,
        auth_epoch: u.authEpoch,
        created_at: u.now,
        totp_secret: null,
        totp_pending: null,
        totp_last_step: null,
        disabled: 0,
      };
      try {
        await db.insertInto('users').values(row).execute();
      } catch (e) {
        if (isUniqueViolation(e)) throw new StoreConflictError(`user ${u.username} already exists`);
        throw e;
      }
      return toUser(row);
    },

    getByName: (username) => byName.get(username, () => queryByName(username)),

    async list() {
      const rows = await db.selectFrom('users').selectAll().orderBy('username').execute();
      return rows.map(toUser);
    },

    async count() {
      const r = await db.selectFrom('users').select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
      return Number(r.n);
    },

    async setPassword(username, passwordHash, authEpoch, keepSessionId) {
      return db.transaction().execute(async (trx) => {
        const user = await trx.selectFrom('users').select('id').where('username', '=', username).executeTakeFirst();
        if (!user) return false;
        await trx.updateTable('users').set({ password_hash: passwordHash, auth_epoch: authEpoch }).where('id', '=', user.id).execute();
        await deleteSessionsOf(trx, user.id, keepSessionId);
        return true;
      });
    },

    async delete(username, opts = {}) {
      const remove = async (trx: Kysely<Database>) => {
        const user = await trx.selectFrom('users').select(['id', 'is_admin']).where('username', '=', username).executeTakeFirst();
        if (!user) return false;
        if (opts.keepAnAdmin && Number(user.is_admin) === 1 && (await otherAdmins(trx, user.id)) === 0) throw new LastAdminError(`${username} is the last administrator`);
        // Explicit deletes rather than relying on ON DELETE CASCADE alone, which SQLite enforces only with a pragma.
        await deleteSessionsOf(trx, user.id);
        await trx.deleteFrom('api_keys').where('user_id', '=', user.id).execute();
        await trx.deleteFrom('ssh_keys').where('user_id', '=', user.id).execute();
        await trx.deleteFrom('shares').where('owner_id', '=', user.id).execute();
        await trx.deleteFrom('totp_recovery_codes').where('user_id', '=', user.id).execute();
        await trx.deleteFrom('oidc_accounts').where('user_id', '=', user.id).execute();
        await trx.deleteFrom('local_accounts').where('user_id', '=', user.id).execute();
        await trx.deleteFrom('oidc_link_pending').where('user_id', '=', user.id).execute();
        await trx.deleteFrom('group_members').where('user_id', '=', user.id).execute();
        await trx.deleteFrom('grants').where((eb) => eb.or([eb('owner_id', '=', user.id), eb.and([eb('to_kind', '=', 'user'), eb('to_id', '=', user.id)])])).execute();
        await trx.deleteFrom('users').where('id', '=', user.id).execute();
        return true;
      };
      return opts.keepAnAdmin ? withAdminLock(db, remove) : db.transaction().execute(remove);
    },

    async setAdmin(username, isAdmin) {
      return withAdminLock(db, async (trx) => {
        const user = await trx.selectFrom('users').select(['id', 'is_admin']).where('username', '=', username).executeTakeFirst();
        if (!user) return false;
        if (!isAdmin && Number(user.is_admin) === 1 && (await otherAdmins(trx, user.id)) === 0) throw new LastAdminError(`${username} is the last administrator`);
        await trx.updateTable('users').set({ is_admin: isAdmin ? 1 : 0 }).where('id', '=', user.id).execute();
        return true;
      });
    },

    async setDisabled(username, disabled) {
      const r = await db.updateTable('users').set({ disabled: disabled ? 1 : 0 }).where('username', '=', username).executeTakeFirst();
      return Number(r.numUpdatedRows) > 0;
    },
  };
}

async function deleteSessionsOf(db: Kysely<Database>, userId: string, keepSessionId?: string): Promise<void> {
  let sessionIds = db.selectFrom('sessions').select('id').where('user_id', '=', userId);
  if (keepSessionId !== undefined) sessionIds = sessionIds.where('id', '<>', keepSessionId);
  await db.deleteFrom('access_tokens').where('session_id', 'in', sessionIds).execute();
  let sessions = db.deleteFrom('sessions').where('user_id', '=', userId);
  if (keepSessionId !== undefined) sessions = sessions.where('id', '<>', keepSessionId);
  await sessions.execute();
}
