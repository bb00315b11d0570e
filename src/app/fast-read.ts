import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { SHARE_LINK, STORAGE_READ, type Resource } from '../domain/access.js';
import { fileMayAnswer, firstStep, type ReadAddress } from '../domain/read-address.js';
import { parseStoragePath } from '../domain/storage-path.js';
import { asksForPart } from '../lib/conditional.js';
import { fileHeaderFields } from '../http/file-headers.js';
import { sendBody } from '../http/send-body.js';
import { EVERY_ANSWER_HEADERS, SHARE_ANSWER_HEADERS, SHARE_API_HEADERS, STORAGE_ANSWER_HEADERS } from '../http/security-headers.js';
import { splitShareUrl } from '../http/url.js';
import { decodeSharePath } from '../services/shares.js';
import type { Operations } from '../services/operations.js';
import type { Entry, Opened } from '../storage/backend.js';
import { authorize, headerCount, type AuthDeps } from './auth-plugin.js';
import { remember, rememberVisit } from './handed-on.js';
import { fastAnswering, type FastAnswerDeps, type FastPath } from './fast-answer.js';
import { dependencyErrorIn } from '../lib/dependency-error.js';

/** Takes a request or hands it on (to Fastify) untouched. */
export type FastRead = FastPath;

/** The longest storage path Fastify's router takes (its maxParamLength); longer ones are its to refuse. */
const MAX_PARAM_LENGTH = 8192;

/**
 * The small-read fast path: an authorized GET or HEAD of a file under
 * /storage/, or under a share link's /share/, answered on node:http without
 * Fastify's request machinery (routing, schema, hooks, reply
 * serialization; what that saves: docs/performance.md, optimization 15). It is an adapter
 * over the same functions — `authorize` of auth-plugin.ts (the authenticator
 * chain, the grant and `decide`) under the route's own rule (with its visitor count for share links), the path
 * parsers, the files and share services, the headers of serve-file.ts and
 * the security headers — and takes only requests where those rules are all
 * there is to apply:
 *
 * - GET or HEAD without a Range or conditional header, at most one
 *   Authorization header, Host present on HTTP/1.1;
 * - `<base>/storage/<path>` without a trailing slash and no query but
 *   `?token=` (a path token); a credential that authenticates and is
 *   allowed; a path that is a file;
 * - `<base>/share/<id>[/<path>]` without a query, of a live link without a
 *   download limit (a limited link's count is an exact database update:
 *   Fastify's), unlocked if it has a password, leading to a file.
 *
 * Anything else — a folder, a 401, a 404, a malformed path, ?download,
 * a range — goes to Fastify, which answers it, checking the credential again
 * (the fast path has no side effects but a session's last-use mark, which
 * Fastify's check would make as well) but taking what the store already
 * said about the path and the visitor count (handed-on.ts) instead of
 * asking or counting twice. The access log line is Fastify's, with
 * `fast: true`, and metrics count its answers under the route's pattern.
 * Off when a feature needs every request in Fastify: CORS and tracing.
 */
