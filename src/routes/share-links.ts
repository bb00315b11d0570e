import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../domain/errors.js';
import { rawPath } from '../http/url.js';
import { toAppError } from '../http/error-handler.js';
import { SHARE_LINK, type AccessRule, type Resource } from '../domain/access.js';
import { newNonce, SHARE_ANSWER_HEADERS, SHARE_API_HEADERS, withNonce } from '../http/security-headers.js';
import type { Principal } from '../domain/principal.js';
import { SHARE_COOKIE } from '../http/cookies.js';
import { lastSegment, multipartFiles } from '../http/multipart.js';
import type { FilesService, UploadPart } from '../services/files.js';
import type { StorageBackend } from '../storage/backend.js';
import { deadLink, subPathSegments, type LiveShare, type ShareService } from '../services/shares.js';
import { SHARE_ASSETS } from '../share-pages/assets.js';
import { deadLinkPage, filePage, folderPage, messagePage, notInSharePage, passwordPage, previewKind, SHARE_PAGE_SIZE, uploadPage } from '../share-pages/views.js';
import { pageNumber } from '../basic/format.js';
import { readJsonBody } from './json-body.js';
import { serveFile } from './serve-file.js';
import { sendListing } from './listing-reply.js';
import type { ListedEntry } from '../storage/backend.js';
import type { ThumbnailService } from '../services/thumbnails.js';
import { parseThumbnailSize } from '../thumbnails/sizes.js';
import { sendThumbnail } from './thumbnail-reply.js';
import { sendFolderZip, zipNames } from './zip-reply.js';
import { bytes, empty, errors, fileAnswers, FilesWritten, header, html, json, jsonBody, Listing, type JsonSchema, type ResponseSpec, type RouteSchema } from './schemas.js';

const FORM_LIMIT = 8 * 1024;
const TEXT_PREVIEW_BYTES = 64 * 1024;
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
  files: FilesService;
  /** For folder zips (sendFolderZip takes the backend). */
  backend: StorageBackend;
  basePath: string;
  thumbnails: ThumbnailService;
};

type SharePrincipal = Extract<Principal, { kind: 'share' }>;
const visitor = (request: FastifyRequest) => request.principal as SharePrincipal;
const restOf = (request: FastifyRequest) => (request.resource.kind === 'share' ? request.resource.rest : undefined);

/** The share link a URL under `<prefix>` (e.g. `/base/share/`) names: the share authenticator's input. */
const shareResource = (prefix: string) => (request: FastifyRequest): Resource => ({ kind: 'share', ...splitShareUrl(request.url, prefix) });

/** `<id>` and the raw rest after `<id>/` (undefined when there is no slash) from a URL under `<base><prefix>`. */
export function splitShareUrl(url: string, prefix: string): { id: string; rest: string | undefined } {
  const p = rawPath(url).slice(prefix.length);
  const slash = p.indexOf('/');
  return slash === -1 ? { id: p, rest: undefined } : { id: p.slice(0, slash), rest: p.slice(slash + 1) };
}

export function decodeSub(rest: string | undefined): { segments: string[]; trailingSlash: boolean } {
  if (rest === undefined || rest === '') return { segments: [], trailingSlash: true };
  let decoded: string;
  try {
    decoded = decodeURIComponent(rest);
  } catch {
    throw new AppError('invalid_path', 'The path is not valid percent-encoded UTF-8.');
  }
  return { segments: subPathSegments(decoded), trailingSlash: decoded.endsWith('/') };
}

const wantsFlag = (v: unknown) => v === '1' || v === 'true';

/**
 * Share links for visitors: the machine API under /share/<id>/ and the
 * public pages under /s/<id>/ (CONTRACT "Share links"). Both resolve the link
 * first; every dead link gives the same 404 body. No visitor ever names a
 * path outside the shared item: sub-paths are checked segment by segment
 * like storage paths and appended below the share's own key.
 */
