import { PostgresAdapter, sql, type Kysely, type OnConflictBuilder, type RawBuilder, type SqlBool, type Transaction } from 'kysely';
import { pooledRandomHex } from '../lib/crypto.js';
import { charCount, escapeLike, ftsPhrase, normalizeName, TRIGRAM } from '../domain/search-text.js';
import { createJournalWriter, lockJournal, lockJournalStep, type NewChange } from './changes-repo.js';
import { indexChange } from './index-change.js';
import { preparedQuery } from './prepared.js';
import type { Database } from './schema.js';
import { blind, kyselyStepRunner, statement, type StepRunner, type Steps } from './steps.js';
import type { EntryIdentity, IndexedEntry, RescanMark, SearchRepo } from './search.js';

const randomHex = pooledRandomHex();

/** A new item's stable id (docs/api.md "Sync fields"): random, so it tells nothing of other items or users. */
export const newEntryId = (): string => randomHex(16);

/** What `identities` reads of an entry. */
const IDENTITY_COLUMNS = ['path', 'file_id', 'is_file', 'size', 'modified', 'sha256', 'etag'] as const;

/** Rows per INSERT: 9 parameters each, far below either database's limit. */
const BATCH = 500;
/** Up to this many paths or rows in one statement use a compiled form of their own (one per count). */
const PREPARED_UP_TO = 16;
/** From this many matches on, a query reads the best-first index in order instead of sorting its matches. */
const DENSE = 2000;

/** The first string after every string that starts with `s` (its last code point plus one); undefined when there is none. */
function successor(s: string): string | undefined {
  const points = [...s];
  const last = points.pop()?.codePointAt(0);
  if (last === undefined || last >= 0x10ffff) return undefined;
  // Skip the surrogate range: no string holds those code points on their own.
  const next = last + 1 === 0xd800 ? 0xe000 : last + 1;
  return points.join('') + String.fromCodePoint(next);
}

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

/** An entry written again keeps its row (and so its text-index row): only its figures change, and a running rescan's mark goes. */
const updateFigures = (oc: OnConflictBuilder<Database, 'search_entries'>) =>
  oc.columns(['user_name', 'path']).doUpdateSet((eb) => ({
    is_file: eb.ref('excluded.is_file'),
    size: eb.ref('excluded.size'),
    modified: eb.ref('excluded.modified'),
    etag: eb.ref('excluded.etag'),
    file_id: eb.ref('excluded.file_id'),
    sha256: eb.ref('excluded.sha256'),
    scan: null,
  }));

const nameOf = (path: string): string => path.slice(path.lastIndexOf('/') + 1);
const depthOf = (path: string): number => path.split('/').length;

type Row = { path: string; user_name: string; is_file: number | string; size: number | string | bigint; modified: number | string | bigint };
const fromRow = (r: Row): IndexedEntry => ({ user: r.user_name, path: r.path, isFile: Number(r.is_file) === 1, size: Number(r.size), modified: Number(r.modified) });

/** Writes one batch of index puts (at most BATCH entries) in one transaction; what each entry's row now says. */
export type IndexWrite = (batch: readonly IndexedEntry[]) => Promise<Map<string, EntryIdentity>>;

/**
 * The upload's transaction: one batch of index puts as steps (steps.ts), with the journal's entries
 * for what they change. Made from its own Kysely instance by whoever runs it: the search repository
 * below, or on SQLite the index writer's thread (sqlite-writer-thread.ts), with its own connection.
 */
