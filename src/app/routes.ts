import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config/options.js';
import type { BasicAuthenticator } from '../dav/basic-auth.js';
import type { StorageBackend } from '../storage/backend.js';
import type { MetadataStore } from '../store/metadata-store.js';
import { accountRoutes } from '../routes/account.js';
import { adminAuditRoutes } from '../routes/admin-audit.js';
import { adminGroupRoutes } from '../routes/admin-groups.js';
import { adminUserRoutes } from '../routes/admin-users.js';
import { adminWebhookRoutes } from '../routes/admin-webhooks.js';
import { authRoutes } from '../routes/auth.js';
import { bannerRoutes } from '../routes/banner.js';
import { basicRoutes } from '../routes/basic.js';
import { changeRoutes } from '../routes/changes.js';
import { createSharedWithMe } from '../routes/dav-shared.js';
import { davRoutes } from '../routes/dav.js';
import { grantRoutes } from '../routes/grants.js';
import { keyRoutes } from '../routes/keys.js';
import { metaRoutes } from '../routes/meta.js';
import { oidcRoutes, oidcStatusRoute } from '../routes/oidc.js';
import { openApiRoutes } from '../routes/openapi.js';
import { searchRoutes } from '../routes/search.js';
import { shareLinkRoutes } from '../routes/share-links.js';
import { shareApiRoutes } from '../routes/shares-api.js';
import { sshKeyRoutes } from '../routes/ssh-keys.js';
import { storageRoutes } from '../routes/storage.js';
import { trashRoutes } from '../routes/trash.js';
import { tusRoutes } from '../routes/tus.js';
import { uiRoutes } from '../routes/ui.js';
import { usageRoutes } from '../routes/usage.js';
import type { OidcService, OidcSettings } from '../services/oidc.js';
import type { RouteRecord } from '../http/openapi.js';
import type { Services } from './services.js';
import { installSftp } from './sftp-front.js';

/**
 * Every front end on the app: the HTTP routes under --base-path (anything outside it is a 404) and the
 * SFTP listener, each given the services it uses from the composition root and nothing more.
 */
export async function registerFrontEnds(
  app: FastifyInstance,
  config: Config,
  deps: {
    store: MetadataStore;
    backend: StorageBackend;
    secret: Buffer;
    webRoot: string | undefined;
    services: Services;
    oidc: OidcService | undefined;
    oidcSettings: OidcSettings | undefined;
    schemaTable: RouteRecord[];
    metrics: { route(scope: FastifyInstance): void } | undefined;
    /** The account-or-app-password check of a front end (its refusals audited with the front end's name). */
    passwordCheck(method: 'webdav' | 'sftp'): BasicAuthenticator;
  },
): Promise<void> {
  const { services, oidc, store, backend } = deps;
  const { auth, users, groups, storageUsage, trash, grants, operations, pathTokens, tus, usage, account, shares, changes, changeStreams, search, audit, webhooks, keys, sshKeys, dav, throttle, clock } = services;
  await installSftp(app, config, { store, operations, basic: deps.passwordCheck('sftp'), sshKeys, throttle, clock, audit: (e) => audit.record(e) });

  const basePath = config.basePath;
  const redis = services.redis;
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
        health: { database: () => store.users.count(), storage: () => backend.ping(), ...(redis ? { redis: () => redis.ping() } : {}) },
      });
      bannerRoutes(base, { dir: join(resolve(config.dataDir), 'banner') });
      openApiRoutes(base, { routes: deps.schemaTable, basePath });
      deps.metrics?.route(base);
      await base.register(async (scope) => storageRoutes(scope, { pathTokens, basePath, operations }));
      await base.register(async (scope) => davRoutes(scope, { dav, basePath, operations, sync: services.davSync, shared: createSharedWithMe({ operations, basePath }) }));
      await base.register(async (scope) => usageRoutes(scope, { usage: storageUsage }));
      await base.register(async (scope) => tusRoutes(scope, { tus, basePath }));
      // The no-JavaScript file manager (/basic/): cookie session + CSRF, its own content-type parsers and error pages.
      await base.register(async (scope) => basicRoutes(scope, { auth, operations, secret: deps.secret, basePath, publicUrl: config.publicUrl, ssoLabel: deps.oidcSettings?.buttonLabel }));
      await base.register(async (scope) => shareApiRoutes(scope, { shares, basePath }));
      await base.register(async (scope) => accountRoutes(scope, { account, features: { trashDays: config.trashDays, versions: config.versions } }));
      await base.register(async (scope) => adminUserRoutes(scope, { users, usage, signIn: async (id) => ({ sso: (await store.oidc.linkOf(id)) !== undefined, local: await store.oidc.isLocal(id) }) }));
      await base.register(async (scope) => adminGroupRoutes(scope, { groups }));
      await base.register(async (scope) => adminAuditRoutes(scope, { audit }));
      await base.register(async (scope) => adminWebhookRoutes(scope, { webhooks }));
      await base.register(async (scope) => grantRoutes(scope, { grants }));
      await base.register(async (scope) => shareLinkRoutes(scope, { shares, operations, basePath }));
      await base.register(async (scope) => searchRoutes(scope, { search }));
      await base.register(async (scope) => trashRoutes(scope, { trash }));
      await base.register(async (scope) => changeRoutes(scope, { changes, streams: changeStreams }));
      await uiRoutes(base, { webRoot: deps.webRoot, basePath, publicUrl: config.publicUrl });
    },
    { prefix: basePath },
  );
}
