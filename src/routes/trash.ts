import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { UserPrincipal } from '../domain/principal.js';
import type { TrashService } from '../services/trash.js';
import { trashView } from './views.js';
import { empty, errors, json, type JsonSchema, type RouteSchema } from '../http/schemas.js';

const TAGS = ['Trash'];
const Item: JsonSchema = {
  type: 'object',
  required: ['id', 'path', 'name', 'is_file', 'size', 'sha256', 'deleted_at', 'expires_at'],
  properties: {
    id: { type: 'string' },
    path: { type: 'string', description: '`/<owner>/<path>`: where the item was; a restore puts it back there.' },
    name: { type: 'string' },
    is_file: { type: 'boolean' },
    size: { type: 'integer', description: 'Bytes of its files (counted against your quota while it is in the trash).' },
    sha256: { type: ['string', 'null'], description: 'A file\'s SHA-256 (lower-case hex) when the server knew it for exactly the bytes trashed; `null` for a folder or when unknown (a sync client need not keep a copy of bytes the trash holds).' },
    deleted_at: { type: 'string', format: 'date-time' },
    expires_at: { type: 'string', format: 'date-time', description: 'When the server purges it (--trash-days after the delete).' },
  },
};
const idParams: JsonSchema = { type: 'object', required: ['id'], properties: { id: { type: 'string', description: 'The trash item id.' } } };
const off = 'The trash is off on this server (`--trash-days 0`), or no item of yours has this id (`not_found`).';
const signedIn = { 401: 'No valid access token (`unauthorized`).' };
const writing = { ...signedIn, 403: 'A read-only app password (`forbidden`).' };

const Hash: JsonSchema = {
  type: 'object',
  required: ['sha256', 'size'],
  properties: { sha256: { type: 'string', description: 'SHA-256, lower-case hex.' }, size: { type: 'integer' } },
};

const SCHEMAS: Record<'list' | 'hashes' | 'restore' | 'remove' | 'empty', RouteSchema> = {
  list: {
    summary: 'Your trash',
    description: 'Only with `--trash-days N` (N > 0): deleted files and folders are kept here for N days. Newest first.',
    tags: TAGS,
    response: { 200: json('Your trashed items.', { type: 'object', required: ['items'], properties: { items: { type: 'array', items: Item } } }), ...errors({ ...signedIn, 404: off }) },
  },
  hashes: {
    summary: 'The contents your trash holds',
    description:
      'The SHA-256 and size of every file your trash holds whose hash the server knew for exactly the bytes trashed: trashed files, and the files inside trashed folders. Each pair once. A sync client keeps no local copy of bytes listed here.',
    tags: TAGS,
    response: { 200: json('What your trash holds.', { type: 'object', required: ['files'], properties: { files: { type: 'array', items: Hash } } }), ...errors({ ...signedIn, 404: off }) },
  },
  restore: {
    summary: 'Put a trashed item back',
    description: 'Back to its path (its parent folders are made again if they are gone); when that name is taken now, as `name (1).ext`, `name (2).ext`, ….',
    tags: TAGS,
    params: idParams,
    response: {
      200: json('Restored.', { type: 'object', required: ['path'], properties: { path: { type: 'string', description: '`/<owner>/<path>` it took.' } } }),
      ...errors({ ...writing, 404: off, 409: 'A file is now where a folder on the way to it was (`not_a_directory`).' }),
    },
  },
  remove: {
    summary: 'Delete a trashed item for good',
    tags: TAGS,
    params: idParams,
    response: { 204: empty('Deleted for good; its bytes no longer count against your quota.'), ...errors({ ...writing, 404: off }) },
  },
  empty: {
    summary: 'Empty your trash',
    tags: TAGS,
    response: { 204: empty('Every item deleted for good.'), ...errors({ ...writing, 404: off }) },
  },
};

/** The caller's trash (docs/api.md "Trash"): thin over the trash service. */
export function trashRoutes(scope: FastifyInstance, deps: { trash: TrashService }): void {
  const { trash } = deps;
  const user = { config: { access: { who: 'user' } as const } };
  const caller = (request: FastifyRequest) => request.principal as UserPrincipal;
  const id = (request: FastifyRequest) => (request.params as { id: string }).id;
  scope.addHook('onSend', async (_request, reply) => void reply.header('cache-control', 'no-store'));

  scope.get('/api/trash', { ...user, schema: SCHEMAS.list }, async (request) => ({ items: (await trash.list(caller(request))).map(trashView) }));
  scope.get('/api/trash/hashes', { ...user, schema: SCHEMAS.hashes }, async (request) => ({ files: await trash.hashes(caller(request)) }));
  scope.post('/api/trash/:id/restore', { ...user, schema: SCHEMAS.restore }, async (request) => ({ path: await trash.restore(caller(request), id(request)) }));
  scope.delete('/api/trash/:id', { ...user, schema: SCHEMAS.remove }, async (request, reply) => {
    await trash.remove(caller(request), id(request));
    return reply.code(204).send();
  });
  scope.delete('/api/trash', { ...user, schema: SCHEMAS.empty }, async (request, reply) => {
    await trash.empty(caller(request));
    return reply.code(204).send();
  });
}
