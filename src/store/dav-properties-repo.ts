import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from './schema.js';
import type { DavPropertyRepo, DeadProperty, DeadPropertyTotals } from './dav-properties.js';
import { atOrBelow, memberOf, rebased } from './tree-sql.js';

const fromRow = (r: { ns: string; name: string; xml: string }): DeadProperty => ({ ns: r.ns, name: r.name, xml: r.xml });

/** Thrown inside a patch's transaction to roll it back when it would pass the limit. */
const OVER_LIMIT = Symbol('over the limit');

async function totalsOf(db: Kysely<Database> | Transaction<Database>, user: string, path?: string): Promise<DeadPropertyTotals> {
  let q = db.selectFrom('dav_properties').select([sql<number | string>`count(*)`.as('count'), sql<number | string>`coalesce(sum(length(xml)), 0)`.as('size')]).where('user_name', '=', user);
  if (path !== undefined) q = q.where(atOrBelow(path));
  const r = await q.executeTakeFirst();
  return { count: Number(r?.count ?? 0), size: Number(r?.size ?? 0) };
}

/** WebDAV dead properties as rows, one per (user, path, namespace, name). */
export function createDavPropertyRepo(db: Kysely<Database>): DavPropertyRepo {
  return {
    totals: (user, path) => totalsOf(db, user, path),

    async list(user, path) {
      const rows = await db.selectFrom('dav_properties').select(['ns', 'name', 'xml']).where('user_name', '=', user).where('path', '=', path).orderBy('ns').orderBy('name').execute();
      return rows.map(fromRow);
    },

    async listChildren(user, path) {
      const rows = await db
        .selectFrom('dav_properties')
        .select(['path', 'ns', 'name', 'xml'])
        .where('user_name', '=', user)
        .where(memberOf(path))
        .orderBy('path')
        .orderBy('ns')
        .orderBy('name')
        .execute();
      return rows.map((r) => ({ ...fromRow(r), path: r.path }));
    },

    async patch(user, path, changes, limit) {
      try {
        await db.transaction().execute(async (trx) => {
          const before = limit && (await totalsOf(trx, user));
          for (const c of changes) {
            const ns = c.op === 'set' ? c.prop.ns : c.ns;
            const name = c.op === 'set' ? c.prop.name : c.name;
            await trx.deleteFrom('dav_properties').where('user_name', '=', user).where('path', '=', path).where('ns', '=', ns).where('name', '=', name).execute();
            if (c.op === 'set') await trx.insertInto('dav_properties').values({ user_name: user, path, ns, name, xml: c.prop.xml }).execute();
          }
          if (limit && before) {
            const after = await totalsOf(trx, user);
            const over = (after.count > limit.count && after.count > before.count) || (after.size > limit.size && after.size > before.size);
            if (over) throw OVER_LIMIT;
          }
        });
      } catch (e) {
        if (e === OVER_LIMIT) return false;
        throw e;
      }
      return true;
    },

    async copyTree(user, from, to) {
      await db.transaction().execute(async (trx) => {
        await trx.deleteFrom('dav_properties').where('user_name', '=', user).where(atOrBelow(to)).execute();
        await trx
          .insertInto('dav_properties')
          .columns(['user_name', 'path', 'ns', 'name', 'xml'])
          .expression(trx.selectFrom('dav_properties').select((eb) => [eb.val(user).as('user_name'), rebased(from, to).as('path'), 'ns', 'name', 'xml']).where('user_name', '=', user).where(atOrBelow(from)))
          .execute();
      });
    },

    async moveTree(user, from, to) {
      await db.transaction().execute(async (trx) => {
        await trx.deleteFrom('dav_properties').where('user_name', '=', user).where(atOrBelow(to)).execute();
        await trx.updateTable('dav_properties').set({ path: rebased(from, to) }).where('user_name', '=', user).where(atOrBelow(from)).execute();
      });
    },

    async deleteTree(user, path) {
      await db.deleteFrom('dav_properties').where('user_name', '=', user).where(atOrBelow(path)).execute();
    },
  };
}
