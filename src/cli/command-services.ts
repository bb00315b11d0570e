import type { Config } from '../config/options.js';
import { dataPaths, openDataDir } from '../main.js';
import { openPostgresStore } from '../store/postgres.js';
import { openSqliteStore } from '../store/sqlite.js';
import { createServices, type ServiceLog, type Services } from '../app/services.js';
import type { MetadataStore } from '../store/metadata-store.js';

/** A command reports what a service could not do on stderr, one line each, and carries on (its change is made already). */
const stderrLog: ServiceLog = {
  warn: (obj, msg) => report(obj, msg),
  error: (obj, msg) => report(obj, msg),
  info: () => undefined,
};

function report(obj: object, msg: string): void {
  const err = (obj as { err?: unknown }).err;
  process.stderr.write(`file-cloud: ${msg}${err instanceof Error ? `: ${err.message}` : ''}\n`);
}

/**
 * What a CLI command works with: the data directory's store and the services of the composition
 * root (src/app/services.ts), built as the command uses them. `close()` ends the services, then
 * the backend and the store. `storage: false` opens the metadata store alone (`audit verify`, which
 * must work while storage is unreachable or its encryption key elsewhere): the root then builds only
 * the services that need no storage, and refuses the others.
 */
export async function openCommandServices(config: Config, opts: { storage?: boolean } = {}): Promise<{ store: MetadataStore; services: Services; close(): Promise<void> }> {
  const { store, backend } = opts.storage === false ? { store: await openStoreOnly(config), backend: undefined } : await openDataDir(config, false);
  const services = createServices(config, store, backend, { log: stderrLog, command: true });
  return {
    store,
    services,
    async close() {
      try {
        await services.close();
      } finally {
        await backend?.close();
        await store.close();
      }
    },
  };
}

function openStoreOnly(config: Config): Promise<MetadataStore> {
  return config.database.kind === 'postgres' ? openPostgresStore(config.database.url, { timeoutMs: config.serviceTimeout * 1000 }) : openSqliteStore(dataPaths(config.dataDir).db);
}
