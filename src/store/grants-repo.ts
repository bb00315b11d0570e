import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.js';
import type { Grant, GrantRepo } from './grants.js';
import { isUniqueViolation } from './sql-errors.js';
import { atOrBelow, rebased } from './tree-sql.js';

type Row = {
  id: string;
  owner_id: string;
  owner_name: string;
  path: string;
  is_file: number;
  to_kind: string;
  to_id: string;
  permission: string;
  created_at: number | string | bigint;
  to_name: string | null;
};

const fromRow = (r: Row): Grant => ({
  id: r.id,
  ownerId: r.owner_id,
  owner: r.owner_name,
  path: r.path,
  isFile: Number(r.is_file) === 1,
  toKind: r.to_kind === 'group' ? 'group' : 'user',
  toId: r.to_id,
  toName: r.to_name ?? '',
  permission: r.permission === 'write' ? 'write' : 'read',
  createdAt: Number(r.created_at),
});

/** Grants as rows; one SQL for SQLite and PostgreSQL. Every question goes to the database: no cache, so a change holds on every node at once. */
export function createGrantRepo(db: Kysely<Database>): GrantRepo {
  // The recipient's name read with the row: a user's or a group's, by kind.
  const withNames = () =>
    db
      .selectFrom('grants as g')
      .leftJoin('users as u', (j) => j.onRef('u.id', '=', 'g.to_id').on('g.to_kind', '=', 'user'))
      .leftJoin('groups as gr', (j) => j.onRef('gr.id', '=', 'g.to_id').on('g.to_kind', '=', 'group'))
      .select(['g.id', 'g.owner_id', 'g.owner_name', 'g.path', 'g.is_file', 'g.to_kind', 'g.to_id', 'g.permission', 'g.created_at'])
      .select(sql<string | null>`coalesce(u.username, gr.name)`.as('to_name'));

  return {
    async create(g) {
      try {
        await db
          .insertInto('grants')
          .values({
            id: g.id, owner_id: g.ownerId, owner_name: g.owner, path: g.path, is_file: g.isFile ? 1 : 0,
            to_kind: g.toKind, to_id: g.toId, permission: g.permission, created_at: g.createdAt,
          })
          .execute();
        return true;
      } catch (e) {
        if (isUniqueViolation(e)) return false;
        throw e;
      }
    },

    async get(id) {
      const r = await withNames().where('g.id', '=', id).executeTakeFirst();
      return r ? fromRow(r as Row) : undefined;
    },

    async listByOwner(ownerId) {
      const rows = await withNames().where('g.owner_id', '=', ownerId).orderBy('g.created_at', 'desc').orderBy('g.id').execute();
      return rows.map((r) => fromRow(r as Row));
    },

    async listForRecipient(userId, owner) {
      let q = withNames().where((eb) =>
        eb.or([
          eb.and([eb('g.to_kind', '=', 'user'), eb('g.to_id', '=', userId)]),
          eb.and([eb('g.to_kind', '=', 'group'), eb('g.to_id', 'in', eb.selectFrom('group_members').select('group_id').where('user_id', '=', userId))]),
        ]),
      );
      if (owner !== undefined) q = q.where('g.owner_name', '=', owner);
      const rows = await q.orderBy('g.created_at', 'desc').orderBy('g.id').execute();
      return rows.map((r) => fromRow(r as Row));
    },

    async recipientsOf(owners) {
      if (owners.length === 0) return [];
      const direct = db.selectFrom('grants as g').innerJoin('users as u', 'u.id', 'g.to_id').where('g.to_kind', '=', 'user').where('g.owner_name', 'in', owners).select('u.username');
      const viaGroups = db
        .selectFrom('grants as g')
        .innerJoin('group_members as m', 'm.group_id', 'g.to_id')
        .innerJoin('users as u', 'u.id', 'm.user_id')
        .where('g.to_kind', '=', 'group')
        .where('g.owner_name', 'in', owners)
        .select('u.username');
      return (await direct.union(viaGroups).execute()).map((r) => r.username);
    },

    async setPermission(id, permission) {
      const r = await db.updateTable('grants').set({ permission }).where('id', '=', id).executeTakeFirst();
      return Number(r.numUpdatedRows) > 0;
    },

    async delete(id) {
      const r = await db.deleteFrom('grants').where('id', '=', id).executeTakeFirst();
      return Number(r.numDeletedRows) > 0;
    },

    async deleteWithin(owner, path) {
      await db.deleteFrom('grants').where('owner_name', '=', owner).where(atOrBelow(path)).execute();
    },

    async moveWithin(owner, from, to) {
      await db.updateTable('grants').set({ path: rebased(from, to) }).where('owner_name', '=', owner).where(atOrBelow(from)).execute();
    },
  };
}
