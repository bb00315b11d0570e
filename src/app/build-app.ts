import { statfs } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from '../config/options.js';
import { systemClock, type Clock } from '../lib/clock.js';
import type { StorageBackend } from '../storage/backend.js';
import type { MetadataStore } from '../store/metadata-store.js';
import { createAuthService } from '../services/auth.js';
import { createFilesService } from '../services/files.js';
import { createSafetyNet } from '../services/safety-net.js';
import { createZipService } from '../services/zip.js';
import { createTrashService } from '../services/trash.js';
import { createVersionService } from '../services/versions.js';
import { trashRoutes } from '../routes/trash.js';
import { createUsageService } from '../services/usage.js';
import { usageRoutes } from '../routes/usage.js';
import { createPasswordHasher, type PasswordHasher } from '../services/passwords.js';
import { createPathTokenService } from '../services/path-token-service.js';
import { createThumbnailService, DEFAULT_THUMBNAIL_LIMITS } from '../services/thumbnails.js';
import { authRoutes } from '../routes/auth.js';
import { bannerRoutes } from '../routes/banner.js';
import { metaRoutes } from '../routes/meta.js';
import { storageRoutes } from '../routes/storage.js';
import { davRoutes } from '../routes/dav.js';
import { tusRoutes } from '../routes/tus.js';
import { createTusService } from '../services/tus.js';
import { createBasicAuthenticator } from '../dav/basic-auth.js';
import { createApiKeyService } from '../services/api-keys.js';
import { createSshKeyService } from '../services/ssh-keys.js';
import { sshKeyRoutes } from '../routes/ssh-keys.js';
import { installSftp } from './sftp-front.js';
import { keyRoutes } from '../routes/keys.js';
import { createVisitorLimiter } from './visitor-limit.js';
import { uiRoutes } from '../routes/ui.js';
import { basicRoutes } from '../routes/basic.js';
import { createShareService } from '../services/shares.js';
import { shareApiRoutes } from '../routes/shares-api.js';
import { shareLinkRoutes } from '../routes/share-links.js';
import { createSecondFactor } from '../services/second-factor.js';
import { createUserService } from '../services/users.js';
import { createAccountService } from '../services/account.js';
import { accountUsage } from '../services/usage.js';
import { accountRoutes } from '../routes/account.js';
import { adminUserRoutes } from '../routes/admin-users.js';
import { loadOidcSettings } from '../config/oidc.js';
import { oidcRoutes, oidcStatusRoute } from '../routes/oidc.js';
import { adminGroupRoutes } from '../routes/admin-groups.js';
import { createGroupService } from '../services/groups.js';
import { createGrantService } from '../services/grants.js';
import { createOperations, type Operations } from '../services/operations.js';
import { grantRoutes } from '../routes/grants.js';
import { createSharedWithMe } from '../routes/dav-shared.js';
import { installAuth, methodsFor } from './auth-plugin.js';
import { installRouteTable, type Answer } from './route-table.js';
import { openApiRoutes } from '../routes/openapi.js';
import { empty, errors, type RouteSchema } from '../http/schemas.js';
import { searchRoutes } from '../routes/search.js';
import { changeRoutes } from '../routes/changes.js';
import { createChangeService } from '../services/changes.js';
import { createCursorCodec, createTreeTags } from '../services/change-cursor.js';
import { createChangeSignal } from '../services/change-signal.js';
import { createChangeStreams, STREAM_SLOT_MS, STREAMS_PER_USER } from '../services/change-streams.js';
import { createChangeWaker } from '../services/change-waker.js';
import { createStreamSlots } from '../services/stream-slots.js';
import { backendFolderEtags, createFolderEtags } from '../services/folder-etags.js';
import { createDavSync } from '../services/dav-sync.js';
import type { Redis } from 'ioredis';
import { createSearchService } from '../services/search.js';
import { installCors } from './cors.js';
import { createFastRead, requestIds, type FastRead } from './fast-read.js';
import { installHandedOn } from './handed-on.js';
import { createDavService } from '../services/dav.js';
import { EVERY_ANSWER_HEADERS } from '../http/security-headers.js';
import { AppError } from '../domain/errors.js';
import { clientErrorHandler, HTTP_LIMITS } from '../http/client-error.js';
import { installErrorHandling, sendError } from '../http/error-handler.js';
import { answerBegun, armDeadline, attachProgress } from './request-deadline.js';
import { withProgress } from '../lib/progress.js';
import { parseOrigin, withOrigin } from '../lib/write-origin.js';
import { storeRateLimiter, type RateLimiter } from '../store/rate-limiter.js';
import { createAuditService } from '../services/audit.js';
import { installAuditHook } from './audit-hook.js';
import { adminAuditRoutes } from '../routes/admin-audit.js';
import { auditEventSource, changeJournalSource, createWebhookService } from '../services/webhooks.js';
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

