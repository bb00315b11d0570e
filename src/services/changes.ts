import { randomBytes } from 'node:crypto';
import { decide } from '../domain/access.js';
import { AppError } from '../domain/errors.js';
import type { Principal, UserPrincipal } from '../domain/principal.js';
import type { StorageKey } from '../domain/storage-path.js';
import type { Clock } from '../lib/clock.js';
import type { ChangeRecord } from '../store/changes.js';
import type { Grant } from '../store/grants.js';
import type { MetadataStore } from '../store/metadata-store.js';
import type { CursorCodec } from './change-cursor.js';
import { bestGrant } from './grants.js';
import { sentence } from '../lib/i18n/sentences.js';

/** Entries per page of GET /api/changes when the client names no limit, and the most it may ask for. */
export const DEFAULT_CHANGES_LIMIT = 1000;
export const MAX_CHANGES_LIMIT = 10000;

/** One entry of the feed as its reader sees it (GET /api/changes, the stream, WebDAV sync; docs/api.md "Changes"). */
export type Change = {
  cursor: string;
  type: ChangeRecord['type'];
  /** `/<owner>/<path>`, as the caller names it. */
  path: string;
  from?: string;
  isFile: boolean;
  size?: number;
  /** Epoch milliseconds. */
  modified?: number;
  etag?: string;
  /** The item's stable id (kept by moves and overwrites); absent for entries journaled before ids. */
  id?: string;
  /** A file's SHA-256 (hex), when known (not for deletions). */
  sha256?: string;
  /** The File-Cloud-Origin the writer sent. */
  origin?: string;
};

/** `epoch`: this installation's id (a new server, a new one: docs/sync.md). */
export type ChangesPage = { changes: Change[]; cursor: string; more: boolean; epoch: string };

export type ChangeService = ReturnType<typeof createChangeService>;


/** One entry of GET /api/changes/recent: as the feed gives it, without a cursor, with when it was recorded (epoch milliseconds). */
export type RecentChange = Entry & { at: number };

/** Entries of GET /api/changes/recent when the client names no limit, and the most it may ask for. */
export const DEFAULT_RECENT_LIMIT = 100;
export const MAX_RECENT_LIMIT = 1000;

export type RecentInput = { limit?: number | undefined; path?: string | undefined };

/** `cursor`: absent or "now" (the latest), else a cursor this server gave. */
export type ChangesInput = { cursor?: string | undefined; limit?: number | undefined };

/** Rows read per query while a caller's page is filled (their own and granted trees among everyone's). */
const SCAN = 1000;
/** Journal rows read at most for one answer: a path nobody touched lately costs a bounded look back, not the whole journal. */
export const RECENT_LOOK_BACK = 20 * SCAN;

const keyOf = (owner: string, path: string): StorageKey => ({ user: owner, segments: path === '' ? [] : path.split('/') });


/** An entry as the caller sees it, before its position is sealed into its cursor. */
type Entry = Omit<Change, 'cursor'>;
type Seen = { position: number; view: Entry };

/** The cursors of earlier versions: plain journal positions. */
const PLAIN_CURSOR = /^[0-9]{1,15}$/;

/**
 * The change feed (issue 31): reads the journal the search index writes
 * (src/store/search-repo.ts, one transaction per change) for one account —
 * their own tree, and what grants show them of other trees, each entry
 * asked of `decide` as a read of its path. A move across the edge of a
 * grant is, for the recipient, a creation or a deletion. Nothing the caller
 * gets depends on entries they cannot see: cursors are sealed positions
 * (change-cursor.ts), and a page says `more` only when one of the caller's
 * own entries waits.
 */
