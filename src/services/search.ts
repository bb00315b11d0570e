import { AppError } from '../domain/errors.js';
import type { Principal } from '../domain/principal.js';
import { DEFAULT_LIMIT, matchRank, MAX_LIMIT, MAX_QUERY_LENGTH, normalizeName } from '../domain/search-text.js';
import { isRoot, parseDecodedStoragePath, type StorageKey } from '../domain/storage-path.js';
import type { Door } from './door.js';
import type { Entry, StorageBackend, WalkOptions } from '../storage/backend.js';
import type { CopyOf, StorageEvent } from '../storage/events.js';
import { currentOrigin } from '../lib/write-origin.js';
import { noteWritten } from '../lib/written-identities.js';
import { createHash, randomUUID } from 'node:crypto';

/** What a change brings for the sync fields: the written file's hash, the copy it is, the writer's origin. */
type Sync = { readonly sha256?: string | undefined; readonly copyOf?: CopyOf | undefined; readonly origin?: string | undefined };
import type { IndexedEntry, RescanMark } from '../store/search.js';
import type { MetadataStore } from '../store/metadata-store.js';
import { storageCall } from './storage-errors.js';
import { sentence } from '../lib/i18n/sentences.js';

/** Entries written per statement while a tree is walked into the index. */
const BATCH = 500;

/** One result of GET /api/search (CONTRACT "Search, thumbnails, usage"). */
/** A match: `/<owner>/<path>`, its name, and `modified` in epoch milliseconds. */
export type SearchResult = { path: string; name: string; isFile: boolean; size: number; modified: number };

export type SearchInput = { q: string; path?: string | undefined; type?: 'file' | 'folder' | undefined; limit?: number | undefined };

/**
 * What a rescan did: entries seen in storage, stale entries removed, and the files that a folder of
 * the same name hides (`/<user>/<path>`; only an object store can hold both, CONTRACT "Backends and nodes").
 */
export type RescanSummary = { users: number; entries: number; removed: number; hidden: string[] };

export type SearchService = ReturnType<typeof createSearchService>;

const pathOf = (key: StorageKey): string => key.segments.join('/');

/**
 * Name search over the index in the metadata store. The index follows the
 * backend's storage events — every write path (HTTP, WebDAV, tus, share
 * uploads, moves, deletes) ends in the backend, so this one listener sees
 * them all, and the backend returns only once the index is updated. Each
 * node indexes its own writes into the shared store. Files that other
 * tools put into storage are found by a rescan (`file-cloud index`, and the
 * leader's periodic one).
 */