export function createPutSteps(db: Kysely<Database>, journal: boolean): (batch: readonly IndexedEntry[]) => Steps<Map<string, EntryIdentity>> {
  const writer = createJournalWriter(db);
  // An upload indexes one entry at a time: its statements are compiled once (prepared.ts).
  const readBefore = preparedQuery((p, n) => db.selectFrom('search_entries').select(['path', 'is_file', 'size', 'modified', 'etag', 'file_id', 'sha256', 'scan']).where('user_name', '=', p.value<string>('user')).where('path', 'in', p.list<string>('paths', n)));
  const upsert = preparedQuery((p, n) =>
    db
      .insertInto('search_entries')
      .values(
        Array.from({ length: n }, (_, i) => {
          const v = <T>(name: string) => p.value<T>(`${name}${i}`);
          return { user_name: v('user'), path: v('path'), name: v('name'), norm: v('norm'), depth: v('depth'), is_file: v('isFile'), size: v('size'), modified: v('modified'), scan: null, etag: v('etag'), file_id: v('fileId'), sha256: v('sha256') };
        }),
      )
      .onConflict(updateFigures),
  );
  /**
   * The rescan sightings in `batch` that are older than a write: the row was written since the
   * rescan marked it (the writer's figures stand), or the index holds nothing there because a writer
   * deleted or moved the path (or a folder above it) away after the rescan began. Without this, a
   * walk that saw a file just before its delete put it back: search found it, the feed said
   * created, and on S3 a create with If-None-Match: * was refused until the next rescan, the name
   * taken by nothing. With the journal off there is no record of the delete: such a sighting is
   * put, and the next rescan removes it.
   */
  function* staleSightings(batch: readonly IndexedEntry[], before: ReadonlyMap<string, { scan: string | null }>): Steps<Set<IndexedEntry>> {
    const stale = new Set<IndexedEntry>();
    const absent: IndexedEntry[] = [];
    for (const e of batch) {
      if (!e.walked) continue;
      const was = before.get(`${e.user}\0${e.path}`);
      if (was === undefined) absent.push(e);
      else if (was.scan !== e.walked.scan) stale.add(e);
    }
    if (!journal || absent.length === 0) return stale;
    for (const user of new Set(absent.map((e) => e.user))) {
      const mine = absent.filter((e) => e.user === user);
      const since = Math.min(...mine.map((e) => (e.walked as RescanMark).since));
      const places = [...new Set(mine.flatMap((e) => e.path.split('/').map((_, i, parts) => parts.slice(0, i + 1).join('/'))))];
      const gone = new Set<string>();
      for (let i = 0; i < places.length; i += BATCH) {
        const some = places.slice(i, i + BATCH);
        const { rows } = yield* statement(
          db
            .selectFrom('changes')
            .select(['type', 'path', 'from_path'])
            .where('owner', '=', user)
            .where('cursor', '>', since)
            .where((eb) => eb.or([eb.and([eb('type', '=', 'deleted'), eb('path', 'in', some)]), eb.and([eb('type', '=', 'moved'), eb('from_path', 'in', some)])]))
            .compile(),
        );
        for (const r of rows) gone.add(r.type === 'moved' ? (r.from_path ?? '') : r.path);
      }
      for (const e of mine) if (e.path.split('/').some((_, i, parts) => gone.has(parts.slice(0, i + 1).join('/')))) stale.add(e);
    }
    return stale;
  }

  function* putSteps(given: readonly IndexedEntry[]): Steps<Map<string, EntryIdentity>> {
    let batch = given;
    if (journal) yield* lockJournalStep(db);
    // What the index held before decides what the journal says: new → created, other figures → modified;
    // and what the row keeps: its id (an overwrite of the name is the same item), its hash while its bytes are.
    const before = new Map<string, { isFile: boolean; size: number; modified: number; etag: string | null; id: string | null; sha256: string | null; scan: string | null }>();
    // Not for a write storage reported as a creation: nothing was there, whatever the index says (a new item: a new id).
    const unknown = batch.filter((e) => !e.created);
    for (const user of new Set(unknown.map((e) => e.user))) {
      const paths = unknown.filter((e) => e.user === user).map((e) => e.path);
      const { rows } = yield* statement(
        paths.length <= PREPARED_UP_TO
          ? readBefore.bind({ user, paths }, paths.length)
          : db.selectFrom('search_entries').select(['path', 'is_file', 'size', 'modified', 'etag', 'file_id', 'sha256', 'scan']).where('user_name', '=', user).where('path', 'in', paths).compile(),
      );
      for (const r of rows) before.set(`${user}\0${r.path}`, { isFile: Number(r.is_file) === 1, size: Number(r.size), modified: Number(r.modified), etag: r.etag, id: r.file_id, sha256: r.sha256, scan: r.scan });
    }
    const stale = yield* staleSightings(batch, before);
    if (stale.size > 0) batch = batch.filter((e) => !stale.has(e));
    const written = new Map<string, EntryIdentity>();
    if (batch.length === 0) return written;
    const changes: NewChange[] = [];
    const values = batch.map((e) => {
      const name = nameOf(e.path);
      const was = before.get(`${e.user}\0${e.path}`);
      const same = was !== undefined && was.isFile === e.isFile;
      const id = (same ? was.id : null) ?? newEntryId();
      // A hash the writer gives wins; else the one held, only while the bytes are the same (same ETag).
      const sha256 = !e.isFile ? null : e.sha256 ?? (same && was.sha256 !== null && e.etag !== undefined && was.etag === e.etag ? was.sha256 : null);
      if (journal) {
        const sync = { id, ...(sha256 === null ? {} : { sha256 }), ...(e.origin === undefined ? {} : { origin: e.origin }) };
        const figures = e.isFile ? { size: e.size, modified: e.modified, etag: e.etag } : { modified: e.modified, etag: e.etag };
        // Other bytes under the same figures are a change too; a first hash of the same bytes is not.
        const rehashed = same && e.isFile && sha256 !== null && was.sha256 !== null && was.sha256 !== sha256;
        const type = indexChange(was, e, e.walked !== undefined) ?? (rehashed ? 'modified' : undefined);
        if (type) changes.push({ owner: e.user, type, path: e.path, isFile: e.isFile, ...figures, ...sync });
      }
      written.set(`${e.user}\0${e.path}`, { id, isFile: e.isFile, size: e.size, modified: e.modified, sha256, etag: e.etag ?? null });
      return { user_name: e.user, path: e.path, name, norm: normalizeName(name), depth: depthOf(e.path), is_file: e.isFile ? 1 : 0, size: e.size, modified: e.modified, scan: null, etag: e.etag ?? null, file_id: id, sha256 };
    });
    if (values.length <= PREPARED_UP_TO) {
      const named: Record<string, unknown> = {};
      values.forEach((v, i) => Object.assign(named, { [`user${i}`]: v.user_name, [`path${i}`]: v.path, [`name${i}`]: v.name, [`norm${i}`]: v.norm, [`depth${i}`]: v.depth, [`isFile${i}`]: v.is_file, [`size${i}`]: v.size, [`modified${i}`]: v.modified, [`etag${i}`]: v.etag, [`fileId${i}`]: v.file_id, [`sha256${i}`]: v.sha256 }));
      yield* blind(upsert.bind(named, values.length));
    } else {
      yield* blind(db.insertInto('search_entries').values(values).onConflict(updateFigures).compile());
    }
    if (journal) yield* writer.appendSteps(changes);
    return written;
  }

  return putSteps;
}

