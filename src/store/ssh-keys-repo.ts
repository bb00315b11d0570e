import type { Kysely, Selectable } from 'kysely';
import type { Database } from './schema.js';
import type { SshKey, SshKeyRepo } from './ssh-keys.js';

type Row = Selectable<Database['ssh_keys']>;

const fromRow = (r: Row): SshKey => ({
  id: r.id,
  userId: r.user_id,
  name: r.name,
  algorithm: r.algorithm,
  publicKey: r.public_key,
  fingerprint: r.fingerprint,
  createdAt: Number(r.created_at),
  lastUsedAt: r.last_used_at === null ? undefined : Number(r.last_used_at),
});

/** SFTP sign-in keys as rows, one SQL for SQLite and PostgreSQL. */
export function createSshKeyRepo(db: Kysely<Database>): SshKeyRepo {
  return {
    async create(k) {
      await db
        .insertInto('ssh_keys')
        .values({ id: k.id, user_id: k.userId, name: k.name, algorithm: k.algorithm, public_key: k.publicKey, fingerprint: k.fingerprint, created_at: k.createdAt, last_used_at: k.lastUsedAt ?? null })
        .execute();
    },

    async listByUser(userId) {
      const rows = await db.selectFrom('ssh_keys').selectAll().where('user_id', '=', userId).orderBy('created_at').orderBy('id').execute();
      return rows.map(fromRow);
    },

    async find(userId, fingerprint) {
      const r = await db.selectFrom('ssh_keys').selectAll().where('user_id', '=', userId).where('fingerprint', '=', fingerprint).executeTakeFirst();
      return r && fromRow(r);
    },

    async delete(id, userId) {
      const r = await db.deleteFrom('ssh_keys').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
      return Number(r.numDeletedRows) > 0;
    },

    async touch(id, now, notBefore) {
      await db
        .updateTable('ssh_keys')
        .set({ last_used_at: now })
        .where('id', '=', id)
        .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', notBefore)]))
        .execute();
    },
  };
}
