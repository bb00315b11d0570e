import type { FastifyInstance } from 'fastify';
import type { AccessRule } from '../domain/access.js';
import { AppError } from '../domain/errors.js';
import { STREAMS_PER_USER, type ChangeStreams } from '../services/change-streams.js';
import { DEFAULT_CHANGES_LIMIT, DEFAULT_RECENT_LIMIT, MAX_CHANGES_LIMIT, MAX_RECENT_LIMIT, RECENT_LOOK_BACK, type ChangeService, type ChangesInput, type RecentInput } from '../services/changes.js';
import { bytes, errors, header, json, type JsonSchema, type RouteSchema } from '../http/schemas.js';
import { sentence } from '../lib/i18n/sentences.js';
import { changeView, recentView } from './views.js';

const Change: JsonSchema = {
  type: 'object',
  required: ['cursor', 'type', 'path', 'is_file'],
  properties: {
    cursor: { type: 'string', description: 'Where this entry is: resume after it with `cursor=` (or `Last-Event-ID`). Opaque, for this account only, and different each time it is given.' },
    type: { type: 'string', enum: ['created', 'modified', 'deleted', 'moved'] },
    path: { type: 'string', description: '/<owner>/<path>: the caller\'s own tree, or another owner\'s item granted to the caller.' },
    from: { type: 'string', description: 'Where a moved item was (`moved` only).' },
    is_file: { type: 'boolean' },
    size: { type: 'integer', description: 'Bytes of a file (not for deletions).' },
    modified: { type: 'string', format: 'date-time' },
    etag: { type: 'string', description: 'The ETag the item had when the change was recorded.' },
    id: { type: 'string', description: 'The item\'s stable id: kept by moves, renames and overwrites of its name (docs/api.md "Sync fields").' },
    sha256: { type: 'string', description: 'A file\'s SHA-256 (hex) when the server knows it (not for deletions).' },
    origin: { type: 'string', description: 'The `File-Cloud-Origin` header the writer sent.' },
  },
};

const one = (query: Record<string, unknown>, name: string): string | undefined => {
  const v = query[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw new AppError('bad_request', sentence('apiDetail.giveOnce', { name }));
  return v;
};

const limitOf = (q: Record<string, unknown>): number | undefined => {
  const raw = one(q, 'limit');
  if (raw !== undefined && !/^[0-9]{1,7}$/.test(raw)) throw new AppError('bad_request', sentence('apiDetail.limitWhole'));
  return raw === undefined ? undefined : Number(raw);
};

/** The query string of GET /api/changes: each parameter at most once, `limit` in decimal; the service checks ranges. */
export function parseChangesQuery(query: unknown): ChangesInput {
  const q = (query ?? {}) as Record<string, unknown>;
  return { cursor: one(q, 'cursor'), limit: limitOf(q) };
}

/** The query string of GET /api/changes/recent, by the same rules. */
export function parseRecentQuery(query: unknown): RecentInput {
  const q = (query ?? {}) as Record<string, unknown>;
  return { path: one(q, 'path'), limit: limitOf(q) };
}

const { cursor: _cursor, ...RecentChange } = Change.properties as Record<string, JsonSchema>;

export const RECENT_SCHEMA: RouteSchema = {
  summary: 'The newest changes',
  description: `The newest entries of the change journal the caller may see (as GET /api/changes would give them), newest first, each with \`at\`, when it was recorded; with \`path\`, only those at or below it (a move: where it went or where it came from). Looks back over at most the newest ${RECENT_LOOK_BACK} entries of the trees the caller can see. For a "recent files" view and an item's history.`,
  tags: ['Changes'],
  querystring: {
    type: 'object',
    properties: {
      path: { type: 'string', description: '/<owner>/<path>: only entries at or below it.' },
      limit: { type: 'string', pattern: '^[0-9]{1,7}$', description: `Most entries to return, 1 to ${MAX_RECENT_LIMIT} (default ${DEFAULT_RECENT_LIMIT}).` },
    },
  },
  response: {
    200: json('The newest changes.', {
      type: 'object',
      required: ['changes'],
      properties: {
        changes: {
          type: 'array',
          items: { type: 'object', required: ['type', 'path', 'is_file', 'at'], properties: { ...RecentChange, at: { type: 'string', format: 'date-time', description: 'When the change was recorded.' } } },
        },
      },
    }),
    ...errors({
      400: 'A bad `limit` or `path`, or one given twice (`bad_request`).',
      401: 'No valid token (`unauthorized`).',
      404: 'The server runs with `--changes off` and keeps no journal (`changes_disabled`).',
      503: 'The metadata store cannot be reached (`unavailable`).',
    }),
  },
};

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
      required: ['changes', 'cursor', 'more', 'epoch'],
      properties: {
        changes: { type: 'array', items: Change },
        cursor: { type: 'string', description: 'Continue from here.' },
        more: { type: 'boolean', description: 'More of the caller\'s entries are waiting: ask again at once.' },
        epoch: { type: 'string', description: 'This installation\'s id, made once and the same on every node: another value means another server (list once, delete nothing).' },
      },
    }),
    ...errors({
      400: 'A bad `cursor` or `limit`, or one given twice (`bad_request`).',
      401: 'No valid token (`unauthorized`).',
      404: 'The server runs with `--changes off` and keeps no journal (`changes_disabled`).',
      410: 'The cursor is older than the journal keeps, or not one this server gave the caller (another server\'s or account\'s, or a number of an earlier version) (`cursor_expired`): walk the tree again.',
      503: 'The metadata store cannot be reached (`unavailable`).',
    }),
  },
};