export async function shareLinkRoutes(scope: FastifyInstance, deps: ShareLinkDeps): Promise<void> {
  const { shares, files, basePath } = deps;
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
    const secure = request.protocol === 'https' ? '; Secure' : '';
    reply.header('set-cookie', [`/s/`, `/share/`].map((root) => `${SHARE_COOKIE}=${value}; Path=${basePath}${root}${live.share.id}; Max-Age=${maxAge}; HttpOnly; SameSite=Lax${secure}`));
  };

  function uploadParts(request: FastifyRequest, sent: string[]): AsyncIterable<UploadPart> {
    const parts = multipartFiles(request.raw, request.headers, { maxFileBytes: files.maxUploadBytes });
    return (async function* () {
      for await (const part of parts) {
        const filename = lastSegment(part.filename);
        sent.push(filename);
        yield { filename, stream: part.stream };
      }
    })();
  }

  /** Writes a visitor's multipart upload into an upload-only share: new files only, never a replacement. */
  async function receive(request: FastifyRequest, live: LiveShare, segments: readonly string[]): Promise<string[]> {
    if (!/^multipart\/form-data\b/i.test(request.headers['content-type'] ?? '')) {
      throw new AppError('unsupported_media_type', 'Send the files as multipart/form-data.');
    }
    const sent: string[] = [];
    // A sub-path is a folder upload: new folders, never what exists there (shares.ts dropFolder).
    const target = await shares.dropFolder(live, segments);
    try {
      await files.writeParts(target.key, uploadParts(request, sent), { overwrite: false });
    } catch (e) {
      await target.abandon();
      throw e;
    }
    // The names as sent, not as stored: a collision suffix would tell the visitor what the folder holds.
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
      const sub = decodeSub(restOf(request));
      // Handed on by the fast read path after it looked: where the path leads stands.
      const learned = request.learnedBefore;
      const place = learned && 'share' in learned ? learned.share : await shares.open(visitor(request).share, sub.segments);
      return { ...place, ...sub };
    };

    const read = async (request: FastifyRequest, reply: FastifyReply, withBody: boolean) => {
      const { live, key, entry, segments, trailingSlash } = await open(request);
      if (!entry) throw new AppError('not_found', 'No file or folder exists at this path in the share.');
      const query = request.query as Record<string, unknown>;
      // Every answer that sends bytes of a file, a zip or a thumbnail counts bytes ÷ size of a download (docs/api.md).
      const charge = (bytes: number, size: number) => shares.charge(live.share, bytes, size);
      const thumbnail = parseThumbnailSize(query.thumbnail);
      if (thumbnail !== undefined) return sendThumbnail(request, reply, deps.thumbnails, key, entry, thumbnail, withBody, charge);
      if (!entry.isFile) {
        if (wantsFlag(query.zip)) {
          // Named after the folder, never after the owner.
          return sendFolderZip(request, reply, {
            backend: deps.backend,
            folder: key,
            names: zipNames(query.name),
            archiveName: segments.at(-1) ?? shares.displayName(live),
            charge,
          });
        }
        return sendListing(reply, files, key, withBody);
      }
      // A trailing slash addresses a folder; a file share's own address may carry one.
      if (trailingSlash && segments.length > 0) throw new AppError('not_found', 'No folder exists at this path.');
      return serveFile(request, reply, files, key, entry, {
        download: wantsFlag(query.download),
        withBody,
        charge,
      });
    };

    const readOpts = { exposeHeadRoute: false, config: { access: link, resource } };
    api.get('/share/*', { ...readOpts, schema: SHARE_SCHEMAS.read }, async (request, reply) => read(request, reply, true));
    api.head('/share/*', { ...readOpts, schema: SHARE_SCHEMAS.head }, async (request, reply) => read(request, reply, false));

    api.put('/share/*', { config: { access: link, resource }, schema: SHARE_SCHEMAS.upload }, async (request, reply) => {
      const { live, segments } = await open(request);
      const written = await receive(request, live, segments);
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
    const deadPage = deadLinkPage(basePath);
    pages.addHook('onSend', async (_request, reply, payload) => {
      const nonce = newNonce();
      reply.header('content-security-policy', sharePageCsp(nonce)).header('x-frame-options', 'DENY');
      return typeof payload === 'string' ? withNonce(payload, nonce) : payload;
    });
    pages.setErrorHandler((err, request, reply) => {
      const e = toAppError(err);
      if (e.status >= 500) request.log.error({ err: e.cause ?? err }, e.message);
      reply.code(e.status).headers(e.headers).header('cache-control', 'no-store').type('text/html; charset=utf-8');
      if (isDead(e)) return reply.send(deadPage);
      const title = e.status === 429 ? 'Too many requests' : e.status === 404 ? 'Not found' : 'Something went wrong';
      return reply.send(messagePage(basePath, title, e.message));
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

    // A page needs the link alive; it shows its own password form and drop zone.
    const page = { config: { access: { who: 'share', share: 'page', throttle: ['visitor'] } as AccessRule, resource: shareResource(prefix) } };
    const unlocked = (request: FastifyRequest) => visitor(request).unlocked;
    const open = async (request: FastifyRequest) => {
      const sub = decodeSub(restOf(request));
      const opened = await shares.open(visitor(request).share, sub.segments);
      const urls = { base: basePath, id: opened.live.share.id };
      return { ...opened, urls, rootName: shares.displayName(opened.live), ...sub };
    };

    pages.get('/s/*', { ...page, schema: SHARE_SCHEMAS.page }, async (request, reply) => {
      const { live, key, entry, urls, rootName, segments } = await open(request);
      if (!unlocked(request)) return html(reply, 401, passwordPage(urls));
      if (live.share.uploadOnly) {
        const n = Number((request.query as Record<string, unknown>).uploaded);
        const message = Number.isSafeInteger(n) && n > 0 ? (n === 1 ? '1 file uploaded. Thank you!' : `${n} files uploaded. Thank you!`) : undefined;
        return html(reply, 200, uploadPage({ urls, rootName, segments, message }));
      }
      if (!entry) return html(reply, 404, notInSharePage(urls));
      const preview = live.share.maxDownloads === undefined;
      if (!entry.isFile) {
        // A page at a time, read from the backend's sorted listing as a stream: only the page asked for
        // (or, past the end, the last one) is held, and reading stops one entry after it (which tells
        // whether a next page exists), so an anonymous visitor never makes the server hold a whole folder.
        const asked = pageNumber((request.query as Record<string, unknown>).page, Infinity, SHARE_PAGE_SIZE);
        let seen = 0;
        let shown: ListedEntry[] = [];
        let current: ListedEntry[] = [];
        let more = false;
        reading: for await (const listed of await files.listSorted(key)) {
          for (const e of listed) {
            if (seen === asked * SHARE_PAGE_SIZE) {
              more = true;
              break reading;
            }
            if (seen % SHARE_PAGE_SIZE === 0) current = [];
            current.push(e);
            seen++;
            shown = current;
          }
        }
        const page = Math.max(1, Math.ceil(seen / SHARE_PAGE_SIZE));
        return html(reply, 200, folderPage({ urls, rootName, segments, entries: shown, preview, page: { number: page, hasNext: more } }));
      }
      let text: { content: string; truncated: boolean } | undefined;
      if (preview && previewKind(entry.name) === 'text' && entry.size > 0) {
        const end = Math.min(entry.size, TEXT_PREVIEW_BYTES) - 1;
        const { stream } = await files.read(key, { start: 0, end });
        const chunks: Buffer[] = [];
        for await (const c of stream) chunks.push(c as Buffer);
        text = { content: new TextDecoder('utf-8').decode(Buffer.concat(chunks)), truncated: entry.size > TEXT_PREVIEW_BYTES };
      }
      const name = segments.length === 0 ? rootName : (segments[segments.length - 1] as string);
      return html(reply, 200, filePage({ urls, rootName, segments, name, size: entry.size, preview, text }));
    });

    pages.post('/s/:id/auth', { config: { access: passwordRule }, schema: SHARE_SCHEMAS.pageAuth }, async (request, reply) => {
      {
        const live = await shares.resolve((request.params as { id: string }).id);
        const urls = { base: basePath, id: live.share.id };
        const form = request.body as Record<string, string> | undefined;
        const password = typeof form?.password === 'string' ? form.password : '';
        if (password === '' || !(await shares.checkPassword(live.share, password))) {
          return html(reply, 401, passwordPage(urls, { error: 'That password is not right. Try again.' }));
        }
        setPasswordCookie(request, reply, live);
        return reply.code(303).header('cache-control', 'no-store').redirect(`${prefix}${live.share.id}/`, 303);
      }
    });

    // The no-JavaScript upload form of an upload-only link.
    pages.post('/s/*', { ...page, schema: SHARE_SCHEMAS.pagePost }, async (request, reply) => {
      const { live, urls, rootName, segments } = await open(request);
      if (!live.share.uploadOnly) throw new AppError('forbidden', 'This link does not accept uploads.');
      if (!unlocked(request)) return html(reply, 401, passwordPage(urls));
      let sent: string[];
      try {
        sent = await receive(request, live, segments);
      } catch (err) {
        const e = toAppError(err);
        if (e.status >= 500) throw err;
        if (!request.raw.complete) reply.header('connection', 'close');
        return html(reply, e.status, uploadPage({ urls, rootName, segments, error: e.message }));
      }
      const here = `${prefix}${live.share.id}/${segments.map(encodeURIComponent).join('/')}${segments.length ? '/' : ''}`;
      return reply.redirect(`${here}?uploaded=${sent.length}`, 303);
    });
  });
}

/** A small application/x-www-form-urlencoded body as an object (first value of each name). */
function readForm(stream: NodeJS.ReadableStream, limit: number): Promise<Record<string, string>> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    stream.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        stream.removeAllListeners('data');
        stream.resume();
        reject(new AppError('too_large', `The form is larger than ${limit} bytes.`, { headers: { connection: 'close' } }));
        return;
      }
      chunks.push(c);
    });
    stream.on('end', () => {
      const out = Object.create(null) as Record<string, string>;
      for (const [k, v] of new URLSearchParams(Buffer.concat(chunks).toString('utf8'))) if (!(k in out)) out[k] = v;
      resolve(out);
    });
    stream.on('error', () => reject(new AppError('bad_request', 'The request body could not be read.')));
  });
}

