import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { pipeline } from 'node:stream';
import { decide, STORAGE_READ, type Resource } from '../domain/access.js';
import { parseStoragePath } from '../domain/storage-path.js';
import { asksForPart } from '../http/conditional.js';
import { fileHeaderFields } from '../http/file-headers.js';
import { EVERY_ANSWER_HEADERS, STORAGE_ANSWER_HEADERS } from '../http/security-headers.js';
import type { FilesService } from '../services/files.js';
import type { Entry, Opened } from '../storage/backend.js';
import { authenticate, headerCount, type AuthDeps } from './auth-plugin.js';

/** Takes a request or hands it on (to Fastify) untouched. */
export type FastRead = (req: IncomingMessage, res: ServerResponse, next: () => void) => void;

/** The longest storage path Fastify's router takes (its maxParamLength); longer ones are its to refuse. */
const MAX_PARAM_LENGTH = 8192;

/**
 * The small-read fast path: an authorized GET or HEAD of a file under
 * /storage/, answered on node:http without Fastify's request machinery
 * (routing, schema, six hooks, reply serialization: a sixth of a 4 KiB
 * GET's CPU, 171 → 143 µs, docs/performance.md). It applies the same rules through
 * the same functions — the authenticator chain and `decide` of
 * auth-plugin.ts under the route's own rule, parseStoragePath, the files
 * service, the headers of serve-file.ts and the security headers — and
 * takes only requests where those rules are all there is to apply:
 *
 * - GET or HEAD of `<base>/storage/<path>` without a trailing slash, no
 *   query but `?token=` (a path token), no Range or conditional header, at
 *   most one Authorization header, Host present on HTTP/1.1;
 * - a credential that authenticates and is allowed; a path that is a file.
 *
 * Anything else — a folder, a 401, a 404, a malformed path, ?download,
 * a range — goes to Fastify, which answers it, checking the credential again
 * (the fast path has no side effects but a session's last-use mark, which
 * Fastify's check would make as well) but taking what the store already
 * said about the path (`learnedBefore`) instead of asking it twice.
 * The access log line is Fastify's, with `fast: true`, and metrics count
 * its answers under the route's pattern. Off when a feature needs every
 * request in Fastify: CORS and tracing.
 */
