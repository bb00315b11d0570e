import type { IncomingMessage } from 'node:http';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from '../config/options.js';
import type { StorageBackend } from '../storage/backend.js';
import type { MetadataStore } from '../store/metadata-store.js';
import { createServices, type ServiceOptions, type Services } from './services.js';
import { createBasicAuthenticator } from '../dav/basic-auth.js';
import { createVisitorLimiter } from './visitor-limit.js';
import type { createOperations, Operations } from '../services/operations.js';
import { installAuth, methodsFor } from './auth-plugin.js';
import { installRouteTable, type Answer } from './route-table.js';
import { empty, errors, type RouteSchema } from '../http/schemas.js';
import { installCors } from './cors.js';
import { accessLogOf } from './logger.js';
import { createFastRead, requestIds, type FastRead } from './fast-read.js';
import { createFastWrite } from './fast-write.js';
import { installHandedOn } from './handed-on.js';
import { EVERY_ANSWER_HEADERS } from '../http/security-headers.js';
import { AppError } from '../domain/errors.js';
import { clientErrorHandler } from '../http/client-error.js';
import { installErrorHandling, sendError } from '../http/error-handler.js';
import { answerBegun, armDeadline, waitsForServices } from './request-deadline.js';
import { parseOrigin } from '../lib/write-origin.js';
import { installAuditHook } from './audit-hook.js';
import { serverWithFastRead } from './http-server.js';
import { startBackgroundWork } from './leader-work.js';
import { registerFrontEnds } from './routes.js';

export { storageSweepIntervalMs } from './leader-work.js';

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Asks the leader for a rescan of storage into the search index and change journal, as after a
     * process died mid-write; a no-op on other processes and with --index-interval 0. With `after`
     * (epoch ms: when the dead process had certainly stopped), one that started at or after it serves.
     */
    requestRescan(opts?: { after?: number }): void;
    /** The operation layer every front end goes through, and what it is built on (tests build it again with a spy `decide`). */
    operations: { readonly layer: Operations; readonly deps: Parameters<typeof createOperations>[0] };
  }
}

/** The base path without its slash is the document's server URL itself, so it is no path of the document. */
const BASE_REDIRECT_SCHEMA: RouteSchema = {
  summary: 'The base path without its trailing slash: a redirect to the web UI',
  tags: ['Web UI'],
  hide: true,
  response: { 308: empty('To `<base path>/`.'), ...errors({ 400: 'Malformed request.' }) },
};

/** What the app runs on; the services' own options (clock, hasher, Redis, leadership …) are ServiceOptions'. */
export type AppDeps = Omit<ServiceOptions, 'log' | 'command' | 'secret'> & {
  readonly store: MetadataStore;
  readonly backend: StorageBackend;
  /** Key for path tokens (data/secret). */
  readonly secret: Buffer;
  readonly logger: Logger;
  /** Folder with the built web UI (index.html, assets/). */
  readonly webRoot?: string;
  /** The services, built by the caller (src/main.ts) when it needs one before the app exists; default: built here from these deps. */
  readonly services?: Services;
  /** Sees every answer of a route with its schema (tests check the schemas document what routes answer). */
  readonly checkAnswer?: (answer: Answer) => void;
};

/**
 * Builds the whole HTTP application without listening, so tests can use
 * `inject()` or `listen({ port: 0 })` on exactly what production runs.
 */
