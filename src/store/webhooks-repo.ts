import type { Kysely, Selectable } from 'kysely';
import type { Database } from './schema.js';
import type { DeliveryRow, WebhookRepo, WebhookRow } from './webhooks.js';

const toHook = (r: Selectable<Database['webhooks']>): WebhookRow => ({
  id: r.id,
  url: r.url,
  events: JSON.parse(r.events) as string[],
  pathPrefix: r.path_prefix,
  secret: r.secret,
  enabled: Number(r.enabled) === 1,
  disabledReason: r.disabled_reason,
  failingSince: r.failing_since === null ? null : Number(r.failing_since),
  attempts: Number(r.attempts),
  nextAttemptAt: Number(r.next_attempt_at),
  createdAt: Number(r.created_at),
});

const toDelivery = (r: Selectable<Database['webhook_deliveries']>): DeliveryRow => ({
  id: r.id,
  hookId: r.hook_id,
  eventId: r.event_id,
  eventType: r.event_type,
  attempt: Number(r.attempt),
  at: Number(r.at),
  status: r.status === null ? null : Number(r.status),
  durationMs: Number(r.duration_ms),
  error: r.error,
  nextRetryAt: r.next_retry_at === null ? null : Number(r.next_retry_at),
});

export function createWebhookRepo(db: Kysely<Database>): WebhookRepo {
  return {
    async create(h, cursors) {
      await db.transaction().execute(async (trx) => {
        await trx
          .insertInto('webhooks')
          .values({
            id: h.id,
            url: h.url,
            events: JSON.stringify(h.events),
            path_prefix: h.pathPrefix,
            secret: h.secret,
            enabled: h.enabled ? 1 : 0,
            disabled_reason: h.disabledReason,
            failing_since: h.failingSince,
            attempts: h.attempts,
            next_attempt_at: h.nextAttemptAt,
            created_at: h.createdAt,
          })
          .execute();
        for (const [source, cursor] of Object.entries(cursors)) await trx.insertInto('webhook_cursors').values({ hook_id: h.id, source, cursor }).execute();
      });
    },
    async get(id) {
      const r = await db.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirst();
      return r && toHook(r);
    },
    async list() {
      return (await db.selectFrom('webhooks').selectAll().orderBy('created_at').orderBy('id').execute()).map(toHook);
    },
    async update(id, c) {
      const set: Partial<Record<keyof Database['webhooks'], unknown>> = {};
      if (c.url !== undefined) set.url = c.url;
      if (c.events !== undefined) set.events = JSON.stringify(c.events);
      if (c.pathPrefix !== undefined) set.path_prefix = c.pathPrefix;
      if (c.enabled !== undefined) set.enabled = c.enabled ? 1 : 0;
      if (c.disabledReason !== undefined) set.disabled_reason = c.disabledReason;
      if (c.failingSince !== undefined) set.failing_since = c.failingSince;
      if (c.attempts !== undefined) set.attempts = c.attempts;
      if (c.nextAttemptAt !== undefined) set.next_attempt_at = c.nextAttemptAt;
      if (Object.keys(set).length === 0) return (await this.get(id)) !== undefined;
      const r = await db.updateTable('webhooks').set(set as never).where('id', '=', id).executeTakeFirst();
      return Number(r.numUpdatedRows) > 0;
    },
    async delete(id) {
      // Explicitly, not by the foreign keys' cascade alone (SQLite enforces it only with the pragma).
      return db.transaction().execute(async (trx) => {
        await trx.deleteFrom('webhook_cursors').where('hook_id', '=', id).execute();
        await trx.deleteFrom('webhook_deliveries').where('hook_id', '=', id).execute();
        const r = await trx.deleteFrom('webhooks').where('id', '=', id).executeTakeFirst();
        return Number(r.numDeletedRows) > 0;
      });
    },
    async cursor(hookId, source) {
      const r = await db.selectFrom('webhook_cursors').select('cursor').where('hook_id', '=', hookId).where('source', '=', source).executeTakeFirst();
      return r?.cursor;
    },
    async setCursor(hookId, source, cursor) {
      await db
        .insertInto('webhook_cursors')
        .values({ hook_id: hookId, source, cursor })
        .onConflict((oc) => oc.columns(['hook_id', 'source']).doUpdateSet({ cursor }))
        .execute();
    },
    async addDelivery(d) {
      await db
        .insertInto('webhook_deliveries')
        .values({ id: d.id, hook_id: d.hookId, event_id: d.eventId, event_type: d.eventType, attempt: d.attempt, at: d.at, status: d.status, duration_ms: d.durationMs, error: d.error, next_retry_at: d.nextRetryAt })
        .execute();
    },
    async deliveries(hookId, limit) {
      return (await db.selectFrom('webhook_deliveries').selectAll().where('hook_id', '=', hookId).orderBy('at', 'desc').orderBy('id', 'desc').limit(limit).execute()).map(toDelivery);
    },
    async deleteDeliveriesBefore(at) {
      await db.deleteFrom('webhook_deliveries').where('at', '<', at).execute();
    },
  };
}