export function createFastRead(deps: {
  readonly basePath: string;
  readonly auth: AuthDeps;
  readonly files: FilesService;
  readonly accessLog: { info(fields: object, message: string): void };
  readonly nextRequestId: () => string;
  /** Called for every answer given here (metrics count them as Fastify's hook does for the others). */
  readonly onAnswer?: (req: IncomingMessage, statusCode: number, seconds: number) => void;
  /** --trust-proxy: the client address is the nearest proxy's X-Forwarded-For entry, as Fastify's request.ip. */
  readonly trustProxy: boolean;
}): FastRead {
  // A throttle on the rule would be skipped here; it must be counted in Fastify's hook instead.
  if (STORAGE_READ.throttle?.length) throw new Error('the storage read rule has a throttle: the fast read path cannot apply it');
  const prefix = `${deps.basePath}/storage/`;
  const { files, accessLog } = deps;

  const addressOf = (req: IncomingMessage): string => {
    const forwarded = req.headers['x-forwarded-for'];
    return (deps.trustProxy && typeof forwarded === 'string' ? nearestForwarded(forwarded) : undefined) ?? req.socket.remoteAddress ?? '';
  };

  function log(req: IncomingMessage, statusCode: number, started: number): void {
    deps.onAnswer?.(req, statusCode, (performance.now() - started) / 1000);
    accessLog.info(
      // `fast`: answered here, not by Fastify (what tells the two apart when reading a log or a test).
      { reqId: deps.nextRequestId(), req: { method: req.method, url: req.url, ip: addressOf(req) }, res: { statusCode }, responseTime: performance.now() - started, fast: true },
      'request completed',
    );
  }

  function send(req: IncomingMessage, res: ServerResponse, entry: Entry, opened: Opened | undefined, started: number): void {
    res.writeHead(200, { ...fileHeaderFields(entry, false), 'content-length': String(entry.size), ...EVERY_ANSWER_HEADERS, ...STORAGE_ANSWER_HEADERS });
    if (!opened) {
      res.end();
    } else if (opened.bytes) {
      res.end(opened.bytes);
    } else {
      // As Fastify does with a stream body: a read error after the headers can only cut the connection.
      pipeline(opened.stream, res, () => undefined);
      res.once('close', () => log(req, res.statusCode, started));
      return;
    }
    log(req, 200, started);
  }

  return (req, res, next) => {
    const url = req.url ?? '';
    const h = req.headers;
    const method = req.method;
    if ((method !== 'GET' && method !== 'HEAD') || !url.startsWith(prefix)) return next();
    if (asksForPart(h)) return next();
    if (req.httpVersionMinor === 1 && req.httpVersionMajor === 1 && h.host === undefined) return next();
    if (h.authorization !== undefined && headerCount(req.rawHeaders, 'authorization') > 1) return next();
    const q = url.indexOf('?');
    const raw = q === -1 ? url.slice(prefix.length) : url.slice(prefix.length, q);
    // Only `?token=<value>` as Fastify's query parser would read it (no escapes, no other parameter).
    const query = q === -1 ? undefined : url.slice(q + 1);
    if (query !== undefined && (!query.startsWith('token=') || /[&%+#]/.test(query))) return next();
    if (raw.length > MAX_PARAM_LENGTH || raw.endsWith('/')) return next();
    let resource: Resource & { kind: 'storage' };
    try {
      resource = { kind: 'storage', ...parseStoragePath(raw) };
    } catch {
      return next();
    }
    const started = performance.now();
    const credentials = { method, headers: h, ip: addressOf(req), queryToken: query?.slice('token='.length) };
    /** Whether the request was answered here; when not, what the store said is left for Fastify's route. */
    const answer = async (): Promise<boolean> => {
      const principal = await authenticate(credentials, STORAGE_READ, resource, deps.auth);
      if (!principal || decide(STORAGE_READ, principal, method, resource)) return false;
      let opened: Opened | undefined;
      let entry: Entry | undefined;
      try {
        if (method === 'HEAD') entry = await files.stat(resource.key);
        else entry = (opened = await files.readIfFile(resource.key))?.entry;
      } catch (error) {
        learned.set(req, { error });
        return false;
      }
      // A folder (a GET's open does not say which: its route stats it once).
      if (!entry?.isFile) {
        learned.set(req, { folder: entry });
        return false;
      }
      send(req, res, entry, opened, started);
      return true;
    };
    answer().then(
      (answered) => answered || next(),
      // A missing file, a bad key, a store error: Fastify's answer (and its log line) is the one that counts.
      () => (res.headersSent ? res.destroy() : next()),
    );
  };
}

/**
 * The entry the nearest proxy appended to X-Forwarded-For: the last one, spaces trimmed, empty
 * entries skipped (repeated headers arrive joined with ", "), as Fastify's trustProxy function
 * `hop === 0` makes request.ip; undefined without one (then the peer's own address counts).
 */
export function nearestForwarded(header: string): string | undefined {
  for (const entry of header.split(',').reverse()) {
    const trimmed = entry.replace(/^[ \t]+|[ \t]+$/g, '');
    if (trimmed !== '') return trimmed;
  }
  return undefined;
}

/**
 * What the fast path learned from the store about a request it handed on
 * (the authorized reader's path is a folder — with its entry when a HEAD's
 * stat gave one — or asking failed with `error`), so that
 * Fastify's route does not ask again: on S3 each question is a GetObject and
 * a listing, and every folder view and every 404 would pay it twice.
 */
export type Learned = { readonly folder: Entry | undefined } | { readonly error: unknown };
const learned = new WeakMap<IncomingMessage, Learned>();

/** What the fast path learned about `req` before handing it on, if it got as far as the store. */
export const learnedBefore = (req: IncomingMessage): Learned | undefined => learned.get(req);

/** Request ids `req-1`, `req-2`, … as Fastify makes them, shared by Fastify and the fast path so ids stay unique per process. */
export function requestIds(): () => string {
  let next = 0;
  return () => {
    next = (next + 1) & 0x7fffffff;
    return `req-${next.toString(36)}`;
  };
}