/**
 * The search index as rows of `search_entries` (migration 0010). Substring
 * matching uses SQLite's FTS5 trigram table or PostgreSQL's pg_trgm GIN
 * index for queries of at least three characters; shorter ones read the
 * user's names through LIKE (escaped: % and _ are literal).
 */
export function createSearchRepo(db: Kysely<Database>, opts: { journal: boolean; steps?: StepRunner | undefined; write?: IndexWrite | undefined; sweeping?: SearchRepo['sweeping'] | undefined } = { journal: true }): SearchRepo {
  // --changes off: no entries, and none of their cost either (the advisory lock that orders every
  // journal writer on PostgreSQL, the read of the rows before, the folder stamps).
  const journal = opts.journal;
  const lock = (trx: Transaction<Database>) => (journal ? lockJournal(trx) : Promise.resolve());
  const writer = createJournalWriter(db);
  const append = (trx: Transaction<Database>, changes: readonly NewChange[]) => (journal ? writer.append(trx, changes) : Promise.resolve());
  // The upload's transaction: on SQLite in the index writer's thread (opts.write), else as steps here;
  // a walk's batches (put's `tree`) always here.
  const runSteps = opts.steps ?? kyselyStepRunner(db);
  const putSteps = createPutSteps(db, journal);
  const here: IndexWrite = (batch) => runSteps(() => putSteps(batch));
  const write: IndexWrite = opts.write ?? here;
  const kindsOf = preparedQuery((p, n) => db.selectFrom('search_entries').select(['path', 'is_file']).where('user_name', '=', p.value<string>('user')).where('path', 'in', p.list<string>('paths', n)));
  // A GET asks for its file's hash (Repr-Digest) on every read the digest memo has not seen (services/digest-memo.ts).
  const identitiesOf = preparedQuery((p, n) => db.selectFrom('search_entries').select(IDENTITY_COLUMNS).where('user_name', '=', p.value<string>('user')).where('path', 'in', p.list<string>('paths', n)));
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;

  const rankOf = (text: string) => sql<number>`(case when norm = ${text} then 0 when substr(norm, 1, ${charCount(text)}) = ${text} then 1 else 2 end)`;

  async function writeEntries(given: readonly IndexedEntry[], tree = false): Promise<Map<string, EntryIdentity>> {
    // One row per (user, path), the last one given winning: PostgreSQL refuses an upsert that meets the same row twice.
    const entries = given.length < 2 ? given : [...new Map(given.map((e) => [`${e.user}\0${e.path}`, e])).values()];
    const written = new Map<string, EntryIdentity>();
    for (let i = 0; i < entries.length; i += BATCH) {
      const batch = entries.slice(i, i + BATCH);
      for (const [k, v] of await (tree ? here : write)(batch)) written.set(k, v);
    }
    return written;
  }

  /**
   * Every change to the index goes through one queue, in the order asked. Puts that wait there
   * while a step is being written go together into the next transaction (a group commit): with
   * several uploads in flight, one BEGIN, one read of the rows before and one COMMIT (with its
   * write-ahead-log pages) serve all of them. Deletes and moves are steps
   * of their own, never reordered against a put. No wait is added: a put on an idle queue is
   * written at once.
   */
  type Step = { entries?: readonly IndexedEntry[]; tree?: boolean; run?: () => Promise<unknown>; done: (error: unknown, value?: unknown) => void };
  const waiting: Step[] = [];
  let writing = false;
  async function drain(): Promise<void> {
    writing = true;
    try {
      while (waiting.length > 0) {
        const first = waiting[0] as Step;
        if (first.run) {
          waiting.shift();
          await first.run().then((v) => first.done(undefined, v), (e: unknown) => first.done(e));
          continue;
        }
        let n = 1;
        // A tree's batches and uploads' puts are written on different connections: a group is of one kind.
        while (n < waiting.length && waiting[n]?.entries && waiting[n]?.tree === first.tree) n++;
        const group = waiting.splice(0, n);
        try {
          const written = await writeEntries(group.flatMap((g) => g.entries ?? []), first.tree);
          for (const g of group) g.done(undefined, written);
        } catch (e) {
          if (group.length === 1) (group[0] as Step).done(e);
          // One caller's entries may be what failed: each alone, so the others' still land.
          else for (const g of group) await writeEntries(g.entries ?? [], g.tree).then((written) => g.done(undefined, written), (err: unknown) => g.done(err));
        }
      }
    } finally {
      writing = false;
    }
  }
  const enqueue = <T>(step: Omit<Step, 'done'>): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      waiting.push({ ...step, done: (error, value) => (error === undefined ? resolve(value as T) : reject(error)) });
      if (!writing) void drain();
    });
  const inOrder = <T>(run: () => Promise<T>): Promise<T> => enqueue<T>({ run });

  /**
   * SQLite: entries still waiting for the text index (migration 0025_search_text_batched: it takes
   * them in batches of SEARCH_TEXT_BATCH) go in now, in one transaction, before a search reads it.
   */
  async function indexWaiting(): Promise<void> {
    const waiting = sql<{ n: number }>`select exists(select 1 from search_entries where id > (select w from search_fts_mark where id = 1)) as n`;
    if (!Number((await waiting.execute(db)).rows[0]?.n)) return;
    await db.transaction().execute(async (trx) => {
      await sql`insert into search_fts(rowid, norm) select id, norm from search_entries where id > (select w from search_fts_mark where id = 1) order by id`.execute(trx);
      await sql`update search_fts_mark set w = (select max(id) from search_entries) where id = 1 and w < (select max(id) from search_entries)`.execute(trx);
    });
  }

  return {
    sweeping: opts.sweeping ?? ((run) => run()),

    async put(given, putOpts) {
      return given.length > 0 ? enqueue<Map<string, EntryIdentity>>({ entries: given, tree: putOpts?.tree === true }) : new Map();
    },

    async kinds(user, paths) {
      if (paths.length === 0) return new Map();
      const rows = paths.length <= PREPARED_UP_TO ? (await kindsOf.run(db, { user, paths }, paths.length)).rows : await db.selectFrom('search_entries').select(['path', 'is_file']).where('user_name', '=', user).where('path', 'in', paths).execute();
      return new Map(rows.map((r) => [r.path, Number(r.is_file) === 1 ? 'file' : 'folder'] as const));
    },

    async times(user, paths) {
      const out = new Map<string, { modified: number; etag: string | null }>();
      for (let i = 0; i < paths.length; i += BATCH) {
        const rows = await db.selectFrom('search_entries').select(['path', 'modified', 'etag']).where('user_name', '=', user).where('is_file', '=', 1).where('path', 'in', paths.slice(i, i + BATCH)).execute();
        for (const r of rows) out.set(r.path, { modified: Number(r.modified), etag: r.etag });
      }
      return out;
    },

    async identities(user, paths) {
      const out = new Map<string, EntryIdentity>();
      for (let i = 0; i < paths.length; i += BATCH) {
        const some = paths.slice(i, i + BATCH);
        const rows = some.length <= PREPARED_UP_TO ? (await identitiesOf.run(db, { user, paths: some }, some.length)).rows : await db.selectFrom('search_entries').select(IDENTITY_COLUMNS).where('user_name', '=', user).where('path', 'in', some).execute();
        for (const r of rows) out.set(r.path, { id: r.file_id, isFile: Number(r.is_file) === 1, size: Number(r.size), modified: Number(r.modified), sha256: r.sha256, etag: r.etag });
      }
      return out;
    },

    async hashesBelow(user, path) {
      const rows = await db.selectFrom('search_entries').select(['path', 'size', 'sha256', 'etag']).where('user_name', '=', user).where(below(path)).where('is_file', '=', 1).where('sha256', 'is not', null).execute();
      const cut = path === '' ? 0 : path.length + 1;
      return new Map(rows.map((r) => [r.path.slice(cut), { sha256: r.sha256 as string, size: Number(r.size), etag: r.etag }]));
    },

    async deleteWithin(user, path, isFile, origin) {
      return inOrder(() => db.transaction().execute(async (trx) => {
        await lock(trx);
        const itself = path === '' ? undefined : await trx.selectFrom('search_entries').select(['is_file', 'file_id']).where('user_name', '=', user).where('path', '=', path).executeTakeFirst();
        const r = await trx.deleteFrom('search_entries').where('user_name', '=', user).where(atOrBelow(path)).executeTakeFirst();
        // One entry for the item: a consumer removes what was below it with it. Storage said it was
        // deleted (isFile given): journaled even if the index never had it (put there by another
        // tool, not rescanned yet), since a client may know it from a walk.
        const kind = itself ? Number(itself.is_file) === 1 : isFile;
        if (path !== '' && kind !== undefined) await append(trx, [{ owner: user, type: 'deleted', path, isFile: kind, id: itself?.file_id ?? undefined, origin }]);
        return Number(r.numDeletedRows);
      }));
    },

    async moveWithin(user, from, to, current, origin) {
      const name = nameOf(to);
      const shift = depthOf(to) - depthOf(from);
      return inOrder(() => db.transaction().execute(async (trx) => {
        await lock(trx);
        const itself = await trx.selectFrom('search_entries').select(['is_file', 'size', 'modified', 'etag', 'file_id', 'sha256']).where('user_name', '=', user).where('path', '=', from).executeTakeFirst();
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
        // Also when the index did not have the source (another tool's file): a client may know it from a walk.
        if (itself || current) {
          const isFile = current?.isFile ?? Number(itself?.is_file) === 1;
          const figures = current
            ? { size: current.size, modified: current.modified, etag: current.etag }
            : { size: Number(itself?.size), modified: Number(itself?.modified), etag: itself?.etag ?? undefined };
          if (current && itself) {
            await trx.updateTable('search_entries').set({ size: current.size, modified: current.modified, etag: current.etag ?? null }).where('user_name', '=', user).where('path', '=', to).execute();
          }
          // The moved item keeps its id (a client renames what it has) and its hash (the same bytes).
          const sync = { id: itself?.file_id ?? undefined, sha256: isFile ? itself?.sha256 ?? undefined : undefined, origin };
          await append(trx, [{ owner: user, type: 'moved', path: to, from, isFile, ...(isFile ? figures : { modified: figures.modified, etag: figures.etag }), ...sync }]);
        }
        return Number(r.numUpdatedRows);
      }));
    },

    /**
     * Two plans, chosen by how many names match (counted up to DENSE). Few
     * (the usual case): the trigram index finds them all and they are
     * sorted. Many (a broad query such as ".pdf", or one or two characters,
     * which trigrams cannot serve): exact matches, then prefix matches, one
     * range of (user_name, depth, norm, path) per depth, already in order;
     * then the other matches by reading that index in order until the page
     * is full — never a sort of every match. Both give the same order.
     */
    async search(q) {
      const { text, limit } = q;
      const length = charCount(text);
      const pattern = `%${escapeLike(text)}%`;
      // `+user_name` keeps SQLite from reading the user's whole index range when the FTS match list is the short way in.
      const base = (byFts = false) => {
        let query = db
          .selectFrom('search_entries')
          .select(['user_name', 'path', 'is_file', 'size', 'modified'])
          .where(byFts ? sql<SqlBool>`+user_name = ${q.user}` : sql<SqlBool>`user_name = ${q.user}`)
          .where(below(q.within));
        if (q.type) query = query.where('is_file', '=', q.type === 'file' ? 1 : 0);
        return query;
      };
      let many = length < TRIGRAM;
      if (!many && !postgres) await indexWaiting();
      if (!many) {
        // How many match, counting no further than DENSE (the trigram index answers this cheaply).
        const counted = postgres
          ? await sql<{ n: number | string }>`select count(*) as n from (select 1 from search_entries where user_name = ${q.user} and norm like ${pattern} escape '\\' limit ${DENSE}) m`.execute(db)
          : await sql<{ n: number | string }>`select count(*) as n from (select 1 from search_fts where search_fts match ${ftsPhrase(text)} limit ${DENSE}) m`.execute(db);
        many = Number(counted.rows[0]?.n ?? 0) >= DENSE;
      }
      const sorted = <T extends ReturnType<typeof base>>(query: T) => query.orderBy('depth').orderBy('norm').orderBy('path');
      if (!many) {
        // SQLite: start from the FTS matches, never from all of the user's rows.
        const matching = postgres
          ? base().where(sql<SqlBool>`norm like ${pattern} escape '\\'`)
          : base(true).where(sql<SqlBool>`id in (select rowid from search_fts where search_fts match ${ftsPhrase(text)})`);
        const rows = await sorted(matching.orderBy(rankOf(text))).limit(limit + 1).execute();
        return { entries: rows.slice(0, limit).map(fromRow), truncated: rows.length > limit };
      }
      // Many: each class in turn, best first, until the page is full. Exact and prefix matches of
      // one depth are a range of (user_name, depth, norm, path), already in order: one small read per
      // depth. The other matches are read from that index in order until enough are found.
      const rows: Row[] = [];
      const need = () => limit + 1 - rows.length;
      const deepest = await db.selectFrom('search_entries').select(sql<number | string | null>`max(depth)`.as('d')).where('user_name', '=', q.user).executeTakeFirst();
      const first = q.within === '' ? 1 : depthOf(q.within) + 1;
      const last = Number(deepest?.d ?? 0);
      const upper = successor(text);
      const prefix = (query: ReturnType<typeof base>) => (upper === undefined ? query.where(sql<SqlBool>`substr(norm, 1, ${length}) = ${text}`) : query.where('norm', '<', upper));
      for (let d = first; d <= last && need() > 0; d++) rows.push(...(await base().where('depth', '=', d).where('norm', '=', text).orderBy('path').limit(need()).execute()));
      for (let d = first; d <= last && need() > 0; d++) rows.push(...(await prefix(base().where('depth', '=', d).where('norm', '>', text)).orderBy('norm').orderBy('path').limit(need()).execute()));
      if (need() > 0) {
        const inside = base().where(sql<SqlBool>`norm like ${pattern} escape '\\'`).where(sql<SqlBool>`substr(norm, 1, ${length}) <> ${text}`);
        rows.push(...(await sorted(inside).limit(need()).execute()));
      }
      return { entries: rows.slice(0, limit).map(fromRow), truncated: rows.length > limit };
    },

    async markAll(user, scan) {
      await inOrder(() => db.updateTable('search_entries').set({ scan }).where('user_name', '=', user).execute());
    },

    async unmarkWithin(user, paths, scan) {
      for (const path of paths) await inOrder(() => db.updateTable('search_entries').set({ scan: null }).where('user_name', '=', user).where('scan', '=', scan).where(atOrBelow(path)).execute());
    },

    async sweepMarked(user, scan) {
      return inOrder(() => db.transaction().execute(async (trx) => {
        await lock(trx);
        const gone = await trx.selectFrom('search_entries').select(['path', 'is_file', 'file_id']).where('user_name', '=', user).where('scan', '=', scan).orderBy('path').execute();
        const r = await trx.deleteFrom('search_entries').where('user_name', '=', user).where('scan', '=', scan).executeTakeFirst();
        // What other tools removed: one entry per topmost item (what was below it goes with it).
        const goneSet = new Set(gone.map((g) => g.path));
        const top = gone.filter((g) => !g.path.split('/').slice(0, -1).some((_, i, parts) => goneSet.has(parts.slice(0, i + 1).join('/'))));
        await append(trx, top.map((g) => ({ owner: user, type: 'deleted' as const, path: g.path, isFile: Number(g.is_file) === 1, id: g.file_id ?? undefined })));
        return Number(r.numDeletedRows);
      }));
    },

    async users() {
      const rows = await db.selectFrom('search_entries').select('user_name').distinct().orderBy('user_name').execute();
      return rows.map((r) => r.user_name);
    },
  };
}
