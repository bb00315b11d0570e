import { PostgresAdapter, sql, type Kysely, type RawBuilder, type SqlBool } from 'kysely';
import { charCount, escapeLike, ftsPhrase, normalizeName, TRIGRAM } from '../domain/search-text.js';
import type { Database } from './schema.js';
import type { IndexedEntry, SearchRepo } from './types.js';

/** Rows per INSERT: 9 parameters each, far below either database's limit. */
const BATCH = 500;

/**
 * Strictly below `path` in one user's tree, as a range of the (user_name,
 * path) index: every path starting with 'a/' lies in ['a/', 'a0') because
 * '0' follows '/' directly and both databases compare these columns
 * byte-wise (UTF-8 byte order is code-point order).
 */
function below(path: string): RawBuilder<SqlBool> {
  if (path === '') return sql<SqlBool>`(1 = 1)`;
  return sql<SqlBool>`(path >= ${`${path}/`} and path < ${`${path}0`})`;
}

const atOrBelow = (path: string): RawBuilder<SqlBool> => (path === '' ? sql<SqlBool>`(1 = 1)` : sql<SqlBool>`(path = ${path} or ${below(path)})`);

const nameOf = (path: string): string => path.slice(path.lastIndexOf('/') + 1);
const depthOf = (path: string): number => path.split('/').length;

type Row = { path: string; user_name: string; is_file: number | string; size: number | string | bigint; modified: number | string | bigint };
const fromRow = (r: Row): IndexedEntry => ({ user: r.user_name, path: r.path, isFile: Number(r.is_file) === 1, size: Number(r.size), modified: Number(r.modified) });

/**
 * The search index as rows of `search_entries` (migration 0010). Substring
 * matching uses SQLite's FTS5 trigram table or PostgreSQL's pg_trgm GIN
 * index for queries of at least three characters; shorter ones read the
 * user's names through LIKE (escaped: % and _ are literal).
 */
export function createSearchRepo(db: Kysely<Database>): SearchRepo {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;

  const rankOf = (text: string) => sql<number>`(case when norm = ${text} then 0 when substr(norm, 1, ${charCount(text)}) = ${text} then 1 else 2 end)`;

  return {
    async put(entries) {
      for (let i = 0; i < entries.length; i += BATCH) {
        const values = entries.slice(i, i + BATCH).map((e) => {
          const name = nameOf(e.path);
          return { user_name: e.user, path: e.path, name, norm: normalizeName(name), depth: depthOf(e.path), is_file: e.isFile ? 1 : 0, size: e.size, modified: e.modified, scan: null };
        });
        await db
          .insertInto('search_entries')
          .values(values)
          .onConflict((oc) =>
            oc.columns(['user_name', 'path']).doUpdateSet((eb) => ({
              is_file: eb.ref('excluded.is_file'),
              size: eb.ref('excluded.size'),
              modified: eb.ref('excluded.modified'),
              scan: null,
            })),
          )
          .execute();
      }
    },

    async existing(user, paths) {
      if (paths.length === 0) return new Set();
      const rows = await db.selectFrom('search_entries').select('path').where('user_name', '=', user).where('path', 'in', paths).execute();
      return new Set(rows.map((r) => r.path));
    },

    async deleteWithin(user, path) {
      const r = await db.deleteFrom('search_entries').where('user_name', '=', user).where(atOrBelow(path)).executeTakeFirst();
      return Number(r.numDeletedRows);
    },

    async moveWithin(user, from, to) {
      const name = nameOf(to);
      const shift = depthOf(to) - depthOf(from);
      return db.transaction().execute(async (trx) => {
        await trx.deleteFrom('search_entries').where('user_name', '=', user).where(atOrBelow(to)).execute();
        // The moved entry itself gets its new name; below it only paths and depths change.
        const r = await trx
          .updateTable('search_entries')
          .set({
            path: sql`${to} || substr(path, ${charCount(from) + 1})`,
            depth: sql`depth + ${shift}`,
            name: sql`case when path = ${from} then ${name} else name end`,
            norm: sql`case when path = ${from} then ${normalizeName(name)} else norm end`,
            // Written since a running rescan marked it: that rescan's walk may have passed both places.
            scan: null,
          })
          .where('user_name', '=', user)
          .where(atOrBelow(from))
          .executeTakeFirst();
        return Number(r.numUpdatedRows);
      });
    },

    async search(q) {
      const pattern = `%${escapeLike(q.text)}%`;
      const useFts = !postgres && charCount(q.text) >= TRIGRAM;
      let query = db
        .selectFrom('search_entries')
        .select(['user_name', 'path', 'is_file', 'size', 'modified'])
        .where('user_name', '=', q.user)
        .where(below(q.within));
      query = useFts
        ? query.where(sql<SqlBool>`id in (select rowid from search_fts where search_fts match ${ftsPhrase(q.text)})`)
        : query.where(sql<SqlBool>`norm like ${pattern} escape '\\'`);
      if (q.type) query = query.where('is_file', '=', q.type === 'file' ? 1 : 0);
      const rows = await query
        .orderBy(rankOf(q.text))
        .orderBy('depth')
        .orderBy('norm')
        .orderBy('path')
        .limit(q.limit + 1)
        .execute();
      return { entries: rows.slice(0, q.limit).map(fromRow), truncated: rows.length > q.limit };
    },

    async markAll(user, scan) {
      await db.updateTable('search_entries').set({ scan }).where('user_name', '=', user).execute();
    },

    async sweepMarked(user, scan) {
      const r = await db.deleteFrom('search_entries').where('user_name', '=', user).where('scan', '=', scan).executeTakeFirst();
      return Number(r.numDeletedRows);
    },

    async users() {
      const rows = await db.selectFrom('search_entries').select('user_name').distinct().orderBy('user_name').execute();
      return rows.map((r) => r.user_name);
    },
  };
}
