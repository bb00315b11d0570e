import { mkdtemp, rm } from 'node:fs/promises';
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
import { createPasswordHasher, type PasswordHasher } from '../../src/services/passwords.js';
import { createUserService } from '../../src/services/users.js';
import type { StorageBackend } from '../../src/storage/backend.js';
import type { MetadataStore } from '../../src/store/types.js';
import { login, type Tokens } from './client.js';

/**
 * Cheaper scrypt cost for route tests only: the same code path, a smaller N,
 * so a suite that logs in dozens of times stays fast. The production cost is
 * covered by the process tests, which run the real binary.
 */
export const testHasher = (): PasswordHasher => createPasswordHasher({ params: { N: 2 ** 10, r: 8, p: 1 } });

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
export async function startApp(opts: { flags?: Record<string, string | boolean>; users?: string[]; clock?: Clock; logTo?: NodeJS.WritableStream; webRoot?: string } = {}): Promise<TestApp> {
  const dataDir = await mkdtemp(join(tmpdir(), 'fc-app-'));
  const config = loadConfig({ dataDir, logLevel: 'silent', dev: true, ...opts.flags }, {});
  const { store, backend, paths } = await openDataDir(config, true);
  const secret = await loadOrCreateSecret(paths.secret);
  const hasher = testHasher();
  const clock = opts.clock ?? systemClock;
  const users = createUserService({ store, backend, hasher, clock });
  const app = await buildApp(config, { store, backend, secret, hasher, clock, logger: opts.logTo ? createLogger('info', opts.logTo) : createLogger('silent'), webRoot: opts.webRoot });
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
    config,
    addUser: async (name, o = {}) => void (await users.add(name, o.password ?? `${name}-password`, o.admin ?? false)),
    login: (name) => login(url, name, `${name}-password`),
    async close() {
      await app.close();
      await backend.close();
      await store.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
  for (const u of opts.users ?? []) await t.addUser(u);
  return t;
}
