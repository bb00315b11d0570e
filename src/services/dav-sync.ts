import { AppError } from '../domain/errors.js';
import type { Principal } from '../domain/principal.js';
import type { StorageKey } from '../domain/storage-path.js';
import type { Entry, StorageBackend } from '../storage/backend.js';
import type { ChangeService, Change } from './changes.js';
import type { FilesService } from './files.js';
import type { FolderEtags } from './folder-etags.js';
import { storageCall } from './storage-errors.js';

/** Sync tokens are URIs (RFC 6578 §3.2); the number is a change-feed cursor. */
const TOKEN_PREFIX = 'urn:file-cloud:sync:';
export const syncToken = (cursor: string): string => `${TOKEN_PREFIX}${cursor}`;

export type SyncLevel = '1' | 'infinite';

/** What changed below a collection since a token: members to report with their properties, members gone, the next token. */
export type SyncResult = {
  readonly changed: readonly { readonly key: StorageKey; readonly entry: Entry }[];
  readonly removed: readonly { readonly key: StorageKey; readonly isFile: boolean }[];
  readonly token: string;
  /** Not everything up to now: the client asks again with `token` for the rest (RFC 6578 §3.6). */
  readonly truncated: boolean;
};

/**
 * Journal entries one incremental sync reads at most; past it the answer is
 * truncated (RFC 6578 §3.6) and the client continues from its token, so a
 * client far behind never makes the server hold its whole backlog.
 */
export const SYNC_MAX_ENTRIES = 10_000;

const invalidToken = () => new AppError('valid_sync_token', 'The sync-token is not one this server gave, or too old: sync again without one.');
const overLimit = (limit: number, initial: boolean) =>
  new AppError('number_of_matches_within_limits', initial ? `The collection has more than ${limit} members, and a first sync cannot be cut short: ask without DAV:limit, or with a larger one.` : `A single change below the collection brings more than ${limit} members: ask with a larger DAV:limit, or without one.`);

/**
 * WebDAV `REPORT` `DAV:sync-collection` (RFC 6578) over the change feed: a
 * sync token is a feed cursor, so a WebDAV client syncs exactly what
 * GET /api/changes would tell it, with the same permission answers.
 */
