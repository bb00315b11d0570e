import type { FastifyInstance } from 'fastify';
import type { AccessRule } from '../domain/access.js';
import type { AuthService } from '../services/auth.js';
import { objectBody, optionalString, requiredString } from './body.js';

/** Login, refresh and logout: seed §4.1, §4.2, §5; CONTRACT "Authentication". */
export function authRoutes(app: FastifyInstance, deps: { auth: AuthService }): void {
  const bodyLimit = 64 * 1024;
  // The login throttle counts at onRequest, before the body is read or parsed, so malformed and
  // oversized attempts count too and a throttled body is never read. The limit is on requests (seed §4.1).
  const login: AccessRule = { who: 'public', throttle: ['login'] };
  const open: AccessRule = { who: 'public' };

  app.post('/auth/login', { bodyLimit, config: { access: login } }, async (request, reply) => {
    const body = objectBody(request.body);
    const username = requiredString(body, 'username');
    const password = requiredString(body, 'password');
    const totp = optionalString(body, 'totp');
    reply.header('cache-control', 'no-store');
    return deps.auth.login(username, password, totp, { client: request.headers['user-agent'], address: request.ip });
  });

  app.post('/auth/refresh', { bodyLimit, config: { access: open } }, async (request, reply) => {
    const body = objectBody(request.body);
    const tokens = await deps.auth.refresh(requiredString(body, 'username'), requiredString(body, 'refresh_token'), { address: request.ip });
    reply.header('cache-control', 'no-store');
    return tokens;
  });

  app.post('/auth/logout', { bodyLimit, config: { access: open } }, async (request, reply) => {
    const body = objectBody(request.body);
    await deps.auth.logout(requiredString(body, 'username'), requiredString(body, 'refresh_token'));
    return reply.code(204).send();
  });
}