export function createChangeService(deps: { store: MetadataStore; clock: Clock; retentionSeconds: number; cursors: CursorCodec; enabled?: boolean }) {
  const { store, cursors } = deps;
  const expired = (why: string) => new AppError('cursor_expired', `${why}; list the tree again and continue from cursor=now.`);

  const parseCursor = (principal: UserPrincipal, raw: string | undefined): number | 'now' => {
    if (raw === undefined || raw === 'now') return 'now';
    const position = cursors.open(principal.userId, raw);
    if (position === 'foreign') throw expired('This cursor is not one this server gave you');
    // A client that kept a cursor of an earlier version walks once, as after a restore.
    if (position === 'malformed' && PLAIN_CURSOR.test(raw)) throw expired('This cursor is of an earlier version of the server');
    if (position === 'malformed') throw new AppError('bad_request', sentence('apiDetail.cursorUnknown'));
    return position;
  };

  const view = (r: ChangeRecord, type: ChangeRecord['type'], withFrom: boolean): Entry => {
    const v: Entry = { type, path: `/${r.owner}/${r.path}`, isFile: r.isFile };
    if (withFrom && r.from !== undefined) v.from = `/${r.owner}/${r.from}`;
    if (type !== 'deleted') {
      if (r.isFile && r.size !== undefined) v.size = r.size;
      if (r.modified !== undefined) v.modified = r.modified;
      if (r.etag !== undefined) v.etag = r.etag;
      if (r.isFile && r.sha256 !== undefined) v.sha256 = r.sha256;
    }
    if (r.id !== undefined) v.id = r.id;
    if (r.origin !== undefined) v.origin = r.origin;
    return v;
  };

  /** What the principal sees of one entry: itself, a creation or deletion (a move over a grant's edge), or nothing. */
  const visible = (principal: UserPrincipal, grants: readonly Grant[], r: ChangeRecord): Entry | undefined => {
    if (r.owner === principal.username) return view(r, r.type, true);
    const reads = (path: string): boolean => {
      const key = keyOf(r.owner, path);
      return decide({ who: 'user' }, principal, 'GET', { kind: 'storage', key, trailingSlash: false }, bestGrant(grants, key)) === undefined;
    };
    const at = reads(r.path);
    if (r.type !== 'moved') return at ? view(r, r.type, false) : undefined;
    const was = r.from !== undefined && reads(r.from);
    if (at && was) return view(r, 'moved', true);
    if (at) return view(r, 'created', false);
    if (was) return { type: 'deleted', path: `/${r.owner}/${r.from as string}`, isFile: r.isFile, ...(r.id === undefined ? {} : { id: r.id }), ...(r.origin === undefined ? {} : { origin: r.origin }) };
    return undefined;
  };

  const enabled = deps.enabled ?? true;

  /** The caller as a reader of the feed: a signed-in account, on a server that keeps the journal. */
  const reader = (principal: Principal): UserPrincipal => {
    if (principal.kind !== 'user') throw new AppError('unauthorized', 'A valid access token is required.');
    // After the principal check: a stranger learns nothing of the server's options.
    if (!enabled) throw new AppError('changes_disabled', 'This server keeps no change journal (--changes off): list folders instead.');
    return principal;
  };

  /** The page: each entry's cursor and the next one sealed for the caller, in one pass. */
  const page = (principal: UserPrincipal, seen: readonly Seen[], next: number, more: boolean, epoch: string): ChangesPage => {
    const sealed = cursors.seal(principal.userId, [...seen.map((s) => s.position), next]);
    return { changes: seen.map((s, i) => ({ cursor: sealed[i] as string, ...s.view })), cursor: sealed[seen.length] as string, more, epoch };
  };

  /**
   * This installation's epoch: made once, stored in the database (every node reads the same), never
   * changed. A client that sees another one talks to another server (a new data directory, a
   * restored or replaced one): it lists once and deletes nothing.
   */
  let epochOf: Promise<string> | undefined;
  const epoch = (): Promise<string> => {
    epochOf ??= store.settings.getOrCreate('epoch', () => randomBytes(16).toString('hex'));
    epochOf.catch(() => (epochOf = undefined));
    return epochOf;
  };

  return {
    /** False under --changes off: there is no journal to read (docs/sync.md "Without the feed"). */
    enabled,
    reader,

    async list(principal: Principal, input: ChangesInput): Promise<ChangesPage> {
      const user = reader(principal);
      const limit = input.limit ?? DEFAULT_CHANGES_LIMIT;
      if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_CHANGES_LIMIT) throw new AppError('bad_request', sentence('apiDetail.limitRange', { max: MAX_CHANGES_LIMIT }));
      const from = parseCursor(user, input.cursor);
      // Read first: every entry up to it is committed (cursors commit in order), so a page that ends
      // here can hand it out as the next cursor without skipping one that commits later.
      const latest = await store.changes.latest();
      const at = await epoch();
      if (from === 'now') return page(user, [], latest, false, at);
      if (from < (await store.changes.horizon())) throw expired('This cursor is older than the change journal keeps');
      if (from > latest) throw expired('This cursor is not one of this server\'s journal');
      const grants = await store.grants.listForRecipient(user.userId);
      const owners = [...new Set([user.username, ...grants.map((g) => g.owner)])];
      const seen: Seen[] = [];
      let cursor = from;
      for (;;) {
        const rows = await store.changes.changesSinceFor(owners, cursor, SCAN, latest);
        for (const r of rows) {
          const v = visible(user, grants, r);
          cursor = r.cursor;
          if (!v) continue;
          // One entry past a full page: the page ends at its last entry, and says more is waiting.
          if (seen.length === limit) return page(user, seen, (seen.at(-1) as Seen).position, true, at);
          seen.push({ position: r.cursor, view: v });
        }
        if (rows.length < SCAN) return page(user, seen, latest, false, at);
      }
    },

    /**
     * The newest entries the caller may see, newest first (what `list` would
     * have given them), only those at or below `path` (a move: where it went
     * or where it came from) when one is named. Reads back at most
     * RECENT_LOOK_BACK rows of the trees the caller can see.
     */
    async recent(principal: Principal, input: RecentInput): Promise<RecentChange[]> {
      const user = reader(principal);
      const limit = input.limit ?? DEFAULT_RECENT_LIMIT;
      if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_RECENT_LIMIT) throw new AppError('bad_request', sentence('apiDetail.limitRange', { max: MAX_RECENT_LIMIT }));
      const under = input.path?.replace(/\/+$/, '');
      if (under !== undefined && !/^\/[^/]/.test(under)) throw new AppError('bad_request', sentence('apiDetail.changesPath', { shape: '/<owner>/<path>' }));
      const at = (p: string | undefined) => p !== undefined && under !== undefined && (p === under || p.startsWith(`${under}/`));
      const grants = await store.grants.listForRecipient(user.userId);
      const owners = [...new Set([user.username, ...grants.map((g) => g.owner)])];
      const out: RecentChange[] = [];
      let before: number | undefined;
      for (let read = 0; read < RECENT_LOOK_BACK; read += SCAN) {
        const rows = await store.changes.changesBeforeFor(owners, before, SCAN);
        for (const r of rows) {
          before = r.cursor;
          const v = visible(user, grants, r);
          if (!v || (under !== undefined && !at(v.path) && !at(v.from))) continue;
          out.push({ ...v, at: r.at });
          if (out.length === limit) return out;
        }
        if (rows.length < SCAN) break;
      }
      return out;
    },

    /** The same place in the journal as `cursor` (one this server gave `principal`), sealed afresh. */
    epoch,

    reseal(principal: UserPrincipal, cursor: string): string {
      const position = cursors.open(principal.userId, cursor);
      if (typeof position !== 'number') throw new Error('reseal: not a cursor of this account');
      return cursors.seal(principal.userId, [position])[0] as string;
    },

    /** The leader's retention sweep. */
    async purge(): Promise<number> {
      return store.changes.purgeBefore(deps.clock.now() - deps.retentionSeconds * 1000);
    },
  };
}
