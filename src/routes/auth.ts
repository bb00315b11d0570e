import type { FastifyInstance } from 'fastify';
import type { AccessRule } from '../domain/access.js';
import type { AuthService } from '../services/auth.js';
import { objectBody, optionalString, requiredString } from './body.js';
import { tokenSetView } from './views.js';
import { empty, errors, json, jsonBody, TokenSet, type RouteSchema } from '../http/schemas.js';

const credentials = (second: string, what: string) => jsonBody({
  type: 'object',
  required: ['username', second],
  properties: { username: { type: 'string' }, [second]: { type: 'string', description: what } },
});
const malformed = 'A missing field, a field of the wrong type, a body that is not a JSON object (`bad_request`), or not JSON at all (`invalid_json`).';
const noStore = { 'cache-control': { description: '`no-store`: tokens are never cached.', schema: { type: 'string' } } };

const loginSchema: RouteSchema = {
  summary: 'Sign in: username and password for a token set',
  description: 'Throttled per client address (--login-rate-limit, 10 a minute; lifted by --dev): every attempt counts, and the 11th in a minute is refused before its body is read.',
  tags: ['Authentication'],
  body: jsonBody({
    type: 'object',
    required: ['username', 'password'],
    properties: {
      username: { type: 'string' },
      password: { type: 'string', description: 'The account password.' },
      totp: { type: 'string', description: 'With TOTP on: the 6-digit code of the authenticator app, or one of the recovery codes.' },
    },
  }),
  response: {
    200: json('Signed in: a new session.', TokenSet, noStore),
    ...errors({
      400: malformed,
      401: 'Wrong password or unknown user (`invalid_credentials`), with the same body and timing for both; with TOTP on, no code (`totp_required`) or a wrong one (`invalid_credentials`).',
      413: 'The body is over 64 KiB.',
      429: 'Too many attempts from this address (`rate_limited`, with `Retry-After`).',
      503: 'Too many password checks queued at once (`unavailable`, with `Retry-After`).',
    }),
  },
};

const refreshSchema: RouteSchema = {
  summary: 'A new access token for a refresh token',
  description: 'The refresh token stays the same and its inactivity expiry slides forward; access tokens issued earlier stay valid until their own expiry.',
  tags: ['Authentication'],
  body: credentials('refresh_token', 'The refresh token of the session.'),
  response: {
    200: json('A token set with a new access token and the same refresh token.', TokenSet, noStore),
    ...errors({ 400: malformed, 401: 'A wrong, expired or revoked refresh token, or one of another user (`unauthorized`).', 413: 'The body is over 64 KiB.' }),
  },
};

const logoutSchema: RouteSchema = {
  summary: 'Sign out: end the session of a refresh token',
  description: "The session's refresh token and every access token issued from it stop working at once; the user's other sessions go on.",
  tags: ['Authentication'],
  body: credentials('refresh_token', 'The refresh token of the session to end.'),
  response: {
    204: empty('The session has ended.'),
    ...errors({ 400: malformed, 401: 'A wrong, expired or revoked refresh token (`unauthorized`).', 413: 'The body is over 64 KiB.' }),
  },
};

/** Login, refresh and logout: seed §4.1, §4.2, §5; CONTRACT "Authentication". */
export function authRoutes(app: FastifyInstance, deps: { auth: AuthService }): void {
  const bodyLimit = 64 * 1024;
  // The login throttle counts at onRequest, before the body is read or parsed, so malformed and
  // oversized attempts count too and a throttled body is never read. The limit is on requests (seed §4.1).
  const login: AccessRule = { who: 'public', throttle: ['login'] };
  const open: AccessRule = { who: 'public' };

  app.post('/auth/login', { bodyLimit, config: { access: login }, schema: loginSchema }, async (request, reply) => {
    const body = objectBody(request.body);
    const username = requiredString(body, 'username');
    const password = requiredString(body, 'password');
    const totp = optionalString(body, 'totp');
    reply.header('cache-control', 'no-store');
    return tokenSetView(await deps.auth.login(username, password, totp, { client: request.headers['user-agent'], address: request.ip }));
  });

  app.post('/auth/refresh', { bodyLimit, config: { access: open }, schema: refreshSchema }, async (request, reply) => {
    const body = objectBody(request.body);
    const tokens = await deps.auth.refresh(requiredString(body, 'username'), requiredString(body, 'refresh_token'), { address: request.ip });
    reply.header('cache-control', 'no-store');
    return tokenSetView(tokens);
  });

  app.post('/auth/logout', { bodyLimit, config: { access: open }, schema: logoutSchema }, async (request, reply) => {
    const body = objectBody(request.body);
    await deps.auth.logout(requiredString(body, 'username'), requiredString(body, 'refresh_token'));
    return reply.code(204).send();
  });
}
