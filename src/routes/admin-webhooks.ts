import type { FastifyInstance } from 'fastify';
import type { AccessRule } from '../domain/access.js';
import { objectBody } from './body.js';
import { deliveryView, webhookInput, webhookView } from './views.js';
import { WEBHOOK_EVENTS, type WebhookService } from '../services/webhooks.js';
import { adminOnly, error, noContent } from './route-schemas.js';
import { json } from '../http/schemas.js';

const TAGS = ['Webhooks (admin)'];
const idParams = { type: 'object', required: ['id'], properties: { id: { type: 'string', maxLength: 200 } } } as const;
const events = { type: 'array', items: { type: 'string', enum: [...WEBHOOK_EVENTS] }, description: 'The event types to deliver.' } as const;

const hookSchema = {
  type: 'object',
  required: ['id', 'url', 'events', 'path_prefix', 'enabled', 'disabled_reason', 'failing_since', 'next_attempt_at', 'created_at'],
  properties: {
    id: { type: 'string' },
    url: { type: 'string' },
    events,
    path_prefix: { type: ['string', 'null'], description: 'Only events about paths under /<user>/<folder> (events without a path are not filtered).' },
    enabled: { type: 'boolean' },
    disabled_reason: { type: ['string', 'null'], description: 'Why it stopped: after 24 hours of failed deliveries, or an administrator.' },
    failing_since: { type: ['string', 'null'], format: 'date-time' },
    next_attempt_at: { type: ['string', 'null'], format: 'date-time', description: 'When the failing delivery is tried again.' },
    created_at: { type: 'string', format: 'date-time' },
    secret: { type: 'string', description: 'Only in the answer that made it: the signing secret, `whsec_<base64>`.' },
  },
} as const;
const deliverySchema = {
  type: 'object',
  required: ['id', 'event_id', 'event_type', 'attempt', 'at', 'status', 'duration_ms', 'error', 'next_retry_at'],
  properties: {
    id: { type: 'string' },
    event_id: { type: 'string', description: 'The `webhook-id` header sent.' },
    event_type: { type: 'string' },
    attempt: { type: 'integer' },
    at: { type: 'string', format: 'date-time' },
    status: { type: ['integer', 'null'], description: 'The HTTP status answered; null when none came.' },
    duration_ms: { type: 'integer' },
    error: { type: ['string', 'null'] },
    next_retry_at: { type: ['string', 'null'], format: 'date-time' },
  },
} as const;
const inputProps = {
  url: { type: 'string', description: 'http:// or https://; loopback, link-local and private addresses only with --webhooks-allow-private.' },
  events,
  path_prefix: { type: ['string', 'null'] },
} as const;

/** The webhooks admin API (docs/api.md "Webhooks"). */
export function adminWebhookRoutes(scope: FastifyInstance, deps: { webhooks: WebhookService }): void {
  const { webhooks } = deps;
  const config = { access: { who: 'admin' } as AccessRule };
  scope.addHook('onSend', async (_request, reply) => void reply.header('cache-control', 'no-store'));
  const id = (request: { params: unknown }) => (request.params as { id: string }).id;

  scope.post('/api/admin/webhooks', {
    config,
    schema: {
      summary: 'Create a webhook',
      description: 'It is told of events from now on. The answer carries the signing secret, shown this once.',
      tags: TAGS,
      body: { type: 'object', required: ['url', 'events'], properties: { ...inputProps, secret: { type: 'string', description: 'Your own `whsec_<base64>` secret (24 to 64 bytes); one is made when omitted.' } } },
      response: { 201: json('Created, with its secret.', hookSchema), 400: error('A bad or refused URL, an unknown event type (`bad_request`).'), ...adminOnly },
    },
  }, async (request, reply) => {
    const hook = await webhooks.create(webhookInput(objectBody(request.body)));
    return reply.code(201).send({ ...webhookView(hook), secret: hook.secret });
  });

  scope.get('/api/admin/webhooks', {
    config,
    schema: { summary: 'All webhooks', tags: TAGS, response: { 200: json('Every webhook (without secrets).', { type: 'object', required: ['webhooks'], properties: { webhooks: { type: 'array', items: hookSchema } } }), ...adminOnly } },
  }, async () => ({ webhooks: (await webhooks.list()).map(webhookView) }));

  scope.get('/api/admin/webhooks/:id', {
    config,
    schema: { summary: 'One webhook', tags: TAGS, params: idParams, response: { 200: json('The webhook.', hookSchema), ...adminOnly, 404: error('No such webhook (`not_found`).') } },
  }, async (request) => webhookView(await webhooks.get(id(request))));

  scope.patch('/api/admin/webhooks/:id', {
    config,
    schema: {
      summary: 'Change a webhook',
      description: '`enabled: true` turns a disabled hook on again: it resumes at its first undelivered event.',
      tags: TAGS,
      params: idParams,
      body: { type: 'object', properties: { ...inputProps, enabled: { type: 'boolean' } } },
      response: { 200: json('The webhook as it is now.', hookSchema), 400: error('A bad value (`bad_request`).'), ...adminOnly, 404: error('No such webhook (`not_found`).') },
    },
  }, async (request) => webhookView(await webhooks.update(id(request), webhookInput(objectBody(request.body)))));

  scope.delete('/api/admin/webhooks/:id', {
    config,
    schema: { summary: 'Delete a webhook', tags: TAGS, params: idParams, response: { 204: noContent, ...adminOnly, 404: error('No such webhook (`not_found`).') } },
  }, async (request, reply) => {
    await webhooks.remove(id(request));
    return reply.code(204).send();
  });

  scope.get('/api/admin/webhooks/:id/deliveries', {
    config,
    schema: {
      summary: 'Recent delivery attempts',
      description: 'Newest first, the last 7 days, at most 100.',
      tags: TAGS,
      params: idParams,
      response: { 200: json('Attempts.', { type: 'object', required: ['deliveries'], properties: { deliveries: { type: 'array', items: deliverySchema } } }), ...adminOnly, 404: error('No such webhook (`not_found`).') },
    },
  }, async (request) => ({ deliveries: (await webhooks.deliveries(id(request))).map(deliveryView) }));

  scope.post('/api/admin/webhooks/:id/test', {
    config,
    schema: {
      summary: 'Send a test event',
      description: 'Sends a `webhook.test` event now (outside the hook\'s order and backoff) and answers how it went.',
      tags: TAGS,
      params: idParams,
      response: { 200: json('The attempt.', deliverySchema), ...adminOnly, 404: error('No such webhook (`not_found`).') },
    },
  }, async (request) => deliveryView(await webhooks.test(id(request))));
}
