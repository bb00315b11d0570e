import type { Kysely } from 'kysely';
import type { Database } from './schema.js';
import type { DavPropertyRepo, DeadProperty } from './types.js';
import { atOrBelow, memberOf, rebased } from './tree-sql.js';

const fromRow = (r: { ns: string; name: string; xml: string }): DeadProperty => ({ ns: r.ns, name: r.name, xml: r.xml });

/** WebDAV dead properties as rows, one per (user, path, namespace, name). */
export function createDavPropertyRepo(db: Kysely<Database>): DavPropertyRepo {
  return {
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

    async patch(user, path, changes) {
      await db.transaction().execute(async (trx) => {
        for (const c of changes) {
          const ns = c.op === 'set' ? c.prop.ns : c.ns;
          const name = c.op === 'set' ? c.prop.name : c.name;
          await trx.deleteFrom('dav_properties').where('user_name', '=', user).where('path', '=', path).where('ns', '=', ns).where('name', '=', name).execute();
          if (c.op === 'set') await trx.insertInto('dav_properties').values({ user_name: user, path, ns, name, xml: c.prop.xml }).execute();
        }
      });
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
