import type { Kysely } from 'kysely';
import type { Database } from './schema.js';
import type { SettingsRepo } from './settings.js';

export function createSettingsRepo(db: Kysely<Database>): SettingsRepo {
  return {
    async getOrCreate(name, make) {
      // Insert-if-absent, then read: when nodes start together, every one reads the first one's value.
      await db.insertInto('settings').values({ name, value: make() }).onConflict((oc) => oc.column('name').doNothing()).execute();
      const row = await db.selectFrom('settings').select('value').where('name', '=', name).executeTakeFirstOrThrow();
      return row.value;
    },
    async get(name) {
      const row = await db.selectFrom('settings').select('value').where('name', '=', name).executeTakeFirst();
      return row?.value;
    },
    async put(name, value) {
      await db.insertInto('settings').values({ name, value }).onConflict((oc) => oc.column('name').doUpdateSet({ value })).execute();
    },
  };
}
