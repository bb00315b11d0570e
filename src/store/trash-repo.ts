import { sql, type Kysely, type Selectable } from 'kysely';
import type { Database } from './schema.js';
import type { TrashItem, TrashRepo } from './trash.js';

type Row = Selectable<Database['trash_items']>;

/** Rows of trash_files written by one statement (under both databases' limits on bound values). */
const FILES_AT_ONCE = 200;

const item = (r: Row): TrashItem => ({
  id: r.id,
  owner: r.owner_name,
  path: r.path,
  name: r.name,
  isFile: Number(r.is_file) === 1,
  size: Number(r.size),
  deletedAt: Number(r.deleted_at),
  sha256: r.sha256 ?? undefined,
  state: r.state === 'moving' ? 'moving' : 'trashed',
});

export function createTrashRepo(db: Kysely<Database>): TrashRepo {
  return {
    async add(t) {
      await db
        .insertInto('trash_items')
        .values({ id: t.id, owner_name: t.owner, path: t.path, name: t.name, is_file: t.isFile ? 1 : 0, size: t.size, deleted_at: t.deletedAt, state: t.state })
        .execute();
    },

    async settle(id, found) {
      await db.updateTable('trash_items').set({ state: 'trashed', is_file: found.isFile ? 1 : 0, size: found.size, sha256: found.sha256 ?? null }).where('id', '=', id).execute();
    },

    async get(id) {
      const r = await db.selectFrom('trash_items').selectAll().where('id', '=', id).executeTakeFirst();
      return r && item(r);
    },

    async list(owner) {
      const rows = await db.selectFrom('trash_items').selectAll().where('owner_name', '=', owner).where('state', '=', 'trashed').orderBy('deleted_at', 'desc').orderBy('id').execute();
      return rows.map(item);
    },

    async trashedBefore(before, limit) {
      const rows = await db.selectFrom('trash_items').selectAll().where('state', '=', 'trashed').where('deleted_at', '<', before).orderBy('deleted_at').limit(limit).execute();
      return rows.map(item);
    },

    async movingBefore(before, limit) {
      const rows = await db.selectFrom('trash_items').selectAll().where('state', '=', 'moving').where('deleted_at', '<', before).orderBy('deleted_at').limit(limit).execute();
      return rows.map(item);
    },

    async oldest(owner, limit) {
      const rows = await db.selectFrom('trash_items').selectAll().where('owner_name', '=', owner).where('state', '=', 'trashed').orderBy('deleted_at').orderBy('id').limit(limit).execute();
      return rows.map(item);
    },

    async addFiles(id, files) {
      for (let i = 0; i < files.length; i += FILES_AT_ONCE) {
        const rows = files.slice(i, i + FILES_AT_ONCE).map((f) => ({ trash_id: id, path: f.path, sha256: f.sha256, size: f.size }));
        await db.insertInto('trash_files').values(rows).onConflict((c) => c.columns(['trash_id', 'path']).doNothing()).execute();
      }
    },

    async hashes(owner) {
      const trashed = db.selectFrom('trash_items').select('id').where('owner_name', '=', owner).where('state', '=', 'trashed');
      const rows = await db
        .selectFrom('trash_items')
        .select(['sha256', 'size'])
        .where('owner_name', '=', owner)
        .where('state', '=', 'trashed')
        .where('is_file', '=', 1)
        .where('sha256', 'is not', null)
        .union(db.selectFrom('trash_files').select(['sha256', 'size']).where('trash_id', 'in', trashed))
        .execute();
      return rows.map((r) => ({ sha256: r.sha256 as string, size: Number(r.size) }));
    },

    async delete(id) {
      await db.deleteFrom('trash_files').where('trash_id', '=', id).execute();
      const r = await db.deleteFrom('trash_items').where('id', '=', id).executeTakeFirst();
      return Number(r.numDeletedRows) > 0;
    },

    async bytesOf(owner) {
      const r = await db.selectFrom('trash_items').select(sql<number | string>`coalesce(sum(size), 0)`.as('bytes')).where('owner_name', '=', owner).where('state', '=', 'trashed').executeTakeFirst();
      return Number(r?.bytes ?? 0);
    },

    async deleteOwner(owner) {
      await db.deleteFrom('trash_files').where('trash_id', 'in', db.selectFrom('trash_items').select('id').where('owner_name', '=', owner)).execute();
      await db.deleteFrom('trash_items').where('owner_name', '=', owner).execute();
    },
  };
}
