import type { FastifyInstance } from 'fastify';
import type { Config } from '../config/options.js';
import type { StorageBackend } from '../storage/backend.js';
import type { MetadataStore } from '../store/metadata-store.js';
import type { Services } from './services.js';

/** The background work of a serving process: what it runs on its timers, and how to stop it. */
export type BackgroundWork = {
  /** Asks for a rescan of storage into the search index and change journal (see buildApp's `requestRescan`). */
  requestRescan(opts?: { after?: number }): void;
  /** Stops the timers and waits for the rounds in flight. */
  stop(): Promise<void>;
};

/**
 * The deployment's background work, done by the process that leads (`services.leading`, the leader
 * lease; every process when there is none): webhook delivery, the sweeps of sessions, rate logs, locks,
 * links, sign-in state, audit retention and the change journal, the storage sweep, and the search
 * rescans. Every process trims its own node's thumbnail cache. test/cluster/leader-work.test.ts checks
 * that a worker that does not lead does none of the deployment's share.
 */
export function startBackgroundWork(app: FastifyInstance, config: Config, deps: { store: MetadataStore; backend: StorageBackend; services: Services }): BackgroundWork {
  const { store, backend, services } = deps;
  const { leading, clock, auth, shares, audit, webhooks, changes, thumbnails, tus, trash, search } = services;
  const warn = (what: string) => (err: unknown) => app.log.warn({ err }, what);

  let webhookTick: Promise<void> | undefined;
  const deliver = () => {
    if (!leading() || webhookTick) return;
    webhookTick = webhooks.tick().catch(warn('webhook delivery round failed')).finally(() => (webhookTick = undefined));
  };
  services.onAuditAppend(() => void setImmediate(deliver));
  const webhookTimer = setInterval(deliver, 1000);

  const sweep = setInterval(() => {
    if (!leading()) return;
    auth.sweep().catch(warn('session sweep failed'));
    store.rates.deleteBefore(clock.now() - 10 * 60_000).catch(warn('rate log sweep failed'));
    store.davLocks.deleteExpired(clock.now()).catch(warn('WebDAV lock sweep failed'));
    shares.sweep().catch(warn('share link sweep failed'));
    void services.oidc().then((oidc) => oidc?.sweep()).catch(warn('single sign-on sweep failed'));
    audit.purge().catch(warn('audit log retention purge failed'));
    webhooks.sweep().catch(warn('webhook delivery log sweep failed'));
    changes.purge().catch(warn('change journal purge failed'));
  }, 60_000);
  // Every process trims the cache of its node (there is one per data dir, not one per cluster).
  const thumbnailPrune = setInterval(() => {
    thumbnails.prune().catch(warn('thumbnail cache prune failed'));
  }, 10 * 60_000);

  // Storage upkeep: staging and multipart uploads of dead writers, interrupted folder moves,
  // expired resumable uploads with their staged bytes.
  const staleMs = config.staleUploadAfter * 1000;
  let sweeping: Promise<void> | undefined;
  const storageSweep = setInterval(() => {
    if (!leading()) return;
    sweeping ??= Promise.all([backend.sweep({ staleMs }).catch(warn('storage sweep failed')), tus.sweep().catch(warn('resumable upload sweep failed'))])
      // After the backend's sweep, which finishes the moves into the trash that dead processes left.
      .then(() => trash.sweep().catch(warn('trash sweep failed')))
      .then(
        () => undefined,
        () => undefined,
      )
      .finally(() => (sweeping = undefined));
  }, storageSweepIntervalMs(config));

  // Search index upkeep: files other tools put into (or removed from) storage, once shortly
  // after start and then every --index-interval seconds (docs/architecture.md).
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
        warn('search index rescan failed'),
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
  for (const t of [webhookTimer, sweep, thumbnailPrune, storageSweep, ...rescanTimers]) t.unref();

  return {
    requestRescan(opts = {}) {
      if (config.indexInterval > 0 && !closed) rescan(opts.after);
    },
    async stop() {
      closed = true;
      for (const t of rescanTimers) clearTimeout(t);
      for (const t of [sweep, storageSweep, thumbnailPrune, webhookTimer]) clearInterval(t);
      await rescanning;
      await sweeping;
      await webhookTick;
    },
  };
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