export type AppDeps = {
  readonly store: MetadataStore;
  readonly backend: StorageBackend;
  /** Key for path tokens (data/secret). */
  readonly secret: Buffer;
  readonly logger: Logger;
  readonly clock?: Clock;
  readonly hasher?: PasswordHasher;
  /** Folder with the built web UI (index.html, assets/). */
  readonly webRoot?: string;
  /** The login throttle's counter (Redis when configured); default: the metadata store. */
  readonly rateLimiter?: RateLimiter;
  /**
   * Runs background upkeep (sweeps) only on the node that holds the leader
   * lease; without one, every process sweeps (safe, just repeated work).
   */
  readonly isLeader?: () => boolean;
  /** The Redis client when --redis is given: the health check, and change streams' wake-ups across nodes. */
  readonly redis?: Redis;
  /** Keeps the Redis channels of deployments that share one Redis apart (src/main.ts deploymentId). */
  readonly deployment?: string | undefined;
  /** Sees every answer of a route with its schema (tests check the schemas document what routes answer). */
  readonly checkAnswer?: (answer: Answer) => void;
};

/**
 * Builds the whole HTTP application without listening, so tests can use
 * `inject()` or `listen({ port: 0 })` on exactly what production runs.
 */
export async function buildApp(config: Config, deps: AppDeps): Promise<FastifyInstance> {
  const clock = deps.clock ?? systemClock;
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

  const hasher = deps.hasher ?? createPasswordHasher();
  const throttle = config.dev ? undefined : (deps.rateLimiter ?? storeRateLimiter(deps.store.rates, config.loginRateLimit));
  const secondFactor = createSecondFactor({ store: deps.store, clock, limiter: throttle });
  // --oidc-only: password sign-in (API, /basic/, WebDAV) for accounts marked local only.
  const passwordAllowed = config.oidcIssuer && config.oidcOnly ? (u: { id: string }) => deps.store.oidc.isLocal(u.id) : undefined;
  const auth = createAuthService({ store: deps.store, hasher, clock, accessTokenTtl: config.accessTokenTtl, refreshTokenTtl: config.refreshTokenTtl, secondFactor, passwordAllowed });
  const users = createUserService({ store: deps.store, backend: deps.backend, hasher, clock });
  const oidcSettings = await loadOidcSettings(config);
  // openid-client, and metrics' prom-client below, are loaded only when their option is set: a deployment
  // without them pays no memory for them (docs/performance.md "Memory").
  const oidc = oidcSettings && (await import('../services/oidc.js')).createOidcService({ settings: oidcSettings, store: deps.store, users, auth, clock, log: deps.logger });
  const groups = createGroupService({ store: deps.store, clock });
  const storageUsage = createUsageService({ store: deps.store, backend: deps.backend, onError: (err) => app.log.error({ err }, 'updating storage usage failed') });
  const trash = createTrashService({ store: deps.store, backend: deps.backend, clock, days: config.trashDays });
  const versions = createVersionService({ store: deps.store, backend: deps.backend, clock, enabled: config.versions, maxDays: config.versionsMaxDays, onError: (err) => app.log.warn({ err }, 'thinning file versions failed') });
  // --changes off: nothing stamps folders, so their ETags are the backend's own (docs/sync.md "Without the feed").
  const folderEtags = config.changes ? createFolderEtags(deps.store.changes, createTreeTags(deps.secret)) : backendFolderEtags(deps.backend);
  const files = createFilesService({ backend: deps.backend, maxUploadBytes: config.maxUploadSize, usage: storageUsage, trash, versions, folderEtags, index: deps.store.search });
  // The owner's own upload that would pass the quota purges their oldest kept bytes (versions and trash) first.
  storageUsage.setReclaim(createSafetyNet({ versions, trash }).makeRoom);
  const zips = createZipService({ backend: deps.backend, crcs: deps.store.zipCrcs, clock });
  // Failed grant creations count in the login throttle, per caller (lifted by --dev like sign-ins).
  const grants = createGrantService({ store: deps.store, backend: deps.backend, files, clock, limiter: throttle, onError: (err) => app.log.warn({ err }, 'giving back a grant creation\'s place in the throttle failed') });
  // The one door: every front end's file operations, with `decide` asked for every key they take.
  const operations = createOperations({ files, grants, versions });
  app.decorate('operations', { layer: operations, deps: { files, grants, versions } });
  const pathTokens = createPathTokenService({ secret: deps.secret, store: deps.store, clock, maxTtl: config.pathTokenTtl, grants });
  const tus = createTusService({ store: deps.store, backend: deps.backend, clock, maxUploadBytes: config.maxUploadSize, expirySeconds: config.uploadExpiry, maxOpenUploads: config.maxOpenUploads, usage: storageUsage, operations, versions });
  const usage = accountUsage(storageUsage);
  const account = createAccountService({ store: deps.store, auth, users, secondFactor, usage, clock });
  const shares = createShareService({
    store: deps.store,
    backend: deps.backend,
    files,
    operations,
    hasher,
    clock,
    secret: deps.secret,
    basePath: config.basePath,
    onError: (err) => app.log.warn({ err }, 'ending the shares of a deleted or moved path failed'),
  });

  const thumbnails = createThumbnailService({
    backend: deps.backend,
    options: {
      ...DEFAULT_THUMBNAIL_LIMITS,
      // Per node, whatever the storage: docs/storage.md ("Thumbnails").
      cacheDir: join(resolve(config.dataDir), 'cache', 'thumbnails'),
      namespace: config.storage.kind === 'file' ? 'file' : `s3:${config.storage.endpoint ?? ''}/${config.storage.bucket}/${config.storage.prefix}`,
      concurrency: availableParallelism(),
    },
  });

  const changeSignal = createChangeSignal({
    latest: () => deps.store.changes.latest(),
    redis: deps.redis,
    channel: deps.deployment ? `fc:changes:${deps.deployment}` : 'fc:changes',
    onError: (err) => app.log.warn({ err }, 'change stream wake-up failed'),
  });
  const changes = createChangeService({ store: deps.store, clock, retentionSeconds: config.changesRetention, cursors: createCursorCodec(deps.secret), enabled: config.changes });
  const changeWaker = createChangeWaker({ signal: changeSignal, changes: deps.store.changes, grants: deps.store.grants, onError: (err) => app.log.warn({ err }, 'change stream wake-up failed') });
  const changeStreams = createChangeStreams({
    changes,
    waker: changeWaker,
    slots: createStreamSlots({ leases: deps.store.leases, clock, perUser: STREAMS_PER_USER, holdMs: STREAM_SLOT_MS }),
    onError: (err) => app.log.warn({ err }, 'change stream ended'),
  });
  const search = createSearchService({ store: deps.store, backend: deps.backend, operations, onError: (err) => app.log.warn({ err }, 'updating the search index failed'), ...(config.changes ? { onChange: () => changeSignal.notify() } : {}) });

  const leading = deps.isLeader ?? (() => true);
  // Set below, once the webhooks exist: an entry appended on the leader wakes delivery at once
  // (elsewhere the leader's next tick, within a second, finds it).
  let wakeWebhooks = () => {};
  const audit = createAuditService({
    repo: deps.store.audit,
    clock,
    retentionDays: config.auditRetention,
    exportTo: config.auditLog,
    onAppend: () => wakeWebhooks(),
    onError: (err) => app.log.error({ err }, 'recording an audit event failed'),
  });
  const webhooks = createWebhookService({
    repo: deps.store.webhooks,
    sources: [auditEventSource(deps.store.audit), changeJournalSource(deps.store.changes)],
    clock,
    allowPrivate: config.webhooksAllowPrivate,
    leading,
    onDisabled: (hook, reason) => void audit.record({ type: 'webhook.disabled', target: hook.id, outcome: 'failure', detail: { url: hook.url, reason } }),
    onError: (err) => app.log.warn({ err }, 'webhook delivery failed'),
  });
  let webhookTick: Promise<void> | undefined;
  const deliver = () => {
    if (!leading() || webhookTick) return;
    webhookTick = webhooks.tick().catch((err: unknown) => app.log.warn({ err }, 'webhook delivery round failed')).finally(() => (webhookTick = undefined));
  };
  wakeWebhooks = () => void setImmediate(deliver);
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
  const keys = createApiKeyService({ store: deps.store, clock, onError: (err) => app.log.warn({ err }, 'recording an app password\'s last use failed') });
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
  if (!fastReadOff) fastRead = createFastRead({ basePath: config.basePath, auth: authDeps, files, accessLog, nextRequestId, trustProxy: config.trustProxy, onAnswer });
  // The first onSend hook: the answer has begun, so the deadline is off (the hooks after it may wait
  // for a service). A change is counted in usage before its answer goes out, so the client's next
  // GET /api/usage (on any node) sees it; free when nothing is pending.
  app.addHook('onSend', async (request, reply) => {
    answerBegun(request);
    reply.headers(EVERY_ANSWER_HEADERS);
    if (request.method !== 'GET' && request.method !== 'HEAD') await storageUsage.flush();
  });
  installAuditHook(app, { audit, basePath: config.basePath });

  // RFC 4331 quota-available-bytes: the free space of the disk under the data dir; an object store has no such figure.
  const storageDir = join(resolve(config.dataDir), 'storage');
  const freeBytes = config.storage.kind === 'file' ? async () => statfs(storageDir).then((s) => s.bavail * s.bsize, () => undefined) : undefined;
  // WebDAV's rules over the tree, for /dav/ and the SFTP front end alike.
  const dav = createDavService({ folderEtags, files, usage: storageUsage, backend: deps.backend, store: deps.store, clock, freeBytes, operations, limits: { properties: config.davMaxProperties, propertySize: config.davMaxPropertySize, locks: config.davMaxLocks } });
  const sshKeys = createSshKeyService({ store: deps.store, clock, onError: (err) => app.log.warn({ err }, 'recording an SSH key\'s last use failed') });
  await installSftp(app, config, { store: deps.store, files, dav, grants, operations, basic: passwordCheck('sftp'), sshKeys, throttle, clock, audit: (e) => void audit.record(e) });

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
        health: { database: () => deps.store.users.count(), storage: () => deps.backend.ping(), ...(deps.redis ? { redis: () => deps.redis!.ping() } : {}) },
      });
      bannerRoutes(base, { dir: join(resolve(config.dataDir), 'banner') });
      openApiRoutes(base, { routes: schemaTable, basePath });
      metrics?.route(base);
      await base.register(async (scope) => storageRoutes(scope, { files, pathTokens, zips, basePath, thumbnails, operations, versions }));
      const sync = createDavSync({ files, backend: deps.backend, changes, folderEtags });
      await base.register(async (scope) => davRoutes(scope, { dav, files, basePath, operations, sync, shared: createSharedWithMe({ grants, basePath }) }));
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
      await base.register(async (scope) => shareLinkRoutes(scope, { shares, files, zips, basePath, thumbnails }));
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
    search.close();
    await rescanning;
    await changeSignal.close();
    await shares.close();
    grants.close();
    versions.close();
    await storageUsage.close();
    clearInterval(sweep);
    oidc?.close();
    clearInterval(storageSweep);
    clearInterval(thumbnailPrune);
    await sweeping;
    clearInterval(webhookTimer);
    wakeWebhooks = () => {};
    await webhookTick;
    await webhooks.settle();
    await audit.close();
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
