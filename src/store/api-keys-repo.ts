import type { Kysely, Selectable } from 'kysely';
import type { Database } from './schema.js';
import type { ApiKey, ApiKeyRepo } from './api-keys.js';
import type { User } from './users.js';
import { toUser } from './users-repo.js';
import { stampedLookup, type ChangeStamp } from './stamped-cache.js';

type Row = Selectable<Database['api_keys']>;

const optionalNumber = (v: number | string | bigint | null): number | undefined => (v === null ? undefined : Number(v));

const fromRow = (r: Row): ApiKey => ({
  id: r.id,
  userId: r.user_id,
  name: r.name,
  readOnly: Number(r.read_only) === 1,
  createdAt: Number(r.created_at),
  expiresAt: optionalNumber(r.expires_at),
  lastUsedAt: optionalNumber(r.last_used_at),
});

/**
 * App passwords / API keys as rows, found by the SHA-256 of the key (the key itself is never stored).
 * With a `changeStamp` (SQLite), verified keys are cached like access tokens (sessions-repo.ts);
 * a key's expiry is still checked against each request's time.
 */
export function createApiKeyRepo(db: Kysely<Database>, changeStamp?: ChangeStamp): ApiKeyRepo {
  const cache = stampedLookup<{ key: ApiKey; user: User }>(changeStamp);
  const live = (found: { key: ApiKey; user: User } | undefined, now: number) => (found && (found.key.expiresAt === undefined || found.key.expiresAt > now) ? found : undefined);
  async function queryByHash(keyHash: string, now: number): Promise<{ key: ApiKey; user: User } | undefined> {
    const r = await db
      .selectFrom('api_keys as k')
      .innerJoin('users as u', 'u.id', 'k.user_id')
      .select([
        'k.id as k_id', 'k.user_id as k_user_id', 'k.name as k_name', 'k.key_hash as k_key_hash', 'k.read_only as k_read_only',
        'k.created_at as k_created_at', 'k.expires_at as k_expires_at', 'k.last_used_at as k_last_used_at',
        'u.id', 'u.username', 'u.password_hash', 'u.is_admin', 'u.auth_epoch', 'u.created_at', 'u.disabled',
      ])
      .where('k.key_hash', '=', keyHash)
      .where((eb) => eb.or([eb('k.expires_at', 'is', null), eb('k.expires_at', '>', now)]))
      .executeTakeFirst();
    if (!r) return undefined;
    const key = fromRow({
      id: r.k_id, user_id: r.k_user_id, name: r.k_name, key_hash: r.k_key_hash, read_only: r.k_read_only,
      created_at: r.k_created_at, expires_at: r.k_expires_at, last_used_at: r.k_last_used_at,
    });
    return { key, user: toUser(r) };
  }

  return {
    async create(k) {
      await db
        .insertInto('api_keys')
        .values({
          id: k.id,
          user_id: k.userId,
          name: k.name,
          key_hash: k.keyHash,
          read_only: k.readOnly ? 1 : 0,
          created_at: k.createdAt,
          expires_at: k.expiresAt ?? null,
          last_used_at: k.lastUsedAt ?? null,
        })
        .execute();
    },

    async findByHash(keyHash, now) {
      return live(await cache.get(keyHash, () => queryByHash(keyHash, now)), now);
    },

    async listByUser(userId) {
      const rows = await db.selectFrom('api_keys').selectAll().where('user_id', '=', userId).orderBy('created_at', 'desc').orderBy('id').execute();
      return rows.map(fromRow);
    },

    async delete(id, userId) {
      const r = await db.deleteFrom('api_keys').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
      return Number(r.numDeletedRows) > 0;
    },

    async touch(id, now, notBefore) {
      await db
        .updateTable('api_keys')
        .set({ last_used_at: now })
        .where('id', '=', id)
        .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', notBefore)]))
        .execute();
    },
  };
}
