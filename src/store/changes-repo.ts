import { CompiledQuery, sql, type Kysely, type Selectable, type SqlBool, type Transaction } from 'kysely';
import { isPostgres } from './dialect.js';
import { preparedQuery } from './prepared.js';
import type { Database } from './schema.js';
import { awaitSteps, blind, statement, type Steps } from './steps.js';
import type { ChangeRecord, ChangeRepo } from './changes.js';

/** An entry to append: what ChangeRecord holds but the cursor and time, which the journal gives. */
export type NewChange = Omit<ChangeRecord, 'cursor' | 'at'>;

/** Any number; only its being the same for every writer matters. */
const JOURNAL_LOCK = 0x6663_3331;
/** The journal's lock; its answer is never read (postgres-writers.ts sends it with BEGIN). */
export const lockQuery = CompiledQuery.raw(`SELECT pg_advisory_xact_lock(${JOURNAL_LOCK})`);


/**
 * Call first in a transaction that will append to the journal. On PostgreSQL a sequence hands out
 * numbers at insert time but rows become visible at commit: without this lock a reader could see
 * cursor 12 committed while 11 is still open, move its cursor past 11 and never see it. Holding one
 * transaction-level lock from before the insert until commit makes cursors commit in order. It is
 * taken first, before any row lock, so two journal writers never wait on each other in a cycle.
 * SQLite needs nothing: its transactions begin IMMEDIATE, holding the one write lock from the start
 * (sqlite-driver.ts).
 */
export async function lockJournal(trx: Transaction<Database>): Promise<void> {
  if (isPostgres(trx)) await trx.executeQuery(lockQuery);
}


/** lockJournal as a step of a Steps transaction (steps.ts). */
export function* lockJournalStep(db: Kysely<Database>): Steps<void> {
  if (isPostgres(db)) yield lockQuery;
}

/** Folders stamped by one statement at most: few compiled shapes (prepared.ts). */
const STAMP_AT_ONCE = 32;

/** The folders a change at `path` lies beneath (not the root: its ETag is the owner's latest cursor). */
const ancestors = (path: string): string[] => {
  const parts = path.split('/');
  return parts.slice(0, -1).map((_, i) => parts.slice(0, i + 1).join('/'));
};

/**
 * Appends entries inside the caller's transaction (the one that makes the change they record), and
 * stamps every folder above each change (and a created or moved folder itself) with the entry's
 * cursor: folder ETags derive from it, so they change whenever anything beneath changes. Both
 * statements run with every upload, so they are compiled once (prepared.ts). As steps (steps.ts),
 * for the upload's own transaction, and as an awaited part of a Kysely transaction.
 */
