import type { Kysely, Selectable } from 'kysely';
import type { Database } from './schema.js';
import type { JournalRecord, JournalRepo } from './journal.js';

const toRecord = (r: Selectable<Database['journal']>): JournalRecord => ({
  id: r.id,
  kind: r.kind,
  data: r.data,
  createdAt: Number(r.created_at),
  updatedAt: Number(r.updated_at),
});

export function createJournalRepo(db: Kysely<Database>): JournalRepo {
  return {
    async put(r) {
      await db.insertInto('journal').values({ id: r.id, kind: r.kind, data: r.data, created_at: r.now, updated_at: r.now }).execute();
    },
    async update(id, data, now) {
      const r = await db.updateTable('journal').set({ data, updated_at: now }).where('id', '=', id).executeTakeFirst();
      return Number(r.numUpdatedRows) > 0;
    },
    async get(id) {
      const row = await db.selectFrom('journal').selectAll().where('id', '=', id).executeTakeFirst();
      return row && toRecord(row);
    },
    async list(kind, updatedBefore, limit) {
      const rows = await db.selectFrom('journal').selectAll().where('kind', '=', kind).where('updated_at', '<', updatedBefore).orderBy('updated_at').limit(limit).execute();
      return rows.map(toRecord);
    },
    async delete(id) {
      await db.deleteFrom('journal').where('id', '=', id).execute();
    },
  };
}
