import { sql, type Kysely, type Selectable } from 'kysely';
import type { Database } from './schema.js';
import { lessFloored } from './counter-sql.js';
import type { Share } from '../domain/share.js';
import type { ShareRepo } from './shares.js';
import { atOrBelow } from './tree-sql.js';
import { stampedLookup, type ChangeStamp } from './stamped-cache.js';
import { ROUNDING_ALLOWANCE, UNITS_PER_DOWNLOAD } from '../domain/download-units.js';

type Row = Selectable<Database['shares']>;

const optionalNumber = (v: number | string | bigint | null): number | undefined => (v === null ? undefined : Number(v));

const fromRow = (r: Row): Share => ({
  id: r.id,
  ownerId: r.owner_id,
  owner: r.owner_name,
  path: r.path,
  isFile: Number(r.is_file) === 1,
  uploadOnly: Number(r.upload_only) === 1,
  passwordHash: r.password_hash ?? undefined,
  maxDownloads: optionalNumber(r.max_downloads),
  downloadUnits: Number(r.downloads),
  expiresAt: optionalNumber(r.expires_at),
  createdAt: Number(r.created_at),
});

/**
 * Share links as rows. The download count (column `downloads`, in units of
 * src/domain/download-units.ts since migration 0012) only moves by one
 * conditional UPDATE (never read, add, write back), so concurrent
 * downloads on any number of nodes can never pass the limit.
 */
export function createShareRepo(db: Kysely<Database>, changeStamp?: ChangeStamp): ShareRepo {
  // A visitor's every request looks its link up: kept while the database is unchanged, so a
  // revocation, a used-up download or a disabled owner (each a commit) is seen at once.
  const cache = stampedLookup<Share>(changeStamp);
  return {
    async create(s) {
      await db
        .insertInto('shares')
        .values({
          id: s.id,
          owner_id: s.ownerId,
          owner_name: s.owner,
          path: s.path,
          is_file: s.isFile ? 1 : 0,
          upload_only: s.uploadOnly ? 1 : 0,
          password_hash: s.passwordHash ?? null,
          max_downloads: s.maxDownloads ?? null,
          downloads: 0,
          expires_at: s.expiresAt ?? null,
          created_at: s.createdAt,
        })
        .execute();
    },

    get: (id) =>
      cache.get(id, async () => {
        const r = await db
          .selectFrom('shares')
          .innerJoin('users', 'users.id', 'shares.owner_id')
          .selectAll('shares')
          .select('users.disabled as owner_disabled')
          .where('shares.id', '=', id)
          .executeTakeFirst();
        return r && { ...fromRow(r), ownerDisabled: Number(r.owner_disabled) === 1 };
      }),

    async listByOwner(ownerId) {
      const rows = await db.selectFrom('shares').selectAll().where('owner_id', '=', ownerId).orderBy('created_at', 'desc').orderBy('id').execute();
      return rows.map(fromRow);
    },

    async delete(id, ownerId) {
      const r = await db.deleteFrom('shares').where('id', '=', id).where('owner_id', '=', ownerId).executeTakeFirst();
      return Number(r.numDeletedRows) > 0;
    },

    async claimUnits(id, units) {
      // 64-bit integer arithmetic in the database on both dialects: max_downloads ≤ MAX_DOWNLOAD_LIMIT keeps it in range.
      const limit = sql<number>`max_downloads * ${sql.lit(UNITS_PER_DOWNLOAD)} + ${sql.lit(ROUNDING_ALLOWANCE)}`;
      const r = await db
        .updateTable('shares')
        .set({ downloads: sql`downloads + ${units}` })
        .where('id', '=', id)
        .where((eb) => eb.or([eb('max_downloads', 'is', null), eb(sql`downloads + ${units}`, '<=', limit)]))
        .executeTakeFirst();
      return Number(r.numUpdatedRows) > 0;
    },

    async refundUnits(id, units) {
      if (units <= 0) return;
      await db
        .updateTable('shares')
        .set({ downloads: lessFloored('downloads', units) })
        .where('id', '=', id)
        .execute();
    },

    async addUnits(id, units) {
      await db.updateTable('shares').set({ downloads: sql`downloads + ${units}` }).where('id', '=', id).execute();
    },

    async deleteWithin(owner, path) {
      const r = await db.deleteFrom('shares').where('owner_name', '=', owner).where(atOrBelow(path)).executeTakeFirst();
      return Number(r.numDeletedRows);
    },

    async deleteExpired(now) {
      const r = await db.deleteFrom('shares').where('expires_at', 'is not', null).where('expires_at', '<=', now).executeTakeFirst();
      return Number(r.numDeletedRows);
    },
  };
}
