import type { FastifyInstance } from 'fastify';
import { AppError } from '../domain/errors.js';
import type { ShareService } from '../services/shares.js';
import { objectBody, optionalBoolean, requiredString } from './body.js';

/** `null` or absent → that value; otherwise a number, else 400. */
function nullableInteger(body: Record<string, unknown>, field: string): number | null | undefined {
  const v = body[field];
  if (v === undefined || v === null) return v;
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw new AppError('bad_request', `The field "${field}" must be a whole number or null.`);
  return v;
}

function nullableString(body: Record<string, unknown>, field: string): string | null | undefined {
  const v = body[field];
  if (v === undefined || v === null) return v;
  if (typeof v !== 'string') throw new AppError('bad_request', `The field "${field}" must be a string or null.`);
  return v;
}

/** The owner's side of share links: CONTRACT "Share links" (create, list, revoke). */
export function shareApiRoutes(scope: FastifyInstance, deps: { shares: ShareService }): void {
  const { shares } = deps;
  const user = { config: { access: { who: 'user' } as const } };

  scope.post('/api/shares', { ...user, bodyLimit: 64 * 1024 }, async (request, reply) => {
    const body = objectBody(request.body);
    const created = await shares.create(request.principal!, {
      path: requiredString(body, 'path'),
      expiresIn: nullableInteger(body, 'expires_in'),
      password: nullableString(body, 'password'),
      maxDownloads: nullableInteger(body, 'max_downloads'),
      uploadOnly: optionalBoolean(body, 'upload_only'),
    });
    return reply.code(201).header('cache-control', 'no-store').send(created);
  });

  scope.get('/api/shares', user, async (request, reply) => {
    reply.header('cache-control', 'no-store');
    return { shares: await shares.list(request.principal!) };
  });

  scope.delete('/api/shares/:id', user, async (request, reply) => {
    await shares.revoke(request.principal!, (request.params as { id: string }).id);
    return reply.code(204).send();
  });
}
