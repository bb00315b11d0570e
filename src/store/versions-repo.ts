import { sql, type Kysely, type Selectable } from 'kysely';
import type { Database } from './schema.js';
import type { FileVersion, VersionRepo } from './versions.js';
import { atOrBelow, rebased } from './tree-sql.js';

const version = (r: Selectable<Database['file_versions']>): FileVersion => ({ id: r.id, owner: r.owner_name, path: r.path, size: Number(r.size), createdAt: Number(r.created_at) });

export function createVersionRepo(db: Kysely<Database>): VersionRepo {
  return {
    async add(v) {
      await db.insertInto('file_versions').values({ id: v.id, owner_name: v.owner, path: v.path, size: v.size, created_at: v.createdAt }).execute();
    },
    async get(id) {
      const r = await db.selectFrom('file_versions').selectAll().where('id', '=', id).executeTakeFirst();
      return r && version(r);
    },
    async list(owner, path) {
      const rows = await db.selectFrom('file_versions').selectAll().where('owner_name', '=', owner).where('path', '=', path).orderBy('created_at', 'desc').orderBy('id').execute();
      return rows.map(version);
    },
    async oldest(owner, limit) {
      const rows = await db.selectFrom('file_versions').selectAll().where('owner_name', '=', owner).orderBy('created_at').orderBy('id').limit(limit).execute();
      return rows.map(version);
    },
    async delete(id) {
      const r = await db.deleteFrom('file_versions').where('id', '=', id).executeTakeFirst();
      return Number(r.numDeletedRows) > 0;
    },
    async bytesOf(owner) {
      const r = await db.selectFrom('file_versions').select(sql<number | string>`coalesce(sum(size), 0)`.as('bytes')).where('owner_name', '=', owner).executeTakeFirst();
      return Number(r?.bytes ?? 0);
    },
    async deleteOwner(owner) {
      await db.deleteFrom('file_versions').where('owner_name', '=', owner).execute();
    },
    async listWithin(owner, path) {
      const rows = await db.selectFrom('file_versions').selectAll().where('owner_name', '=', owner).where(atOrBelow(path)).execute();
      return rows.map(version);
    },
    async moveWithin(owner, from, to) {
      await db.updateTable('file_versions').set({ path: rebased(from, to) }).where('owner_name', '=', owner).where(atOrBelow(from)).execute();
    },
  };
}
