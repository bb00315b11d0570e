import type { Kysely, Selectable } from 'kysely';
import type { Database } from './schema.js';
import type { TusUpload, TusUploadRepo } from './types.js';

type Row = Selectable<Database['tus_uploads']>;

const fromRow = (r: Row): TusUpload => ({
  id: r.id,
  user: r.user_name,
  offset: Number(r.upload_offset),
  length: r.upload_length === null ? undefined : Number(r.upload_length),
  metadata: r.metadata,
  folder: r.folder,
  filename: r.filename,
  overwrite: Number(r.overwrite) === 1,
  finalPath: r.final_path ?? undefined,
  createdAt: Number(r.created_at),
  expiresAt: Number(r.expires_at),
});

/**
 * Resumable uploads as rows. The offset only moves by compare-and-set
 * (`advance` from the offset the writer started at), so a writer that lost
 * its lease can never move an upload's offset under another writer.
 */
export function createTusUploadRepo(db: Kysely<Database>): TusUploadRepo {
  return {
    async create(u) {
      await db
        .insertInto('tus_uploads')
        .values({
          id: u.id,
          user_name: u.user,
          upload_offset: u.offset,
          upload_length: u.length ?? null,
          metadata: u.metadata,
          folder: u.folder,
          filename: u.filename,
          overwrite: u.overwrite ? 1 : 0,
          final_path: u.finalPath ?? null,
          created_at: u.createdAt,
          expires_at: u.expiresAt,
        })
        .execute();
    },

    async get(id) {
      const r = await db.selectFrom('tus_uploads').selectAll().where('id', '=', id).executeTakeFirst();
      return r && fromRow(r);
    },

    async advance(id, from, to, expiresAt) {
      const r = await db.updateTable('tus_uploads').set({ upload_offset: to, expires_at: expiresAt }).where('id', '=', id).where('upload_offset', '=', from).executeTakeFirst();
      return Number(r.numUpdatedRows) > 0;
    },

    async setLength(id, length) {
      const r = await db.updateTable('tus_uploads').set({ upload_length: length }).where('id', '=', id).where('upload_length', 'is', null).executeTakeFirst();
      return Number(r.numUpdatedRows) > 0;
    },

    async finish(id, finalPath) {
      await db.updateTable('tus_uploads').set({ final_path: finalPath }).where('id', '=', id).execute();
    },

    async delete(id) {
      const r = await db.deleteFrom('tus_uploads').where('id', '=', id).executeTakeFirst();
      return Number(r.numDeletedRows) > 0;
    },

    async listExpired(now, limit) {
      return (await db.selectFrom('tus_uploads').selectAll().where('expires_at', '<=', now).orderBy('expires_at').limit(limit).execute()).map(fromRow);
    },
  };
}
