import type { FastifyInstance } from 'fastify';
import { AppError } from '../domain/errors.js';
import type { ShareService } from '../services/shares.js';
import { objectBody, optionalBoolean, requiredString } from './body.js';
import { shareView } from './views.js';
import { empty, errors, json, jsonBody, Share, type RouteSchema } from '../http/schemas.js';
import { sentence } from '../lib/i18n/sentences.js';

const createSchema: RouteSchema = {
  summary: 'Create a share link',
  description: 'A link for people without an account: `/s/<id>` (pages) and `/share/<id>/` (machine API).',
  tags: ['Share links'],
  body: jsonBody({
    type: 'object',
    required: ['path'],
    properties: {
      path: { type: 'string', description: '`/<user>/<path>` of one of your files or folders.' },
      expires_in: { type: ['integer', 'null'], minimum: 1, default: 604800, description: 'Seconds until the link ends; `null`: never.' },
      password: { type: ['string', 'null'], description: 'Visitors must send it first (POST /share/<id>/auth).' },
      max_downloads: {
        type: ['integer', 'null'],
        minimum: 1,
        maximum: 1_000_000,
        description: 'Copies’ worth of bytes the link gives before it is used up (every answer counts bytes sent ÷ the file’s or zip’s size; Range, thumbnails and zips included); `null`: no limit.',
      },
      upload_only: { type: 'boolean', default: false, description: 'Folders only: visitors may upload new files and read nothing.' },
    },
  }),
  response: {
    201: json('The share link.', Share),
    ...errors({
      400: 'Not JSON (`invalid_json`), a missing or mistyped field, a bad path, `upload_only` on a file or with `max_downloads` (`bad_request`, `invalid_path`).',
      401: 'No valid access token, or a path that is not yours (`unauthorized`).',
      404: 'Nothing at the path (`not_found`).',
      413: 'The body is over 64 KiB.',
    }),
  },
};

const listSchema: RouteSchema = {
  summary: 'Your share links',
  tags: ['Share links'],
  response: {
    200: json('Your own live share links.', { type: 'object', required: ['shares'], properties: { shares: { type: 'array', items: Share } } }),
    ...errors({ 401: 'No valid access token (`unauthorized`).' }),
  },
};

const revokeSchema: RouteSchema = {
  summary: 'Revoke a share link',
  tags: ['Share links'],
  params: { type: 'object', required: ['id'], properties: { id: { type: 'string', description: 'The share id.' } } },
  response: {
    204: empty('Revoked: the link stops working at once.'),
    ...errors({ 401: 'No valid access token (`unauthorized`).', 404: 'No share link of yours has this id (`not_found`).' }),
  },
};

/** `null` or absent → that value; otherwise a number, else 400. */
function nullableInteger(body: Record<string, unknown>, field: string): number | null | undefined {
  const v = body[field];
  if (v === undefined || v === null) return v;
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw new AppError('bad_request', sentence('apiDetail.fieldWholeOrNull', { field }));
  return v;
}

function nullableString(body: Record<string, unknown>, field: string): string | null | undefined {
  const v = body[field];
  if (v === undefined || v === null) return v;
  if (typeof v !== 'string') throw new AppError('bad_request', sentence('apiDetail.fieldStringOrNull', { field }));
  return v;
}

/** The owner's side of share links: CONTRACT "Share links" (create, list, revoke). */
export function shareApiRoutes(scope: FastifyInstance, deps: { shares: ShareService; basePath: string }): void {
  const { shares } = deps;
  const user = { config: { access: { who: 'user' } as const } };

  scope.post('/api/shares', { ...user, bodyLimit: 64 * 1024, schema: createSchema }, async (request, reply) => {
    const body = objectBody(request.body);
    const created = await shares.create(request.principal!, {
      path: requiredString(body, 'path'),
      expiresIn: nullableInteger(body, 'expires_in'),
      password: nullableString(body, 'password'),
      maxDownloads: nullableInteger(body, 'max_downloads'),
      uploadOnly: optionalBoolean(body, 'upload_only'),
    });
    return reply.code(201).header('cache-control', 'no-store').send(shareView(created, deps.basePath));
  });

  scope.get('/api/shares', { ...user, schema: listSchema }, async (request, reply) => {
    reply.header('cache-control', 'no-store');
    return { shares: (await shares.list(request.principal!)).map((s) => shareView(s, deps.basePath)) };
  });

  scope.delete('/api/shares/:id', { ...user, schema: revokeSchema }, async (request, reply) => {
    await shares.revoke(request.principal!, (request.params as { id: string }).id);
    return reply.code(204).send();
  });
}