export const CHANGES_STREAM_SCHEMA: RouteSchema = {
  summary: 'Changes as they happen (server-sent events)',
  description:
    `One event per change the caller may see (its \`data\` is the entry of GET /api/changes as JSON, its \`id\` the entry's cursor); nothing for others' changes; a heartbeat every 15 s with a fresh \`id\` to resume from. Starts after \`Last-Event-ID\` (sent by EventSource on reconnect) or \`cursor\` (default: now). The stream ends after 10 minutes, or once its credential no longer holds (checked before entries are sent and with each heartbeat); clients reconnect with \`Last-Event-ID\` and miss nothing, on any node. At most ${STREAMS_PER_USER} streams per user at once.`,
  tags: ['Changes'],
  querystring: { type: 'object', properties: { cursor: cursorParam } },
  headers: { type: 'object', properties: { 'last-event-id': { type: 'string', description: 'The last cursor seen; wins over `cursor`.' } } },
  response: {
    200: bytes('`text/event-stream`.', ['text/event-stream'], { 'cache-control': header('`no-store`.') }),
    ...errors({
      400: 'A bad `cursor` (`bad_request`).',
      401: 'No valid token (`unauthorized`).',
      404: 'The server runs with `--changes off` and keeps no journal (`changes_disabled`).',
      410: 'The cursor is older than the journal keeps, or not one this server gave the caller (`cursor_expired`).',
      429: `The user has ${STREAMS_PER_USER} streams open already (\`too_many_streams\`); close one first.`,
    }),
  },
};

export function changeRoutes(scope: FastifyInstance, deps: { changes: ChangeService; streams: ChangeStreams }): void {
  const rule: AccessRule = { who: 'user' };
  // Open streams end when the server closes: an event stream never goes idle, so closing would wait for it.
  scope.addHook('preClose', () => deps.streams.closeAll());

  scope.get('/api/changes', { config: { access: rule }, schema: CHANGES_SCHEMA }, async (request, reply) => {
    const input = parseChangesQuery(request.query);
    reply.header('cache-control', 'no-store');
    const page = await deps.changes.list(request.principal!, input);
    return { ...page, changes: page.changes.map(changeView) };
  });

  scope.get('/api/changes/recent', { config: { access: rule }, schema: RECENT_SCHEMA }, async (request, reply) => {
    const input = parseRecentQuery(request.query);
    reply.header('cache-control', 'no-store');
    return { changes: (await deps.changes.recent(request.principal!, input)).map(recentView) };
  });

  scope.get('/api/changes/stream', { config: { access: rule }, schema: CHANGES_STREAM_SCHEMA, exposeHeadRoute: false }, async (request, reply) => {
    const lastEventId = request.headers['last-event-id'];
    const input = parseChangesQuery(request.query);
    const from = typeof lastEventId === 'string' && lastEventId !== '' ? lastEventId : (input.cursor ?? 'now');
    // Opened before the answer starts: a refusal is still an ordinary JSON error.
    const stream = await deps.streams.open(request.principal!, from, () => request.stillAuthorized());
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
    res.on('close', () => {
      closed = true;
      stream.stop();
    });
    // Gone while the stream was opened: 'close' came before anyone listened.
    if (res.destroyed) stream.stop();
    stream.start({
      // retry: how soon EventSource reconnects after the stream ends (a restart, its lifetime, a credential gone).
      open: (id) => send(`: connected\nretry: 1000\nid: ${id}\n\n`),
      change: (c) => send(`id: ${c.cursor}\ndata: ${JSON.stringify(changeView(c))}\n\n`),
      // An event with an id and no data moves the client's Last-Event-ID without dispatching anything (HTML's event-stream rules).
      heartbeat: (id) => send(`: heartbeat\nid: ${id}\n\n`),
      end: () => {
        closed = true;
        res.end();
      },
    });
  });
}
