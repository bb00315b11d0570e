import { AppError } from '../domain/errors.js';
import type { Principal } from '../domain/principal.js';
import type { StorageKey } from '../domain/storage-path.js';
import type { Entry, StorageBackend } from '../storage/backend.js';
import type { ChangeService, ChangeView } from './changes.js';
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
};

const invalidToken = () => new AppError('valid_sync_token', 'The sync-token is not one this server gave, or too old: sync again without one.');

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

  return {
    async sync(principal: Principal, key: StorageKey, opts: { token: string | undefined; level: SyncLevel }): Promise<SyncResult> {
      // RFC 3253 §3.6's precondition for a report the resource does not support (RFC 6578 §3.2:
      // such a server leaves sync-collection out of DAV:supported-report-set, which this one never lists).
      if (!changes.enabled) throw new AppError('supported_report', 'This server keeps no change journal (--changes off): sync-collection is not supported; use PROPFIND.');
      const top = await deps.files.stat(key);
      if (top.isFile) throw new AppError('forbidden', 'sync-collection applies to a collection, not a file.');
      if (opts.token === undefined || opts.token === '') {
        // The cursor first: what changes while the tree is read comes again next time (never lost).
        const { cursor } = await changes.list(principal, {});
        return { changed: await everything(key, opts.level), removed: [], token: syncToken(cursor) };
      }
      if (!opts.token.startsWith(TOKEN_PREFIX)) throw invalidToken();
      let cursor = opts.token.slice(TOKEN_PREFIX.length);
      const entries: ChangeView[] = [];
      try {
        for (;;) {
          const page = await changes.list(principal, { cursor, limit: 10000 });
          entries.push(...page.changes);
          cursor = page.cursor;
          if (!page.more) break;
        }
      } catch (e) {
        if (e instanceof AppError && (e.code === 'cursor_expired' || e.code === 'bad_request')) throw invalidToken();
        throw e;
      }
      // Paths relative to the collection, member by member; the last word about each path wins.
      const base = `/${key.user}/${key.segments.map((s) => `${s}/`).join('')}`;
      const inside = (p: string | undefined): string[] | undefined => {
        if (p === undefined || !p.startsWith(base) || p.length === base.length) return undefined;
        const rel = p.slice(base.length).split('/');
        return opts.level === '1' && rel.length > 1 ? undefined : rel;
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
          state.set(rel, { gone: true, isFile: c.is_file });
        }
        const at = inside(c.path);
        if (!at) continue;
        const rel = at.join('/');
        if (c.type === 'deleted') {
          forget(rel);
          state.set(rel, { gone: true, isFile: c.is_file });
        } else {
          // A folder moved in brings its contents: at infinite depth they are members too.
          state.set(rel, { gone: false, isFile: c.is_file, walk: c.type === 'moved' && !c.is_file && opts.level === 'infinite' });
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
      return { changed, removed, token: syncToken(cursor) };
    },
  };
}

export type DavSync = ReturnType<typeof createDavSync>;
