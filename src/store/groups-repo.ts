import type { Kysely } from 'kysely';
import type { Database } from './schema.js';
import type { Group, GroupRepo } from './groups.js';
import { isUniqueViolation } from './sql-errors.js';

const byCodePoint = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Groups as rows; one SQL for SQLite and PostgreSQL. */
export function createGroupRepo(db: Kysely<Database>): GroupRepo {
  async function membersOf(groupIds: readonly string[]): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>();
    if (groupIds.length === 0) return out;
    const rows = await db
      .selectFrom('group_members as m')
      .innerJoin('users as u', 'u.id', 'm.user_id')
      .select(['m.group_id', 'u.username'])
      .where('m.group_id', 'in', groupIds)
      .execute();
    for (const r of rows) out.set(r.group_id, [...(out.get(r.group_id) ?? []), r.username]);
    for (const list of out.values()) list.sort(byCodePoint);
    return out;
  }

  return {
    async create(id, name, now) {
      try {
        await db.insertInto('groups').values({ id, name, created_at: now }).execute();
        return true;
      } catch (e) {
        if (isUniqueViolation(e)) return false;
        throw e;
      }
    },

    async delete(name) {
      // Members first: SQLite without the pragma (another tool on the file) would leave them behind.
      return db.transaction().execute(async (tx) => {
        const g = await tx.selectFrom('groups').select('id').where('name', '=', name).executeTakeFirst();
        if (!g) return false;
        await tx.deleteFrom('group_members').where('group_id', '=', g.id).execute();
        await tx.deleteFrom('grants').where('to_kind', '=', 'group').where('to_id', '=', g.id).execute();
        await tx.deleteFrom('groups').where('id', '=', g.id).execute();
        return true;
      });
    },

    async get(name) {
      const g = await db.selectFrom('groups').selectAll().where('name', '=', name).executeTakeFirst();
      if (!g) return undefined;
      const members = await membersOf([g.id]);
      return { name: g.name, createdAt: Number(g.created_at), members: members.get(g.id) ?? [] };
    },

    async idOf(name) {
      return (await db.selectFrom('groups').select('id').where('name', '=', name).executeTakeFirst())?.id;
    },

    async list() {
      const rows = await db.selectFrom('groups').selectAll().execute();
      const members = await membersOf(rows.map((r) => r.id));
      return rows
        .map((g): Group => ({ name: g.name, createdAt: Number(g.created_at), members: members.get(g.id) ?? [] }))
        .sort((a, b) => byCodePoint(a.name, b.name));
    },

    async changeMembers(name, add, remove) {
      return db.transaction().execute(async (tx) => {
        const g = await tx.selectFrom('groups').select('id').where('name', '=', name).executeTakeFirst();
        if (!g) return undefined;
        const wanted = [...new Set([...add, ...remove])];
        const users = wanted.length === 0 ? [] : await tx.selectFrom('users').select(['id', 'username']).where('username', 'in', wanted).execute();
        const idOf = new Map(users.map((u) => [u.username, u.id]));
        const unknown = wanted.filter((u) => !idOf.has(u));
        if (unknown.length > 0) return { unknown };
        const removeIds = remove.map((u) => idOf.get(u) as string);
        if (removeIds.length > 0) await tx.deleteFrom('group_members').where('group_id', '=', g.id).where('user_id', 'in', removeIds).execute();
        for (const u of add) {
          if (remove.includes(u)) continue;
          await tx
            .insertInto('group_members')
            .values({ group_id: g.id, user_id: idOf.get(u) as string })
            .onConflict((oc) => oc.columns(['group_id', 'user_id']).doNothing())
            .execute();
        }
        return { unknown: [] };
      });
    },

    async groupsOf(username) {
      const rows = await db
        .selectFrom('group_members as m')
        .innerJoin('groups as g', 'g.id', 'm.group_id')
        .innerJoin('users as u', 'u.id', 'm.user_id')
        .select('g.name')
        .where('u.username', '=', username)
        .execute();
      return rows.map((r) => r.name).sort(byCodePoint);
    },
  };
}
