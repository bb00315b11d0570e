import { randomBytes, randomUUID } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { describeListenError } from './cli/listen-error.js';
import { redactedConfig } from './config/load.js';
import type { Config, StorageUrl } from './config/options.js';
import { loadOrCreateSecret } from './lib/secret.js';
import { createLocalBackend } from './storage/local/local-backend.js';
import { withHashes } from './storage/hashing.js';
import type { StorageBackend } from './storage/backend.js';
import { withEncryption } from './storage/encrypted/with-encryption.js';
import { plaintextSizes } from './storage/encrypted/plaintext-sizes.js';
import type { SizeView } from './storage/size-view.js';
import type { S3Credentials } from './storage/s3/client.js';
import { openSqliteStore } from './store/sqlite.js';
import { openPostgresStore } from './store/postgres.js';
import { LOGIN_WINDOW_MS } from './store/rate-limiter.js';
import { startLeaderElection } from './cluster/leader.js';
import { startLiveness } from './cluster/liveness.js';
import { PROCESS_ID } from './lib/process-id.js';
import type { LeaseRepo } from './store/leases.js';
import { startIdleReducer } from './app/idle-reducer.js';
import { fallbackLeaseRepo, fallbackRateLimiter, openRedis, redisBreaker, redisLeaseRepo, redisRateLimiter, type RedisBreaker } from './cluster/redis.js';
import { storeRateLimiter } from './store/rate-limiter.js';
import type { Redis } from 'ioredis';
import type { Coordination } from './storage/coordination.js';
import type { NameIndex } from './storage/name-index.js';
import type { MetadataStore } from './store/metadata-store.js';

/** Where things live inside the data directory (CONTRACT "Data directory"). */
export function dataPaths(dataDir: string) {
  const root = resolve(dataDir);
  return {
    root,
    storage: join(root, 'storage'),
    tmp: join(root, 'tmp'),
    trash: join(root, 'trash'),
    versions: join(root, 'versions'),
    db: join(root, 'file-cloud.db'),
    secret: join(root, 'secret'),
  };
}

/** The built web UI, next to the compiled server in dist/. */
export const WEB_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'web');

/**
 * Opens the store and the storage backend of a data directory. `serving`
 * also clears upload staging left by a crash: only the serving process may
 * do that (the cluster primary with workers), never a CLI command running
 * beside a live server.
 */
export async function openDataDir(config: Config, serving: boolean, opts: { credentials?: S3Credentials; redis?: Redis; breaker?: RedisBreaker; logger?: Logger } = {}): Promise<{ store: MetadataStore; backend: StorageBackend; stored: StorageBackend; leases: LeaseRepo; paths: ReturnType<typeof dataPaths> }> {
  const paths = dataPaths(config.dataDir);
  await mkdir(paths.storage, { recursive: true });
  await mkdir(paths.tmp, { recursive: true });
  const timeoutMs = config.serviceTimeout * 1000;
  const journal = config.changes;
  const store = config.database.kind === 'postgres' ? await openPostgresStore(config.database.url, { timeoutMs, journal }) : await openSqliteStore(paths.db, { journal });
  const leases = opts.redis ? fallbackLeaseRepo(redisLeaseRepo(opts.redis), store.leases, opts.breaker ?? redisBreaker()) : store.leases;
  // With a key every size the backend reports is the plaintext's (size-view.ts), even a file's from before the key.
  const sizes = config.encryptionKeyFile ? plaintextSizes : undefined;
  const stored = await openBackend(config.storage, { leases, journal: store.journal }, store.search, paths, { ...opts, timeoutMs, sizes });
  let backend: StorageBackend;
  try {
    // Hashes above encryption: a file's sha256 is its plaintext's, taken as its bytes go down (storage/hashing.ts).
    backend = withHashes(await withEncryption(config.encryptionKeyFile, store.settings, stored, opts.logger));
  } catch (e) {
    await stored.close();
    await store.close();
    throw e;
  }
  if (serving) {
    try {
      await backend.init();
    } catch (e) {
      await backend.close();
      await store.close();
      throw e;
    }
  }
  return { store, backend, stored, leases, paths };
}

/**
 * The StorageBackend that --storage names. The S3 SDK is loaded only for S3
 * storage (on local disk it would cost every process memory for nothing).
 * On S3 the store's index answers a write's questions about names (`names`:
 * the search index, which every process keeps from its storage events).
 */
export async function openBackend(storage: StorageUrl, coordination: Coordination, names: NameIndex, paths: ReturnType<typeof dataPaths>, opts: { credentials?: S3Credentials; timeoutMs?: number; sizes?: SizeView } = {}): Promise<StorageBackend> {
  if (storage.kind === 'file') return createLocalBackend({ storageDir: paths.storage, tmpDir: paths.tmp, trashDir: paths.trash, versionsDir: paths.versions, ...(opts.sizes ? { sizes: opts.sizes } : {}) }, coordination);
  const { createS3Backend } = await import('./storage/s3/s3-backend.js');
  return createS3Backend(storage, coordination, names, opts);
}

/**
 * The key that signs path tokens: --secret-file when given; with PostgreSQL
 * the database, so every node that shares it accepts the others' tokens;
 * otherwise data/secret.
 */
export async function loadSecret(config: Config, store: MetadataStore, paths: ReturnType<typeof dataPaths>): Promise<Buffer> {
  if (config.secretFile) return loadOrCreateSecret(resolve(config.secretFile));
  if (config.database.kind === 'postgres') return Buffer.from(await store.settings.getOrCreate('path_token_secret', () => randomBytes(32).toString('base64')), 'base64');
  return loadOrCreateSecret(paths.secret);
}

