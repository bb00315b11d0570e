import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../domain/errors.js';
import type { RateLimiter } from '../app/login-throttle.js';
import type { Clock } from '../lib/clock.js';
import type { AuthService } from '../services/auth.js';
import { objectBody, optionalString, requiredString } from './body.js';

/** Login, refresh and logout: seed §4.1, §4.2, §5; CONTRACT "Authentication". */
export function authRoutes(app: FastifyInstance, deps: { auth: AuthService; throttle: RateLimiter | undefined; clock: Clock }): void {
  const bodyLimit = 64 * 1024;

  // Throttle before anything else, at onRequest: before the body is read or parsed, so
  // malformed and oversized attempts count too and a throttled body is never read. The
  // limit is on requests (seed §4.1).
  const throttle = async (request: FastifyRequest) => {
    const wait = (await deps.throttle?.hit(request.ip, deps.clock.now())) ?? 0;
    if (wait > 0) {
      throw new AppError('rate_limited', `Too many login attempts; try again in ${wait} seconds.`, { headers: { 'retry-after': String(wait) } });
    }
  };

  app.post('/auth/login', { bodyLimit, onRequest: throttle }, async (request, reply) => {
    const body = objectBody(request.body);
    const username = requiredString(body, 'username');
    const password = requiredString(body, 'password');
    const totp = optionalString(body, 'totp');
    reply.header('cache-control', 'no-store');
    return deps.auth.login(username, password, totp, { client: request.headers['user-agent'], address: request.ip });
  });

  app.post('/auth/refresh', { bodyLimit }, async (request, reply) => {
    const body = objectBody(request.body);
    const tokens = await deps.auth.refresh(requiredString(body, 'username'), requiredString(body, 'refresh_token'), { address: request.ip });
    reply.header('cache-control', 'no-store');
    return tokens;
  });

  app.post('/auth/logout', { bodyLimit }, async (request, reply) => {
    const body = objectBody(request.body);
    await deps.auth.logout(requiredString(body, 'username'), requiredString(body, 'refresh_token'));
    return reply.code(204).send();
  });
}
