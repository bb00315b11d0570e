import type { FastifyInstance } from 'fastify';
import type { AccessRule } from '../domain/access.js';
import { AppError } from '../domain/errors.js';
import type { AuditService } from '../services/audit.js';
import { adminOnly, error } from './route-schemas.js';
import { json } from '../http/schemas.js';
import { auditView } from './views.js';

const MAX_LIMIT = 1000;
const DEFAULT_LIMIT = 100;

export const auditEventSchema = {
  type: 'object',
  required: ['id', 'time', 'type', 'actor', 'address', 'user_agent', 'target', 'outcome', 'detail', 'prev_hash', 'hash'],
  properties: {
    id: { type: 'integer', description: 'Position in the chain (1, 2, …).' },
    time: { type: 'string', format: 'date-time' },
    type: { type: 'string', description: 'docs/operations.md "Audit log" lists them: login.succeeded, login.failed, user.created, share.created, …' },
    actor: { type: ['string', 'null'], description: 'The account that acted (for a sign-in: the username tried).' },
    address: { type: ['string', 'null'], description: 'The client address (with --trust-proxy: from X-Forwarded-For).' },
    user_agent: { type: ['string', 'null'] },
    target: { type: ['string', 'null'], description: 'What was acted on: a username, group, path, id.' },
    outcome: { type: 'string', enum: ['success', 'denied', 'failure'] },
    detail: { type: ['object', 'null'], description: 'A few facts; `reason` is a failure\'s class (the error code), never a password.' },
    prev_hash: { type: 'string', description: 'SHA-256 (hex) of the previous entry.' },
    hash: { type: 'string', description: 'SHA-256 (hex) sealing this entry and prev_hash.' },
  },
} as const;

function time(v: unknown, name: string): number | undefined {
  if (v === undefined) return undefined;
  const t = typeof v === 'string' ? (/^\d+$/.test(v) ? Number(v) : Date.parse(v)) : NaN;
  if (!Number.isFinite(t)) throw new AppError('bad_request', `${name} must be an RFC 3339 time or milliseconds since 1970.`);
  return t;
}

/** GET /api/admin/audit: the audit log, newest first, a page at a time (docs/api.md "Audit log"). */
export function adminAuditRoutes(scope: FastifyInstance, deps: { audit: AuditService }): void {
  scope.addHook('onSend', async (_request, reply) => void reply.header('cache-control', 'no-store'));
  scope.get('/api/admin/audit', {
    config: { access: { who: 'admin' } as AccessRule },
    schema: {
      summary: 'The audit log',
      description: 'Newest first. `cursor` from one answer gives the next (older) page; null when there is none.',
      tags: ['Audit (admin)'],
      querystring: {
        type: 'object',
        properties: {
          since: { type: 'string', description: 'Only events at or after this time (RFC 3339, or milliseconds).' },
          until: { type: 'string', description: 'Only events before this time.' },
          user: { type: 'string', description: 'Only events whose actor is this account.' },
          type: { type: 'string', description: 'Only this event type; `share.*` for a family.' },
          limit: { type: 'integer', minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT },
          cursor: { type: 'string', description: 'The `cursor` of the previous page.' },
        },
      },
      response: {
        200: json('A page of events.', { type: 'object', required: ['events', 'cursor'], properties: { events: { type: 'array', items: auditEventSchema }, cursor: { type: ['string', 'null'] } } }),
        400: error('A bad parameter (`bad_request`).'),
        ...adminOnly,
      },
    },
  }, async (request) => {
    const q = request.query as Record<string, unknown>;
    for (const [k, v] of Object.entries(q)) if (typeof v !== 'string' && typeof v !== 'number') throw new AppError('bad_request', `Give ${k} once.`);
    const limit = q.limit === undefined ? DEFAULT_LIMIT : Number(q.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) throw new AppError('bad_request', `limit must be 1 to ${MAX_LIMIT}.`);
    const cursor = q.cursor === undefined ? undefined : Number(q.cursor);
    if (cursor !== undefined && (!Number.isInteger(cursor) || cursor < 1)) throw new AppError('bad_request', 'cursor must be one an earlier answer gave.');
    const { events, cursor: next } = await deps.audit.list({ since: time(q.since, 'since'), until: time(q.until, 'until'), user: q.user as string | undefined, type: q.type as string | undefined, limit, cursor });
    return { events: events.map(auditView), cursor: next };
  });
}
