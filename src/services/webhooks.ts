import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { AppError } from '../domain/errors.js';
import type { Clock } from '../lib/clock.js';
import type { AuditRepo } from '../store/audit.js';
import type { ChangeRepo } from '../store/changes.js';
import type { DeliveryRow, WebhookRepo, WebhookRow } from '../store/webhooks.js';
import { postWebhook } from './webhook-http.js';
import { checkWebhookUrl, resolveTarget } from './webhook-target.js';

/** Every event type a hook may ask for (docs/operations.md "Webhooks"). */
export const WEBHOOK_EVENTS = [
  'file.created', 'file.modified', 'file.deleted', 'file.moved',
  'share.created', 'share.revoked', 'grant.created', 'grant.revoked',
  'user.created', 'user.removed', 'user.disabled', 'login.failed',
] as const;
const KNOWN = new Set<string>(WEBHOOK_EVENTS);

/**
 * What an event tells, as this service knows it (camelCase, times in epoch ms). The body a receiver
 * gets spells it as docs/api.md "Webhooks" does: that view is the front end's (`webhookBody` in
 * src/routes/views.ts), handed to the service by the composition root.
 */
export type HookData =
  | { readonly source: 'audit'; readonly seq: number; readonly actor: string | null; readonly target: string | null; readonly address: string | null; readonly detail: Readonly<Record<string, unknown>> }
  | { readonly source: 'changes'; readonly path: string; readonly from?: string; readonly isFile: boolean; readonly size?: number; readonly modified?: number }
  | { readonly source: 'test'; readonly webhookId: string };

/** One event as a source hands it over; `cursor` is where a hook stands once it is delivered. */
export type HookEvent = {
  readonly id: string;
  /** A WEBHOOK_EVENTS type, or '' for an entry of the source that no hook is told of. */
  readonly type: string;
  readonly time: number;
  readonly data: HookData;
  /** The `/<user>/<path>` the event is about, when it is about one (path_prefix filters on it). */
  readonly path?: string;
  readonly cursor: string;
};

/**
 * A durable, ordered source of events that hooks read by their own cursor: the audit log here, the
 * change journal (file.*) where it exists. A source keeps its events in the metadata store, so
 * delivery survives restarts and costs the request that caused the event nothing.
 */
export interface EventSource {
  readonly name: string;
  /** Where a new hook starts: it is told of what happens after it was made. */
  latest(): Promise<string>;
  /** Events after `cursor`, oldest first, at most `limit`. */
  read(cursor: string, limit: number): Promise<readonly HookEvent[]>;
}

/** Audit entries that are webhook events: successful share, grant and user changes, and failed sign-ins. */
const FROM_AUDIT = new Set(['share.created', 'share.revoked', 'grant.created', 'grant.revoked', 'user.created', 'user.removed', 'user.disabled']);

export function auditEventSource(repo: AuditRepo): EventSource {
  return {
    name: 'audit',
    latest: async () => String((await repo.head()).seq),
    async read(cursor, limit) {
      const rows = await repo.after(Number(cursor), limit);
      return rows.map((r) => {
        const wanted = r.type === 'login.failed' || (r.outcome === 'success' && FROM_AUDIT.has(r.type));
        const detail = r.detail ? (JSON.parse(r.detail) as Record<string, unknown>) : {};
        const isPath = typeof r.target === 'string' && r.target.startsWith('/');
        return {
          id: `audit_${r.seq}`,
          type: wanted ? r.type : '',
          time: r.at,
          data: { source: 'audit', seq: r.seq, actor: r.actor, target: r.target, address: r.address, detail },
          ...(isPath ? { path: r.target as string } : {}),
          cursor: String(r.seq),
        };
      });
    },
  };
}

/**
 * The change journal as the webhooks' second source: its created / modified / deleted / moved
 * become file.* events about `/<owner>/<path>` (so path_prefix applies): every owner's entries,
 * oldest first, by the hook's own cursor (buildApp wires it beside the audit log).
 */
