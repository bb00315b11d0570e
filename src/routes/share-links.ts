import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../domain/errors.js';
import { splitShareUrl } from '../http/url.js';
import { logFailure, toAppError } from '../http/error-handler.js';
import { SHARE_LINK, SHARE_PAGE, type AccessRule, type Resource } from '../domain/access.js';
import { fileMayAnswer } from '../domain/read-address.js';
import { newNonce, SHARE_ANSWER_HEADERS, SHARE_API_HEADERS, withNonce } from '../http/security-headers.js';
import type { Principal } from '../domain/principal.js';
import { setCookie, SHARE_COOKIE } from '../http/cookies.js';
import { uploadParts } from './upload-parts.js';
import { deadLink, decodeSharePath, type LiveShare, type ShareService } from '../services/shares.js';
import type { UploadPart } from '../services/files.js';
import { SHARE_ASSETS } from '../share-pages/assets.js';
import { deadLinkPage, filePage, folderPage, messagePage, notInSharePage, passwordPage, previewKind, SHARE_PAGE_SIZE, uploadPage } from '../share-pages/views.js';
import { pageNumber } from '../basic/format.js';
import { readJsonBody } from './json-body.js';
import { readForm } from '../http/form.js';
import { serveFile } from './serve-file.js';
import { sendListing } from './listing-reply.js';
import { pageUpTo } from '../services/folder-pages.js';
import { parseThumbnailSize } from '../thumbnails/sizes.js';
import { sendThumbnail } from './thumbnail-reply.js';
import type { Operations } from '../services/operations.js';
import { sendFolderZip, zipNames } from './zip-reply.js';
import { SHARE_SCHEMAS } from './share-link-schemas.js';
import { requestLocale } from '../http/language.js';
import { errorSentence, uiFor } from '../lib/i18n/ui.js';

const FORM_LIMIT = 8 * 1024;
const DEAD_MESSAGE = deadLink().message;

const isDead = (e: AppError) => e.code === 'not_found' && e.message === DEAD_MESSAGE;

/**
 * Content-Security-Policy of the public pages: our one script and style
 * sheet, named by this answer's nonce (never 'self': a shared .js or .css
 * under /share/ must not be one), media from our origin, nothing else.
 */
