// The JSON wire shapes of the API (docs/api.md): the services return domain records (camelCase, epoch
// milliseconds), and the front end spells them as the contract does (snake_case, ISO 8601 times). One
// function per record, so a route that sends one never builds it by hand, and a service never learns
// the wire's spelling (test/process/layering.test.ts holds services to that).
import type { AuditRow } from '../store/audit.js';
import { downloadsOf } from '../domain/download-units.js';
import type { Share } from '../domain/share.js';
import type { Grant } from '../store/grants.js';
import type { Group } from '../store/groups.js';
import type { Session } from '../store/sessions.js';
import type { ApiKey } from '../store/api-keys.js';
import type { SshKey } from '../store/ssh-keys.js';
import type { DeliveryRow, WebhookRow } from '../store/webhooks.js';
import type { TokenSet } from '../services/auth.js';
import type { Change, RecentChange } from '../services/changes.js';
import type { ReceivedGrant } from '../services/grants.js';
import type { SearchResult } from '../services/search.js';
import type { TrashEntry } from '../services/trash.js';
import type { HookData, HookEvent, WebhookInput } from '../services/webhooks.js';

const iso = (ms: number): string => new Date(ms).toISOString();
const isoOrNull = (ms: number | null | undefined): string | null => (ms === null || ms === undefined ? null : iso(ms));

/** The token set of /auth/login, /auth/refresh and a single sign-on's redeemed code. */
export const tokenSetView = (t: TokenSet) => ({ access_token: t.accessToken, refresh_token: t.refreshToken, valid_for_seconds: t.validForSeconds });

/** A group with its members (/api/admin/groups). */
export const groupView = (g: Group) => ({ name: g.name, members: g.members, created_at: iso(g.createdAt) });

/** A grant as its owner sees it (POST/GET/PATCH /api/grants). */
export const grantView = (g: Grant) => ({
  id: g.id,
  path: `/${g.owner}/${g.path}`,
  to: `${g.toKind}:${g.toName}`,
  permission: g.permission,
  created_at: iso(g.createdAt),
});

/** An item shared with the caller (GET /api/grants/received). */
export const receivedView = (r: ReceivedGrant) => ({
  id: r.grant.id,
  path: `/${r.grant.owner}/${r.grant.path}`,
  owner: r.grant.owner,
  permission: r.grant.permission,
  is_file: r.grant.isFile,
  groups: r.groups,
  direct: r.direct,
});

/** One of the caller's sessions (GET /api/sessions); `current` marks the one that asks. */
export const sessionView = (s: Session, currentId: string | undefined) => ({
  id: s.id,
  created_at: iso(s.createdAt),
  last_used_at: iso(s.lastUsedAt),
  client: s.client,
  address: s.address,
  current: s.id === currentId,
});

/** An audit entry (GET /api/admin/audit, and each line of the --audit-log export). */
export const auditView = (r: AuditRow) => ({
  id: r.seq,
  time: iso(r.at),
  type: r.type,
  actor: r.actor,
  address: r.address,
  user_agent: r.userAgent,
  target: r.target,
  outcome: r.outcome,
  detail: r.detail === null ? null : (JSON.parse(r.detail) as Record<string, unknown>),
  prev_hash: r.prevHash,
  hash: r.hash,
});

/** A change of the feed without its cursor, in the order its fields always had (the stream sends it as is). */
const changeFields = (c: Omit<Change, 'cursor'>) => ({
  type: c.type,
  path: c.path,
  is_file: c.isFile,
  ...(c.from === undefined ? {} : { from: c.from }),
  ...(c.size === undefined ? {} : { size: c.size }),
  ...(c.modified === undefined ? {} : { modified: iso(c.modified) }),
  ...(c.etag === undefined ? {} : { etag: c.etag }),
  ...(c.sha256 === undefined ? {} : { sha256: c.sha256 }),
  ...(c.id === undefined ? {} : { id: c.id }),
  ...(c.origin === undefined ? {} : { origin: c.origin }),
});

/** An entry of GET /api/changes and of its event stream. */
export const changeView = (c: Change) => ({ cursor: c.cursor, ...changeFields(c) });

/** An entry of GET /api/changes/recent: no cursor, and when it was recorded. */
export const recentView = (c: RecentChange) => ({ ...changeFields(c), at: iso(c.at) });