export function createFastRead(
  deps: FastAnswerDeps & {
    readonly basePath: string;
    readonly auth: AuthDeps;
    /** The one door: the file is read as the principal `authorize` found, as Fastify's route reads it. */
    readonly operations: Pick<Operations, 'as'>;
  },
): FastRead {
  // A throttle on a rule would be skipped here; it must be counted in Fastify's hook instead.
  if (STORAGE_READ.throttle?.length) throw new Error('the storage read rule has a throttle: the fast read path cannot apply it');
  if (SHARE_LINK.throttle?.some((t) => t !== 'visitor')) throw new Error('the share link rule has a throttle the fast read path cannot apply');
  const storagePrefix = `${deps.basePath}/storage/`;
  const sharePrefix = `${deps.basePath}/share/`;
  const { operations } = deps;
  const { shares } = deps.auth;
  const { addressOf, log, fail } = fastAnswering(deps);

  /** The 200 of a file: `opened` for a GET, none for a HEAD; `headers` are every answer's and the route's own security headers (STORAGE_SEND, SHARE_SEND). */
  function send(req: IncomingMessage, res: ServerResponse, route: string, entry: Entry, opened: Opened | undefined, headers: Record<string, string>, started: number): void {
    // One record, the file's fields first and then the others in their order (what spreading them all made, without the copies).
    const fields = fileHeaderFields(entry, false);
    fields['content-length'] = String(entry.size);
    res.writeHead(200, Object.assign(fields, headers));
    if (!opened) {
      res.end();
    } else if (opened.bytes) {
      res.end(opened.bytes);
    } else {
      // As Fastify does with a stream body: a read error after the headers can only cut the connection.
      sendBody(opened.stream, res);
      res.once('close', () => log(req, route, res.statusCode, started));
      return;
    }
    log(req, route, 200, started);
  }

  /** `<base>/storage/<raw>[?token=…]`: a user's file, by account or path token. */
  function storage(req: IncomingMessage, res: ServerResponse, raw: string, query: string | undefined, started: number): Answer | undefined {
    if (query !== undefined && (!query.startsWith('token=') || /[&%+#]/.test(query))) return undefined;
    let resource: Resource & { kind: 'storage' };
    try {
      resource = { kind: 'storage', ...parseStoragePath(raw) };
    } catch {
      return undefined;
    }
    const method = req.method as 'GET' | 'HEAD';
    // The route's own first step (src/domain/read-address.ts); only plain requests come this far.
    const address: ReadAddress = { method, plain: true, trailingSlash: resource.trailingSlash, linkItself: false };
    if (!fileMayAnswer(address)) return undefined;
    const credentials = { method, headers: req.headers, ip: addressOf(req), queryToken: query?.slice('token='.length) };
    return async () => {
      const { principal, denial } = await authorize(credentials, STORAGE_READ, resource, deps.auth);
      if (!principal || denial) return false;
      const ops = operations.as(principal);
      let opened: Opened | undefined;
      let entry: Entry | undefined;
      try {
        // A HEAD's entry takes the index's hash of these bytes (Repr-Digest), as a GET's open does.
        if (firstStep(address) === 'look') entry = await ops.withDigest(resource.key, await ops.stat(resource.key));
        else entry = (opened = await ops.readIfFile(resource.key))?.entry;
      } catch (error) {
        remember(req, { error });
        return false;
      }
      // A folder (a GET's open does not say which: its route stats it once).
      if (!entry?.isFile) {
        remember(req, { folder: entry });
        return false;
      }
      send(req, res, '/storage/*', entry, opened, STORAGE_SEND, started);
      return true;
    };
  }

  /** `<base>/share/<id>[/<raw path>]`: a file of a share link, for anyone holding the link. */
  function share(req: IncomingMessage, res: ServerResponse, raw: string, query: string | undefined, started: number): Answer | undefined {
    // ?download, ?zip, ?thumbnail: Fastify's.
    if (query !== undefined) return undefined;
    const resource: Resource = { kind: 'share', ...splitShareUrl(raw, '') };
    const method = req.method as 'GET' | 'HEAD';
    const ip = addressOf(req);
    // The route's throttle, counted once: Fastify's hook takes this count for a request handed on.
    const wait = deps.auth.visitors?.hit(ip, deps.auth.clock.now()) ?? 0;
    rememberVisit(req, wait);
    if (wait > 0) return undefined;
    const credentials = { method, headers: req.headers, ip, queryToken: undefined };
    return async () => {
      const { principal, denial } = await authorize(credentials, SHARE_LINK, resource, deps.auth);
      if (principal?.kind !== 'share' || denial || principal.share.maxDownloads !== undefined) return false;
      const sub = decodeSharePath(resource.rest);
      const address: ReadAddress = { method, plain: true, trailingSlash: sub.trailingSlash, linkItself: sub.segments.length === 0 };
      if (!fileMayAnswer(address)) return false;
      const ops = operations.as(principal);
      if (firstStep(address) === 'open') {
        const key = shares.fileKey(principal.share, sub.segments);
        const opened = key && (await ops.readIfFile(key));
        if (!opened) return false;
        shares.countWhole(principal.share);
        send(req, res, '/share/*', opened.entry, opened, SHARE_SEND, started);
        return true;
      }
      const place = await ops.openLink(sub.segments);
      if (!place.entry?.isFile) {
        remember(req, { share: place });
        return false;
      }
      send(req, res, '/share/*', await ops.withDigest(place.key, place.entry), undefined, SHARE_SEND, started);
      return true;
    };
  }

  return (req, res, next) => {
    const url = req.url ?? '';
    const h = req.headers;
    const method = req.method;
    if (method !== 'GET' && method !== 'HEAD') return next();
    const route = url.startsWith(storagePrefix) ? storage : url.startsWith(sharePrefix) ? share : undefined;
    if (!route) return next();
    if (asksForPart(h)) return next();
    if (req.httpVersionMinor === 1 && req.httpVersionMajor === 1 && h.host === undefined) return next();
    if (h.authorization !== undefined && headerCount(req.rawHeaders, 'authorization') > 1) return next();
    const prefix = route === storage ? storagePrefix : sharePrefix;
    const q = url.indexOf('?');
    const raw = q === -1 ? url.slice(prefix.length) : url.slice(prefix.length, q);
    if (raw.length > MAX_PARAM_LENGTH) return next();
    const started = performance.now();
    const answer = route(req, res, raw, q === -1 ? undefined : url.slice(q + 1), started);
    if (!answer) return next();
    answer().then(
      (answered) => answered || next(),
      // A missing file, a dead link, a bad key, a store error: Fastify's answer (and its log line) is the one that counts.
      (error: unknown) => {
        if (res.headersSent) return res.destroy();
        // Except a database or Redis that does not answer: Fastify would wait for it once more (the credential check) before its 503.
        if (dependencyErrorIn(error)) return fail(req, res, route === storage ? '/storage/*' : '/share/*', error, started);
        next();
      },
    );
  };
}

/** Whether a request was answered (else what the store said is left for Fastify's route, handed-on.ts). */
type Answer = () => Promise<boolean>;

/** A storage file's answer: every answer's security headers and the storage answer's. */
const STORAGE_SEND: Record<string, string> = { ...EVERY_ANSWER_HEADERS, ...STORAGE_ANSWER_HEADERS };
/** A share link's file: every answer's security headers, the storage answer's and the share scope's. */
const SHARE_SEND: Record<string, string> = { ...EVERY_ANSWER_HEADERS, ...SHARE_ANSWER_HEADERS, ...SHARE_API_HEADERS };

/** Request ids `req-1`, `req-2`, … as Fastify makes them, shared by Fastify and the fast path so ids stay unique per process. */
export function requestIds(): () => string {
  let next = 0;
  return () => {
    next = (next + 1) & 0x7fffffff;
    return `req-${next.toString(36)}`;
  };
}
