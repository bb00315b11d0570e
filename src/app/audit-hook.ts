import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AuditEvent, AuditOutcome, AuditService } from '../services/audit.js';

/** What a rule sees of one answered request. */
type Seen = {
  readonly status: number;
  readonly body: Record<string, unknown>;
  readonly params: Record<string, string>;
  /** The JSON answer (for the id of what was made), when it is one. */
  readonly answer: Record<string, unknown>;
  readonly request: FastifyRequest;
};
type Described = Omit<AuditEvent, 'outcome' | 'address' | 'userAgent' | 'actor'> & { readonly actor?: string | null; readonly outcome?: AuditOutcome };
type Rule = (s: Seen) => Described | readonly Described[] | undefined;

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const ok = (s: Seen) => s.status < 400;

const signIn = (method: string): Rule => (s) => ({
  type: ok(s) ? 'login.succeeded' : 'login.failed',
  actor: str(s.body.username)?.slice(0, 200) ?? null,
  target: str(s.body.username)?.slice(0, 200) ?? null,
  outcome: ok(s) ? 'success' : 'failure',
  detail: { method },
});
const signOut: Rule = (s) => ({ type: 'logout', actor: s.request.actor ?? str(s.body.username)?.slice(0, 200) ?? null, target: str(s.body.username)?.slice(0, 200) ?? null });
const simple = (type: string, target?: (s: Seen) => string | undefined, detail?: (s: Seen) => Record<string, unknown>): Rule => (s) => ({ type, target: target?.(s) ?? null, detail: detail?.(s) });
const param = (name: string) => (s: Seen) => s.params[name];
/**
 * For actions whose failures are throttled per caller: the failures the throttle lets through are
 * entries (at most its limit a minute per caller), its own refusals are not, so a caller who keeps
 * trying cannot grow the chain at will; the request log has them.
 */
const unlessThrottled = (rule: Rule): Rule => (s) => (s.status === 429 ? undefined : rule(s));

/**
 * Which answered requests are security events, by route (docs/operations.md "Audit log" lists
 * the types). One table beside the routes rather than a call in each handler: every front end's
 * sign-in and every admin action is described in one place, with its outcome taken from the
 * answer itself, so a refused or failed attempt is recorded as surely as a successful one.
 */
