import type { FastifyInstance } from 'fastify';
import type { AccessRule } from '../domain/access.js';
import { AppError } from '../domain/errors.js';
import { DEFAULT_CHANGES_LIMIT, MAX_CHANGES_LIMIT, type ChangeService, type ChangesInput } from '../services/changes.js';
import { bytes, errors, header, json, type JsonSchema, type RouteSchema } from './schemas.js';

/** A comment line this often keeps proxies and clients from taking a quiet stream for a dead one. */
export const HEARTBEAT_MS = 15_000;
/**
 * A stream ends after this long and the client reconnects (EventSource does so by itself, with
 * Last-Event-ID): the new request is authenticated again, so a revoked token stops a stream in time.
 */
export const STREAM_LIFETIME_MS = 10 * 60_000;
/** Entries read per page while a stream catches up. */
const STREAM_PAGE = 500;

const Change: JsonSchema = {
  type: 'object',
  required: ['cursor', 'type', 'path', 'is_file'],
  properties: {
    cursor: { type: 'string', description: 'This entry\'s place in the journal; resume after it with `cursor=` (or `Last-Event-ID`).' },
    type: { type: 'string', enum: ['created', 'modified', 'deleted', 'moved'] },
    path: { type: 'string', description: '/<owner>/<path>: the caller\'s own tree, or another owner\'s item granted to the caller.' },
    from: { type: 'string', description: 'Where a moved item was (`moved` only).' },
    is_file: { type: 'boolean' },
    size: { type: 'integer', description: 'Bytes of a file (not for deletions).' },
    modified: { type: 'string', format: 'date-time' },
    etag: { type: 'string', description: 'The ETag the item had when the change was recorded.' },
  },
};