export async function buildApp(config: Config, deps: AppDeps): Promise<FastifyInstance> {
  const nextRequestId = requestIds();
  // Set once the services exist (below); until then, and when off, every request goes to Fastify.
  let fastRead: FastRead | undefined;
  const app = Fastify({
    genReqId: nextRequestId,
    // Fastify's own server, with the small-read fast path in front of its handler (fast-read.ts).
    serverFactory: serverWithFastRead(() => fastRead, { progress: waitsForServices(config) }),
    loggerInstance: deps.logger as FastifyBaseLogger,
    // Trust only the direct peer (our reverse proxy), so request.ip is the address it appended
    // to X-Forwarded-For; entries further left are client-supplied and forgeable.
    trustProxy: config.trustProxy ? (_address: string, hop: number) => hop === 0 : false,
    bodyLimit: 64 * 1024,
    clientErrorHandler,
    routerOptions: { maxParamLength: 8192 },
    frameworkErrors: (err, request, reply) => sendError(request, reply, err),
    // One log line per request (below) instead of Fastify's two: logging was over half the
    // CPU of a small GET (docs/performance.md).
    logController: new LogController({ disableRequestLogging: true }),
  });

  // First, before any route: every route registered from here on is in GET /api/openapi.json.
  const schemaTable = installRouteTable(app, { checkAnswer: deps.checkAnswer });

  const services = deps.services ?? createServices(config, deps.store, deps.backend, { ...deps, log: deps.logger });
  // Built in this order: storage events reach their subscribers in the order they subscribed, usage first.
  for (const name of ['storageUsage', 'trash', 'versions', 'files', 'zips', 'grants', 'operations', 'pathTokens', 'tus', 'shares', 'thumbnails', 'changes', 'search'] as const) void services[name];
  const { clock, auth, storageUsage, grants, operations, pathTokens, shares, changeWaker, throttle, audit } = services;
  const oidcSettings = await services.oidcSettings();
  const oidc = await services.oidc();
  app.decorate('operations', { layer: operations, deps: services.operationDeps });
  // The deployment's background work, on the process that leads (leader-work.ts).
  const background = startBackgroundWork(app, config, { store: deps.store, backend: deps.backend, services });

  installErrorHandling(app, methodsFor(app, config.basePath));
  // The request line holds only method, redacted URL, address, status and time, never a body or a
  // header (access-line.ts renders it; docs/performance.md, optimization 12).
  const accessLog = accessLogOf(deps.logger);
  // The hooks below do not run for the fast read path (fast-read.ts), which applies their rules
  // itself; a hook added here that must see every request turns it off (fastReadOff).
  app.addHook('onResponse', async (request, reply) => {
    accessLog.write({ reqId: request.id, method: request.method, url: request.url, remoteAddress: request.ip, statusCode: reply.statusCode, responseTime: reply.elapsedTime, fast: false });
  });
  const deadlineMs = config.requestDeadline * 1000;
  app.addHook('onRequest', async (request, reply) => {
    armDeadline(request, reply, deadlineMs);
  });
  app.addHook('onRequest', async (request) => {
    // RFC 9112 §3.2: an HTTP/1.1 request without Host is refused with 400.
    if (request.raw.httpVersion === '1.1' && request.headers.host === undefined) throw new AppError('bad_request', 'The Host header is required.');
    if (parseOrigin(request.headers['file-cloud-origin']) === 'invalid') throw new AppError('bad_request', 'File-Cloud-Origin must be 1 to 64 printable characters of a token (letters, digits, and !#$%&\'*+.^_`|~:/@-), given once.');
  });
  const metrics = config.metrics ? (await import('../ops/metrics.js')).createMetrics({ basePath: config.basePath }) : undefined;
  if (config.otlpEndpoint) {
    // Loaded only when configured: without an endpoint no OpenTelemetry code is imported.
    const { startTracing } = await import('../ops/tracing.js');
    const tracing = await startTracing({ endpoint: config.otlpEndpoint, basePath: config.basePath });
    tracing.install(app);
    app.addHook('onClose', async () => tracing.shutdown().catch((err: unknown) => app.log.warn({ err }, 'trace export at shutdown failed')));
  }
  metrics?.install(app);
  metrics?.changeStreams(() => changeWaker.stats);
  // Before auth: a preflight carries no token and is answered here; error answers keep the CORS headers.
  installCors(app, config.corsOrigin);
  const keys = services.keys;
  // The account-or-app-password check of a front end; each refusal an audit entry with its method.
  const passwordCheck = (method: 'webdav' | 'sftp') =>
    createBasicAuthenticator({
      store: deps.store,
      auth,
      keys,
      throttle,
      clock,
      secret: deps.secret,
      // Awaited, as the HTTP sign-in's entry is: a client told "refused" finds the entry.
      onFailure: (username, address) => audit.record({ type: 'login.failed', actor: username.slice(0, 200), target: username.slice(0, 200), address, outcome: 'failure', detail: { method, reason: 'invalid_credentials' } }),
    });
  const basic = passwordCheck('webdav');
  const visitors = config.shareRateLimit > 0 ? createVisitorLimiter(config.shareRateLimit) : undefined;
  const authDeps = { auth, keys, pathTokens, basic, shares, clock, throttle, visitors, grants };
  installHandedOn(app);
  installAuth(app, authDeps);
  // Features that must see every request in Fastify turn the fast path off; metrics count its answers (docs/performance.md).
  const fastReadOff = config.corsOrigin.length > 0 || config.otlpEndpoint !== '';
  const onAnswer = metrics && ((req: IncomingMessage, route: string, status: number, seconds: number) => metrics.count({ method: req.method ?? '', route, status, seconds, socket: req.socket }));
  if (!fastReadOff) {
    const fast = { basePath: config.basePath, auth: authDeps, operations, accessLog, nextRequestId, trustProxy: config.trustProxy, onAnswer };
    const read = createFastRead(fast);
    // A write's answer waits for its usage to be counted, as the onSend hook below makes Fastify's wait.
    const write = createFastWrite({ ...fast, dav: services.dav, onUpload: metrics && ((req) => metrics.upload(req)), beforeAnswer: () => storageUsage.flush(), deadlineMs, warn: (fields, message) => app.log.warn(fields, message) });
    fastRead = (req, res, next) => write(req, res, () => read(req, res, next));
  }
  // The first onSend hook: the answer has begun, so the deadline is off (the hooks after it may wait
  // for a service). A change is counted in usage before its answer goes out, so the client's next
  // GET /api/usage (on any node) sees it; free when nothing is pending.
  app.addHook('onSend', async (request, reply) => {
    answerBegun(request);
    reply.headers(EVERY_ANSWER_HEADERS);
    if (request.method !== 'GET' && request.method !== 'HEAD') await storageUsage.flush();
  });
  installAuditHook(app, { audit, basePath: config.basePath });

  await registerFrontEnds(app, config, { store: deps.store, backend: deps.backend, secret: deps.secret, webRoot: deps.webRoot, services, oidc, oidcSettings, schemaTable, metrics, passwordCheck });
  const basePath = config.basePath;
  if (basePath) app.get(basePath, { config: { access: { who: 'public' } }, schema: BASE_REDIRECT_SCHEMA }, async (_request, reply) => reply.redirect(`${basePath}/`, 308));

  // After a crash: src/main.ts asks when the leader finds that a process of the deployment, on any
  // node, died without stopping (src/cluster/liveness.ts).
  app.decorate('requestRescan', (opts: { after?: number } = {}) => background.requestRescan(opts));
  app.addHook('onClose', async () => {
    await background.stop();
    await services.close();
  });
  return app;
}