export function createSearchService(deps: { store: MetadataStore; backend: StorageBackend; onError?: (e: unknown) => void; operations?: Pick<Door, 'as'>; onChange?: () => void }) {
  const { store, backend } = deps;
  const onError = deps.onError ?? (() => undefined);

  const indexed = async (key: StorageKey): Promise<IndexedEntry | undefined> => {
    const entry = await backend.stat(key);
    return entry && { user: key.user, path: pathOf(key), isFile: entry.isFile, size: entry.size, modified: entry.modified.getTime(), etag: entry.etag };
  };

  /**
   * Indexes what is at key now (gone meanwhile: nothing to do; a later event says so). A write's
   * event carries the file as its writer read it while still holding the name: no stat needed
   * (on an object store, one HEAD less per upload).
   */
  const putCurrent = async (key: StorageKey, written?: Entry, created?: boolean, sync: Sync = {}, folders: readonly IndexedEntry[] = []): Promise<void> => {
    const e = written ? { user: key.user, path: pathOf(key), isFile: written.isFile, size: written.size, modified: written.modified.getTime(), etag: written.etag, created } : await indexed(key);
    if (!e) {
      await store.search.put(folders);
      return;
    }
    const sha256 = sync.sha256 ?? (sync.copyOf && e.isFile ? (await copiedHashes(sync.copyOf, [e]))[0] : undefined);
    // The entry first, then the folders made on its way, top-down: the order the journal records without `parentsLooked` too.
    const identity = (await store.search.put([{ ...e, sha256, origin: sync.origin }, ...folders])).get(`${e.user}\0${e.path}`);
    if (identity) noteWritten(e.user, e.path, identity);
  };

  /** The folders a writer made on its way to key (StorageEvent's madeFolders) as entries. */
  const madeEntries = (key: StorageKey, made: readonly Entry[], origin: string | undefined): IndexedEntry[] => {
    const above = key.segments.length - 1 - made.length;
    return made.map((f, i) => ({ user: key.user, path: key.segments.slice(0, above + i + 1).join('/'), isFile: false, size: f.size, modified: f.modified.getTime(), etag: f.etag, origin }));
  };

  /**
   * The hashes of the sources of copied files (in `entries`' order; undefined where the source has
   * none, or no longer its size: it changed while it was copied).
   */
  const copiedHashes = async (copy: CopyOf, entries: readonly IndexedEntry[]): Promise<(string | undefined)[]> => {
    const to = pathOf(copy.to);
    const from = pathOf(copy.from);
    const sourceOf = (path: string) => from + path.slice(to.length);
    const known = await store.search.identities(copy.from.user, entries.map((e) => sourceOf(e.path)));
    return entries.map((e) => {
      const source = known.get(sourceOf(e.path));
      return source?.isFile && source.size === e.size ? (source.sha256 ?? undefined) : undefined;
    });
  };

  /**
   * Folders a write created on its way (parents made by an upload or a move) are entries too. `made`:
   * the innermost ones as the writer knows them (StorageEvent's madeFolders), so storage is not asked.
   */
  /** `origin`: the writer's, for the folders it made (`made`); not for others found missing from the index. */
  const putAncestors = async (key: StorageKey, made: readonly Entry[] = [], origin?: string): Promise<void> => {
    const paths = key.segments.slice(0, -1).map((_, i) => key.segments.slice(0, i + 1).join('/'));
    if (paths.length === 0) return;
    const have = await store.search.kinds(key.user, paths);
    if (have.size === paths.length) return;
    const known = paths.length - made.length;
    // One walk for all of them: a stat of each missing parent walked from the root every time (quadratic in depth).
    const found = paths.every((p, i) => have.has(p) || i >= known) ? [...paths.slice(0, known).map(() => undefined), ...made] : await backend.parents(key);
    const missing: IndexedEntry[] = [];
    found.forEach((e, i) => {
      const path = paths[i] as string;
      if (e && !have.has(path)) missing.push({ user: key.user, path, isFile: false, size: e.size, modified: e.modified.getTime(), etag: e.etag, ...(i >= known ? { origin } : {}) });
    });
    await store.search.put(missing);
  };

  /**
   * Everything below a folder, in batches (a copied folder arrives as one event: its files take their
   * sources' hashes). `rescan`: a rescan's walk, whose entries are marked walked (the journal's rule:
   * src/store/index-change.ts) and whose files get a hash where the index holds none for their bytes.
   */
  const putTree = async (dir: StorageKey, sync: Sync & { rescan?: RescanMark & Required<WalkOptions> } = {}): Promise<number> => {
    let batch: IndexedEntry[] = [];
    let count = 0;
    const prefix = pathOf(dir);
    const flush = async () => {
      if (sync.copyOf) {
        const hashes = await copiedHashes(sync.copyOf, batch);
        batch = batch.map((e, i) => ({ ...e, sha256: hashes[i] }));
      } else if (sync.rescan) {
        batch = await withHashesOf(batch);
      }
      await store.search.put(batch.map((e) => ({ ...e, origin: sync.origin })), { tree: true });
      count += batch.length;
      batch = [];
    };
    for await (const w of backend.walk(dir, { onHidden: sync.rescan?.onHidden, onBusy: sync.rescan?.onBusy })) {
      const rel = w.path.join('/');
      batch.push({ user: dir.user, path: prefix === '' ? rel : `${prefix}/${rel}`, isFile: w.entry.isFile, size: w.entry.size, modified: w.entry.modified.getTime(), etag: w.entry.etag, walked: sync.rescan && { scan: sync.rescan.scan, since: sync.rescan.since } });
      if (batch.length >= BATCH) await flush();
    }
    await flush();
    return count;
  };

  /**
   * A rescan's batch with a hash for every file the index holds none for at its ETag: files other
   * tools put into storage, or wrote over. Their bytes are read once here; a file gone or changed
   * meanwhile is left without (the next rescan, or its next write, gives it one).
   */
  const withHashesOf = async (batch: readonly IndexedEntry[]): Promise<IndexedEntry[]> => {
    const user = batch[0]?.user;
    if (user === undefined) return [];
    const known = await store.search.identities(user, batch.filter((e) => e.isFile).map((e) => e.path));
    const out: IndexedEntry[] = [];
    for (const e of batch) {
      const had = known.get(e.path);
      if (!e.isFile || (had?.sha256 && had.etag === (e.etag ?? null))) {
        out.push(e);
        continue;
      }
      out.push({ ...e, sha256: await hashOf({ user, segments: e.path.split('/') }, e.etag).catch(() => undefined) });
    }
    return out;
  };

  /** SHA-256 of the file at key, if it still has `etag` when read. */
  const hashOf = async (key: StorageKey, etag: string | undefined): Promise<string | undefined> => {
    const opened = await backend.read(key);
    if (etag !== undefined && opened.entry.etag !== etag) {
      opened.stream.destroy();
      return undefined;
    }
    const hash = createHash('sha256');
    for await (const chunk of opened.stream) hash.update(chunk as Buffer);
    return hash.digest('hex');
  };

  async function apply(e: StorageEvent, origin: string | undefined): Promise<void> {
    switch (e.type) {
      case 'created':
        if (isRoot(e.key)) return;
        // A writer that asked the index about every folder above the key says which it made: they go into the
        // entry's own transaction, with no look of ours (one PostgreSQL round trip and one transaction less an upload).
        if (e.parentsLooked === true) {
          await putCurrent(e.key, e.entry, true, { sha256: e.sha256, copyOf: e.copyOf, origin }, madeEntries(e.key, e.madeFolders ?? [], origin));
        } else {
          await putCurrent(e.key, e.entry, true, { sha256: e.sha256, copyOf: e.copyOf, origin });
          await putAncestors(e.key, e.madeFolders, origin);
        }
        // A folder that arrives with contents (an object store's folder copy) brings its entries.
        if (!e.isFile) await putTree(e.key, { copyOf: e.copyOf, origin });
        return;
      case 'replaced':
        await putCurrent(e.key, e.entry, undefined, { sha256: e.sha256, copyOf: e.copyOf, origin });
        return;
      case 'deleted':
        await store.search.deleteWithin(e.key.user, pathOf(e.key), e.isFile, origin);
        return;
      case 'moved': {
        // The entry's own figures may change with a move (an object store copies, new time): the row and its journal entry take them.
        const current = await indexed(e.to);
        const moved = await store.search.moveWithin(e.from.user, pathOf(e.from), pathOf(e.to), current, origin);
        if (current) await store.search.put([current]);
        await putAncestors(e.to);
        if (!e.isFile && moved === 0) await putTree(e.to, { origin });
        return;
      }
    }
  }

  // The journal grew (or may have): change streams read it. The writer's origin is read here, in its own
  // request's context (listeners start synchronously within the write), for the entries it journals.
  const changed = () => deps.onChange?.();
  const unsubscribe = backend.events.subscribe((e) => apply(e, currentOrigin()).then(changed, (err: unknown) => (changed(), onError(err))));

  /**
   * Brings one user's index in line with storage: every entry the walk sees
   * is written; what it neither saw nor anyone wrote meanwhile (files other
   * tools removed) goes. Storage events during the rescan keep working.
   */
  async function rescanUser(user: string): Promise<{ entries: number; removed: number; hidden: string[] }> {
    const scan = randomUUID();
    // Taken before the mark: a delete or move journalled after it may be newer than the walk's sighting.
    const since = await store.changes.latest();
    await store.search.markAll(user, scan);
    const hidden: string[] = [];
    const busy: string[] = [];
    const entries = await putTree({ user, segments: [] }, { rescan: { scan, since, onHidden: (path) => hidden.push(`/${user}/${path.join('/')}`), onBusy: (path) => busy.push(path.join('/')) } });
    // Left to the changes that held them during the walk (WalkOptions.onBusy): their events index them.
    await store.search.unmarkWithin(user, busy, scan);
    const removed = await store.search.sweepMarked(user, scan);
    changed();
    return { entries, removed, hidden };
  }

  return {
    async search(principal: Principal, input: SearchInput): Promise<{ results: SearchResult[]; truncated: boolean }> {
      if (principal.kind !== 'user') throw new AppError('unauthorized', 'A valid access token is required.');
      const text = normalizeName(input.q);
      if (input.q.length === 0 || [...input.q].length > MAX_QUERY_LENGTH) throw new AppError('bad_request', sentence('apiDetail.searchLength', { max: MAX_QUERY_LENGTH }));
      if (text === '') throw new AppError('bad_request', sentence('apiDetail.searchNothing'));
      const limit = input.limit ?? DEFAULT_LIMIT;
      if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_LIMIT) throw new AppError('bad_request', sentence('apiDetail.limitRange', { max: MAX_LIMIT }));
      // The scope is asked of the operation layer: a folder named by `path` (another user's only inside a
      // grant to the caller, the same decide as for the URL of a read), else the caller's own tree and
      // then what is shared with them, as far as `decide` lets them read each.
      if (!deps.operations) throw new AppError('unauthorized', 'You are not allowed to access this path.');
      const ops = deps.operations.as(principal);
      const raw = (input.path ?? `/${principal.username}/`).replace(/^\//, '');
      const key = parseDecodedStoragePath(raw.includes('/') ? raw : `${raw}/`).key;
      await ops.may(key, 'GET');
      if (input.path !== undefined && !isRoot(key)) {
        const entry = await storageCall(() => backend.stat(key));
        if (!entry) throw new AppError('not_found', 'No folder exists at this path.');
        if (entry.isFile) throw new AppError('not_a_directory', '"path" names a file; search within a folder.');
      }
      const found = await store.search.search({ user: key.user, text, within: pathOf(key), type: input.type, limit });
      // Without a path: also what is shared with the caller, after their own (each granted tree is its owner's index, narrowed).
      if (input.path === undefined && found.entries.length < limit) {
        for (const item of await ops.sharedWithMe()) {
          if (found.entries.length >= limit) {
            found.truncated = true;
            break;
          }
          const left = limit - found.entries.length;
          const within = pathOf(item.root);
          const root = await indexed(item.root);
          const itself = root && (input.type === undefined || (input.type === 'file') === root.isFile) && matchRank(normalizeName(item.root.segments.at(-1) ?? ''), text) !== undefined ? [root] : [];
          const below = item.isFile ? { entries: [], truncated: false } : await store.search.search({ user: item.root.user, text, within, type: input.type, limit: left });
          const seen = new Set(found.entries.map((e) => `${e.user}/${e.path}`));
          for (const e of [...itself, ...below.entries]) if (!seen.has(`${e.user}/${e.path}`) && found.entries.length < limit) found.entries.push(e);
          if (below.truncated) found.truncated = true;
        }
      }
      return {
        results: found.entries.map((e) => ({
          path: `/${e.user}/${e.path}`,
          name: e.path.slice(e.path.lastIndexOf('/') + 1),
          isFile: e.isFile,
          size: e.size,
          modified: e.modified,
        })),
        truncated: found.truncated,
      };
    },

    rescanUser,

    /** Rescans every user; entries of names that are no user any more go. */
    async rescanAll(): Promise<RescanSummary> {
      return store.search.sweeping(async () => {
        const users = (await store.users.list()).map((u) => u.username);
        const summary: RescanSummary = { users: users.length, entries: 0, removed: 0, hidden: [] };
        for (const user of users) {
          const r = await rescanUser(user);
          summary.entries += r.entries;
          summary.removed += r.removed;
          summary.hidden.push(...r.hidden);
        }
        const known = new Set(users);
        for (const stale of await store.search.users()) if (!known.has(stale)) summary.removed += await store.search.deleteWithin(stale, '');
        return summary;
      });
    },

    close(): void {
      unsubscribe();
    },
  };
}
