import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AccessRule } from '../domain/access.js';
import type { UserPrincipal } from '../domain/principal.js';
import type { ApiKeyService } from '../services/api-keys.js';
import { objectBody } from './body.js';
import { apiKeyView } from './views.js';
import { empty, errors, json, jsonBody, type JsonSchema, type RouteSchema } from '../http/schemas.js';

const TAG = ['App passwords'];
const KeyView: JsonSchema = {
  type: 'object',
  required: ['id', 'name', 'read_only', 'created', 'expires', 'last_used'],
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    read_only: { type: 'boolean', description: 'A read-only key gets 403 on every write.' },
    created: { type: 'string', format: 'date-time' },
    expires: { type: ['string', 'null'], format: 'date-time' },
    last_used: { type: ['string', 'null'], format: 'date-time', description: 'Updated at most once a minute.' },
  },
};
const sessionNeeded = 'An app password cannot manage app passwords, or a read-only key (`forbidden`).';
const SCHEMAS = {
  create: {
    summary: 'Create an app password (API key); the key is shown once',
    tags: TAG,
    body: jsonBody({
      type: 'object',
      required: ['name'],
      properties: { name: { type: 'string', minLength: 1 }, read_only: { type: 'boolean' }, expires_in: { type: ['integer', 'null'], minimum: 1, description: 'Seconds; absent or null: never.' } },
    }),
    response: {
      201: json('Created; `key` is never shown again.', { ...KeyView, required: [...(KeyView.required as string[]), 'key'], properties: { ...(KeyView.properties as object), key: { type: 'string', description: 'Use as a Bearer token, or as the WebDAV password.' } } }),
      ...errors({ 400: 'A bad field (`bad_request`) or a body that is not JSON (`invalid_json`).', 401: 'No valid session (`unauthorized`).', 403: sessionNeeded, 413: 'The body is over 64 KiB.' }),
    },
  },
  list: {
    summary: 'Your app passwords (never the keys)',
    tags: TAG,
    response: { 200: json('The keys, newest first.', { type: 'object', required: ['keys'], properties: { keys: { type: 'array', items: KeyView } } }), ...errors({ 401: 'No valid session (`unauthorized`).', 403: sessionNeeded }) },
  },
  revoke: {
    summary: 'Revoke an app password: it stops working at once',
    tags: TAG,
    params: { type: 'object', required: ['id'], properties: { id: { type: 'string' } } },
    response: { 204: empty('Revoked.'), ...errors({ 401: 'No valid session (`unauthorized`).', 403: sessionNeeded, 404: 'No key of yours has this id (`not_found`).' }) },
  },
} satisfies Record<string, RouteSchema>;

/**
 * App passwords / API keys of the caller (CONTRACT "Accounts and API"):
 * create (the key is shown once), list (never the keys), revoke. Managing
 * keys needs a signed-in session: an app password cannot make or revoke app
 * passwords, so a leaked one cannot entrench itself (docs/security.md).
 */
export function keyRoutes(app: FastifyInstance, deps: { keys: ApiKeyService }): void {
  const { keys } = deps;
  const session: AccessRule = { who: 'user', sessionOnly: true };
  const config = { access: session };
  const caller = (request: FastifyRequest) => request.principal as UserPrincipal;

  app.post('/api/keys', { bodyLimit: 64 * 1024, config, schema: SCHEMAS.create }, async (request, reply) => {
    const body = objectBody(request.body);
    const { key, secret } = await keys.create(caller(request), { name: body.name, readOnly: body.read_only, expiresIn: body.expires_in });
    return reply.code(201).header('cache-control', 'no-store').send(apiKeyView(key, secret));
  });

  app.get('/api/keys', { config, schema: SCHEMAS.list }, async (request, reply) => {
    reply.header('cache-control', 'no-store');
    return { keys: (await keys.list(caller(request))).map((k) => apiKeyView(k)) };
  });

  app.delete('/api/keys/:id', { config, schema: SCHEMAS.revoke }, async (request, reply) => {
    await keys.revoke(caller(request), (request.params as { id: string }).id);
    return reply.code(204).send();
  });
}