export function createJournalWriter(db: Kysely<Database>) {
  // n rows in one statement: an upload's entry costs one statement's overhead only when it commits alone.
  const insert = preparedQuery((p, n) => {
    const [owner, type, path, from, etag, id, sha256, origin] = (['owner', 'type', 'path', 'from', 'etag', 'id', 'sha256', 'origin'] as const).map((c) => p.list<string>(c, n));
    const [isFile, size, modified, at] = (['isFile', 'size', 'modified', 'at'] as const).map((c) => p.list<number>(c, n));
    const row = (i: number) => ({
      owner: owner?.[i] as string, type: type?.[i] as string, path: path?.[i] as string, from_path: from?.[i] ?? null, is_file: isFile?.[i] as number, size: size?.[i] ?? null, modified: modified?.[i] ?? null, etag: etag?.[i] ?? null, created_at: at?.[i] as number,
      file_id: id?.[i] ?? null, sha256: sha256?.[i] ?? null, origin: origin?.[i] ?? null,
    });
    return db
      .insertInto('changes')
      .values(Array.from({ length: n }, (_, i) => row(i)))
      .returning(['cursor', 'owner', 'path']);
  });
  const stamp = preparedQuery((p, n) => db.updateTable('search_entries').set({ tree_cursor: p.value('cursor') }).where('user_name', '=', p.value<string>('owner')).where('path', 'in', p.list<string>('paths', n)));
  function* appendSteps(changes: readonly NewChange[], now = Date.now()): Steps<void> {
    // Each folder gets the latest cursor beneath it, once: several uploads into one folder (a group
    // commit, search-repo.ts) stamp it with one statement.
    const latest = new Map<string, { owner: string; path: string; cursor: number | string | bigint }>();
    for (const batch of insertBatches(changes)) {
      const cols = { owner: [] as unknown[], type: [] as unknown[], path: [] as unknown[], from: [] as unknown[], isFile: [] as unknown[], size: [] as unknown[], modified: [] as unknown[], etag: [] as unknown[], at: [] as unknown[], id: [] as unknown[], sha256: [] as unknown[], origin: [] as unknown[] };
      for (const c of batch) {
        cols.owner.push(c.owner);
        cols.type.push(c.type);
        cols.path.push(c.path);
        cols.from.push(c.from ?? null);
        cols.isFile.push(c.isFile ? 1 : 0);
        cols.size.push(c.size ?? null);
        cols.modified.push(c.modified ?? null);
        cols.etag.push(c.etag ?? null);
        cols.at.push(now);
        cols.id.push(c.id ?? null);
        cols.sha256.push(c.sha256 ?? null);
        cols.origin.push(c.origin ?? null);
      }
      const rows = (yield* statement(insert.bind(cols, batch.length))).rows;
      // The entries must take their cursors in the order of the changes (a batch holds one entry per
      // owner and path, so each row says which it is). Both databases number a multi-row VALUES in
      // its order; should one not, the transaction fails whole rather than journal out of order.
      const cursorOf = new Map(rows.map((r) => [`${r.owner}\0${r.path}`, r.cursor]));
      let last = -Infinity;
      for (const c of batch) {
        const cursor = cursorOf.get(`${c.owner}\0${c.path}`);
        if (cursor === undefined || Number(cursor) <= last) throw new Error('the journal numbered a batch of entries out of order');
        last = Number(cursor);
        for (const path of [...ancestors(c.path), ...(c.from === undefined ? [] : ancestors(c.from)), ...(c.isFile || c.type === 'deleted' ? [] : [c.path])]) {
          latest.set(`${c.owner}\0${path}`, { owner: c.owner, path, cursor });
        }
      }
    }
    const byCursor = new Map<string, { owner: string; cursor: number | string | bigint; paths: string[] }>();
    for (const f of latest.values()) {
      const k = `${f.owner}\0${String(f.cursor)}`;
      const group = byCursor.get(k) ?? { owner: f.owner, cursor: f.cursor, paths: [] };
      group.paths.push(f.path);
      byCursor.set(k, group);
    }
    for (const g of byCursor.values()) {
      for (let i = 0; i < g.paths.length; i += STAMP_AT_ONCE) {
        const paths = g.paths.slice(i, i + STAMP_AT_ONCE);
        yield* blind(stamp.bind({ cursor: g.cursor, owner: g.owner, paths }, paths.length));
      }
    }
  }
  return {
    appendSteps,
    /** appendSteps in a Kysely transaction. */
    append: (trx: Transaction<Database>, changes: readonly NewChange[], now = Date.now()): Promise<void> => awaitSteps(trx, appendSteps(changes, now)),
  };
}

/** Entries inserted by one statement at most: few compiled shapes. */
const INSERT_AT_ONCE = 16;

/** The changes in order, cut into runs of at most INSERT_AT_ONCE with no owner and path twice in a run. */
export function insertBatches<C extends { owner: string; path: string }>(changes: readonly C[]): C[][] {
  const out: C[][] = [];
  let run: C[] = [];
  let seen = new Set<string>();
  for (const c of changes) {
    const key = `${c.owner}\0${c.path}`;
    if (run.length === INSERT_AT_ONCE || seen.has(key)) {
      out.push(run);
      run = [];
      seen = new Set();
    }
    run.push(c);
    seen.add(key);
  }
  if (run.length > 0) out.push(run);
  return out;
}

const num = (v: number | string | bigint | null): number | undefined => (v === null ? undefined : Number(v));

const toRecord = (r: Selectable<Database['changes']>): ChangeRecord => ({
  cursor: Number(r.cursor),
  owner: r.owner,
  type: r.type as ChangeRecord['type'],
  path: r.path,
  from: r.from_path ?? undefined,
  isFile: Number(r.is_file) === 1,
  size: num(r.size),
  modified: num(r.modified),
  etag: r.etag ?? undefined,
  at: Number(r.created_at),
  id: r.file_id ?? undefined,
  sha256: r.sha256 ?? undefined,
  origin: r.origin ?? undefined,
});