export function sharePageCsp(nonce: string): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src 'nonce-${nonce}'`,
    "img-src 'self'",
    "media-src 'self'",
    "frame-src 'self'",
    "connect-src 'self'",
    "form-action 'self'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

export type ShareLinkDeps = {
  shares: ShareService;
  /** The one door: a visitor reads and uploads as the link's principal; `decide` answers what the link allows (`ruleFor`, `visit`). */
  operations: Pick<Operations, 'as'>;
  basePath: string;
};

type SharePrincipal = Extract<Principal, { kind: 'share' }>;
const visitor = (request: FastifyRequest) => request.principal as SharePrincipal;
const restOf = (request: FastifyRequest) => (request.resource.kind === 'share' ? request.resource.rest : undefined);

/** The share link a URL under `<prefix>` (e.g. `/base/share/`) names: the share authenticator's input. */
const shareResource = (prefix: string) => (request: FastifyRequest): Resource => ({ kind: 'share', ...splitShareUrl(request.url, prefix) });

const wantsFlag = (v: unknown) => v === '1' || v === 'true';

/**
 * Share links for visitors: the machine API under /share/<id>/ and the
 * public pages under /s/<id>/ (CONTRACT "Share links"). Both resolve the link
 * first; every dead link gives the same 404 body. No visitor ever names a
 * path outside the shared item: sub-paths are checked segment by segment
 * like storage paths and appended below the share's own key.
 */
export async function shareLinkRoutes(scope: FastifyInstance, deps: ShareLinkDeps): Promise<void> {
  const { shares, basePath } = deps;
  // Every visitor request counts towards the per-address limit; password attempts also towards the
  // login throttle's shared counter (src/app/auth-plugin.ts applies both before anything else).
  const publicRule: AccessRule = { who: 'public', throttle: ['visitor'] };
  const passwordRule: AccessRule = { who: 'public', throttle: ['visitor', 'share-password'] };

  // Bodies are parsed here, by kind: JSON (password), a small form (password page), and
  // multipart uploads left unread for streaming.
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser('*', (request, payload, done) => {
    const type = request.headers['content-type'] ?? '';
    if (request.method !== 'POST' || /^multipart\//i.test(type)) return done(null, undefined);
    if (/^application\/x-www-form-urlencoded\b/i.test(type)) {
      readForm(payload, FORM_LIMIT).then((v) => done(null, v), (e: Error) => done(e));
      return;
    }
    readJsonBody(payload, FORM_LIMIT).then((v) => done(null, v), (e: Error) => done(e));
  });

  scope.addHook('onSend', async (_request, reply) => {
    reply.headers(SHARE_ANSWER_HEADERS);
  });

  /** The password cookie, once per URL root of the share, so it is sent to nothing else. */
  const setPasswordCookie = (request: FastifyRequest, reply: FastifyReply, live: LiveShare) => {
    const { value, maxAge } = shares.cookieFor(live.share);
    const secure = request.protocol === 'https';
    reply.header('set-cookie', [`/s/`, `/share/`].map((root) => setCookie(SHARE_COOKIE, value, { path: `${basePath}${root}${live.share.id}`, maxAge, secure })));
  };

  /** Writes a visitor's multipart upload below the link, through the layer; the names as sent. */
  async function receive(request: FastifyRequest, segments: readonly string[]): Promise<string[]> {
    if (!/^multipart\/form-data\b/i.test(request.headers['content-type'] ?? '')) {
      throw new AppError('unsupported_media_type', 'Send the files as multipart/form-data.');
    }
    const sent: string[] = [];
    const ops = deps.operations.as(visitor(request));
    const parts: AsyncIterable<UploadPart> = uploadParts(request, ops.maxUploadBytes, sent);
    await ops.uploadToLink(segments, parts);
    return sent;
  }

  // ---- Machine API: /share/<id>/[sub/path] ----
  await scope.register(async (api) => {
    const prefix = `${basePath}/share/`;
    api.addHook('onSend', async (_request, reply) => {
      // As for storage: a shared HTML or SVG file must never run script in our origin.
      reply.headers(SHARE_API_HEADERS);
    });

    // The link's kind (upload-only or not) and its password are checked by the access rule (domain/access.ts).
    // Plain GETs and HEADs of files of unlimited links are mostly answered before Fastify, under this same rule (src/app/fast-read.ts).
    const link = SHARE_LINK;
    const resource = shareResource(prefix);
    const open = async (request: FastifyRequest) => {
      const sub = decodeSharePath(restOf(request));
      // Handed on by the fast read path after it looked: where the path leads stands.
      const learned = request.learnedBefore;
      const place = learned && 'share' in learned ? learned.share : await deps.operations.as(visitor(request)).openLink(sub.segments);
      return { ...place, ...sub };
    };

    const read = async (request: FastifyRequest, reply: FastifyReply, withBody: boolean) => {
      const { live, key, entry, segments, trailingSlash } = await open(request);
      if (!entry) throw new AppError('not_found', 'No file or folder exists at this path in the share.');
      const query = request.query as Record<string, unknown>;
      const ops = deps.operations.as(visitor(request));
      // Every answer that sends bytes of a file, a zip or a thumbnail counts bytes ÷ size of a download (docs/api.md).
      const charge = (bytes: number, size: number) => shares.charge(live.share, bytes, size);
      const thumbnail = parseThumbnailSize(query.thumbnail);
      if (thumbnail !== undefined) return sendThumbnail(request, reply, ops, key, entry, thumbnail, withBody, charge);
      if (!entry.isFile) {
        if (wantsFlag(query.zip)) {
          // Named after the folder, never after the owner.
          return sendFolderZip(request, reply, { plan: (folder, opts) => ops.zip(folder, opts) }, {
            folder: key,
            names: zipNames(query.name),
            archiveName: segments.at(-1) ?? shares.displayName(live),
            charge,
          });
        }
        return sendListing(reply, ops, key, withBody);
      }
      if (!fileMayAnswer({ method: request.method, plain: false, trailingSlash, linkItself: segments.length === 0 })) throw new AppError('not_found', 'No folder exists at this path.');
      return serveFile(request, reply, ops, key, entry, {
        download: wantsFlag(query.download),
        withBody,
        charge,
      });
    };

    const readOpts = { exposeHeadRoute: false, config: { access: link, resource } };
    api.get('/share/*', { ...readOpts, schema: SHARE_SCHEMAS.read }, async (request, reply) => read(request, reply, true));
    api.head('/share/*', { ...readOpts, schema: SHARE_SCHEMAS.head }, async (request, reply) => read(request, reply, false));

    api.put('/share/*', { config: { access: link, resource }, schema: SHARE_SCHEMAS.upload }, async (request, reply) => {
      const written = await receive(request, decodeSharePath(restOf(request)).segments);
      return reply.code(201).send({ files_written: written });
    });

    api.post('/share/*', { config: { access: passwordRule }, schema: SHARE_SCHEMAS.auth }, async (request, reply) => {
      const { id, rest } = splitShareUrl(request.url, prefix);
      if (rest !== 'auth') throw new AppError('method_not_allowed', 'Use GET, HEAD or PUT here; POST only to /share/<id>/auth.', { headers: { allow: 'GET, HEAD, PUT' } });
      const live = await shares.resolve(id);
      const body = request.body;
      const password = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>).password : undefined;
      if (typeof password !== 'string') throw new AppError('bad_request', 'Send {"password": "..."} as JSON.');
      if (!(await shares.checkPassword(live.share, password))) throw new AppError('invalid_credentials', 'The password is not right.');
      setPasswordCookie(request, reply, live);
      return reply.code(204).header('cache-control', 'no-store').send();
    });
  });

  // ---- Public pages: /s/<id>/[sub/path] ----
  await scope.register(async (pages) => {
    const prefix = `${basePath}/s/`;
    const uiOf = (request: FastifyRequest) => uiFor(requestLocale(request.headers));
    pages.addHook('onSend', async (_request, reply, payload) => {
      const nonce = newNonce();
      reply.header('content-security-policy', sharePageCsp(nonce)).header('x-frame-options', 'DENY');
      return typeof payload === 'string' ? withNonce(payload, nonce) : payload;
    });
    pages.setErrorHandler((err, request, reply) => {
      const e = toAppError(err);
      logFailure(request.log, e, err);
      reply.code(e.status).headers(e.headers).header('cache-control', 'no-store').type('text/html; charset=utf-8');
      const ui = uiOf(request);
      if (isDead(e)) return reply.send(deadLinkPage(basePath, ui));
      // `decide`'s answer for a locked link (the auth hook's, or the layer's): its password form, and nothing else.
      if (e.code === 'password_required') return reply.send(passwordPage({ base: basePath, id: splitShareUrl(request.url, prefix).id, ui }));
      const title = ui.t(e.status === 429 ? 'share.tooMany' : e.status === 404 ? 'share.notFound' : 'share.wentWrong');
      return reply.send(messagePage(basePath, title, errorSentence(ui, e), ui));
    });

    pages.get('/s/_assets/:name', { config: { access: publicRule }, schema: SHARE_SCHEMAS.asset }, async (request, reply) => {
      const asset = SHARE_ASSETS[(request.params as { name: string }).name];
      if (!asset || !Object.hasOwn(SHARE_ASSETS, (request.params as { name: string }).name)) throw new AppError('not_found', 'No such file.');
      reply.header('content-type', asset.type).header('etag', asset.etag).header('cache-control', 'public, max-age=3600');
      if (request.headers['if-none-match'] === asset.etag) return reply.code(304).send();
      return reply.send(asset.body);
    });

    const html = (reply: FastifyReply, status: number, body: string) =>
      reply.code(status).header('cache-control', 'no-store').type('text/html; charset=utf-8').send(body);

    // A page needs the link alive and, first of all, its password (`decide`, SHARE_PAGE): a locked link's
    // page is its password form (the error handler above). What an unlocked page shows is the layer's answer.
    const page = { config: { access: SHARE_PAGE, resource: shareResource(prefix) } };
    const at = (request: FastifyRequest) => {
      const sub = decodeSharePath(restOf(request));
      return { ...sub, ops: deps.operations.as(visitor(request)), urls: { base: basePath, id: visitor(request).shareId, ui: uiOf(request) } };
    };

    pages.get('/s/*', { ...page, schema: SHARE_SCHEMAS.page }, async (request, reply) => {
      const { ops, urls, segments } = at(request);
      const visit = await ops.visit(segments);
      if (visit.may === 'upload') {
        const n = Number((request.query as Record<string, unknown>).uploaded);
        const message = Number.isSafeInteger(n) && n > 0 ? urls.ui.t('share.uploadedThanks', { count: n }) : undefined;
        return html(reply, 200, uploadPage({ urls, rootName: shares.displayName(visit.live), segments, message }));
      }
      const { live, key, entry } = visit.place;
      const rootName = shares.displayName(live);
      if (!entry) return html(reply, 404, notInSharePage(urls));
      const preview = live.share.maxDownloads === undefined;
      if (!entry.isFile) {
        // A page at a time, read from the backend's sorted listing as a stream: only the page asked for
        // (or, past the end, the last one) is held, and reading stops one entry after it (which tells
        // whether a next page exists), so an anonymous visitor never makes the server hold a whole folder.
        const asked = pageNumber((request.query as Record<string, unknown>).page, Infinity, SHARE_PAGE_SIZE);
        const { entries, number, hasNext } = await pageUpTo(await ops.listSorted(key), asked, SHARE_PAGE_SIZE);
        return html(reply, 200, folderPage({ urls, rootName, segments, entries, preview, page: { number, hasNext } }));
      }
      let text: { content: string; truncated: boolean } | undefined;
      if (preview && previewKind(entry.name) === 'text' && entry.size > 0) text = await ops.previewText(key, entry);
      const name = segments.length === 0 ? rootName : (segments[segments.length - 1] as string);
      return html(reply, 200, filePage({ urls, rootName, segments, name, size: entry.size, preview, text }));
    });

    pages.post('/s/:id/auth', { config: { access: passwordRule }, schema: SHARE_SCHEMAS.pageAuth }, async (request, reply) => {
      {
        const live = await shares.resolve((request.params as { id: string }).id);
        const urls = { base: basePath, id: live.share.id, ui: uiOf(request) };
        const form = request.body as Record<string, string> | undefined;
        const password = typeof form?.password === 'string' ? form.password : '';
        if (password === '' || !(await shares.checkPassword(live.share, password))) {
          return html(reply, 401, passwordPage(urls, { error: urls.ui.t('share.wrongPassword') }));
        }
        setPasswordCookie(request, reply, live);
        return reply.code(303).header('cache-control', 'no-store').redirect(`${prefix}${live.share.id}/`, 303);
      }
    });

    // The no-JavaScript upload form of an upload-only link (`decide` refused the others in the auth hook).
    pages.post('/s/*', { ...page, schema: SHARE_SCHEMAS.pagePost }, async (request, reply) => {
      const { ops, urls, segments } = at(request);
      const visit = await ops.visit(segments);
      if (visit.may !== 'upload') throw new AppError('forbidden', 'This link does not accept uploads.');
      let sent: string[];
      try {
        sent = await receive(request, segments);
      } catch (err) {
        const e = toAppError(err);
        if (e.status >= 500) throw err;
        if (!request.raw.complete) reply.header('connection', 'close');
        return html(reply, e.status, uploadPage({ urls, rootName: shares.displayName(visit.live), segments, error: errorSentence(urls.ui, e) }));
      }
      const here = `${prefix}${urls.id}/${segments.map(encodeURIComponent).join('/')}${segments.length ? '/' : ''}`;
      return reply.redirect(`${here}?uploaded=${sent.length}`, 303);
    });
  });
}
