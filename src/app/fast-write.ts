import type { IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';
import { STORAGE_WRITE, type Resource } from '../domain/access.js';
import { isRoot, parseStoragePath } from '../domain/storage-path.js';
import { EVERY_ANSWER_HEADERS, STORAGE_ANSWER_HEADERS } from '../http/security-headers.js';
import { dependencyErrorIn } from '../lib/dependency-error.js';
import { parseOrigin } from '../lib/write-origin.js';
import { collectingWritten } from '../lib/written-identities.js';
import { writtenAnswer } from '../routes/sync-fields.js';
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

/** Headers that ask the route for more than a plain write: conditions, a digest to check, a multipart body. */
const ROUTE_HEADERS = ['if-match', 'if-none-match', 'repr-digest', 'content-digest', 'transfer-encoding'] as const;

/**
 * The small-upload fast path: a plain raw PUT of a small file under /storage/, written and
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
 */
export function createFastWrite(
  deps: FastAnswerDeps & {
    readonly basePath: string;
    readonly auth: AuthDeps;
    /** The one door: the file is written as the principal `authorize` found, as Fastify's route writes it. */
    readonly operations: Pick<Operations, 'as'>;
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
  const { operations } = deps;
  const { addressOf, log, fail } = fastAnswering(deps);
  const headers = { 'content-type': 'application/json; charset=utf-8', ...EVERY_ANSWER_HEADERS, ...STORAGE_ANSWER_HEADERS };

  /** Whether the request is one this path takes (see above), from its line and headers alone. */
  function plain(req: IncomingMessage, url: string): boolean {
    const h = req.headers;
    if (url.indexOf('?') !== -1 || url.length - prefix.length > MAX_PARAM_LENGTH) return false;
    if (req.httpVersionMinor === 1 && req.httpVersionMajor === 1 && h.host === undefined) return false;
    if (h.authorization === undefined || headerCount(req.rawHeaders, 'authorization') > 1) return false;
    for (const name of ROUTE_HEADERS) if (h[name] !== undefined) return false;
    if (/^multipart\/form-data\b/i.test(h['content-type'] ?? '')) return false;
    if (parseOrigin(h['file-cloud-origin']) === 'invalid') return false;
    const length = h['content-length'];
    return length !== undefined && /^\d{1,7}$/.test(length) && Number(length) <= MAX_BODY;
  }

  return (req, res, next) => {
    const url = req.url ?? '';
    if (req.method !== 'PUT' || !url.startsWith(prefix) || !plain(req, url)) return next();
    let resource: Resource & { kind: 'storage' };
    try {
      resource = { kind: 'storage', ...parseStoragePath(url.slice(prefix.length)) };
    } catch {
      return next();
    }
    if (resource.trailingSlash || isRoot(resource.key)) return next();
    const { key } = resource;
    const declared = Number(req.headers['content-length']);
    const started = performance.now();
    deps.onUpload?.(req);
    // Whether this path answered (or the deadline did): after that nothing is handed on.
    let answered = false;
    watchDeadline(req, res, deps.deadlineMs, () => answered, (err) => {
      answered = true;
      deps.warn({ deadlineMs: deps.deadlineMs }, 'request deadline: answered 503 while the request waited for a service');
      res.setHeader('connection', 'close');
      fail(req, res, '/storage/*', err, started, STORAGE_ANSWER_HEADERS);
    });
    const handOn = () => {
      // Fastify arms its own deadline for the request.
      answerBegun(req);
      if (!answered && !res.headersSent) next();
    };
    const credentials = { method: 'PUT', headers: req.headers, ip: addressOf(req), queryToken: undefined };
    const write = collectingWritten(async () => {
      const { principal, denial } = await authorize(credentials, STORAGE_WRITE, resource, deps.auth);
      // A 401 or 403 is Fastify's to answer (with its challenge and audit actor), before any byte is read.
      if (!principal || denial) return undefined;
      const ops = operations.as(principal);
      if (ops.maxUploadBytes !== undefined && declared > ops.maxUploadBytes) return undefined;
      let entry;
      try {
        entry = await ops.writeFile(key, req, { sizeHint: declared });
      } catch (error) {
        remember(req, { error });
        return undefined;
      }
      return { entry, body: await writtenAnswer(ops, key, [{ key, entry }]) };
    });
    write
      .then(async (done) => {
        if (!done) return handOn();
        answerBegun(req);
        await deps.beforeAnswer();
        if (answered) return;
        answered = true;
        const body = JSON.stringify(done.body);
        res.writeHead(201, { ...headers, etag: done.entry.etag, 'content-length': String(Buffer.byteLength(body)) });
        res.end(body);
        log(req, '/storage/*', 201, started);
      })
      .catch((error: unknown) => {
        if (answered || res.headersSent) return;
        // The write is done or never began; a database or Redis that does not answer is the contract's 503 at once.
        if (dependencyErrorIn(error)) {
          answered = true;
          return fail(req, res, '/storage/*', error, started, STORAGE_ANSWER_HEADERS);
        }
        remember(req, { error });
        handOn();
      });
  };
}
