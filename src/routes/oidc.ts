import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AccessRule } from '../domain/access.js';
import { AppError } from '../domain/errors.js';
import { logFailure, sendError, toAppError } from '../http/error-handler.js';
import { SESSION_COOKIE, sessionCookieValue } from '../basic/session.js';
import { setCookie } from '../http/cookies.js';
import { html as page } from '../http/html.js';
import { NONCE_SLOT, newNonce, withNonce } from '../http/security-headers.js';
import type { AuthService } from '../services/auth.js';
import type { OidcService, SignInTarget } from '../services/oidc.js';
import { basicCsp } from './basic.js';
import { objectBody, requiredString } from './body.js';
import { tokenSetView } from './views.js';
import { empty, ErrorBody, errors, header, json, jsonBody, type ResponseSpec } from '../http/schemas.js';
import { sentence } from '../lib/i18n/sentences.js';
import { requestLocale } from '../http/language.js';
import { errorSentence, uiFor } from '../lib/i18n/ui.js';

const TAG = ['Single sign-on'];
const open: AccessRule = { who: 'public' };
// The callback opens a session: the login throttle counts it as it counts /auth/login.
const signIn: AccessRule = { who: 'public', throttle: ['login'] };
const location = { location: header('Where to go.') };
const errorPages = (when: Record<number, string>): Record<string, ResponseSpec> => {
  const out: Record<string, ResponseSpec> = {};
  for (const [status, description] of Object.entries(when)) out[status] = { description: `${description}: an HTML page for a browser (Accept: text/html), else the JSON error body.`, content: { 'text/html': { schema: { type: 'string' } }, 'application/json': { schema: ErrorBody } } };
  return out;
};

const StatusBody = {
  type: 'object',
  required: ['enabled'],
  properties: {
    enabled: { type: 'boolean', description: 'Single sign-on is configured (--oidc-issuer).' },
    label: { type: 'string', description: 'The button reads "Sign in with <label>".' },
    only: { type: 'boolean', description: '--oidc-only: password sign-in is for local accounts only; the sign-in page goes to the provider at once.' },
    available: { type: 'boolean', description: 'The provider answered discovery; false while it is down (retried in the background).' },
    problem: { type: ['string', 'null'], description: 'Why it is not available.' },
  },
} as const;

/**
 * The status every sign-in page reads (`GET /auth/oidc/status`); with single sign-on off only
 * this, answering `{enabled: false}`.
 */
export function oidcStatusRoute(app: FastifyInstance, deps: { oidc: OidcService | undefined }): void {
  app.get('/auth/oidc/status', {
    config: { access: open },
    schema: { summary: 'Whether single sign-on is on, and its button', tags: TAG, response: { 200: json('The status.', StatusBody), ...errors({ 400: 'Malformed request.' }) } },
  }, async (_request, reply) => {
    reply.header('cache-control', 'no-store');
    return deps.oidc ? deps.oidc.status() : { enabled: false };
  });
}

/**
 * OpenID Connect sign-in (docs/api.md "Single sign-on"): the browser's round trip to the provider.
 * These answers are pages a person sees, so a failure is an HTML page with a way back to sign-in;
 * the hand-off to the web UI (POST /auth/oidc/session) answers JSON like /auth/login.
 */