// ---------------------------------------------------------------- schemas (documentation: src/routes/schemas.ts)

const TAG = ['Share links'];
/** Visitors need no account; a password link needs its cookie. */
const visitorSecurity: RouteSchema['security'] = [{}, { shareCookie: [] }];
const sharePath = (what: string): JsonSchema => ({ type: 'object', properties: { '*': { type: 'string', description: what } } });
const apiPath = sharePath('`<id>/[<sub/path>]`: the share id, then a path inside a shared folder.');
const pagePath = sharePath('`<id>/[<sub/path>]` (a page), or `<id>/auth` for the password form.');
const dead = 'Unknown, expired, revoked or used-up link, deleted target, or nothing at the sub-path: one body for every cause (`not_found`).';
const visitorErrors = {
  400: 'A bad sub-path (`invalid_path`).',
  401: 'A password link without its cookie (`password_required`).',
  404: dead,
  429: 'Too many requests from this address (`rate_limited`, with `Retry-After`).',
};
const flagQuery: JsonSchema = {
  type: 'object',
  properties: {
    download: { type: 'string', enum: ['1', 'true'], description: 'A file as an attachment.' },
    zip: { type: 'string', enum: ['1', 'true'], description: 'A folder as a zip (counts as one download).' },
    name: { type: 'array', items: { type: 'string' }, description: 'With `zip`: only these entries.' },
  },
};
const readAnswers: Record<string, ResponseSpec> = {
  ...fileAnswers,
  200: {
    description: 'A folder listing (storage format), a file\'s bytes, or a folder zip. A file\'s first byte (200, or 206 from 0) or a zip counts one download.',
    content: { 'application/json': { schema: Listing }, 'application/zip': { schema: { type: 'string', contentMediaType: 'application/zip' } }, '*/*': { schema: { type: 'string' } } },
    headers: fileAnswers[200].headers,
  },
  ...errors({ ...visitorErrors, 416: 'The range is outside the file.' }),
};
const pageErrors = (when: Record<number, string>): Record<string, ResponseSpec> => {
  const out: Record<string, ResponseSpec> = {};
  for (const [status, description] of Object.entries(when)) out[status] = html(`${description} (an HTML page).`);
  return out;
};

