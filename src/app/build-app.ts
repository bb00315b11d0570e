import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from '../config/options.js';
import type { StorageBackend } from '../storage/backend.js';
import type { MetadataStore } from '../store/metadata-store.js';
import { createServices, type ServiceOptions, type Services } from './services.js';
import { trashRoutes } from '../routes/trash.js';
import { usageRoutes } from '../routes/usage.js';
import { authRoutes } from '../routes/auth.js';
import { bannerRoutes } from '../routes/banner.js';
import { metaRoutes } from '../routes/meta.js';
import { storageRoutes } from '../routes/storage.js';
import { davRoutes } from '../routes/dav.js';
import { tusRoutes } from '../routes/tus.js';
import { createBasicAuthenticator } from '../dav/basic-auth.js';
import { sshKeyRoutes } from '../routes/ssh-keys.js';
import { installSftp } from './sftp-front.js';
import { keyRoutes } from '../routes/keys.js';
import { createVisitorLimiter } from './visitor-limit.js';
import { uiRoutes } from '../routes/ui.js';
import { basicRoutes } from '../routes/basic.js';
import { shareApiRoutes } from '../routes/shares-api.js';
import { shareLinkRoutes } from '../routes/share-links.js';
import { accountRoutes } from '../routes/account.js';
import { adminUserRoutes } from '../routes/admin-users.js';
import { oidcRoutes, oidcStatusRoute } from '../routes/oidc.js';
import { adminGroupRoutes } from '../routes/admin-groups.js';
import { createOperations, type Operations } from '../services/operations.js';
import { grantRoutes } from '../routes/grants.js';
import { createSharedWithMe } from '../routes/dav-shared.js';
import { installAuth, methodsFor } from './auth-plugin.js';
import { installRouteTable, type Answer } from './route-table.js';
import { openApiRoutes } from '../routes/openapi.js';
import { empty, errors, type RouteSchema } from '../http/schemas.js';
import { searchRoutes } from '../routes/search.js';
import { changeRoutes } from '../routes/changes.js';
import { installCors } from './cors.js';
import { createFastRead, requestIds, type FastRead } from './fast-read.js';
import { installHandedOn } from './handed-on.js';
import { EVERY_ANSWER_HEADERS } from '../http/security-headers.js';
import { AppError } from '../domain/errors.js';
import { clientErrorHandler, HTTP_LIMITS } from '../http/client-error.js';
import { installErrorHandling, sendError } from '../http/error-handler.js';
import { answerBegun, armDeadline, attachProgress } from './request-deadline.js';
import { withProgress } from '../lib/progress.js';
import { parseOrigin, withOrigin } from '../lib/write-origin.js';
import { installAuditHook } from './audit-hook.js';
import { adminAuditRoutes } from '../routes/admin-audit.js';
import { adminWebhookRoutes } from '../routes/admin-webhooks.js';

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
    serverFactory: (handler) => {
      // requireHostHeader off: Node would answer a missing Host with a bare 400; the hook below gives the contract body.
      const options = { maxHeaderSize: HTTP_LIMITS.maxHeaderSize, headersTimeout: HTTP_LIMITS.headersTimeoutMs, requireHostHeader: false };
      const serve = (req: IncomingMessage, res: ServerResponse) => (fastRead ? fastRead(req, res, () => handler(req, res)) : handler(req, res));
      // Each request in its own progress context, for the request deadline (request-deadline.ts).
      const server = createServer(options, (req, res) => withProgress((progress) => {
        attachProgress(req, progress);
        // The writer's File-Cloud-Origin goes with the request's writes into their change entries (a bad one is refused below).
        const origin = parseOrigin(req.headers['file-cloud-origin']);
        if (origin === undefined || origin === 'invalid') serve(req, res);
        else withOrigin(origin, () => serve(req, res));
      }));
      server.keepAliveTimeout = 72_000;
      // Uploads may take long, so no limit on a whole request; a stalled client is cut off by the
      // idle timeout instead, and slow headers by headersTimeout (HTTP_LIMITS, docs/security.md).
      server.requestTimeout = 0;
      server.setTimeout(HTTP_LIMITS.idleTimeoutMs);
      return server;
    },
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
  // Taken in this order: storage events reach their subscribers in the order they subscribed, usage first.
  const { clock, auth, users, groups, storageUsage, trash, versions: _versions, files, zips: _zips, grants, operations, pathTokens, tus, usage, account, shares, thumbnails, changes, changeWaker, changeStreams, search, throttle } = services;
  const oidcSettings = await services.oidcSettings();
  const oidc = await services.oidc();
  app.decorate('operations', { layer: operations, deps: services.operationDeps });
  const { leading, redis } = services;
  const { audit, webhooks } = services;
  let webhookTick: Promise<void> | undefined;
  const deliver = () => {
    if (!leading() || webhookTick) return;
    webhookTick = webhooks.tick().catch((err: unknown) => app.log.warn({ err }, 'webhook delivery round failed')).finally(() => (webhookTick = undefined));
  };
  services.onAuditAppend(() => void setImmediate(deliver));
  const webhookTimer = setInterval(deliver, 1000);
  webhookTimer.unref();

  installErrorHandling(app, methodsFor(app, config.basePath));
  // The request line holds only what the serializers pick (method, redacted URL, address, status),
  // never a body or a header, so it skips the redaction paths (their cost: docs/performance.md, optimization 12).
  const accessLog = app.log.child({}, { redact: [] });
  // The hooks below do not run for the fast read path (fast-read.ts), which applies their rules
  // itself; a hook added here that must see every request turns it off (fastReadOff).
  app.addHook('onResponse', async (request, reply) => {
    accessLog.info({ reqId: request.id, req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed');
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
      // Not awaited: the refusal is answered as fast as before; the entry follows at once.
      onFailure: (username, address) => void audit.record({ type: 'login.failed', actor: username.slice(0, 200), target: username.slice(0, 200), address, outcome: 'failure', detail: { method, reason: 'invalid_credentials' } }),
    });
  const basic = passwordCheck('webdav');
  const visitors = config.shareRateLimit > 0 ? createVisitorLimiter(config.shareRateLimit) : undefined;
  const authDeps = { auth, keys, pathTokens, basic, shares, clock, throttle, visitors, grants };
  installHandedOn(app);
  installAuth(app, authDeps);
  // Features that must see every request in Fastify turn the fast path off; metrics count its answers (docs/performance.md).
  const fastReadOff = config.corsOrigin.length > 0 || config.otlpEndpoint !== '';
  const onAnswer = metrics && ((req: IncomingMessage, route: string, status: number, seconds: number) => metrics.count({ method: req.method ?? '', route, status, seconds, socket: req.socket }));
  if (!fastReadOff) fastRead = createFastRead({ basePath: config.basePath, auth: authDeps, operations, accessLog, nextRequestId, trustProxy: config.trustProxy, onAnswer });
  // The first onSend hook: the answer has begun, so the deadline is off (the hooks after it may wait
  // for a service). A change is counted in usage before its answer goes out, so the client's next
  // GET /api/usage (on any node) sees it; free when nothing is pending.
  app.addHook('onSend', async (request, reply) => {
    answerBegun(request);
    reply.headers(EVERY_ANSWER_HEADERS);
    if (request.method !== 'GET' && request.method !== 'HEAD') await storageUsage.flush();
  });
  installAuditHook(app, { audit, basePath: config.basePath });

  const { dav, sshKeys } = services;
  await installSftp(app, config, { store: deps.store, operations, basic: passwordCheck('sftp'), sshKeys, throttle, clock, audit: (e) => void audit.record(e) });

  // Every route lives under --base-path (prefix "" when unset); anything outside it is a 404.
  const basePath = config.basePath;
  await app.register(
    async (base) => {
      authRoutes(base, { auth });
      oidcStatusRoute(base, { oidc });
      await base.register(async (scope) => oidcRoutes(scope, { oidc, auth, basePath, publicUrl: config.publicUrl }));
      keyRoutes(base, { keys });
      sshKeyRoutes(base, { sshKeys });
      metaRoutes(base, {
        startedAt: performance.now(),
        now: () => performance.now(),
        health: { database: () => deps.store.users.count(), storage: () => deps.backend.ping(), ...(redis ? { redis: () => redis.ping() } : {}) },
      });
      bannerRoutes(base, { dir: join(resolve(config.dataDir), 'banner') });
      openApiRoutes(base, { routes: schemaTable, basePath });
      metrics?.route(base);
      await base.register(async (scope) => storageRoutes(scope, { files, pathTokens, basePath, operations }));
      await base.register(async (scope) => davRoutes(scope, { dav, basePath, operations, sync: services.davSync, shared: createSharedWithMe({ grants, basePath }) }));
      await base.register(async (scope) => usageRoutes(scope, { usage: storageUsage }));
      await base.register(async (scope) => tusRoutes(scope, { tus, basePath }));
      // The no-JavaScript file manager (/basic/): cookie session + CSRF, its own content-type parsers and error pages.
      await base.register(async (scope) => basicRoutes(scope, { auth, files, operations, secret: deps.secret, basePath, publicUrl: config.publicUrl, ssoLabel: oidcSettings?.buttonLabel }));
      await base.register(async (scope) => shareApiRoutes(scope, { shares }));
      await base.register(async (scope) => accountRoutes(scope, { account, features: { trashDays: config.trashDays, versions: config.versions } }));
      await base.register(async (scope) => adminUserRoutes(scope, { users, usage, signIn: async (id) => ({ sso: (await deps.store.oidc.linkOf(id)) !== undefined, local: await deps.store.oidc.isLocal(id) }) }));
      await base.register(async (scope) => adminGroupRoutes(scope, { groups }));
      await base.register(async (scope) => adminAuditRoutes(scope, { audit }));
      await base.register(async (scope) => adminWebhookRoutes(scope, { webhooks }));
      await base.register(async (scope) => grantRoutes(scope, { grants }));
      await base.register(async (scope) => shareLinkRoutes(scope, { shares, files, operations, basePath }));
      await base.register(async (scope) => searchRoutes(scope, { search }));
      await base.register(async (scope) => trashRoutes(scope, { trash }));
      await base.register(async (scope) => changeRoutes(scope, { changes, streams: changeStreams }));
      await uiRoutes(base, { webRoot: deps.webRoot, basePath, publicUrl: config.publicUrl });
    },
    { prefix: basePath },
  );
  if (basePath) app.get(basePath, { config: { access: { who: 'public' } }, schema: BASE_REDIRECT_SCHEMA }, async (_request, reply) => reply.redirect(`${basePath}/`, 308));

  const sweep = setInterval(() => {
    if (!leading()) return;
    auth.sweep().catch((err: unknown) => app.log.warn({ err }, 'session sweep failed'));
    deps.store.rates.deleteBefore(clock.now() - 10 * 60_000).catch((err: unknown) => app.log.warn({ err }, 'rate log sweep failed'));
    deps.store.davLocks.deleteExpired(clock.now()).catch((err: unknown) => app.log.warn({ err }, 'WebDAV lock sweep failed'));
    shares.sweep().catch((err: unknown) => app.log.warn({ err }, 'share link sweep failed'));
    oidc?.sweep().catch((err: unknown) => app.log.warn({ err }, 'single sign-on sweep failed'));
    audit.purge().catch((err: unknown) => app.log.warn({ err }, 'audit log retention purge failed'));
    webhooks.sweep().catch((err: unknown) => app.log.warn({ err }, 'webhook delivery log sweep failed'));
    changes.purge().catch((err: unknown) => app.log.warn({ err }, 'change journal purge failed'));
  }, 60_000);
  // Every process trims the cache of its node (there is one per data dir, not one per cluster).
  const thumbnailPrune = setInterval(() => {
    thumbnails.prune().catch((err: unknown) => app.log.warn({ err }, 'thumbnail cache prune failed'));
  }, 10 * 60_000);
  thumbnailPrune.unref();
  sweep.unref();
  // Storage upkeep: staging and multipart uploads of dead writers, interrupted folder moves,
  // expired resumable uploads with their staged bytes.
  const staleMs = config.staleUploadAfter * 1000;
  let sweeping: Promise<void> | undefined;
  const storageSweep = setInterval(() => {
    if (!leading()) return;
    sweeping ??= Promise.all([
      deps.backend.sweep({ staleMs }).catch((err: unknown) => app.log.warn({ err }, 'storage sweep failed')),
      tus.sweep().catch((err: unknown) => app.log.warn({ err }, 'resumable upload sweep failed')),
    ])
      // After the backend's sweep, which finishes the moves into the trash that dead processes left.
      .then(() => trash.sweep().catch((err: unknown) => app.log.warn({ err }, 'trash sweep failed')))
      .then(
      () => undefined,
      () => undefined,
    ).finally(() => (sweeping = undefined));
  }, storageSweepIntervalMs(config));
  storageSweep.unref();
  // Search index upkeep: files other tools put into (or removed from) storage, once shortly
  // after start and then every --index-interval seconds, on the leader only (docs/architecture.md).
  // A rescan is also what journals the changes a killed process made but did not record (its
  // rename done, its index transaction not): one is asked for when a process died mid-work.
  let rescanning: Promise<void> | undefined;
  let startedAt = -Infinity; // of the running or the last rescan
  let again = false;
  let closed = false;
  const rescan = (after = Infinity) => {
    if (!leading()) return;
    // One that started after the death walked storage after the dead process's last write.
    if (startedAt >= after) return;
    if (rescanning) {
      // Asked while one runs: it may have passed the paths in question already.
      again = true;
      return;
    }
    startedAt = Date.now();
    rescanning = search
      .rescanAll()
      .then(
        (r) => {
          const { hidden, ...counts } = r;
          app.log.info({ rescan: { ...counts, hidden: hidden.length } }, 'search index rescanned');
          // Both stay in storage untouched; the listing shows the folder (CONTRACT "Backends and nodes").
          if (hidden.length > 0) app.log.warn({ hidden: hidden.slice(0, 100) }, 'files hidden by a folder of the same name (file-cloud index names them all)');
        },
        (err: unknown) => app.log.warn({ err }, 'search index rescan failed'),
      )
      .finally(() => {
        rescanning = undefined;
        if (again && !closed) {
          again = false;
          rescan();
        }
      });
  };
  const rescanTimers = config.indexInterval > 0 ? [setTimeout(() => rescan(), Math.min(config.indexInterval, 30) * 1000), setInterval(() => rescan(), config.indexInterval * 1000)] : [];
  for (const t of rescanTimers) t.unref();
  // After a crash: src/main.ts asks when the leader finds that a process of the deployment, on any
  // node, died without stopping (src/cluster/liveness.ts).
  app.decorate('requestRescan', (opts: { after?: number } = {}) => {
    if (config.indexInterval > 0 && !closed) rescan(opts.after);
  });
  app.addHook('onClose', async () => {
    closed = true;
    for (const t of rescanTimers) clearTimeout(t);
    clearInterval(sweep);
    clearInterval(storageSweep);
    clearInterval(thumbnailPrune);
    clearInterval(webhookTimer);
    await rescanning;
    await sweeping;
    await webhookTick;
    await services.close();
  });
  return app;
}

/**
 * How often the leader sweeps storage (stale staging, expired resumable
 * uploads): half the shorter of --stale-upload-after and --upload-expiry,
 * between 1 s and 1 min. An expired upload is gone within this interval
 * after its expiry, plus the sweep's own run time (docs/operations.md).
 */
export function storageSweepIntervalMs(config: Pick<Config, 'staleUploadAfter' | 'uploadExpiry'>): number {
  return Math.min(60_000, Math.max(1000, (Math.min(config.staleUploadAfter, config.uploadExpiry) * 1000) / 2));
}
