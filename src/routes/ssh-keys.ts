import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AccessRule } from '../domain/access.js';
import type { UserPrincipal } from '../domain/principal.js';
import type { SshKeyService } from '../services/ssh-keys.js';
import { sshKeyView } from './views.js';
import { objectBody } from './body.js';
import { empty, errors, json, jsonBody, type JsonSchema, type RouteSchema } from '../http/schemas.js';

const TAG = ['SSH keys'];
const KeyView: JsonSchema = {
  type: 'object',
  required: ['id', 'name', 'algorithm', 'fingerprint', 'created', 'last_used'],
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    algorithm: { type: 'string', description: 'ssh-ed25519, ecdsa-sha2-nistp256/384/521 or ssh-rsa (2048 bits or more).' },
    fingerprint: { type: 'string', description: 'SHA256:…, as `ssh-keygen -lf key.pub` prints it.' },
    created: { type: 'string', format: 'date-time' },
    last_used: { type: ['string', 'null'], format: 'date-time', description: 'The last SFTP sign-in with it; updated at most once a minute.' },
  },
};
const sessionNeeded = 'An app password cannot manage SSH keys (`forbidden`).';
const SCHEMAS = {
  add: {
    summary: 'Add a public key for SFTP sign-in',
    tags: TAG,
    body: jsonBody({
      type: 'object',
      required: ['name', 'key'],
      properties: { name: { type: 'string', minLength: 1 }, key: { type: 'string', description: 'One public key line, as in ~/.ssh/id_ed25519.pub.' } },
    }),
    response: {
      201: json('Added.', KeyView),
      ...errors({ 400: 'A bad field or a key that is not valid (`bad_request`), or a body that is not JSON (`invalid_json`).', 401: 'No valid session (`unauthorized`).', 403: sessionNeeded, 409: 'The key is added already (`already_exists`).', 413: 'The body is over 64 KiB.' }),
    },
  },
  list: {
    summary: 'Your SSH keys',
    tags: TAG,
    response: { 200: json('The keys, oldest first.', { type: 'object', required: ['keys'], properties: { keys: { type: 'array', items: KeyView } } }), ...errors({ 401: 'No valid session (`unauthorized`).', 403: sessionNeeded }) },
  },
  remove: {
    summary: 'Remove an SSH key: it signs in no more',
    tags: TAG,
    params: { type: 'object', required: ['id'], properties: { id: { type: 'string' } } },
    response: { 204: empty('Removed.'), ...errors({ 401: 'No valid session (`unauthorized`).', 403: sessionNeeded, 404: 'No key of yours has this id (`not_found`).' }) },
  },
} satisfies Record<string, RouteSchema>;

/**
 * The caller's public keys for SFTP sign-in (CONTRACT "SFTP (opt-in)"). Like app passwords, they
 * need a signed-in session: an app password cannot add a key (docs/security.md).
 */
export function sshKeyRoutes(app: FastifyInstance, deps: { sshKeys: SshKeyService }): void {
  const { sshKeys } = deps;
  const session: AccessRule = { who: 'user', sessionOnly: true };
  const config = { access: session };
  const caller = (request: FastifyRequest) => request.principal as UserPrincipal;

  app.post('/api/me/ssh-keys', { bodyLimit: 64 * 1024, config, schema: SCHEMAS.add }, async (request, reply) => {
    const body = objectBody(request.body);
    return reply.code(201).send(sshKeyView(await sshKeys.add(caller(request), { name: body.name, key: body.key })));
  });

  app.get('/api/me/ssh-keys', { config, schema: SCHEMAS.list }, async (request, reply) => {
    reply.header('cache-control', 'no-store');
    return { keys: (await sshKeys.list(caller(request))).map(sshKeyView) };
  });

  app.delete('/api/me/ssh-keys/:id', { config, schema: SCHEMAS.remove }, async (request, reply) => {
    await sshKeys.remove(caller(request), (request.params as { id: string }).id);
    return reply.code(204).send();
  });
}
