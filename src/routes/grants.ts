import type { FastifyInstance } from 'fastify';
import { AppError } from '../domain/errors.js';
import { isPermission, type GrantService, type Permission } from '../services/grants.js';
import { objectBody, requiredString } from './body.js';
import { grantView, receivedView } from './views.js';
import { empty, errors, json, jsonBody, type JsonSchema, type RouteSchema } from '../http/schemas.js';
import { sentence } from '../lib/i18n/sentences.js';

const TAGS = ['Grants'];
const permission: JsonSchema = { type: 'string', enum: ['read', 'write'], description: '`read`: every read; `write`: also upload, overwrite, create folders, rename, move and delete inside the item (never the item itself).' };
const Grant: JsonSchema = {
  type: 'object',
  required: ['id', 'path', 'to', 'permission', 'created_at'],
  properties: {
    id: { type: 'string' },
    path: { type: 'string', description: '`/<owner>/<path>`: follows the item when its owner renames or moves it.' },
    to: { type: 'string', description: '`user:<name>` or `group:<name>`.' },
    permission,
    created_at: { type: 'string', format: 'date-time' },
  },
};
const Received: JsonSchema = {
  type: 'object',
  required: ['id', 'path', 'owner', 'permission', 'is_file', 'groups', 'direct'],
  properties: {
    id: { type: 'string' },
    path: { type: 'string', description: '`/<owner>/<path>`: use it under /storage/, /dav/, tus `folder` and search as the owner would.' },
    owner: { type: 'string' },
    permission,
    is_file: { type: 'boolean' },
    groups: { type: 'array', items: { type: 'string' }, description: 'Your groups the item is shared with, by name (empty: shared with you by name only).' },
    direct: { type: 'boolean', description: 'Shared with you by name (too).' },
  },
};
const idParams: JsonSchema = { type: 'object', required: ['id'], properties: { id: { type: 'string', description: 'The grant id.' } } };
const signedIn = { 401: 'No valid access token (`unauthorized`).' };

const SCHEMAS: Record<'create' | 'given' | 'received' | 'patch' | 'remove', RouteSchema> = {
  create: {
    summary: 'Share a file or folder with a user or a group',
    tags: TAGS,
    body: jsonBody({
      type: 'object',
      required: ['path', 'to', 'permission'],
      properties: { path: { type: 'string', description: '`/<you>/<path>` of one of your files or folders (not your root).' }, to: { type: 'string', description: '`user:<name>` or `group:<name>`.' }, permission },
    }),
    response: {
      201: json('The grant.', Grant),
      ...errors({
        ...signedIn,
        400: 'Not JSON, a missing or mistyped field, your root, or a name you cannot share with: an unknown user or group, a disabled user and yourself get one and the same answer (`bad_request`, `invalid_path`).',
        404: 'Nothing at the path (`not_found`).',
        409: 'Already shared with that recipient (`already_exists`).',
        429: 'Too many failed creations in the last minute (`--login-rate-limit`, 10 by default): every creation is refused until one leaves the window (`rate_limited`, with `Retry-After`).',
      }),
    },
  },
  given: {
    summary: 'The grants you gave',
    tags: TAGS,
    response: { 200: json('Your grants, newest first.', { type: 'object', required: ['grants'], properties: { grants: { type: 'array', items: Grant } } }), ...errors(signedIn) },
  },
  received: {
    summary: 'Shared with me',
    tags: TAGS,
    response: { 200: json('The items shared with you or a group of yours, one entry per item.', { type: 'object', required: ['grants'], properties: { grants: { type: 'array', items: Received } } }), ...errors(signedIn) },
  },
  patch: {
    summary: 'Change a grant\'s permission',
    tags: TAGS,
    params: idParams,
    body: jsonBody({ type: 'object', required: ['permission'], properties: { permission } }),
    response: { 200: json('The grant as it is now.', Grant), ...errors({ ...signedIn, 400: 'A bad permission (`bad_request`).', 404: 'No grant of yours has this id (`not_found`).' }) },
  },
  remove: {
    summary: 'End a grant',
    description: 'The owner revokes it; a recipient may remove a grant made to them by name (one made to a group is the owner\'s to end). Access ends at once, on every node.',
    tags: TAGS,
    params: idParams,
    response: { 204: empty('Ended.'), ...errors({ ...signedIn, 403: 'A grant to a group you are in (`forbidden`).', 404: 'No such grant of yours (`not_found`).' }) },
  },
};

function permissionOf(body: Record<string, unknown>): Permission {
  const v = requiredString(body, 'permission');
  if (!isPermission(v)) throw new AppError('bad_request', sentence('apiDetail.permission'));
  return v;
}

/** Sharing between accounts (docs/api.md "Grants"): thin over the grant service. */
export function grantRoutes(scope: FastifyInstance, deps: { grants: GrantService }): void {
  const { grants } = deps;
  const user = { config: { access: { who: 'user' } as const } };
  scope.addHook('onSend', async (_request, reply) => void reply.header('cache-control', 'no-store'));

  scope.post('/api/grants', { ...user, bodyLimit: 64 * 1024, schema: SCHEMAS.create }, async (request, reply) => {
    const body = objectBody(request.body);
    const made = await grants.create(request.principal!, { path: requiredString(body, 'path'), to: requiredString(body, 'to'), permission: permissionOf(body) });
    return reply.code(201).send(grantView(made));
  });
  scope.get('/api/grants', { ...user, schema: SCHEMAS.given }, async (request) => ({ grants: (await grants.listGiven(request.principal!)).map(grantView) }));
  scope.get('/api/grants/received', { ...user, schema: SCHEMAS.received }, async (request) => ({ grants: (await grants.listReceived(request.principal!)).map(receivedView) }));
  scope.patch('/api/grants/:id', { ...user, bodyLimit: 64 * 1024, schema: SCHEMAS.patch }, async (request) =>
    grantView(await grants.setPermission(request.principal!, (request.params as { id: string }).id, permissionOf(objectBody(request.body)))),
  );
  scope.delete('/api/grants/:id', { ...user, schema: SCHEMAS.remove }, async (request, reply) => {
    await grants.remove(request.principal!, (request.params as { id: string }).id);
    return reply.code(204).send();
  });
}