/**
 * What names a deployment's keys in Redis. In the database everything is per deployment already
 * (one database, one deployment), but one Redis may serve several deployments, each with its own
 * database: there the login throttle's counters and the change signal's channel carry the
 * deployment's id (kept in its database), or the sign-ins to one would count against the others'
 * limit. (The leader lease is in the database, per deployment already.)
 */
async function deploymentId(store: MetadataStore): Promise<string> {
  return store.settings.getOrCreate('deployment_id', () => randomUUID());
}

export type RunningServer = {
  readonly app: FastifyInstance;
  readonly url: string;
  readonly firstAdmin: { username: string; password: string; generated: boolean } | undefined;
  /** Stops accepting, lets in-flight requests finish for up to `graceMs`, then closes everything. */
  close(graceMs?: number): Promise<void>;
};

/**
 * Composition root: config → store → backend → app → listen. `prepared`
 * says the cluster primary already cleared staging and created the first
 * admin (a worker must do neither).
 */
export async function startServer(config: Config, logger: Logger, opts: { worker?: boolean } = {}): Promise<RunningServer> {
  const redis = config.redis ? openRedis(config.redis, { timeoutMs: config.serviceTimeout * 1000 }) : undefined;
  // ioredis reports a lost connection as an 'error' event too: logged by the breaker, never an uncaught exception.
  redis?.on('error', () => undefined);
  const breaker = redisBreaker((err) => logger.warn({ err }, 'Redis does not answer: the login throttle and locks use the database until it does'));
  const { store, backend, leases, paths } = await openDataDir(config, !opts.worker, { redis, breaker, logger });
  const secret = await loadSecret(config, store, paths);
  const deployment = redis ? await deploymentId(store) : undefined;
  // The leader lease is in the database even with Redis: a leader must be one, and a Redis command
  // that times out on one process only (a slow start, a busy machine) sent that process to the
  // database's lease while another held Redis's: two leaders, each delivering every webhook. Every
  // process reaches the database anyway, and a renewal every 10 s is nothing to it.
  const leader = startLeaderElection(store.leases, {
    name: 'leader',
    onError: (err) => logger.warn({ err }, 'leader election failed'),
  });
  const rateLimiter = redis ? fallbackRateLimiter(redisRateLimiter(redis, config.loginRateLimit, LOGIN_WINDOW_MS, deployment), storeRateLimiter(store.rates, config.loginRateLimit), breaker) : undefined;
  // Imported here, as buildApp below: the cluster's primary, which never serves, loads no service it does not use.
  const { createServices } = await import('./app/services.js');
  const services = createServices(config, store, backend, { log: logger, secret, rateLimiter, isLeader: leader.isLeader, redis, deployment });
  // Before the port opens, so the first request can already sign in; undone below when the port
  // cannot be had, so a failed start leaves nobody behind (and no password was printed).
  const users = services.users;
  const firstAdmin = opts.worker ? undefined : await users.ensureFirstAdmin(config.adminPassword || undefined);
  // Not a cluster's worker: the one process that serves (a primary logs its own count).
  if (!opts.worker) logger.info({ config: redactedConfig(config), workers: 1 }, 'effective configuration');
  // Imported here: the cluster's primary, which never serves, loads none of the app's modules.
  const { buildApp } = await import('./app/build-app.js');
  const app = await buildApp(config, { store, backend, secret, logger, webRoot: WEB_ROOT, services });
  // A process of the deployment (on any node, the leader before this one too) died mid-write: its
  // last changes may be on storage but not in the change journal.
  // Its changes' leases are freed first: the rescan leaves a path whose lease is held to the change
  // that holds it, and a dead process's change never finishes (src/lib/process-id.ts).
  const liveness = startLiveness(store.leases, {
    owner: PROCESS_ID,
    isLeader: leader.isLeader,
    onError: (err) => logger.warn({ err }, 'the liveness heartbeat failed'),
    onDeaths: (deaths) => {
      logger.info({ deaths: deaths.map((d) => ({ process: d.owner, expired_at: new Date(d.expiredAt).toISOString() })) }, 'a process of the deployment died without stopping: rescanning storage for changes it may not have journaled');
      void Promise.all(deaths.map((d) => leases.releaseHeldBy(d.owner)))
        .then(
          (freed) => logger.info({ freed: freed.reduce((a, b) => a + b, 0) }, 'the leases the dead processes held are freed'),
          (err: unknown) => logger.warn({ err }, 'freeing the leases of a dead process failed: the rescan leaves the paths they hold unjournaled'),
        )
        .then(() => app.requestRescan({ after: Math.max(...deaths.map((d) => d.expiredAt)) }));
    },
  });
  try {
    await app.listen({ host: config.host, port: config.port });
  } catch (e) {
    if (firstAdmin) await users.undoFirstAdmin(firstAdmin.username).catch((err: unknown) => logger.warn({ err }, 'removing the first admin of a failed start failed'));
    await app.close().catch(() => undefined);
    await liveness.stop();
    await leader.stop();
    await backend.close();
    await store.close();
    redis?.disconnect();
    const described = describeListenError(e, config.host, config.port);
    throw described ? new Error(described, { cause: e }) : e;
  }
  // After the port opened: start-up's own garbage is the first thing it gives back.
  const idleReducer = startIdleReducer();
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;

  let closing: Promise<void> | undefined;
  const close = (graceMs = 10_000) =>
    (closing ??= (async () => {
      idleReducer.stop();
      const force = setTimeout(() => app.server.closeAllConnections(), graceMs);
      force.unref();
      try {
        await app.close();
      } finally {
        clearTimeout(force);
        await liveness.stop();
        await leader.stop();
        await backend.close();
        await store.close();
        redis?.disconnect();
      }
    })());
  return { app, url: `http://${host}:${port}${config.basePath}`, firstAdmin, close };
}
