import { performance } from 'node:perf_hooks';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from '../config/options.js';
import { systemClock, type Clock } from '../lib/clock.js';
import type { StorageBackend } from '../storage/backend.js';
import type { MetadataStore } from '../store/types.js';
import { createAuthService } from '../services/auth.js';
import { createFilesService } from '../services/files.js';
import { createPasswordHasher, type PasswordHasher } from '../services/passwords.js';
import { createPathTokenService } from '../services/path-token-service.js';
import { authRoutes } from '../routes/auth.js';
import { metaRoutes } from '../routes/meta.js';
import { storageRoutes } from '../routes/storage.js';
import { uiRoutes } from '../routes/ui.js';
import { installAuth } from './auth-plugin.js';
import { installErrorHandling, sendError } from './error-handler.js';
import { LoginThrottle } from './login-throttle.js';

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
};

/**
 * Builds the whole HTTP application without listening, so tests can use
 * `inject()` or `listen({ port: 0 })` on exactly what production runs.
 */
export async function buildApp(config: Config, deps: AppDeps): Promise<FastifyInstance> {
  const clock = deps.clock ?? systemClock;
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    // Trust only the direct peer (our reverse proxy), so request.ip is the address it appended
    // to X-Forwarded-For; entries further left are client-supplied and forgeable.
    trustProxy: config.trustProxy ? (_address: string, hop: number) => hop === 0 : false,
    bodyLimit: 64 * 1024,
    // Uploads may take long; slow or stalled clients are bounded by the socket timeouts below.
    requestTimeout: 0,
    connectionTimeout: 0,
    keepAliveTimeout: 72_000,
    routerOptions: { maxParamLength: 8192 },
    frameworkErrors: (err, request, reply) => sendError(request, reply, err),
  });

  const hasher = deps.hasher ?? createPasswordHasher();
  const auth = createAuthService({ store: deps.store, hasher, clock, accessTokenTtl: config.accessTokenTtl, refreshTokenTtl: config.refreshTokenTtl });
  const pathTokens = createPathTokenService({ secret: deps.secret, store: deps.store, clock, maxTtl: config.pathTokenTtl });
  const files = createFilesService({ backend: deps.backend, maxUploadBytes: config.maxUploadSize });
  const throttle = config.dev ? undefined : new LoginThrottle(config.loginRateLimit);

  installErrorHandling(app);
  installAuth(app, { auth, pathTokens });
  app.addHook('onSend', async (_request, reply) => {
    reply.header('x-content-type-options', 'nosniff');
    // Path tokens travel in URLs: never hand them to another site as a Referer.
    reply.header('referrer-policy', 'no-referrer');
  });

  authRoutes(app, { auth, throttle, clock });
  metaRoutes(app, { startedAt: performance.now(), now: () => performance.now() });
  await app.register(async (scope) => storageRoutes(scope, { files, pathTokens }));
  await uiRoutes(app, { webRoot: deps.webRoot });

  const sweep = setInterval(() => {
    auth.sweep().catch((err: unknown) => app.log.warn({ err }, 'session sweep failed'));
  }, 60_000);
  sweep.unref();
  app.addHook('onClose', async () => clearInterval(sweep));
  return app;
}
