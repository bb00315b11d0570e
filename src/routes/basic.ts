import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, type ErrorCode } from '../domain/errors.js';
import { type Principal, type SessionPrincipal } from '../domain/principal.js';
import type { AccessRule } from '../domain/access.js';
import { parseStoragePath, type StorageKey } from '../domain/storage-path.js';
import { rawPath } from '../http/url.js';
import { clearCookie, parseCookies, setCookie } from '../http/cookies.js';
import { newNonce, withNonce } from '../http/security-headers.js';
import { bodyLeftUnread, logFailure, toAppError } from '../http/error-handler.js';
import { uploadParts } from './upload-parts.js';
import type { AuthService } from '../services/auth.js';
import type { Operations } from '../services/operations.js';
import { pageNumber } from '../basic/format.js';
import { requestLocale } from '../http/language.js';
import { errorSentence, uiFor } from '../lib/i18n/ui.js';
import type { MessageKey } from '../lib/i18n/catalogs.js';
import type { MessageValues } from '../lib/i18n/translate.js';
import type { Html } from '../http/html.js';
import { deletePage, errorPage, folderPage, loginPage, renamePage, type Site, type Viewer } from '../basic/pages.js';
import {
  crossSiteProblem, type CrossSiteProblem, csrfToken, csrfValid, FLASH_COOKIE, SESSION_COOKIE, sessionCookieValue,
} from '../basic/session.js';
import { doneSentence, formFields } from '../basic/forms.js';
import { BASIC_CSS } from '../basic/style.js';
import { APP_ICON_SVG } from '../lib/app-icon.js';
import { applyFolderAction, childKey, type FolderAction } from '../services/folder-actions.js';
import { pageCounting } from '../services/folder-pages.js';
import { serveFile } from './serve-file.js';
import { BASIC_SCHEMAS } from './basic-schemas.js';

/** Entries per folder page: a 10 000-entry folder is 20 small pages, not one huge document. */
export const BASIC_PAGE_SIZE = 500;
const FORM_LIMIT = 64 * 1024;

/**
 * CSP of the basic pages: no script at all, our one style sheet named by
 * this answer's nonce (never 'self': a user's .css under /storage/ must not
 * style, or read by selectors, a page with a CSRF token), forms only to us,
 * never framed.
 */
export const basicCsp = (nonce: string): string => `default-src 'none'; style-src 'nonce-${nonce}'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`;

type UserPrincipal = SessionPrincipal;
const sessionOf = (p: Principal | null): SessionPrincipal | undefined => (p?.kind === 'user' && p.via === 'session' ? p : undefined);

/**
 * The no-JavaScript file manager at `<base>/basic/` (docs/web-ui.md):
 * server-rendered pages over the same operation layer as /storage/, with a
 * cookie session (an ordinary session row; the cookie holds its refresh
 * token) and a CSRF token on every form.
 *
 * URLs: `/basic/<path>/` is a folder page (always a trailing slash),
 * `/basic/file/<path>` downloads a file (never a trailing slash), and
 * `/basic/login`, `/basic/logout`, `/basic/style.css`, `/basic/icon.svg` are single segments
 * without a slash, so no file or folder name can collide with them.
 * State changes are POSTs to the folder's URL, answered with 303 to its page.
 */
