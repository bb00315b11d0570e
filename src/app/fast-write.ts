import type { IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';
import { DAV_ACCESS, STORAGE_WRITE, type AccessRule, type Resource } from '../domain/access.js';
import type { Principal } from '../domain/principal.js';
import { isRoot, parseStoragePath, type StorageKey } from '../domain/storage-path.js';
import { DAV_PREFIX, parseDavPath } from '../dav/paths.js';
import { EVERY_ANSWER_HEADERS, STORAGE_ANSWER_HEADERS } from '../http/security-headers.js';
import { dependencyErrorIn } from '../lib/dependency-error.js';
import { parseOrigin } from '../lib/write-origin.js';
import { collectingWritten } from '../lib/written-identities.js';
import { writtenAnswer } from '../routes/sync-fields.js';
import { SHARED_WITH_ME } from '../routes/dav-shared.js';
import type { DavService } from '../services/dav.js';
import type { Operations } from '../services/operations.js';
import { authorize, headerCount, type AuthDeps } from './auth-plugin.js';
import { fastAnswering, type FastAnswerDeps, type FastPath } from './fast-answer.js';
import { remember } from './handed-on.js';
import { answerBegun, watchDeadline } from './request-deadline.js';

/**
 * The largest declared body taken here: the local backend writes a body up to this size whole,
 * without a stream (src/storage/local/write.ts, SMALL_BODY); a larger upload is Fastify's.
 */
const MAX_BODY = 256 * 1024;

/** The longest storage path Fastify's router takes (its maxParamLength); longer ones are its to refuse. */
const MAX_PARAM_LENGTH = 8192;

/** Headers that ask the route for more than a plain write: conditions (WebDAV's If too), a digest to check, a multipart body. */
const ROUTE_HEADERS = ['if', 'if-match', 'if-none-match', 'repr-digest', 'content-digest', 'transfer-encoding'] as const;

/** A WebDAV PUT with no If header: no lock token submitted, no state to compare (src/services/dav.ts). */
const NO_CONDITIONS = { header: undefined, tokens: new Set<string>(), resources: new Map<string, StorageKey | undefined>() };

/** The write's result; undefined when it failed, its error kept for Fastify's route to answer (handed-on.ts). */
async function handingOn<T>(req: IncomingMessage, write: () => Promise<T>): Promise<T | undefined> {
  try {
    return await write();
  } catch (error) {
    remember(req, { error });
    return undefined;
  }
}

/** What one door of the fast path takes: its route (as logged), rule, credentials and write. */
type Door = {
  readonly route: string;
  readonly rule: AccessRule;
  readonly auth: AuthDeps;
  /** The answer to a write as `principal`, or undefined to hand the request on untouched (nothing read yet). */
  readonly write: (principal: Principal, key: StorageKey, req: IncomingMessage, declared: number) => Promise<{ status: number; headers: Record<string, string>; body: string } | undefined>;
  /** The route's headers on every answer, errors included. */
  readonly headers: Record<string, string>;
};

/**
 * The small-upload fast path: a plain raw PUT of a small file under /storage/ (or a plain WebDAV
 * PUT under /dav/, below), written and
 * answered on node:http without Fastify's request machinery (routing, schema, hooks, reply
 * serialization; what that saves: docs/performance.md, "Small-file uploads"). As the fast read
 * path (fast-read.ts) it is an adapter over the route's own parts — `authorize` under the route's
 * rule (STORAGE_WRITE), the operation layer's `writeFile` as the principal it found (which asks
 * `decide` for the key and applies quota, versions, encryption and the change feed), the PUT
 * answer's sync fields (sync-fields.ts), the usage flush of Fastify's onSend hook, the security
 * headers, the request deadline — and takes only requests where those are all there is to apply:
 *
 * - PUT of `<base>/storage/<user>/<path>` naming a file (no trailing slash, not a user root), no query;
 * - exactly one Authorization header (that authenticates and is allowed), Host present on HTTP/1.1,
 *   a valid File-Cloud-Origin or none;
 * - a Content-Length of at most MAX_BODY (within --max-upload-size), no Transfer-Encoding, a
 *   content type that is not multipart/form-data, and none of If-Match, If-None-Match, Repr-Digest
 *   or Content-Digest.
 *
 * Anything else goes to Fastify untouched, before a byte of the body is read. A write that fails
 * (a quota, a folder in the way, a store error) is handed on too, with its error (handed-on.ts):
 * Fastify's route answers it, so every error answer, its headers and its log line are Fastify's
 * (but a database or Redis that does not answer, and the request deadline: the contract's 503 at
 * once, as the read path gives it, since Fastify would wait for the service again).
 *
 * A WebDAV PUT of a small file (`<base>/dav/<user>/<path>`, not `Shared with me`, no If header) is
 * taken the same way with WebDAV's rule (DAV_ACCESS) and written by the WebDAV service's `put`, which
 * keeps every WebDAV rule (its locks, its 409 for a missing parent, 201 or 204); a Basic credential
 * only when it is known without a password check (`known`, src/dav/basic-auth.ts), so a wrong
 * password is counted and audited once, by Fastify.
 */
export function createFastWrite(
  deps: FastAnswerDeps & {
    readonly basePath: string;
    readonly auth: AuthDeps;
    /** The one door: the file is written as the principal `authorize` found, as Fastify's route writes it. */
    readonly operations: Pick<Operations, 'as'>;
    /** WebDAV's rules for a PUT under /dav/ (its locks; the services' composition root's one instance). */
    readonly dav: Pick<DavService, 'put'>;
    /** Called for every upload taken here, as it begins (the metrics' uploads gauge, which Fastify's hook counts for the others). */
    readonly onUpload?: (req: IncomingMessage) => void;
    /** What Fastify's onSend hook waits for before a write's answer: its usage counted (build-app.ts). */
    readonly beforeAnswer: () => Promise<void>;
    /** --request-deadline in ms, and where its 503 is logged (request-deadline.ts). */
    readonly deadlineMs: number;
    readonly warn: (fields: object, message: string) => void;
  },
): FastPath {
  const prefix = `${deps.basePath}/storage/`;
  const davPrefix = deps.basePath + DAV_PREFIX;
  const { operations } = deps;
  const { addressOf, log, fail } = fastAnswering(deps);

  const storageHeaders = { 'content-type': 'application/json; charset=utf-8', ...EVERY_ANSWER_HEADERS, ...STORAGE_ANSWER_HEADERS };
  const storage: Door = {
    route: '/storage/*',
    rule: STORAGE_WRITE,
    auth: deps.auth,
    headers: STORAGE_ANSWER_HEADERS,
    async write(principal, key, req, declared) {
      const ops = operations.as(principal);
      if (ops.maxUploadBytes !== undefined && declared > ops.maxUploadBytes) return undefined;
      const entry = await handingOn(req, () => ops.writeFile(key, req, { sizeHint: declared }));
      if (!entry) return undefined;
      const body = JSON.stringify(await writtenAnswer(ops, key, [{ key, entry }]));
      return { status: 201, headers: { ...storageHeaders, etag: entry.etag }, body };
    },
  };
  // As the /dav/ scope's hooks add them (src/routes/dav.ts).
  const davHeaders = { dav: '1, 2', 'ms-author-via': 'DAV', ...STORAGE_ANSWER_HEADERS };
  const dav: Door = {
    route: '/dav/*',
    rule: DAV_ACCESS,
    auth: { ...deps.auth, basic: { ...deps.auth.basic, authenticate: deps.auth.basic.known } },
    headers: davHeaders,
    async write(principal, key, req, declared) {
      const put = await handingOn(req, () => deps.dav.put(key, req, { cond: NO_CONDITIONS, principal, declaredSize: declared }));
      if (!put) return undefined;
      const { created, etag } = put;
      // Fastify's: a 201 says its empty body's length, a 204 has none to say.
      const headers = { ...EVERY_ANSWER_HEADERS, ...davHeaders, ...(etag ? { etag } : {}) };
      return { status: created ? 201 : 204, headers: created ? { ...headers, 'content-length': '0' } : headers, body: '' };
    },
  };

  /** Whether the request is one this path takes (see above), from its line and headers alone. */
  function plain(req: IncomingMessage, url: string, base: string): boolean {
    const h = req.headers;
    if (url.indexOf('?') !== -1 || url.length - base.length > MAX_PARAM_LENGTH) return false;
    if (req.httpVersionMinor === 1 && req.httpVersionMajor === 1 && h.host === undefined) return false;
    if (h.authorization === undefined || headerCount(req.rawHeaders, 'authorization') > 1) return false;
    for (const name of ROUTE_HEADERS) if (h[name] !== undefined) return false;
    if (/^multipart\/form-data\b/i.test(h['content-type'] ?? '')) return false;
    if (parseOrigin(h['file-cloud-origin']) === 'invalid') return false;
    const length = h['content-length'];
    return length !== undefined && /^\d{1,7}$/.test(length) && Number(length) <= MAX_BODY;
  }

  /** The door and file a plain PUT names; undefined for anything the routes must see (a folder, a root, `Shared with me`). */
  function target(url: string): { door: Door; resource: Resource & { kind: 'storage' } } | undefined {
    try {
      if (url.startsWith(prefix)) {
        const { key, trailingSlash } = parseStoragePath(url.slice(prefix.length));
        return trailingSlash || isRoot(key) ? undefined : { door: storage, resource: { kind: 'storage', key, trailingSlash } };
      }
      const at = parseDavPath(url.slice(davPrefix.length));
      if (at.kind !== 'entry' || at.trailingSlash || isRoot(at.key) || at.key.user === SHARED_WITH_ME) return undefined;
      return { door: dav, resource: { kind: 'storage', key: at.key, trailingSlash: false } };
    } catch {
      return undefined;
    }
  }

  return (req, res, next) => {
    const url = req.url ?? '';
    if (req.method !== 'PUT') return next();
    const base = url.startsWith(prefix) ? prefix : url.startsWith(davPrefix) ? davPrefix : undefined;
    if (base === undefined || !plain(req, url, base)) return next();
    const taken = target(url);
    if (!taken) return next();
    const { door, resource } = taken;
    const { key } = resource;
    const declared = Number(req.headers['content-length']);
    const started = performance.now();
    if (door === storage) deps.onUpload?.(req);
    // Whether this path answered (or the deadline did): after that nothing is handed on.
    let answered = false;
    watchDeadline(req, res, deps.deadlineMs, () => answered, (err) => {
      answered = true;
      deps.warn({ deadlineMs: deps.deadlineMs }, 'request deadline: answered 503 while the request waited for a service');
      res.setHeader('connection', 'close');
      fail(req, res, door.route, err, started, door.headers);
    });
    const handOn = () => {
      // Fastify arms its own deadline for the request.
      answerBegun(req);
      if (!answered && !res.headersSent) next();
    };
    const credentials = { method: 'PUT', headers: req.headers, ip: addressOf(req), queryToken: undefined };
    const write = collectingWritten(async () => {
      const { principal, denial } = await authorize(credentials, door.rule, resource, door.auth);
      // A 401 or 403 is Fastify's to answer (with its challenge and audit actor), before any byte is read.
      if (!principal || denial) return undefined;
      return door.write(principal, key, req, declared);
    });
    write
      .then(async (done) => {
        if (!done) return handOn();
        answerBegun(req);
        await deps.beforeAnswer();
        if (answered) return;
        answered = true;
        res.writeHead(done.status, done.body === '' ? done.headers : { ...done.headers, 'content-length': String(Buffer.byteLength(done.body)) });
        res.end(done.body);
        log(req, door.route, done.status, started);
      })
      .catch((error: unknown) => {
        if (answered || res.headersSent) return;
        // The write is done or never began; a database or Redis that does not answer is the contract's 503 at once.
        if (dependencyErrorIn(error)) {
          answered = true;
          return fail(req, res, door.route, error, started, door.headers);
        }
        remember(req, { error });
        handOn();
      });
  };
}