export function createChangeRepo(db: Kysely<Database>): ChangeRepo {
  const horizon = async (): Promise<number> => {
    const row = await db.selectFrom('changes_horizon').select('purged_through').where('id', '=', 1).executeTakeFirst();
    return Number(row?.purged_through ?? 0);
  };
  const since = (cursor: number, limit: number, upTo?: number) => {
    // Never at or below the horizon: the newest entry outlives its purge there (purgeBefore).
    let q = db.selectFrom('changes').selectAll().where('cursor', '>', cursor).where(sql<SqlBool>`cursor > (SELECT purged_through FROM changes_horizon WHERE id = 1)`);
    if (upTo !== undefined) q = q.where('cursor', '<=', upTo);
    return q.orderBy('cursor').limit(limit);
  };
  return {
    async latest() {
      const row = await db.selectFrom('changes').select(sql<number | string | null>`max(cursor)`.as('m')).executeTakeFirst();
      return Math.max(Number(row?.m ?? 0), await horizon());
    },
    horizon,
    async changesSince(cursor, limit, upTo) {
      return (await since(cursor, limit, upTo).execute()).map(toRecord);
    },
    async changesSinceFor(owners, cursor, limit, upTo) {
      if (owners.length === 0) return [];
      return (await since(cursor, limit, upTo).where('owner', 'in', owners).execute()).map(toRecord);
    },
    async changesBeforeFor(owners, cursor, limit) {
      if (owners.length === 0) return [];
      let q = db.selectFrom('changes').selectAll().where('owner', 'in', owners).where(sql<SqlBool>`cursor > (SELECT purged_through FROM changes_horizon WHERE id = 1)`);
      if (cursor !== undefined) q = q.where('cursor', '<', cursor);
      return (await q.orderBy('cursor', 'desc').limit(limit).execute()).map(toRecord);
    },
    async ownersBetween(cursor, upTo) {
      const rows = await db.selectFrom('changes').select('owner').distinct().where('cursor', '>', cursor).where('cursor', '<=', upTo).execute();
      return rows.map((r) => r.owner);
    },
    async treeCursors(owner, paths) {
      const out = new Map<string, number>();
      const folders = paths.filter((p) => p !== '');
      for (let i = 0; i < folders.length; i += 500) {
        const rows = await db.selectFrom('search_entries').select(['path', 'tree_cursor']).where('user_name', '=', owner).where('path', 'in', folders.slice(i, i + 500)).execute();
        for (const r of rows) if (r.tree_cursor !== null) out.set(r.path, Number(r.tree_cursor));
      }
      if (paths.includes('')) {
        const row = await db.selectFrom('changes').select(sql<number | string | null>`max(cursor)`.as('m')).where('owner', '=', owner).executeTakeFirst();
        const latest = Number(row?.m ?? 0) || (await horizon());
        if (latest > 0) out.set('', latest);
      }
      return out;
    },
    async purgeBefore(time) {
      return db.transaction().execute(async (trx) => {
        // Everything before the oldest entry still inside the retention goes (cursors are in time order,
        // give or take a clock step). Read in cursor order from the oldest, this passes only the rows
        // it then deletes: no index on the time (one B-tree less for every write to keep up to date).
        const newest = Number((await trx.selectFrom('changes').select(sql<number | string | null>`max(cursor)`.as('m')).executeTakeFirst())?.m ?? 0);
        const kept = await trx.selectFrom('changes').select('cursor').where('created_at', '>=', time).orderBy('cursor').limit(1).executeTakeFirst();
        const through = kept ? Number(kept.cursor) - 1 : newest;
        const horizon = Number((await trx.selectFrom('changes_horizon').select('purged_through').where('id', '=', 1).executeTakeFirst())?.purged_through ?? 0);
        if (through <= horizon) return 0;
        // The newest row stays even when it is purged: SQLite numbers the next entry after the highest
        // row left (migration 0022), so it keeps every cursor from coming again. Behind the horizon no
        // reader sees it.
        const r = await trx.deleteFrom('changes').where('cursor', '<=', through).where('cursor', '<', newest).executeTakeFirst();
        await trx.updateTable('changes_horizon').set({ purged_through: through }).where('id', '=', 1).execute();
        // The kept newest row left the feed too when the purge reached it.
        return Number(r.numDeletedRows) + (through === newest ? 1 : 0);
      });
    },
  };
}
