import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AccessRule } from '../domain/access.js';
import type { UserPrincipal } from '../domain/principal.js';
import type { ApiKeyService } from '../services/api-keys.js';
import { objectBody } from './body.js';

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

  app.post('/api/keys', { bodyLimit: 64 * 1024, config }, async (request, reply) => {
    const body = objectBody(request.body);
    const created = await keys.create(caller(request), { name: body.name, readOnly: body.read_only, expiresIn: body.expires_in });
    return reply.code(201).header('cache-control', 'no-store').send(created);
  });

  app.get('/api/keys', { config }, async (request, reply) => {
    reply.header('cache-control', 'no-store');
    return { keys: await keys.list(caller(request)) };
  });

  app.delete('/api/keys/:id', { config }, async (request, reply) => {
    await keys.revoke(caller(request), (request.params as { id: string }).id);
    return reply.code(204).send();
  });
}