const SHARE_SCHEMAS = {
  read: {
    summary: 'A shared file\'s bytes or a shared folder\'s listing (machine API)',
    description: 'Range, ETag and 304 as for storage. An upload-only link reads nothing.',
    tags: TAG,
    security: visitorSecurity,
    params: apiPath,
    querystring: flagQuery,
    response: readAnswers,
  },
  head: {
    summary: 'The headers of a shared file or folder listing (machine API)',
    tags: TAG,
    security: visitorSecurity,
    params: apiPath,
    querystring: flagQuery,
    response: readAnswers,
  },
  upload: {
    summary: 'Upload files through an upload-only link',
    description: 'As a multipart PUT to storage, but never replaces: a taken name gets a collision suffix. The answer names the files as sent.',
    tags: TAG,
    security: visitorSecurity,
    params: apiPath,
    body: { required: true, content: { 'multipart/form-data': { schema: { type: 'object', additionalProperties: { type: 'string', contentMediaType: 'application/octet-stream' } } } } },
    response: {
      201: json('Written.', FilesWritten),
      ...errors({
        ...visitorErrors,
        400: 'A bad sub-path or file name, or no file part (`invalid_path`, `invalid_name`, `bad_request`).',
        403: 'The link is not upload-only (`forbidden`).',
        413: 'Over --max-upload-size (`too_large`).',
        415: 'Not multipart/form-data (`unsupported_media_type`).',
        507: 'No space left, or over the owner\'s quota.',
      }),
    },
  },
  auth: {
    summary: 'Unlock a password link: POST /share/<id>/auth',
    description: 'Throttled like the login. Only `<id>/auth` takes POST; any other path under /share/ answers 405.',
    tags: TAG,
    security: [],
    params: apiPath,
    body: jsonBody({ type: 'object', required: ['password'], properties: { password: { type: 'string' } } }),
    response: {
      204: empty('Right password: an HttpOnly cookie valid for this share (for /share/<id> and /s/<id>).', { 'set-cookie': header('`fc_share=…; Path=<base>/share/<id>; HttpOnly; SameSite=Lax` (and for /s/<id>).') }),
      ...errors({
        400: 'No `password` string in a JSON body (`bad_request`, `invalid_json`).',
        401: 'A wrong password (`invalid_credentials`).',
        404: dead,
        405: 'POST to another path than `<id>/auth` (`method_not_allowed`, with `Allow: GET, HEAD, PUT`).',
        413: 'The body is over 64 KiB.',
        429: 'Too many password attempts from this address (`rate_limited`, with `Retry-After`).',
      }),
    },
  },
  asset: {
    summary: 'A style sheet or script of the share pages',
    tags: TAG,
    security: [],
    params: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } },
    response: { 200: bytes('The asset.', ['text/css', 'text/javascript']), 304: empty('Not modified (`If-None-Match`).'), ...pageErrors({ 400: 'Malformed request', 404: 'No such asset', 429: 'Too many requests' }) },
  },
  page: {
    summary: 'The share page for people without an account: /s/<id>/…',
    description: 'A file: name, size, download and preview; a folder: browsable a page of 200 entries at a time (`?page=N`, next and previous links), with per-file downloads and "download all"; an upload-only link: a drop zone; a password link: the password form. Works without JavaScript.',
    tags: TAG,
    security: visitorSecurity,
    params: pagePath,
    querystring: {
      type: 'object',
      properties: {
        uploaded: { type: 'integer', minimum: 1, description: 'After an upload: how many files arrived.' },
        page: { type: 'integer', minimum: 1, description: 'A folder\'s page (200 entries each; past the last, the last).' },
      },
    },
    response: { 200: html('The page.'), ...pageErrors({ 400: 'A bad sub-path, or a malformed request', 401: 'The password form', 404: 'The one dead-link page, or nothing at the sub-path', 429: 'Too many requests' }) },
  },
  pageAuth: {
    summary: 'The password form of a share page',
    description: 'A form field `password` sets the share cookie and sends the visitor on to the page.',
    tags: TAG,
    security: [],
    params: { type: 'object', required: ['id'], properties: { id: { type: 'string', description: 'The share id.' } } },
    body: { required: true, content: { 'application/x-www-form-urlencoded': { schema: { type: 'object', required: ['password'], properties: { password: { type: 'string' } } } } } },
    response: {
      303: empty('Unlocked: to the share page.', { location: header('The share page.') }),
      ...pageErrors({ 400: 'Malformed request', 401: 'The password form again (wrong password)', 404: 'The one dead-link page', 413: 'The form is too large', 429: 'Too many requests or password attempts' }),
    },
  },
  pagePost: {
    summary: 'The no-JavaScript upload form of a share page',
    description: "A multipart post to an upload-only link's page uploads files.",
    tags: TAG,
    security: visitorSecurity,
    params: pagePath,
    body: { required: true, content: { 'multipart/form-data': { schema: { type: 'object', additionalProperties: { type: 'string', contentMediaType: 'application/octet-stream' } } } } },
    response: {
      303: empty('Uploaded: to the page with `?uploaded=<n>`.', { location: header('The page to show next.') }),
      ...pageErrors({
        400: 'The upload page with what was wrong with the upload',
        401: 'The password form',
        403: 'The link is not upload-only',
        404: 'The one dead-link page',
        413: 'The upload page: over the size limit',
        429: 'Too many requests',
      }),
    },
  },
} satisfies Record<string, RouteSchema>;