const one = (query: Record<string, unknown>, name: string): string | undefined => {
  const v = query[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw new AppError('bad_request', `Give "${name}" once.`);
  return v;
};

/** The query string of GET /api/changes: each parameter at most once, `limit` in decimal; the service checks ranges. */
export function parseChangesQuery(query: unknown): ChangesInput {
  const q = (query ?? {}) as Record<string, unknown>;
  const rawLimit = one(q, 'limit');
  if (rawLimit !== undefined && !/^[0-9]{1,7}$/.test(rawLimit)) throw new AppError('bad_request', '"limit" must be a whole number.');
  return { cursor: one(q, 'cursor'), limit: rawLimit === undefined ? undefined : Number(rawLimit) };
}

const cursorParam = { type: 'string', description: 'Where to continue: a `cursor` this server gave, or `now` (the default): no entries, only the latest cursor.' };

export const CHANGES_SCHEMA: RouteSchema = {
  summary: 'What changed since a cursor',
  description:
    'Entries of the change journal after `cursor`, oldest first: the caller\'s own tree and what grants share with them. Keep the returned `cursor` and ask again; `more` says a next page is ready now. A cursor older than `--changes-retention` gives 410 `cursor_expired`: list the tree again, then continue from `cursor=now`.',
  tags: ['Changes'],
  querystring: {
    type: 'object',
    properties: {
      cursor: cursorParam,
      limit: { type: 'string', pattern: '^[0-9]{1,7}$', description: `Most entries to return, 1 to ${MAX_CHANGES_LIMIT} (default ${DEFAULT_CHANGES_LIMIT}).` },
    },
  },
  response: {
    200: json('A page of changes.', {
      type: 'object',
      required: ['changes', 'cursor', 'more'],
      properties: {
        changes: { type: 'array', items: Change },
        cursor: { type: 'string', description: 'Continue from here.' },
        more: { type: 'boolean', description: 'More entries are waiting: ask again at once.' },
      },
    }),
    ...errors({
      400: 'A bad `cursor` or `limit`, or one given twice (`bad_request`).',
      401: 'No valid token (`unauthorized`).',
      404: 'The server runs with `--changes off` and keeps no journal (`changes_disabled`).',
      410: 'The cursor is older than the journal keeps, or not from this server (`cursor_expired`): walk the tree again.',
      503: 'The metadata store cannot be reached (`unavailable`).',
    }),
  },
};

export const CHANGES_STREAM_SCHEMA: RouteSchema = {
  summary: 'Changes as they happen (server-sent events)',
  description:
    'One event per change (its `data` is the entry of GET /api/changes as JSON, its `id` the entry\'s cursor), and a comment line every 15 s. Starts after `Last-Event-ID` (sent by EventSource on reconnect) or `cursor` (default: now). The stream ends after 10 minutes; clients reconnect with `Last-Event-ID` and miss nothing, on any node.',
  tags: ['Changes'],
  querystring: { type: 'object', properties: { cursor: cursorParam } },
  headers: { type: 'object', properties: { 'last-event-id': { type: 'string', description: 'The last cursor seen; wins over `cursor`.' } } },
  response: {
    200: bytes('`text/event-stream`.', ['text/event-stream'], { 'cache-control': header('`no-store`.') }),
    ...errors({
      400: 'A bad `cursor` (`bad_request`).',
      401: 'No valid token (`unauthorized`).',
      404: 'The server runs with `--changes off` and keeps no journal (`changes_disabled`).',
      410: 'The cursor is older than the journal keeps (`cursor_expired`).',
    }),
  },
};

export function changeRoutes(scope: FastifyInstance, deps: { changes: ChangeService; stats: { open: number; wakeups: number }; heartbeatMs?: number; lifetimeMs?: number }): void {
  const rule: AccessRule = { who: 'user' };
  // Open streams end when the server closes: an event stream never goes idle, so closing would wait for it.
  const open = new Set<() => void>();
  scope.addHook('preClose', async () => {
    for (const end of [...open]) end();
  });

  scope.get('/api/changes', { config: { access: rule }, schema: CHANGES_SCHEMA }, async (request, reply) => {
    const input = parseChangesQuery(request.query);
    reply.header('cache-control', 'no-store');
    return deps.changes.list(request.principal!, input);
  });

  scope.get('/api/changes/stream', { config: { access: rule }, schema: CHANGES_STREAM_SCHEMA, exposeHeadRoute: false }, async (request, reply) => {
    const principal = request.principal!;
    const lastEventId = request.headers['last-event-id'];
    const input = parseChangesQuery(request.query);
    let cursor = typeof lastEventId === 'string' && lastEventId !== '' ? lastEventId : (input.cursor ?? 'now');
    // The first page before the answer starts: a bad or expired cursor is still an ordinary JSON error.
    let page = await deps.changes.list(principal, { cursor, limit: STREAM_PAGE });
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-accel-buffering': 'no',
      'x-content-type-options': 'nosniff',
    });
    let closed = false;
    const send = (text: string) => {
      if (!closed) res.write(text);
    };
    const write = (p: typeof page) => {
      for (const c of p.changes) send(`id: ${c.cursor}\ndata: ${JSON.stringify(c)}\n\n`);
      // Entries of other trees moved the cursor without an event: an id-only event moves the
      // client's Last-Event-ID without dispatching anything (HTML's event-stream rules).
      if (p.cursor !== (p.changes.at(-1)?.cursor ?? cursor)) send(`id: ${p.cursor}\n\n`);
      cursor = p.cursor;
    };
    // retry: how soon EventSource reconnects after the stream ends (a restart, the lifetime above).
    send(': connected\nretry: 1000\n\n');
    write(page);
    let running = false;
    let again = page.more;
    const pump = async () => {
      if (running) {
        again = true;
        return;
      }
      running = true;
      try {
        do {
          again = false;
          page = await deps.changes.list(principal, { cursor, limit: STREAM_PAGE });
          write(page);
          if (page.more) again = true;
        } while (again && !closed);
      } catch (err) {
        // An expired cursor (retention caught up with a stalled client) or a store outage: the client reconnects.
        request.log.warn({ err }, 'change stream ended');
        end();
      } finally {
        running = false;
      }
    };
    deps.stats.open++;
    const unsubscribe = deps.changes.signal.subscribe(() => {
      deps.stats.wakeups++;
      void pump();
    });
    const heartbeat = setInterval(() => send(': heartbeat\n\n'), deps.heartbeatMs ?? HEARTBEAT_MS);
    const lifetime = setTimeout(() => end(), deps.lifetimeMs ?? STREAM_LIFETIME_MS);
    function end() {
      if (closed) return;
      closed = true;
      open.delete(end);
      deps.stats.open--;
      unsubscribe();
      clearInterval(heartbeat);
      clearTimeout(lifetime);
      res.end();
    }
    res.on('close', end);
    open.add(end);
    if (again) void pump();
  });
}
