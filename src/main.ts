import { mkdir } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { buildApp } from './app/build-app.js';
import { redactedConfig } from './config/load.js';
import type { Config, StorageUrl } from './config/options.js';
import { systemClock } from './lib/clock.js';
import { loadOrCreateSecret } from './lib/secret.js';
import { createPasswordHasher } from './services/passwords.js';
import { createUserService } from './services/users.js';
import { createLocalBackend } from './storage/local/local-backend.js';
import type { StorageBackend } from './storage/backend.js';
import type { S3Credentials } from './storage/s3/client.js';
import { createS3Backend } from './storage/s3/s3-backend.js';
import { openSqliteStore } from './store/sqlite.js';
import type { MetadataStore } from './store/types.js';

/** Where things live inside the data directory (CONTRACT "Data directory"). */
export function dataPaths(dataDir: string) {
  const root = resolve(dataDir);
  return {
    root,
    storage: join(root, 'storage'),
    tmp: join(root, 'tmp'),
    db: join(root, 'file-cloud.db'),
    secret: join(root, 'secret'),
  };
}

/** The built web UI, next to the compiled server in dist/. */
export const WEB_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'web');

/**
 * Opens the store and the storage backend of a data directory. `serving`
 * also clears upload staging left by a crash: only the serving process may
 * do that, never a CLI command running beside a live server.
 */
export async function openDataDir(config: Config, serving: boolean, opts: { credentials?: S3Credentials } = {}): Promise<{ store: MetadataStore; backend: StorageBackend; paths: ReturnType<typeof dataPaths> }> {
  const paths = dataPaths(config.dataDir);
  await mkdir(paths.storage, { recursive: true });
  await mkdir(paths.tmp, { recursive: true });
  const store = await openSqliteStore(paths.db);
  const backend = openBackend(config.storage, store, paths, opts);
  if (serving) {
    try {
      await backend.init();
    } catch (e) {
      await backend.close();
      await store.close();
      throw e;
    }
  }
  return { store, backend, paths };
}

/** The StorageBackend that --storage names. */
export function openBackend(storage: StorageUrl, store: MetadataStore, paths: ReturnType<typeof dataPaths>, opts: { credentials?: S3Credentials } = {}): StorageBackend {
  if (storage.kind === 'file') return createLocalBackend({ storageDir: paths.storage, tmpDir: paths.tmp });
  return createS3Backend(storage, { leases: store.leases, journal: store.journal }, opts);
}

export type RunningServer = {
  readonly app: FastifyInstance;
  readonly url: string;
  readonly firstAdmin: { username: string; password: string; generated: boolean } | undefined;
  /** Stops accepting, lets in-flight requests finish for up to `graceMs`, then closes everything. */
  close(graceMs?: number): Promise<void>;
};

/** Composition root: config → store → backend → app → listen. */
export async function startServer(config: Config, logger: Logger): Promise<RunningServer> {
  const { store, backend, paths } = await openDataDir(config, true);
  const secret = await loadOrCreateSecret(paths.secret);
  const hasher = createPasswordHasher();
  const firstAdmin = await createUserService({ store, backend, hasher, clock: systemClock }).ensureFirstAdmin(config.adminPassword || undefined);
  logger.info({ config: redactedConfig(config) }, 'effective configuration');
  const app = await buildApp(config, { store, backend, secret, logger, hasher, webRoot: WEB_ROOT });
  await app.listen({ host: config.host, port: config.port });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;

  let closing: Promise<void> | undefined;
  const close = (graceMs = 10_000) =>
    (closing ??= (async () => {
      const force = setTimeout(() => app.server.closeAllConnections(), graceMs);
      force.unref();
      try {
        await app.close();
      } finally {
        clearTimeout(force);
        await backend.close();
        await store.close();
      }
    })());
  return { app, url: `http://${host}:${port}${config.basePath}`, firstAdmin, close };
}
