import { sql, type Kysely, type Selectable } from 'kysely';
import type { Database } from './schema.js';
import { lessFloored } from './counter-sql.js';
import type { TusUpload, TusUploadRepo } from './tus-uploads.js';

type Row = Selectable<Database['tus_uploads']>;

const fromRow = (r: Row): TusUpload => ({
  id: r.id,
  user: r.user_name,
  ...(r.uploader === null ? {} : { uploader: r.uploader }),
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

/** Ends a transaction that must change nothing: the quota or the cap refused it. */
class Refused extends Error {
  constructor(readonly why: 'quota_exceeded' | 'too_many_uploads') {
    super(why);
  }
}

/** The bytes an unfinished upload held go back to its owner (never below zero: a recount may have reset them). */
async function giveBack(trx: Kysely<Database>, user: string, bytes: number): Promise<void> {
  if (bytes <= 0) return;
  await trx
    .updateTable('users')
    .set({ staged_bytes: lessFloored('staged_bytes', bytes) })
    .where('username', '=', user)
    .execute();
}

/**
 * Resumable uploads as rows, and the bytes they hold against their owner's
 * quota (`users.staged_bytes`), changed in the same transaction as the row:
 * an upload holds its length (or its offset while the length is deferred)
 * from creation until it is finished or deleted (terminated, or swept after
 * expiry), on every node and across restarts. The offset only moves by compare-and-set
 * (`advance` from the offset the writer started at), so a writer that lost
 * its lease can never move an upload's offset under another writer.
 */
export function createTusUploadRepo(db: Kysely<Database>): TusUploadRepo {
  return {
    async create(u, limits) {
      const held = u.length ?? u.offset;
      try {
        await db.transaction().execute(async (trx) => {
          // The owner's row first: on PostgreSQL its lock orders concurrent creations (the count
          // below then sees every upload created before), SQLite runs one write transaction at a time.
          const r = await trx
            .updateTable('users')
            .set({ staged_bytes: sql`staged_bytes + ${held}` })
            .where('username', '=', u.user)
            .where(sql<boolean>`(quota IS NULL OR used_bytes + reserved_bytes + staged_bytes + ${held} <= quota)`)
            .executeTakeFirst();
          if (Number(r.numUpdatedRows) === 0) throw new Refused('quota_exceeded');
          const open = await trx
            .selectFrom('tus_uploads')
            .select((eb) => eb.fn.countAll<number | string>().as('n'))
            .where('user_name', '=', u.user)
            .where('final_path', 'is', null)
            .where('expires_at', '>', u.createdAt)
            .executeTakeFirstOrThrow();
          if (Number(open.n) >= limits.maxOpen) throw new Refused('too_many_uploads');
          await trx
            .insertInto('tus_uploads')
            .values({
              id: u.id,
              user_name: u.user,
              uploader: u.uploader ?? null,
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
        });
      } catch (e) {
        if (e instanceof Refused) return e.why;
        throw e;
      }
      return 'created';
    },

    async get(id) {
      const r = await db.selectFrom('tus_uploads').selectAll().where('id', '=', id).executeTakeFirst();
      return r && fromRow(r);
    },

    async advance(id, from, to, expiresAt, opts = {}) {
      return db.transaction().execute(async (trx) => {
        const r = await trx
          .updateTable('tus_uploads')
          .set({ upload_offset: to, expires_at: expiresAt })
          .where('id', '=', id)
          .where('upload_offset', '=', from)
          .returning(['user_name', 'upload_length', 'final_path'])
          .executeTakeFirst();
        if (!r) return false;
        if (r.upload_length === null && r.final_path === null && to !== from) {
          const handed = Math.min(opts.fromReserved ?? 0, to - from);
          await trx
            .updateTable('users')
            .set({
              staged_bytes: sql`staged_bytes + ${to - from}`,
              reserved_bytes: lessFloored('reserved_bytes', handed),
            })
            .where('username', '=', r.user_name)
            .execute();
        }
        return true;
      });
    },

    async setLength(id, length, offset) {
      try {
        return await db.transaction().execute(async (trx) => {
          const r = await trx
            .updateTable('tus_uploads')
            .set({ upload_length: length })
            .where('id', '=', id)
            .where('upload_length', 'is', null)
            .where('upload_offset', '=', offset)
            .where('final_path', 'is', null)
            .returning(['user_name'])
            .executeTakeFirst();
          if (!r) return 'gone' as const;
          const more = length - offset;
          const u = await trx
            .updateTable('users')
            .set({ staged_bytes: sql`staged_bytes + ${more}` })
            .where('username', '=', r.user_name)
            .where(sql<boolean>`(quota IS NULL OR used_bytes + reserved_bytes + staged_bytes + ${more} <= quota)`)
            .executeTakeFirst();
          if (Number(u.numUpdatedRows) === 0) throw new Refused('quota_exceeded');
          return 'set' as const;
        });
      } catch (e) {
        if (e instanceof Refused && e.why === 'quota_exceeded') return e.why;
        throw e;
      }
    },

    async finish(id, finalPath) {
      await db.transaction().execute(async (trx) => {
        const r = await trx
          .updateTable('tus_uploads')
          .set({ final_path: finalPath })
          .where('id', '=', id)
          .where('final_path', 'is', null)
          .returning(['user_name', 'upload_length', 'upload_offset'])
          .executeTakeFirst();
        if (r) await giveBack(trx, r.user_name, Number(r.upload_length ?? r.upload_offset));
      });
    },

    async delete(id) {
      return db.transaction().execute(async (trx) => {
        const r = await trx.deleteFrom('tus_uploads').where('id', '=', id).returning(['user_name', 'upload_length', 'upload_offset', 'final_path']).executeTakeFirst();
        if (!r) return false;
        if (r.final_path === null) await giveBack(trx, r.user_name, Number(r.upload_length ?? r.upload_offset));
        return true;
      });
    },

    async listExpired(now, limit) {
      return (await db.selectFrom('tus_uploads').selectAll().where('expires_at', '<=', now).orderBy('expires_at').limit(limit).execute()).map(fromRow);
    },
  };
}
