import { decide } from '../domain/access.js';
import { AppError } from '../domain/errors.js';
import type { Principal } from '../domain/principal.js';
import type { StorageKey } from '../domain/storage-path.js';
import type { Clock } from '../lib/clock.js';
import type { ChangeRecord, Grant, MetadataStore } from '../store/types.js';
import { bestGrant } from './grants.js';
import type { ChangeSignal } from './change-signal.js';

/** Entries per page of GET /api/changes when the client names no limit, and the most it may ask for. */
export const DEFAULT_CHANGES_LIMIT = 1000;
export const MAX_CHANGES_LIMIT = 10000;

/** One entry as GET /api/changes and the stream give it (docs/api.md "Changes"). */
export type ChangeView = {
  cursor: string;
  type: ChangeRecord['type'];
  path: string;
  from?: string;
  is_file: boolean;
  size?: number;
  modified?: string;
  etag?: string;
};

export type ChangesPage = { changes: ChangeView[]; cursor: string; more: boolean };

export type ChangeService = ReturnType<typeof createChangeService>;

/** `cursor`: absent or "now" (the latest), else a cursor this server gave. */
export type ChangesInput = { cursor?: string | undefined; limit?: number | undefined };

const keyOf = (owner: string, path: string): StorageKey => ({ user: owner, segments: path === '' ? [] : path.split('/') });

/** Rows read per query while a caller's page is filled (their own and granted trees among everyone's). */
const SCAN = 1000;

/**
 * The change feed (issue 31): reads the journal the search index writes
 * (src/store/search-repo.ts, one transaction per change) for one account —
 * their own tree, and what grants show them of other trees, each entry
 * asked of `decide` as a read of its path. A move across the edge of a
 * grant is, for the recipient, a creation or a deletion.
 */
export function createChangeService(deps: { store: MetadataStore; clock: Clock; retentionSeconds: number; signal: ChangeSignal; enabled?: boolean }) {
  const { store } = deps;

  const parseCursor = (raw: string | undefined): number | 'now' => {
    if (raw === undefined || raw === 'now') return 'now';
    if (!/^[0-9]{1,15}$/.test(raw)) throw new AppError('bad_request', '"cursor" must be a cursor this server gave, or "now".');
    return Number(raw);
  };

  const view = (r: ChangeRecord, type: ChangeRecord['type'], withFrom: boolean): ChangeView => {
    const v: ChangeView = { cursor: String(r.cursor), type, path: `/${r.owner}/${r.path}`, is_file: r.isFile };
    if (withFrom && r.from !== undefined) v.from = `/${r.owner}/${r.from}`;
    if (type !== 'deleted') {
      if (r.isFile && r.size !== undefined) v.size = r.size;
      if (r.modified !== undefined) v.modified = new Date(r.modified).toISOString();
      if (r.etag !== undefined) v.etag = r.etag;
    }
    return v;
  };

  /** What the principal sees of one entry: itself, a creation or deletion (a move over a grant's edge), or nothing. */
  const visible = (principal: Principal & { kind: 'user' }, grants: readonly Grant[], r: ChangeRecord): ChangeView | undefined => {
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
    if (was) return { cursor: String(r.cursor), type: 'deleted', path: `/${r.owner}/${r.from as string}`, is_file: r.isFile };
    return undefined;
  };

  const enabled = deps.enabled ?? true;

  return {
    signal: deps.signal,
    /** False under --changes off: there is no journal to read (docs/sync.md "Without the feed"). */
    enabled,

    async list(principal: Principal, input: ChangesInput): Promise<ChangesPage> {
      if (principal.kind !== 'user') throw new AppError('unauthorized', 'A valid access token is required.');
      // After the principal check: a stranger learns nothing of the server's options.
      if (!enabled) throw new AppError('changes_disabled', 'This server keeps no change journal (--changes off): list folders instead.');
      const limit = input.limit ?? DEFAULT_CHANGES_LIMIT;
      if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_CHANGES_LIMIT) throw new AppError('bad_request', `"limit" must be a whole number from 1 to ${MAX_CHANGES_LIMIT}.`);
      const from = parseCursor(input.cursor);
      // Read first: every entry up to it is committed (cursors commit in order), so a page that ends
      // here can hand it out as the next cursor without skipping one that commits later.
      const latest = await store.changes.latest();
      if (from === 'now') return { changes: [], cursor: String(latest), more: false };
      if (from < (await store.changes.horizon())) throw new AppError('cursor_expired', 'This cursor is older than the change journal keeps; list the tree again and continue from cursor=now.');
      if (from > latest) throw new AppError('cursor_expired', 'This cursor is not one of this server\'s journal; list the tree again and continue from cursor=now.');
      const grants = await store.grants.listForRecipient(principal.userId);
      const owners = [...new Set([principal.username, ...grants.map((g) => g.owner)])];
      const changes: ChangeView[] = [];
      let cursor = from;
      for (;;) {
        const rows = await store.changes.changesSinceFor(owners, cursor, SCAN, latest);
        for (const r of rows) {
          const v = visible(principal, grants, r);
          if (v) changes.push(v);
          cursor = r.cursor;
          if (changes.length >= limit) return { changes, cursor: String(cursor), more: cursor < latest };
        }
        if (rows.length < SCAN) return { changes, cursor: String(latest), more: false };
      }
    },

    /** The leader's retention sweep. */
    async purge(): Promise<number> {
      return store.changes.purgeBefore(deps.clock.now() - deps.retentionSeconds * 1000);
    },
  };
}
