import { randomUUID } from 'node:crypto';
import type { Kysely, Selectable } from 'kysely';
import type { Database } from './schema.js';
import { StoreConflictError, type User, type UserRepo } from './types.js';
import { isUniqueViolation } from './sql-errors.js';

type UserRow = Selectable<Database['users']>;

export function toUser(r: Omit<UserRow, 'quota' | 'used_bytes' | 'reserved_bytes'>): User {
  return {
    id: r.id,
    username: r.username,
    passwordHash: r.password_hash,
    isAdmin: Number(r.is_admin) === 1,
    authEpoch: r.auth_epoch,
    createdAt: Number(r.created_at),
  };
}

export function createUserRepo(db: Kysely<Database>): UserRepo {
  return {
    async create(u) {
      const row: Omit<UserRow, 'quota' | 'used_bytes' | 'reserved_bytes'> = {
        id: randomUUID(),
        username: u.username,
        password_hash: u.passwordHash,
        is_admin: u.isAdmin ? 1 : 0,
        auth_epoch: u.authEpoch,
        created_at: u.now,
      };
      try {
        await db.insertInto('users').values(row).execute();
      } catch (e) {
        if (isUniqueViolation(e)) throw new StoreConflictError(`user ${u.username} already exists`);
        throw e;
      }
      return toUser(row);
    },

    async getByName(username) {
      const r = await db.selectFrom('users').selectAll().where('username', '=', username).executeTakeFirst();
      return r ? toUser(r) : undefined;
    },

    async list() {
      const rows = await db.selectFrom('users').selectAll().orderBy('username').execute();
      return rows.map(toUser);
    },

    async count() {
      const r = await db.selectFrom('users').select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
      return Number(r.n);
    },

    async setPassword(username, passwordHash, authEpoch) {
      return db.transaction().execute(async (trx) => {
        const user = await trx.selectFrom('users').select('id').where('username', '=', username).executeTakeFirst();
        if (!user) return false;
        await trx.updateTable('users').set({ password_hash: passwordHash, auth_epoch: authEpoch }).where('id', '=', user.id).execute();
        await deleteSessionsOf(trx, user.id);
        return true;
      });
    },

    async delete(username) {
      return db.transaction().execute(async (trx) => {
        const user = await trx.selectFrom('users').select('id').where('username', '=', username).executeTakeFirst();
        if (!user) return false;
        // Explicit deletes rather than relying on ON DELETE CASCADE alone, which SQLite enforces only with a pragma.
        await deleteSessionsOf(trx, user.id);
        await trx.deleteFrom('shares').where('owner_id', '=', user.id).execute();
        await trx.deleteFrom('users').where('id', '=', user.id).execute();
        return true;
      });
    },
  };
}

async function deleteSessionsOf(db: Kysely<Database>, userId: string): Promise<void> {
  const sessionIds = db.selectFrom('sessions').select('id').where('user_id', '=', userId);
  await db.deleteFrom('access_tokens').where('session_id', 'in', sessionIds).execute();
  await db.deleteFrom('sessions').where('user_id', '=', userId).execute();
}