/** An app password (/api/keys); `key`, the secret, only in the answer that creates it. */
export const apiKeyView = (k: ApiKey, secret?: string) => ({
  id: k.id,
  name: k.name,
  ...(secret === undefined ? {} : { key: secret }),
  read_only: k.readOnly,
  created: iso(k.createdAt),
  expires: isoOrNull(k.expiresAt),
  last_used: isoOrNull(k.lastUsedAt),
});

/** An SSH key of the caller (/api/me/ssh-keys): never the key itself, only its fingerprint. */
export const sshKeyView = (k: SshKey) => ({
  id: k.id,
  name: k.name,
  algorithm: k.algorithm,
  fingerprint: k.fingerprint,
  created: iso(k.createdAt),
  last_used: isoOrNull(k.lastUsedAt),
});

/** An item in the caller's trash (GET /api/trash). */
export const trashView = (t: TrashEntry) => ({
  id: t.id,
  path: `/${t.owner}/${t.path}`,
  name: t.name,
  is_file: t.isFile,
  size: t.size,
  /** A file's SHA-256 when the server knew it for exactly the bytes trashed; null otherwise (folders too). */
  sha256: t.isFile ? (t.sha256 ?? null) : null,
  deleted_at: iso(t.deletedAt),
  expires_at: iso(t.expiresAt),
});

/** A share link as its owner sees it (POST/GET /api/shares); `url` under the server's base path. */
export const shareView = (s: Share, basePath: string) => ({
  id: s.id,
  url: `${basePath}/s/${s.id}`,
  // The whole tree is `/<owner>/`; anything in it `/<owner>/<path>`, a folder without its slash.
  path: `/${s.owner}/${s.path}`,
  is_file: s.isFile,
  expires_at: isoOrNull(s.expiresAt),
  has_password: s.passwordHash !== undefined,
  max_downloads: s.maxDownloads ?? null,
  downloads: downloadsOf(s.downloadUnits),
  upload_only: s.uploadOnly,
  created_at: iso(s.createdAt),
});

/** A match of GET /api/search. */
export const searchResultView = (r: SearchResult) => ({ path: r.path, name: r.name, is_file: r.isFile, size: r.size, modified: iso(r.modified) });

// A webhook's times are 0 or null when they are not set.
const isoIfSet = (ms: number | null): string | null => (ms === null || ms === 0 ? null : iso(ms));

/** A webhook (/api/admin/webhooks); its secret only in the answer that makes it. */
export const webhookView = (h: WebhookRow) => ({
  id: h.id,
  url: h.url,
  events: [...h.events],
  path_prefix: h.pathPrefix,
  enabled: h.enabled,
  disabled_reason: h.disabledReason,
  failing_since: isoIfSet(h.failingSince),
  next_attempt_at: isoIfSet(h.attempts > 0 ? h.nextAttemptAt : null),
  created_at: iso(h.createdAt),
});

/** One delivery attempt of a webhook (…/deliveries, …/test). */
export const deliveryView = (d: DeliveryRow) => ({
  id: d.id,
  event_id: d.eventId,
  event_type: d.eventType,
  attempt: d.attempt,
  at: iso(d.at),
  status: d.status,
  duration_ms: d.durationMs,
  error: d.error,
  next_retry_at: isoIfSet(d.nextRetryAt),
});

/** What an event tells a receiver (docs/api.md "Webhooks"): the audit entry with its detail, the change, the test's hook. */
const webhookData = (d: HookData): Record<string, unknown> => {
  switch (d.source) {
    case 'audit':
      return { audit_id: d.seq, actor: d.actor, target: d.target, address: d.address, ...d.detail };
    case 'changes':
      return {
        path: d.path,
        ...(d.from !== undefined ? { from: d.from } : {}),
        is_file: d.isFile,
        ...(d.size !== undefined ? { size: d.size } : {}),
        ...(d.modified !== undefined ? { modified: iso(d.modified) } : {}),
      };
    case 'test':
      return { webhook_id: d.webhookId };
  }
};

/** The body a webhook receiver gets for an event (the webhook service signs and sends it). */
export const webhookBody = (e: Pick<HookEvent, 'type' | 'time' | 'data'>): string => JSON.stringify({ type: e.type, timestamp: iso(e.time), data: webhookData(e.data) });

/** A webhook's body as sent (POST, PATCH), in the service's names; each field checked there. */
export const webhookInput = (body: Record<string, unknown>): WebhookInput => ({
  url: body.url,
  events: body.events,
  pathPrefix: body.path_prefix,
  secret: body.secret,
  enabled: body.enabled,
});

export { iso, isoOrNull };