export async function basicRoutes(
  scope: FastifyInstance,
  deps: { auth: AuthService; operations: Operations; secret: Buffer; basePath: string; publicUrl: string; ssoLabel?: string | undefined },
): Promise<void> {
  const { auth } = deps;
  const root = `${deps.basePath}/basic/`;
  const siteFor = (request: FastifyRequest): Site => ({ root, ui: uiFor(requestLocale(request.headers)) });
  const sso = deps.ssoLabel === undefined ? undefined : { href: `${deps.basePath}/auth/oidc/login?to=basic`, label: deps.ssoLabel };
  const publicHost = deps.publicUrl ? new URL(deps.publicUrl).host : undefined;
  const secure = (request: FastifyRequest) => request.protocol === 'https' || deps.publicUrl.startsWith('https:');
  const cookieOpts = (request: FastifyRequest) => ({ path: root, secure: secure(request) });

  /**
   * An error these pages raise themselves, worded in the reader's language; an error from below (the
   * operations) has an English sentence, which another language replaces with its catalog's sentence
   * for the error's code.
   */
  const worded = new WeakSet<Error>();
  const refusal = (request: FastifyRequest, code: ErrorCode, key: MessageKey, values?: MessageValues): AppError => {
    const e = new AppError(code, siteFor(request).ui.t(key, values));
    worded.add(e);
    return e;
  };
  const sentenceOf = (request: FastifyRequest, e: AppError): string => (worded.has(e) ? e.message : errorSentence(siteFor(request).ui, e));
  const crossSiteText = (request: FastifyRequest, p: CrossSiteProblem): string => {
    const { t } = siteFor(request).ui;
    return p.why === 'site' ? t('basic.crossSite', { site: p.site }) : p.why === 'origin_not_url' ? t('basic.originNotUrl') : t('basic.otherOrigin');
  };

  // Forms arrive urlencoded (small, parsed here) or as multipart uploads (left unread for the files service to stream).
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: FORM_LIMIT }, (_request, body, done) => done(null, formFields(body as string)));
  scope.addContentTypeParser('multipart/form-data', (_request, _payload, done) => done(null, undefined));
  scope.addContentTypeParser('*', (request, _payload, done) => done(refusal(request, 'unsupported_media_type', 'basic.formType')));

  // The cookie session is looked up by the authenticator chain (src/app/auth-plugin.ts); without one a page
  // redirects to the sign-in form itself. The style sheet needs no session: no database read for it.
  const pages = { config: { access: { who: 'cookie' } as AccessRule } };
  const open = { config: { access: { who: 'public' } as AccessRule } };
  const signIn = { config: { access: { who: 'public', throttle: ['login'] } as AccessRule } };
  scope.addHook('onSend', async (_request, reply, payload) => {
    reply.header('x-frame-options', 'DENY');
    // Not no-referrer (the app's default): with it browsers send "Origin: null" on our own forms, and the
    // origin check would learn nothing. Same-origin still gives other sites no Referer.
    reply.header('referrer-policy', 'same-origin');
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
    // A download keeps the storage sandbox CSP it set; a page gets ours, with its nonce.
    if (reply.hasHeader('content-security-policy')) return payload;
    const nonce = newNonce();
    reply.header('content-security-policy', basicCsp(nonce));
    return typeof payload === 'string' ? withNonce(payload, nonce) : payload;
  });
  scope.setErrorHandler((err, request, reply) => {
    const e = toAppError(err);
    logFailure(request.log, e, err);
    reply.code(e.status).headers(e.headers);
    if (e.code === 'too_large' && bodyLeftUnread(request)) reply.header('connection', 'close');
    // A download's headers may be set already; an error page is a page.
    reply.removeHeader('content-disposition').removeHeader('content-security-policy').removeHeader('etag').removeHeader('last-modified').removeHeader('cache-control');
    const user = sessionOf(request.principal);
    return page(reply, errorPage(siteFor(request), e.status, sentenceOf(request, e), { viewer: user && viewerOf(user), back: folderBack(request) }), e.status);
  });

  const viewerOf = (p: UserPrincipal): Viewer => ({ username: p.username, csrf: csrfToken(deps.secret, p.sessionId) });
  const page = (reply: FastifyReply, body: Html, status = 200) => reply.code(status).type('text/html; charset=utf-8').send(body.value);

  /** The folder page to go back to after a refused form (a GET error's page may itself be what is missing). */
  const folderBack = (request: FastifyRequest): string | undefined => {
    const p = rawPath(request.url);
    return request.method === 'POST' && p.startsWith(root) && p.endsWith('/') ? p : undefined;
  };

  const flash = (reply: FastifyReply, request: FastifyRequest, message: string) =>
    reply.header('set-cookie', setCookie(FLASH_COOKIE, encodeURIComponent(message.length > 600 ? `${message.slice(0, 600)}…` : message), { ...cookieOpts(request), maxAge: 120 }));

  /** Reads and clears the one-time message of the last POST (POST/redirect/GET). */
  const takeFlash = (request: FastifyRequest, reply: FastifyReply): string | undefined => {
    const raw = parseCookies(request.headers.cookie).get(FLASH_COOKIE);
    if (raw === undefined) return undefined;
    reply.header('set-cookie', clearCookie(FLASH_COOKIE, cookieOpts(request)));
    try {
      return decodeURIComponent(raw) || undefined;
    } catch {
      return undefined;
    }
  };

  const signedIn = (request: FastifyRequest, reply: FastifyReply): UserPrincipal | undefined => {
    const p = sessionOf(request.principal);
    if (p) return p;
    // A page asked for (a bookmark, a link) is where the sign-in returns; a form's POST is not repeated.
    const back = request.method === 'GET' && safeNext(request.url) && request.url !== root ? `?next=${encodeURIComponent(request.url)}` : '';
    void reply.redirect(`${root}login${back}`, 303);
    return undefined;
  };

  /** Only our own pages are a place to return to after signing in: never another site (no open redirect). */
  const safeNext = (v: unknown): v is string =>
    typeof v === 'string' && v.length <= 2048 && v.startsWith(root) && !v.includes('//') && !/[\\\p{Cc}]/u.test(v);

  /** The one CSRF check: every POST but the login carries the session's token, from a page of ours. */
  const checkCsrf = (request: FastifyRequest, user: UserPrincipal) => {
    const problem = crossSiteProblem(request.headers as Record<string, string | undefined>, allowedHosts(request));
    if (problem) throw refusal(request, 'forbidden', 'basic.refusedReload', { problem: crossSiteText(request, problem) });
    const body = request.body as Record<string, string> | undefined;
    const token = body?.csrf ?? (request.query as Record<string, unknown>).csrf;
    if (!csrfValid(deps.secret, user.sessionId, token)) throw refusal(request, 'forbidden', 'basic.refusedToken');
  };
  const allowedHosts = (request: FastifyRequest) => [request.headers.host ?? '', ...(publicHost ? [publicHost] : [])];

  scope.get('/basic', { ...open, schema: BASIC_SCHEMAS.slashless }, async (_request, reply) => reply.redirect(root, 308));
  scope.get('/basic/style.css', { ...open, schema: BASIC_SCHEMAS.style }, async (_request, reply) => reply.type('text/css; charset=utf-8').header('cache-control', 'public, max-age=3600').send(BASIC_CSS));
  scope.get('/basic/icon.svg', { ...open, schema: BASIC_SCHEMAS.icon }, async (_request, reply) => reply.type('image/svg+xml').header('cache-control', 'public, max-age=3600').send(APP_ICON_SVG));

  scope.get('/basic/login', { ...pages, schema: BASIC_SCHEMAS.loginPage }, async (request, reply) => {
    const next = (request.query as Record<string, unknown>).next;
    if (sessionOf(request.principal)) return reply.redirect(safeNext(next) ? next : root, 303);
    return page(reply, loginPage(siteFor(request), { sso, notice: takeFlash(request, reply), next: safeNext(next) ? next : undefined }));
  });

  // Counted by the same throttle as /auth/login (before the body is read), and one message for a wrong
  // password and an unknown user.
  scope.post('/basic/login', { ...signIn, schema: BASIC_SCHEMAS.login }, async (request, reply) => {
    const problem = crossSiteProblem(request.headers as Record<string, string | undefined>, allowedHosts(request));
    if (problem) throw refusal(request, 'forbidden', 'basic.refused', { problem: crossSiteText(request, problem) });
    const body = (request.body ?? {}) as Record<string, string>;
    const username = (body.username ?? '').trim();
    const password = body.password ?? '';
    const totp = body.totp ?? '';
    const next = safeNext(body.next) ? body.next : undefined;
    const site = siteFor(request);
    const { t } = site.ui;
    if (!username || !password) return page(reply, loginPage(site, { sso, error: t('basic.loginMissing'), username, next }), 400);
    let session;
    try {
      session = await auth.startSession(username, password, totp, { client: request.headers['user-agent'], address: request.ip });
    } catch (e) {
      // One message for a wrong password, an unknown user and a wrong code: which one it was is not told.
      if (e instanceof AppError && e.code === 'invalid_credentials') {
        return page(reply, loginPage(site, { sso, error: totp.trim() ? t('basic.loginWrongWithCode') : t('basic.loginWrong'), username, next }), 401);
      }
      if (e instanceof AppError && e.code === 'totp_required') return page(reply, loginPage(site, { sso, error: t('basic.totpRequired'), username, next }), 401);
      throw e;
    }
    reply.header('set-cookie', setCookie(SESSION_COOKIE, sessionCookieValue(username, session.refreshToken), cookieOpts(request)));
    return reply.redirect(next ?? root, 303);
  });

  scope.post('/basic/logout', { ...pages, schema: BASIC_SCHEMAS.logout }, async (request, reply) => {
    const user = signedIn(request, reply);
    if (!user) return reply;
    checkCsrf(request, user);
    await auth.endSession(user.sessionId);
    reply.header('set-cookie', clearCookie(SESSION_COOKIE, cookieOpts(request)));
    flash(reply, request, siteFor(request).ui.t('basic.signedOut'));
    return reply.redirect(`${root}login`, 303);
  });

  /** What a URL below /basic/ addresses, as a key in the signed-in user's own tree. */
  const target = (request: FastifyRequest, user: UserPrincipal): { kind: 'folder' | 'file' | 'slashless'; key: StorageKey; rest: string } => {
    const rest = rawPath(request.url).slice(root.length);
    // The user segment is always the signed-in user's: no URL reaches another tree.
    const parse = (raw: string) => parseStoragePath(`${user.username}/${raw}`).key;
    if (rest === '' || rest.endsWith('/')) return { kind: 'folder', key: parse(rest), rest };
    if (rest.startsWith('file/')) return { kind: 'file', key: parse(rest.slice('file/'.length)), rest };
    return { kind: 'slashless', key: parse(rest), rest };
  };

  scope.get('/basic/*', { ...pages, schema: BASIC_SCHEMAS.page }, async (request, reply) => {
    const user = signedIn(request, reply);
    if (!user) return reply;
    const t = target(request, user);
    if (t.kind === 'slashless') return reply.redirect(`${root}${t.rest}/`, 302);
    const ops = deps.operations.as(user);
    const entry = await ops.stat(t.key);
    if (t.kind === 'file') {
      if (!entry.isFile) return reply.redirect(`${root}${t.rest.slice('file/'.length)}/`, 302);
      // The storage sandbox: a downloaded HTML file opened in place still runs no script in our origin.
      reply.header('content-security-policy', 'sandbox; default-src \'none\'');
      return serveFile(request, reply, ops, t.key, entry, { download: true, withBody: request.method !== 'HEAD' });
    }
    if (entry.isFile) return reply.redirect(`${root}file/${t.rest.replace(/\/$/, '')}`, 302);
    const viewer = viewerOf(user);
    const segments = t.key.segments;
    const query = request.query as Record<string, unknown>;
    for (const what of ['rename', 'delete'] as const) {
      const name = query[what];
      if (name === undefined) continue;
      const child = await ops.statOrThrow(childKey(t.key, name));
      return page(reply, what === 'rename' ? renamePage(siteFor(request), viewer, segments, child) : deletePage(siteFor(request), viewer, segments, child));
    }
    const notice = takeFlash(request, reply);
    // Only one page is rendered, so only one page of entries is held: the one asked for, and the
    // latest, which is shown when the page asked for lies beyond the last.
    const asked = pageNumber(query.page, Infinity, BASIC_PAGE_SIZE);
    const { wanted, latest, total } = await pageCounting(await ops.listSorted(t.key), asked, BASIC_PAGE_SIZE);
    const n = pageNumber(query.page, total, BASIC_PAGE_SIZE);
    const shown = n === asked ? wanted : latest;
    return page(reply, folderPage(siteFor(request), viewer, { segments, entries: shown, total, page: n, pageSize: BASIC_PAGE_SIZE, notice }));
  });

  scope.post('/basic/*', { ...pages, schema: BASIC_SCHEMAS.change }, async (request, reply) => {
    const user = signedIn(request, reply);
    if (!user) return reply;
    checkCsrf(request, user);
    const t = target(request, user);
    if (t.kind !== 'folder') throw refusal(request, 'bad_request', 'basic.notAFolderPage');
    const here = `${root}${t.rest}`;
    const body = (request.body ?? {}) as Record<string, string>;
    const action = (request.query as Record<string, unknown>).action === 'upload' ? 'upload' : body.action;
    const ops = deps.operations.as(user);
    let change: FolderAction;
    switch (action) {
      case 'upload':
        if (!/^multipart\/form-data\b/i.test(request.headers['content-type'] ?? '')) throw refusal(request, 'bad_request', 'basic.uploadType');
        change = { action, parts: uploadParts(request, ops.maxUploadBytes) };
        break;
      case 'mkdir':
      case 'delete':
        change = { action, name: body.name };
        break;
      case 'rename':
        change = { action, name: body.name, newName: body.new_name };
        break;
      default:
        throw refusal(request, 'bad_request', 'basic.unknownAction');
    }
    const done = await applyFolderAction(ops, t.key, change);
    flash(reply, request, doneSentence(siteFor(request).ui.t, done));
    return reply.redirect(here, 303);
  });
}