export async function oidcRoutes(app: FastifyInstance, deps: { oidc: OidcService | undefined; auth: AuthService; basePath: string; publicUrl: string }): Promise<void> {
  const { basePath } = deps;
  // Registered with single sign-on off too (so the API document is one), answering 404 then.
  const service = (): OidcService => {
    if (!deps.oidc) throw new AppError('not_found', sentence('apiDetail.ssoNotConfigured'));
    return deps.oidc;
  };
  const origin = (request: FastifyRequest) => deps.publicUrl ? deps.publicUrl.slice(0, deps.publicUrl.length - basePath.length) : `${request.protocol}://${request.host}`;
  const callbackUrl = (request: FastifyRequest) => `${origin(request)}${basePath}/auth/oidc/callback`;
  const secure = (request: FastifyRequest) => request.protocol === 'https' || deps.publicUrl.startsWith('https:');

  await app.register(async (pages) => {
    pages.setErrorHandler((err, request, reply) => {
      // A browser on its way through the provider gets a page; anything else the contract's JSON body.
      if (!/\btext\/html\b/.test(request.headers.accept ?? '')) return sendError(request, reply, err);
      const e = toAppError(err);
      // The provider being down is reported once by the service (a warning), not again per visitor.
      if (e.code === 'unavailable') request.log.info({ code: e.code }, e.message);
      else logFailure(request.log, e, err);
      const nonce = newNonce();
      const ui = uiFor(requestLocale(request.headers));
      // The basic pages' style sheet and icon (so the browser asks for no /favicon.ico), without their
      // header: this page belongs to neither UI.
      const body = page`<!doctype html>
<html lang="${ui.locale}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${ui.t('ssoPage.title')} · File Cloud</title>
<link rel="stylesheet" nonce="${NONCE_SLOT}" href="${basePath}/basic/style.css">
<link rel="icon" href="${basePath}/basic/icon.svg" type="image/svg+xml">
</head>
<body>
<main>
<h1>${ui.t('ssoPage.title')}</h1>
<p class="error" role="alert">${errorSentence(ui, e)}</p>
<p><a href="${basePath}/login?sso_failed=1">${ui.t('ssoPage.back')}</a> · <a href="${basePath}/basic/login">${ui.t('login.basic')}</a></p>
</main>
</body>
</html>
`;
      return reply.code(e.status).headers(e.headers).header('cache-control', 'no-store').header('content-security-policy', basicCsp(nonce)).type('text/html; charset=utf-8').send(withNonce(body.value, nonce));
    });

    pages.get('/auth/oidc/login', {
      config: { access: open },
      schema: {
        summary: 'Sign in with the OpenID provider: a redirect to it',
        description: 'Starts the authorization code flow (PKCE, state, nonce); the state is kept in the database, so the callback may reach any node.',
        tags: TAG,
        querystring: { type: 'object', properties: { to: { type: 'string', enum: ['web', 'basic'], description: 'Where the signed-in browser goes: the web UI (default) or /basic/.' } } },
        response: { 302: empty('To the provider.', location), ...errorPages({ 400: 'Malformed request', 404: 'Single sign-on is not configured', 503: 'The provider cannot be reached (`Retry-After`)' }) },
      },
    }, async (request, reply) => {
      const to: SignInTarget = (request.query as { to?: string }).to === 'basic' ? 'basic' : 'web';
      reply.header('cache-control', 'no-store');
      return reply.redirect(await service().start(callbackUrl(request), to), 302);
    });

    pages.get('/auth/oidc/callback', {
      config: { access: signIn },
      schema: {
        summary: 'The provider returns here: signs in',
        description: 'Redeems the code, checks the ID token (signature, issuer, audience, expiry, nonce) and finds the account linked to its `sub` (or creates one). The web UI gets a one-time code in the URL fragment; /basic/ gets its session cookie.',
        tags: TAG,
        response: {
          302: empty('To `<base>/login#sso=<code>` (web UI) or `<base>/basic/` with the session cookie.', location),
          ...errorPages({
            400: 'No state, or a username claim that is no valid username',
            404: 'Single sign-on is not configured',
            401: 'Unknown, used or expired state; a code or ID token that does not check out',
            403: 'The provider refused; the account is disabled, belongs to another identity, or may not be created',
            429: 'Too many sign-ins from this address',
            503: 'The provider cannot be reached',
          }),
        },
      },
    }, async (request, reply) => {
      const query = new URLSearchParams(request.url.slice(request.url.indexOf('?') + 1 || request.url.length));
      const oidc = service();
      const { user, to } = await oidc.finish(query);
      reply.header('cache-control', 'no-store');
      const from = { client: request.headers['user-agent'], address: request.ip };
      if (to === 'basic') {
        const session = await deps.auth.startVerifiedSession(user, from);
        reply.header('set-cookie', setCookie(SESSION_COOKIE, sessionCookieValue(user.username, session.refreshToken), { path: `${basePath}/basic/`, secure: secure(request) }));
        return reply.redirect(`${basePath}/basic/`, 302);
      }
      // The fragment never reaches a server or a log; the code is good once, for a minute.
      return reply.redirect(`${basePath}/login#sso=${await oidc.handOff(user)}`, 302);
    });

    pages.get('/auth/oidc/logout', {
      config: { access: open },
      schema: {
        summary: "Sign out at the provider too (RP-initiated logout)",
        description: 'After the web UI ended its own session: to the provider\'s end-session endpoint, which returns to the sign-in page; without one, straight to the sign-in page.',
        tags: TAG,
        response: { 302: empty('To the provider or the sign-in page.', location), ...errorPages({ 400: 'Malformed request', 404: 'Single sign-on is not configured' }) },
      },
    }, async (request, reply) => {
      const back = `${origin(request)}${basePath}/login`;
      return reply.redirect(service().endSessionUrl(back) ?? `${basePath}/login`, 302);
    });
  });

  app.post('/auth/oidc/session', {
    bodyLimit: 4096,
    // Not counted again: the callback that made the code was (one sign-in, one attempt), and a
    // 256-bit code that is good once for a minute cannot be guessed.
    config: { access: open },
    schema: {
      summary: 'The web UI exchanges the callback\'s one-time code for a token set',
      tags: TAG,
      body: jsonBody({ type: 'object', required: ['code'], properties: { code: { type: 'string', description: 'The `sso` value of the callback\'s redirect fragment.' } } }),
      response: {
        200: json('Signed in: a new session, as from /auth/login.', { type: 'object', required: ['username', 'access_token', 'refresh_token', 'valid_for_seconds'], properties: { username: { type: 'string' }, access_token: { type: 'string' }, refresh_token: { type: 'string' }, valid_for_seconds: { type: 'integer' } } }),
        ...errors({ 400: 'No code, or not JSON.', 404: 'Single sign-on is not configured (`not_found`).', 401: 'An unknown, used or expired code (`unauthorized`).', 413: 'The body is over 4 KiB.' }),
      },
    },
  }, async (request, reply: FastifyReply) => {
    const code = requiredString(objectBody(request.body), 'code');
    reply.header('cache-control', 'no-store');
    const { username, ...tokens } = await service().redeem(code, { client: request.headers['user-agent'], address: request.ip });
    return { username, ...tokenSetView(tokens) };
  });
}
