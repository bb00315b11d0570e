import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app/build-app.js';
import { createLogger } from '../../src/app/logger.js';
import { loadConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/options.js';
import { systemClock, type Clock } from '../../src/lib/clock.js';
import { loadOrCreateSecret } from '../../src/lib/secret.js';
import { dataPaths, openDataDir } from '../../src/main.js';
import { createServices, type ServiceLog } from '../../src/app/services.js';
import { createPasswordHasher, type PasswordHasher } from '../../src/services/passwords.js';
import { compareCodePoints } from '../../src/domain/names.js';
import { parseDecodedStoragePath } from '../../src/domain/storage-path.js';
import type { decide } from '../../src/domain/access.js';
import { listAll, type StorageBackend } from '../../src/storage/backend.js';
import type { S3Credentials } from '../../src/storage/s3/client.js';
import type { MetadataStore } from '../../src/store/metadata-store.js';
import { login, type Tokens } from './client.js';
import { newBucket, newDatabase, redisService, s3Service, skipReason } from './services.js';
import { s3ServerOptions, startServer } from './server.js';
import { OPTIONS } from '../../src/config/options.js';
import { answerChecker } from './answer-check.js';

/**
 * Cheaper scrypt cost for route tests only: the same code path, a smaller N,
 * so a suite that logs in dozens of times stays fast. The production cost is
 * covered by the process tests, which run the real binary.
 */
export const testHasher = (): PasswordHasher => createPasswordHasher({ params: { N: 2 ** 10, r: 8, p: 1 } });

/**
 * What a test app runs on: local disk + SQLite in this process, the run's S3
 * (a fresh prefix each) + SQLite in this process, or `cluster`: the real
 * binary with two workers on S3 + PostgreSQL + Redis (CONTRACT "Backends and
 * nodes": every feature on every backend, with several workers).
 */
export type TestStorage = 'file' | 's3' | 'cluster';

/**
 * The backends every storage feature is tested on, each with its skip reason
 * (undefined to run). Suites loop over it: `for (const [storage, skip] of BACKENDS) …`.
 */
export const BACKENDS: readonly (readonly [TestStorage, string | undefined])[] = [
  ['file', undefined],
  ['s3', skipReason('S3')],
  ['cluster', skipReason('S3') ?? skipReason('PostgreSQL') ?? skipReason('Redis')],
];

let sharedBucket: Promise<string> | undefined;

const QUIET: ServiceLog = { warn: () => undefined, error: () => undefined, info: () => undefined };

/** `--storage` for a test app on S3: the file's shared bucket, a fresh prefix per app. */
async function s3StorageFlag(): Promise<string> {
  const s = s3Service();
  if (!s) throw new Error('no test S3 service; guard the test with skipReason("S3")');
  sharedBucket ??= newBucket('fc-app');
  return `s3://${await sharedBucket}/${randomUUID()}?endpoint=${encodeURIComponent(s.endpoint)}&region=${s.region}&path_style=true`;
}

/** The test S3's credentials (the server takes them from the standard AWS chain; in-process tests pass them). */
export function s3Credentials(): S3Credentials | undefined {
  const s = s3Service();
  return s && { accessKeyId: s.accessKeyId, secretAccessKey: s.secretAccessKey };
}

/** Fixtures through the storage seam, so a test reads and writes the same on every backend. */
export type Fixtures = {
  put(path: string, data: string | Buffer, user?: string): Promise<void>;
  mkdir(path: string, user?: string): Promise<void>;
  /** The file's bytes, or undefined when no file is there. */
  read(path: string, user?: string): Promise<Buffer | undefined>;
  text(path: string, user?: string): Promise<string | undefined>;
  /** File, folder or undefined. */
  kind(path: string, user?: string): Promise<'file' | 'folder' | undefined>;
  /** Names in a folder, sorted by code point. */
  names(path: string, user?: string): Promise<string[]>;
};

function fixtures(backend: StorageBackend): Fixtures {
  const key = (path: string, user = 'alice') => parseDecodedStoragePath(`${user}/${path.replace(/\/$/, '')}`.replace(/^([^/]+)$/, '$1/')).key;
  const read = async (path: string, user?: string) => {
    const entry = await backend.stat(key(path, user));
    if (!entry?.isFile) return undefined;
    const parts: Buffer[] = [];
    for await (const c of (await backend.read(key(path, user))).stream) parts.push(c as Buffer);
    return Buffer.concat(parts);
  };
  return {
    put: async (path, data, user) => void (await backend.write(key(path, user), Readable.from([Buffer.from(data)]), { ifExists: 'replace' })),
    mkdir: (path, user) => backend.mkdir(key(path, user), { parents: true, existOk: true }),
    read,
    text: async (path, user) => (await read(path, user))?.toString(),
    kind: async (path, user) => {
      const e = await backend.stat(key(path, user));
      return e === undefined ? undefined : e.isFile ? 'file' : 'folder';
    },
    names: async (path, user) => (await listAll(backend, key(path, user))).map((e) => e.name).sort(compareCodePoints),
  };
}

export type TestApp = {
  /** Where the app answers: the origin plus --base-path when one is set. */
  readonly url: string;
  /** scheme://host:port only. */
  readonly origin: string;
  readonly app: FastifyInstance;
  readonly dataDir: string;
  readonly paths: ReturnType<typeof dataPaths>;
  readonly store: MetadataStore;
  readonly backend: StorageBackend;
  readonly storage: TestStorage;
  /** Storage fixtures through the seam (work on every backend). */
  readonly fs: Fixtures;
  readonly config: Config;
  /** Creates a user (password `<name>-password`). */
  addUser(name: string, opts?: { admin?: boolean; password?: string }): Promise<void>;
  /** Logs in a user created with addUser. */
  login(name: string): Promise<Tokens>;
  close(): Promise<void>;
};

/**
 * The real application (buildApp) on a real port with a real SQLite file
 * and real disk, in a temporary data dir, in this process.
 */
export async function startApp(
  opts: {
    flags?: Record<string, string | boolean>;
    users?: string[];
    clock?: Clock;
    logTo?: NodeJS.WritableStream;
    webRoot?: string;
    storage?: TestStorage;
    /** The processes' environment (`cluster` only: the in-process app reads none). */
    env?: Record<string, string>;
    /** The operation layer's `decide` (a spy that refuses keys); the auth hook keeps the real one. Not for `cluster`. */
    decide?: typeof decide;
  } = {},
): Promise<TestApp> {
  if (opts.storage === 'cluster') return startClusterApp(opts);
  const dataDir = await mkdtemp(join(tmpdir(), 'fc-app-'));
  const storage = opts.storage ?? 'file';
  const storageFlag = storage === 's3' ? { storage: await s3StorageFlag() } : {};
  const config = loadConfig({ dataDir, logLevel: 'silent', dev: true, ...storageFlag, ...opts.flags }, {});
  const logger = opts.logTo ? createLogger('info', opts.logTo) : createLogger('silent');
  const { store, backend, paths } = await openDataDir(config, true, { credentials: s3Credentials(), logger });
  const secret = await loadOrCreateSecret(paths.secret);
  const hasher = testHasher();
  const clock = opts.clock ?? systemClock;
  // The composition root production uses (src/app/services.ts), so a test wires what the server wires.
  const services = createServices(config, store, backend, { log: logger, secret, hasher, clock, decide: opts.decide });
  const { users } = services;
  // Every answer is checked against its route's schema; close() fails the suite on an undocumented one.
  const answers = answerChecker();
  const app = await buildApp(config, {
    store, backend, secret, hasher, clock, logger, webRoot: opts.webRoot, checkAnswer: answers.check, services,
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  const origin = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  const url = `${origin}${config.basePath}`;
  const t: TestApp = {
    url,
    origin,
    app,
    dataDir,
    paths,
    store,
    backend,
    storage,
    fs: fixtures(backend),
    config,
    addUser: async (name, o = {}) => void (await users.add(name, o.password ?? `${name}-password`, o.admin ?? false)),
    login: (name) => login(url, name, `${name}-password`),
    async close() {
      await app.close();
      await backend.close();
      await store.close();
      await rm(dataDir, { recursive: true, force: true });
      if (answers.problems.length > 0) {
        throw new Error(`answers that the route schemas do not document (fix the schema, src/http/schemas.ts):\n${[...new Set(answers.problems)].join('\n')}`);
      }
    },
  };
  for (const u of opts.users ?? []) await t.addUser(u);
  return t;
}

/**
 * The `cluster` test app: the real binary with `--workers 2` on S3 +
 * PostgreSQL + Redis, with the same TestApp surface. Fixtures and users go
 * through this process's own store and backend on the same database and
 * prefix, as another node would. `app` (the in-process Fastify) does not
 * exist here; `flags` are passed as command-line options.
 */
async function startClusterApp(opts: { flags?: Record<string, string | boolean>; users?: string[]; clock?: Clock; logTo?: NodeJS.WritableStream; env?: Record<string, string>; decide?: unknown }): Promise<TestApp> {
  if (opts.clock) throw new Error('a cluster test app runs in its own processes: no clock can be injected');
  if (opts.decide) throw new Error('a cluster test app runs in its own processes: no decide can be injected');
  const dataDir = await mkdtemp(join(tmpdir(), 'fc-cluster-app-'));
  const s3 = await s3ServerOptions();
  const database = await newDatabase('app');
  const redis = redisService() as string;
  const flags = { dev: true, ...opts.flags };
  const args = ['--workers', '2', '--database', database, '--redis', redis, ...s3.args];
  for (const [key, value] of Object.entries(flags)) {
    const spec = (OPTIONS as Record<string, { flag: string }>)[key];
    if (!spec) throw new Error(`unknown option ${key}`);
    if (value === true) args.push(spec.flag);
    else if (value !== false) args.push(spec.flag, value);
  }
  // A primary and two workers, each loading the S3 SDK and opening PostgreSQL and Redis: on a busy
  // 2-core machine that took over 20 s. The timeout only tells a hung start from a slow one.
  // logTo: the processes' JSON log lines at info, as they print them, from here on.
  const server = await startServer({ args, env: { ...s3.env, FILE_CLOUD_LOG_LEVEL: opts.logTo ? 'info' : 'silent', FILE_CLOUD_LOG_FORMAT: 'json', ...opts.env }, dataDir, keepDataDir: true, startTimeoutMs: 60_000 });
  if (opts.logTo) server.proc.stdout?.on('data', (d: Buffer) => opts.logTo?.write(d));
  const config = loadConfig({ dataDir, logLevel: 'silent', storage: s3.storage, database, redis, ...flags }, {});
  const { store, backend, paths } = await openDataDir(config, false, { credentials: s3Credentials() });
  // As another node, from the composition root a CLI command uses: what it writes reaches the shared
  // index before it returns (on S3 the index answers every node's writes, CONTRACT "Backends and nodes").
  const services = createServices(config, store, backend, { log: QUIET, hasher: testHasher(), command: true });
  void services.search;
  const { users } = services;
  const url = server.url;
  const t: TestApp = {
    url,
    origin: new URL(url).origin,
    get app(): FastifyInstance {
      throw new Error('a cluster test app has no in-process Fastify instance');
    },
    dataDir,
    paths,
    store,
    backend,
    storage: 'cluster',
    fs: fixtures(backend),
    config,
    addUser: async (name, o = {}) => void (await users.add(name, o.password ?? `${name}-password`, o.admin ?? false)),
    login: (name) => login(url, name, `${name}-password`),
    async close() {
      await server.dispose();
      await services.close();
      await backend.close();
      await store.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
  for (const u of opts.users ?? []) await t.addUser(u);
  return t;
}