export function createDavSync(deps: { files: FilesService; backend: StorageBackend; changes: ChangeService; folderEtags: FolderEtags }) {
  const { backend, changes, folderEtags } = deps;

  const withEtag = async (key: StorageKey, entry: Entry): Promise<Entry> => (entry.isFile ? entry : folderEtags.one(key.user, key.segments.join('/'), entry));

  /** The initial sync: every member (level 1) or everything below (infinite). */
  async function everything(key: StorageKey, level: SyncLevel): Promise<{ key: StorageKey; entry: Entry }[]> {
    const out: { key: StorageKey; entry: Entry }[] = [];
    if (level === '1') {
      for await (const page of await deps.files.listSorted(key, { etags: true })) {
        for (const e of page) {
          const k = { user: key.user, segments: [...key.segments, e.name] };
          out.push({ key: k, entry: await withEtag(k, e) });
        }
      }
      return out;
    }
    for await (const w of backend.walk(key)) {
      const k = { user: key.user, segments: [...key.segments, ...w.path] };
      out.push({ key: k, entry: await withEtag(k, w.entry) });
    }
    return out;
  }

  /** The members a run of journal entries touched below the collection: as they are now, or gone. */
  async function members(key: StorageKey, level: SyncLevel, entries: readonly Change[]): Promise<Omit<SyncResult, 'token' | 'truncated'>> {
    // Paths relative to the collection, member by member; the last word about each path wins.
    const base = `/${key.user}/${key.segments.map((s) => `${s}/`).join('')}`;
    const inside = (p: string | undefined): string[] | undefined => {
      if (p === undefined || !p.startsWith(base) || p.length === base.length) return undefined;
      const rel = p.slice(base.length).split('/');
      return level === '1' && rel.length > 1 ? undefined : rel;
    };
    const state = new Map<string, { gone: boolean; isFile: boolean; walk?: boolean }>();
    const forget = (rel: string) => {
      for (const k of [...state.keys()]) if (k.startsWith(`${rel}/`)) state.delete(k);
    };
    for (const c of entries) {
      const from = c.type === 'moved' ? inside(c.from) : undefined;
      if (from) {
        const rel = from.join('/');
        forget(rel);
        state.set(rel, { gone: true, isFile: c.isFile });
      }
      const at = inside(c.path);
      if (!at) continue;
      const rel = at.join('/');
      if (c.type === 'deleted') {
        forget(rel);
        state.set(rel, { gone: true, isFile: c.isFile });
      } else {
        // A folder moved in brings its contents: at infinite depth they are members too.
        state.set(rel, { gone: false, isFile: c.isFile, walk: c.type === 'moved' && !c.isFile && level === 'infinite' });
      }
    }
    const changed: { key: StorageKey; entry: Entry }[] = [];
    const removed: { key: StorageKey; isFile: boolean }[] = [];
    const seen = new Set<string>();
    for (const [rel, s] of state) {
      const k = { user: key.user, segments: [...key.segments, ...rel.split('/')] };
      const entry = s.gone ? undefined : await storageCall(() => backend.stat(k));
      if (!entry) {
        removed.push({ key: k, isFile: s.isFile });
        continue;
      }
      if (!seen.has(rel)) changed.push({ key: k, entry: await withEtag(k, entry) });
      seen.add(rel);
      if (s.walk) {
        for (const d of await everything(k, 'infinite')) {
          const r = d.key.segments.slice(key.segments.length).join('/');
          if (!seen.has(r)) changed.push(d);
          seen.add(r);
        }
      }
    }
    return { changed, removed };
  }

  return {
    /** `limit`: the client's DAV:limit/DAV:nresults, the most members one answer may report (RFC 6578 §3.7). */
    async sync(principal: Principal, key: StorageKey, opts: { token: string | undefined; level: SyncLevel; limit?: number | undefined }): Promise<SyncResult> {
      // RFC 3253 §3.6's precondition for a report the resource does not support (RFC 6578 §3.2:
      // such a server leaves sync-collection out of DAV:supported-report-set, which this one never lists).
      if (!changes.enabled) throw new AppError('supported_report', 'This server keeps no change journal (--changes off): sync-collection is not supported; use PROPFIND.');
      const top = await deps.files.stat(key);
      if (top.isFile) throw new AppError('forbidden', 'sync-collection applies to a collection, not a file.');
      if (opts.token === undefined || opts.token === '') {
        // The cursor first: what changes while the tree is read comes again next time (never lost).
        const { cursor } = await changes.list(principal, {});
        const all = await everything(key, opts.level);
        if (opts.limit !== undefined && all.length > opts.limit) throw overLimit(opts.limit, true);
        return { changed: all, removed: [], token: syncToken(cursor), truncated: false };
      }
      if (!opts.token.startsWith(TOKEN_PREFIX)) throw invalidToken();
      let cursor = opts.token.slice(TOKEN_PREFIX.length);
      const entries: Change[] = [];
      let readAll = false;
      try {
        while (entries.length < SYNC_MAX_ENTRIES) {
          const page = await changes.list(principal, { cursor, limit: SYNC_MAX_ENTRIES - entries.length });
          entries.push(...page.changes);
          cursor = page.cursor;
          if (!page.more) {
            readAll = true;
            break;
          }
        }
      } catch (e) {
        if (e instanceof AppError && (e.code === 'cursor_expired' || e.code === 'bad_request')) throw invalidToken();
        throw e;
      }
      const full = await members(key, opts.level, entries);
      if (opts.limit === undefined || full.changed.length + full.removed.length <= opts.limit) return { ...full, token: syncToken(cursor), truncated: !readAll };
      // Over the client's limit: the longest run of entries from the token whose members fit (the
      // count is not monotonic, a delete can fold a folder's members into one, so a fitting run is
      // searched for, not computed). Its last cursor is the next token; the rest comes next time.
      let fits = 0;
      let fitting: Omit<SyncResult, 'token' | 'truncated'> = { changed: [], removed: [] };
      for (let lo = 1, hi = entries.length - 1; lo <= hi; ) {
        const mid = (lo + hi) >> 1;
        const m = await members(key, opts.level, entries.slice(0, mid));
        if (m.changed.length + m.removed.length <= opts.limit) {
          fits = mid;
          fitting = m;
          lo = mid + 1;
        } else hi = mid - 1;
      }
      if (fits === 0) throw overLimit(opts.limit, false);
      return { ...fitting, token: syncToken((entries[fits - 1] as Change).cursor), truncated: true };
    },
  };
}

export type DavSync = ReturnType<typeof createDavSync>;