export function changeJournalSource(journal: Pick<ChangeRepo, 'latest' | 'changesSince'>): EventSource {
  return {
    name: 'changes',
    latest: async () => String(await journal.latest()),
    async read(cursor, limit) {
      return (await journal.changesSince(Number(cursor), limit)).map((c) => {
        const path = `/${c.owner}/${c.path}`;
        return {
          id: `change_${c.cursor}`,
          type: `file.${c.type}`,
          time: c.at,
          data: {
            source: 'changes',
            path,
            ...(c.from !== undefined ? { from: `/${c.owner}/${c.from}` } : {}),
            isFile: c.isFile,
            ...(c.size !== undefined ? { size: c.size } : {}),
            ...(c.modified !== undefined ? { modified: c.modified } : {}),
          },
          path,
          cursor: String(c.cursor),
        };
      });
    },
  };
}

/** The Standard Webhooks signature header value of one attempt. */
export function signWebhook(secret: string, id: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`;
}

/** Retrying stops, and the hook is disabled, after this long of failing. */
export const WEBHOOK_GIVE_UP_MS = 24 * 3600_000;
const MAX_BACKOFF_MS = 3600_000;
const BATCH = 200;
const BATCHES_PER_ROUND = 10;
const MAX_PARALLEL_HOOKS = 8;

/** What an administrator sends to make or change a hook, unchecked (the service checks each field). */
export type WebhookInput = { url?: unknown; events?: unknown; pathPrefix?: unknown; secret?: unknown; enabled?: unknown };

export type WebhookService = ReturnType<typeof createWebhookService>;

/**
 * Webhooks (docs/operations.md "Webhooks"): admin-managed hooks, and their delivery from durable
 * event sources by a per-hook cursor. `tick` is run by the cluster's leader only, so each event is
 * delivered once per hook however many nodes run (at least once: a leader that dies between the
 * answer and saving the cursor leaves that one event to be sent again). A hook waits at its first
 * undelivered event, so its events arrive in order; a failing hook backs off exponentially (1 s,
 * 2 s, … up to an hour) and is disabled after 24 h of failures, with the reason shown to admins.
 * Nothing of this runs in a request: a dead endpoint slows no request and holds no queue in memory.
 */
export function createWebhookService(deps: {
  repo: WebhookRepo;
  sources: readonly EventSource[];
  clock: Clock;
  allowPrivate: boolean;
  timeoutMs?: number;
  maxResponseBytes?: number;
  retryBaseMs?: number;
  /** Whether this process still leads: a leader that lost its lease mid-run stops before its next send. */
  leading?: () => boolean;
  onDisabled?: (hook: WebhookRow, reason: string) => void;
  /** The body a receiver gets for an event, as docs/api.md "Webhooks" spells it (`webhookBody`, src/routes/views.ts). */
  body: (event: Pick<HookEvent, 'type' | 'time' | 'data'>) => string;
  onError: (err: unknown) => void;
}) {
  const { repo, clock } = deps;
  const timeoutMs = deps.timeoutMs ?? 10_000;
  const maxResponseBytes = deps.maxResponseBytes ?? 64 * 1024;
  const retryBase = deps.retryBaseMs ?? 1000;
  const inFlight = new Map<string, Promise<void>>();

  const parseEvents = (v: unknown): string[] => {
    if (!Array.isArray(v) || v.length === 0 || v.length > 64 || !v.every((e) => typeof e === 'string')) throw new AppError('bad_request', 'events must be a non-empty list of event types.');
    const bad = (v as string[]).find((e) => !KNOWN.has(e));
    if (bad !== undefined) throw new AppError('bad_request', `Unknown event type "${bad.slice(0, 64)}"; known: ${WEBHOOK_EVENTS.join(', ')}.`);
    return [...new Set(v as string[])];
  };
  const parsePrefix = (v: unknown): string | null => {
    if (v === undefined || v === null) return null;
    if (typeof v !== 'string' || !/^\/[^/]+(\/[^/]+)*\/?$/.test(v) || v.length > 4096) throw new AppError('bad_request', 'path_prefix must be a path like /<user>/<folder>.');
    return v.replace(/\/$/, '');
  };
  const parseSecret = (v: unknown): string => {
    if (v === undefined) return `whsec_${randomBytes(24).toString('base64')}`;
    const key = typeof v === 'string' && /^whsec_[A-Za-z0-9+/]+={0,2}$/.test(v) ? Buffer.from(v.slice(6), 'base64') : undefined;
    if (!key || key.length < 24 || key.length > 64) throw new AppError('bad_request', 'secret must be whsec_ followed by 24 to 64 bytes in base64 (Standard Webhooks).');
    return v as string;
  };
  const must = async (id: string) => {
    const h = await repo.get(id);
    if (!h) throw new AppError('not_found', 'No such webhook.');
    return h;
  };
  const matches = (h: WebhookRow, e: HookEvent) =>
    e.type !== '' && h.events.includes(e.type) && (h.pathPrefix === null || e.path === undefined || e.path === h.pathPrefix || e.path.startsWith(`${h.pathPrefix}/`));

  /** One attempt: resolve, pin, sign, POST. Never throws; the outcome is the delivery row. */
  async function attempt(h: WebhookRow, e: Pick<HookEvent, 'id' | 'type' | 'time' | 'data'>, attemptNo: number): Promise<DeliveryRow & { ok: boolean }> {
    const started = clock.now();
    const t0 = performance.now();
    const body = deps.body(e);
    let status: number | null = null;
    let error: string | null = null;
    try {
      const url = new URL(h.url);
      const target = await resolveTarget(url, deps.allowPrivate);
      const ts = Math.floor(clock.now() / 1000);
      const r = await postWebhook(url, target, { 'webhook-id': e.id, 'webhook-timestamp': String(ts), 'webhook-signature': signWebhook(h.secret, e.id, ts, body) }, body, { timeoutMs, maxResponseBytes });
      status = r.status;
      if (status < 200 || status > 299) error = status >= 300 && status < 400 ? `answered ${status} (redirects are not followed)` : `answered ${status}`;
    } catch (err) {
      error = (err as Error).message.slice(0, 500);
    }
    return { id: randomUUID(), hookId: h.id, eventId: e.id, eventType: e.type, attempt: attemptNo, at: started, status, durationMs: Math.round(performance.now() - t0), error, nextRetryAt: null, ok: error === null };
  }

  async function runHook(h: WebhookRow): Promise<void> {
    for (const source of deps.sources) {
      const stored = await repo.cursor(h.id, source.name);
      let saved = stored;
      let cursor = stored ?? (await source.latest());
      const save = async () => {
        if (cursor !== saved) await repo.setCursor(h.id, source.name, cursor);
        saved = cursor;
      };
      // Several batches a round, so a busy source (many entries no hook asked for) is not outrun.
      for (let batch = 0; batch < BATCHES_PER_ROUND; batch++) {
        const events = await source.read(cursor, BATCH);
        for (const e of events) {
          if (!matches(h, e)) {
            cursor = e.cursor;
            continue;
          }
          // What was skipped before this one is saved first, so a failure here retries this event, not those.
          await save();
          // Its successor continues from the saved cursor; sending on would send what it sends too.
          if (deps.leading && !deps.leading()) return;
          const d = await attempt(h, e, h.attempts + 1);
          if (!d.ok) {
            await failed(h, d);
            return;
          }
          await repo.addDelivery(d);
          cursor = e.cursor;
          await save();
          if (h.attempts > 0) {
            await repo.update(h.id, { attempts: 0, failingSince: null, nextAttemptAt: 0 });
            h = { ...h, attempts: 0, failingSince: null, nextAttemptAt: 0 };
          }
        }
        if (events.length < BATCH) break;
      }
      await save();
    }
  }

  async function failed(h: WebhookRow, d: DeliveryRow): Promise<void> {
    const now = clock.now();
    const since = h.failingSince ?? now;
    const attempts = h.attempts + 1;
    if (now - since >= WEBHOOK_GIVE_UP_MS) {
      const reason = `Deliveries failed for 24 hours (${attempts} attempts); the last: ${d.error ?? 'no answer'}.`;
      await repo.addDelivery(d);
      await repo.update(h.id, { enabled: false, disabledReason: reason, attempts, failingSince: since });
      deps.onDisabled?.(h, reason);
      return;
    }
    const next = now + Math.min(retryBase * 2 ** Math.min(attempts - 1, 30), MAX_BACKOFF_MS);
    await repo.addDelivery({ ...d, nextRetryAt: next });
    await repo.update(h.id, { attempts, failingSince: since, nextAttemptAt: next });
  }

  return {
    /** A new hook; its secret is told in this answer only (the row holds it). */
    async create(input: WebhookInput): Promise<WebhookRow> {
      if (typeof input.url !== 'string') throw new AppError('bad_request', 'url is required.');
      const url = checkWebhookUrl(input.url, deps.allowPrivate).href;
      const hook: WebhookRow = {
        id: randomUUID(),
        url,
        events: parseEvents(input.events),
        pathPrefix: parsePrefix(input.pathPrefix),
        secret: parseSecret(input.secret),
        enabled: true,
        disabledReason: null,
        failingSince: null,
        attempts: 0,
        nextAttemptAt: 0,
        createdAt: clock.now(),
      };
      const cursors: Record<string, string> = {};
      for (const s of deps.sources) cursors[s.name] = await s.latest();
      await repo.create(hook, cursors);
      return hook;
    },
    list: (): Promise<WebhookRow[]> => repo.list(),
    get: (id: string): Promise<WebhookRow> => must(id),
    async update(id: string, input: WebhookInput): Promise<WebhookRow> {
      await must(id);
      if (input.secret !== undefined) throw new AppError('bad_request', 'The secret cannot be changed; make a new webhook.');
      if (input.enabled !== undefined && typeof input.enabled !== 'boolean') throw new AppError('bad_request', 'enabled must be true or false.');
      const change = {
        ...(input.url !== undefined ? { url: checkWebhookUrl(typeof input.url === 'string' ? input.url : '', deps.allowPrivate).href } : {}),
        ...(input.events !== undefined ? { events: parseEvents(input.events) } : {}),
        ...(input.pathPrefix !== undefined ? { pathPrefix: parsePrefix(input.pathPrefix) } : {}),
        // Turned on again: a fresh start, retried at once, from where it stopped.
        ...(input.enabled === true ? { enabled: true, disabledReason: null, failingSince: null, attempts: 0, nextAttemptAt: 0 } : {}),
        ...(input.enabled === false ? { enabled: false, disabledReason: 'Disabled by an administrator.' } : {}),
      };
      await repo.update(id, change);
      return must(id);
    },
    async remove(id: string): Promise<void> {
      if (!(await repo.delete(id))) throw new AppError('not_found', 'No such webhook.');
    },
    async deliveries(id: string, limit = 100): Promise<DeliveryRow[]> {
      await must(id);
      return repo.deliveries(id, limit);
    },
    /** Sends a `webhook.test` event now, outside the hook's order and backoff, and records it. */
    async test(id: string): Promise<DeliveryRow> {
      const h = await must(id);
      const d = await attempt(h, { id: `test_${randomUUID()}`, type: 'webhook.test', time: clock.now(), data: { source: 'test', webhookId: h.id } }, 1);
      await repo.addDelivery(d);
      return d;
    },
    /** One round: every enabled hook that is due and not already being delivered starts a run. */
    async tick(): Promise<void> {
      const now = clock.now();
      for (const h of await repo.list()) {
        if (!h.enabled || h.nextAttemptAt > now || inFlight.has(h.id) || inFlight.size >= MAX_PARALLEL_HOOKS) continue;
        const run = runHook(h)
          .catch(deps.onError)
          .finally(() => inFlight.delete(h.id));
        inFlight.set(h.id, run);
      }
    },
    /** Waits for the runs in progress (tests, shutdown). */
    async settle(): Promise<void> {
      await Promise.all(inFlight.values());
    },
    sweep: () => repo.deleteDeliveriesBefore(clock.now() - 7 * 86_400_000),
  };
}
