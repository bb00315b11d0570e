import type { Kysely } from 'kysely';
import type { Database } from './schema.js';
import type { ZipCrcRepo } from './zip-crcs.js';

export function createZipCrcRepo(db: Kysely<Database>): ZipCrcRepo {
  return {
    async getMany(keys) {
      const found = new Map<string, number>();
      if (keys.length === 0) return found;
      const rows = await db.selectFrom('zip_crcs').select(['key', 'crc']).where('key', 'in', [...keys]).execute();
      for (const r of rows) found.set(r.key, Number(r.crc));
      return found;
    },

    async putMany(rows, now) {
      if (rows.length === 0) return;
      const unique = [...new Map(rows.map((r) => [r.key, r.crc])).entries()];
      await db
        .insertInto('zip_crcs')
        .values(unique.map(([key, crc]) => ({ key, crc, created_at: now })))
        .onConflict((oc) => oc.column('key').doNothing())
        .execute();
    },
  };
}