const RULES: Readonly<Record<string, Rule>> = {
  'POST /auth/login': signIn('password'),
  'POST /basic/login': signIn('basic'),
  // Single sign-on: the web UI redeems the callback's one-time code; the answer names the account.
  'POST /auth/oidc/session': (s) => ({
    type: ok(s) ? 'login.succeeded' : 'login.failed',
    actor: str(s.answer.username) ?? null,
    target: str(s.answer.username) ?? null,
    outcome: ok(s) ? 'success' : 'failure',
    detail: { method: 'sso' },
  }),
  'POST /auth/logout': signOut,
  'POST /basic/logout': signOut,
  'POST /api/me/password': simple('password.changed'),
  'POST /api/me/totp': simple('totp.setup_started'),
  'POST /api/me/totp/confirm': simple('totp.enabled'),
  'DELETE /api/me/totp': simple('totp.disabled'),
  'DELETE /api/sessions/:id': simple('session.revoked', param('id')),
  'POST /api/keys': simple('app_password.created', (s) => str(s.answer.id), (s) => ({ name: str(s.body.name), read_only: s.body.read_only === true })),
  'DELETE /api/keys/:id': simple('app_password.revoked', param('id')),
  'POST /api/me/ssh-keys': simple('ssh_key.added', (s) => str(s.answer.id), (s) => ({ name: str(s.body.name), fingerprint: str(s.answer.fingerprint) })),
  'DELETE /api/me/ssh-keys/:id': simple('ssh_key.removed', param('id')),
  'POST /api/admin/users': simple('user.created', (s) => str(s.body.username), (s) => ({ admin: s.body.admin === true })),
  'PATCH /api/admin/users/:name': (s) => {
    const b = s.body;
    const target = s.params.name;
    const out: Described[] = [];
    if (b.password !== undefined) out.push({ type: 'user.password_reset', target });
    if (b.admin !== undefined) out.push({ type: 'user.admin_changed', target, detail: { admin: b.admin } });
    if (b.quota !== undefined) out.push({ type: 'user.quota_changed', target, detail: { quota: b.quota } });
    if (b.disabled !== undefined) out.push({ type: b.disabled === true ? 'user.disabled' : 'user.enabled', target });
    return out.length > 0 ? out : { type: 'user.changed', target };
  },
  'DELETE /api/admin/users/:name': simple('user.removed', param('name'), (s) => ({ delete_files: (s.request.query as Record<string, unknown>).delete_files === 'true' })),
  'POST /api/admin/groups': simple('group.created', (s) => str(s.body.name), (s) => ({ members: s.body.members })),
  'PATCH /api/admin/groups/:name': simple('group.changed', param('name'), (s) => ({ add: s.body.add, remove: s.body.remove })),
  'DELETE /api/admin/groups/:name': simple('group.removed', param('name')),
  'POST /api/admin/webhooks': simple('webhook.created', (s) => str(s.answer.id), (s) => ({ url: str(s.body.url), events: s.body.events })),
  'PATCH /api/admin/webhooks/:id': simple('webhook.changed', param('id'), (s) => ({ ...s.body, secret: undefined })),
  'DELETE /api/admin/webhooks/:id': simple('webhook.removed', param('id')),
  'POST /api/shares': simple('share.created', (s) => str(s.body.path), (s) => ({ id: str(s.answer.id), password: typeof s.body.password === 'string', upload_only: s.body.upload_only === true, expires_at: s.answer.expires_at })),
  'DELETE /api/shares/:id': simple('share.revoked', param('id')),
  'POST /api/grants': unlessThrottled(simple('grant.created', (s) => str(s.body.path), (s) => ({ id: str(s.answer.id), to: str(s.body.to), permission: str(s.body.permission) }))),
  'PATCH /api/grants/:id': simple('grant.changed', param('id'), (s) => ({ permission: str(s.body.permission) })),
  'DELETE /api/grants/:id': simple('grant.revoked', param('id')),
  'POST /storage/*': (s) =>
    s.body.action === 'MakePathToken' ? { type: 'path_token.created', target: decodeURIComponent(s.request.url.split('?')[0]!.replace(/^.*?\/storage\//, '/')), detail: { valid_for_seconds: s.body.valid_for_seconds } } : undefined,
};

/** A failed answer's reason class: the contract's error code (never the message, never the input). */
function reasonOf(status: number, payload: unknown): string | undefined {
  if (status < 400) return undefined;
  if (typeof payload === 'string' && payload.startsWith('{')) {
    try {
      const code = (JSON.parse(payload) as { error?: unknown }).error;
      if (typeof code === 'string') return code;
    } catch {
      // not JSON after all: fall through to the status
    }
  }
  return ({ 400: 'bad_request', 401: 'invalid_credentials', 403: 'forbidden', 404: 'not_found', 429: 'rate_limited' } as Record<number, string>)[status] ?? `status_${status}`;
}

function parsed(payload: unknown): Record<string, unknown> {
  if (typeof payload !== 'string' || !payload.startsWith('{') || payload.length > 65_536) return {};
  try {
    return JSON.parse(payload) as Record<string, unknown>;
  } catch {
    return {};
  }
}

/**
 * Records the security events of answered requests (RULES) before the answer goes out, so a
 * client that sees the answer finds the entry. A 401 outside sign-in names nobody and is left to
 * the request log, so anonymous noise cannot flood the chain.
 */
export function installAuditHook(app: FastifyInstance, deps: { audit: AuditService; basePath: string }): void {
  app.addHook('onSend', async (request, reply, payload) => {
    const url = request.routeOptions.url;
    if (url === undefined || request.method === 'GET' || request.method === 'HEAD') return payload;
    const rule = RULES[`${request.method} ${url.slice(deps.basePath.length)}`];
    if (!rule) return payload;
    const status = reply.statusCode;
    const body = request.body !== null && typeof request.body === 'object' ? (request.body as Record<string, unknown>) : {};
    const seen: Seen = { status, body, params: (request.params ?? {}) as Record<string, string>, answer: status < 400 ? parsed(payload) : {}, request };
    const described = rule(seen);
    if (!described) return payload;
    const list = Array.isArray(described) ? (described as Described[]) : [described as Described];
    if (status === 401 && !list.some((d) => d.type.startsWith('login.') || d.type === 'logout')) return payload;
    const reason = reasonOf(status, payload);
    const ua = request.headers['user-agent'];
    for (const d of list) {
      await deps.audit.record({
        ...d,
        actor: d.actor !== undefined ? d.actor : request.actor,
        address: request.ip,
        userAgent: typeof ua === 'string' ? ua : null,
        outcome: d.outcome ?? (status < 400 ? 'success' : status === 401 || status === 403 ? 'denied' : 'failure'),
        detail: reason ? { ...d.detail, reason } : d.detail,
      });
    }
    return payload;
  });
}
