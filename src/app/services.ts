import { statfs } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import type { Redis } from 'ioredis';
import type { Config } from '../config/options.js';
import { loadOidcSettings } from '../config/oidc.js';
import { systemClock, type Clock } from '../lib/clock.js';
import type { StorageBackend } from '../storage/backend.js';
import type { MetadataStore } from '../store/metadata-store.js';
import { storeRateLimiter, type RateLimiter } from '../store/rate-limiter.js';
import { createAccountService } from '../services/account.js';
import { createApiKeyService } from '../services/api-keys.js';
import { createAuditService } from '../services/audit.js';
import { auditView, webhookBody } from '../routes/views.js';
import { createAuthService } from '../services/auth.js';
import { createCursorCodec, createTreeTags } from '../services/change-cursor.js';
import { createChangeSignal } from '../services/change-signal.js';
import { createChangeStreams, STREAM_SLOT_MS, STREAMS_PER_USER } from '../services/change-streams.js';
import { createChangeWaker } from '../services/change-waker.js';
import { createChangeService } from '../services/changes.js';
import { createDavSync } from '../services/dav-sync.js';
import { createDavService, type DavService } from '../services/dav.js';
import { followStorageForDav } from '../services/dav-records.js';
import { createFilesService } from '../services/files.js';
import { backendFolderEtags, createFolderEtags } from '../services/folder-etags.js';
import { createGrantService, type GrantService } from '../services/grants.js';
import { createGroupService } from '../services/groups.js';
import type { decide } from '../domain/access.js';
import { createOperations, type Operations } from '../services/operations.js';
import { createPasswordHasher, type PasswordHasher } from '../services/passwords.js';
import { createPathTokenService } from '../services/path-token-service.js';
import { createSafetyNet } from '../services/safety-net.js';
import { createSearchService } from '../services/search.js';
import { createSecondFactor } from '../services/second-factor.js';
import { createShareService, type ShareService } from '../services/shares.js';
import { createSshKeyService } from '../services/ssh-keys.js';
import { createStreamSlots } from '../services/stream-slots.js';
import { createThumbnailService, DEFAULT_THUMBNAIL_LIMITS } from '../services/thumbnails.js';
import { createTrashService } from '../services/trash.js';
import { createTusService } from '../services/tus.js';
import { accountUsage, createUsageService } from '../services/usage.js';
import { createUserService } from '../services/users.js';
import { createVersionService } from '../services/versions.js';
import { auditEventSource, changeJournalSource, createWebhookService } from '../services/webhooks.js';
import { createZipService } from '../services/zip.js';

/** Where a service reports a failure it cannot answer to a caller (a background write, a sweep). */
export type ServiceLog = { warn(obj: object, msg: string): void; error(obj: object, msg: string): void; info(obj: object, msg: string): void };

export type ServiceOptions = {
  readonly log: ServiceLog;
  /** The key of path tokens, change cursors, share cookies and /basic/ CSRF tokens (only the services that sign need it). */
  readonly secret?: Buffer;
  readonly clock?: Clock;
  readonly hasher?: PasswordHasher;
  /** The login throttle's counter (Redis when configured); default: the metadata store. */
  readonly rateLimiter?: RateLimiter;
  /**
   * Whether this process does the deployment's background work (sweeps, webhook delivery): the node
   * that holds the leader lease; without one, every process does it (safe, just repeated work).
   */
  readonly isLeader?: () => boolean;
  /** The Redis client when --redis is given: change streams' wake-ups across nodes (and the app's health check). */
  readonly redis?: Redis;
  /** Keeps the Redis channels of deployments that share one Redis apart (src/main.ts deploymentId). */
  readonly deployment?: string | undefined;
  /**
   * A CLI command beside a running server: its audit entries go to the log, not to --audit-log's
   * file, which the server creates with its own owner and mode (a command run as root would take it).
   */
  readonly command?: boolean;
  /**
   * The operation layer's `decide` (default: src/domain/access.ts's). The one-door test gives a spy
   * that refuses every key, to see each front end ask the layer beyond the auth hook's check.
   */
  readonly decide?: typeof decide;
};

/** Builds a value on first use and keeps it, so each service exists once and only when asked for. */
function once<T>(make: () => T): () => T {
  let made: { value: T } | undefined;
  return () => (made ??= { value: make() }).value;
}

/**
 * As `once`, and notes in `built` that it was made (what `close()` must end) — only once it was: a
 * service whose making threw (a root opened without storage) is not there to end, and asking for it
 * again in `close()` would throw there.
 */
function tracked<T>(built: Set<string>, name: string, make: () => T): () => T {
  return once(() => {
    const made = make();
    built.add(name);
    return made;
  });
}

function need<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`createServices: ${what} was not given`);
  return value;
}

/**
 * The composition root of the services: every service of the product, built the one way, from one
 * config, store and backend. The server (buildApp) and every CLI command take what they need from
 * it; a service is built on first use, so a command pays (and subscribes to storage events) only
 * for the few it touches. `close()` ends those that were built, in dependency order.
 */
export function createServices(config: Config, store: MetadataStore, backend: StorageBackend | undefined, opts: ServiceOptions) {
  // A root opened without storage (`audit verify`, which must work while storage is down) builds only what needs none.
  const storage = (): StorageBackend => need(backend, 'the storage backend (this root was opened on the metadata store alone)');
  const clock = opts.clock ?? systemClock;
  const log = opts.log;
  const warn = (msg: string) => (err: unknown) => log.warn({ err }, msg);
  const secret = () => need(opts.secret, 'the secret');
  const built = new Set<string>();
  const leading = opts.isLeader ?? (() => true);

  const hasher = once(() => opts.hasher ?? createPasswordHasher());
  // --dev lifts the login throttle (and with it the throttles that count in it).
  const throttle = once(() => (config.dev ? undefined : (opts.rateLimiter ?? storeRateLimiter(store.rates, config.loginRateLimit))));
  const secondFactor = once(() => createSecondFactor({ store, clock, limiter: throttle() }));
  // --oidc-only: password sign-in (API, /basic/, WebDAV) for accounts marked local only.
  const passwordAllowed = config.oidcIssuer && config.oidcOnly ? (u: { id: string }) => store.oidc.isLocal(u.id) : undefined;
  const auth = once(() => createAuthService({ store, hasher: hasher(), clock, accessTokenTtl: config.accessTokenTtl, refreshTokenTtl: config.refreshTokenTtl, secondFactor: secondFactor(), passwordAllowed }));
  const users = once(() => createUserService({ store, backend: storage(), hasher: hasher(), clock }));
  const oidcSettings = once(() => loadOidcSettings(config));
  // openid-client is loaded only when single sign-on is configured: a deployment without it pays no memory for it.
  const oidc = tracked(built, 'oidc', async () => {
    const settings = await oidcSettings();
    return settings && (await import('../services/oidc.js')).createOidcService({ settings, store, users: users(), auth: auth(), clock, log });
  });
  const groups = once(() => createGroupService({ store, clock }));
  const trash = once(() => createTrashService({ store, backend: storage(), clock, days: config.trashDays, index: store.search }));
  const versions = tracked(built, 'versions', () => createVersionService({ store, backend: storage(), clock, enabled: config.versions, maxDays: config.versionsMaxDays, onError: warn('thinning file versions failed') }));
  const storageUsage = tracked(built, 'storageUsage', () => {
    const usage = createUsageService({ store, backend: storage(), onError: (err) => log.error({ err }, 'updating storage usage failed') });
    // The owner's own upload that would pass the quota purges their oldest kept bytes (versions and trash) first.
    usage.setReclaim(createSafetyNet({ versions: versions(), trash: trash() }).makeRoom);
    return usage;
  });
  // --changes off: nothing stamps folders, so their ETags are the backend's own (docs/sync.md "Without the feed").
  const folderEtags = once(() => (config.changes ? createFolderEtags(store.changes, createTreeTags(secret())) : backendFolderEtags(storage())));
  // WebDAV's locks and dead properties follow every move and delete, whichever front end made it; built with the files service, through which they all pass.
  const davRecords = tracked(built, 'davRecords', () => followStorageForDav(store, storage()));
  const files = once(() => (davRecords(), createFilesService({ backend: storage(), maxUploadBytes: config.maxUploadSize, usage: storageUsage(), trash: trash(), versions: versions(), folderEtags: folderEtags(), index: store.search })));
  const zips = once(() => createZipService({ backend: storage(), crcs: store.zipCrcs, clock }));
  // Failed grant creations count in the login throttle, per caller.
  // The layer asks grants which one reaches a key, and grant creation asks the layer: it is reached through a getter.
  const grants: () => GrantService = tracked(built, 'grants', () => createGrantService({ store, backend: storage(), files: files(), operations: { may: (...args) => operations().may(...args) }, clock, limiter: throttle(), onError: warn('giving back a grant creation\'s place in the throttle failed') }));
  // The one door: every front end's file operations, with `decide` asked for every key they take.
  // The WebDAV and share services ask this layer's `may` themselves, so the layer reaches them through getters.
  const operationDeps = once(() => ({ files: files(), grants: grants(), versions: versions(), thumbnails: thumbnails(), zips: zips(), dav: (): DavService => dav(), shares: (): ShareService => shares() }));
  const operations: () => Operations = once(() => createOperations({ ...operationDeps(), decide: opts.decide }));
  const pathTokens = once(() => createPathTokenService({ secret: secret(), store, clock, maxTtl: config.pathTokenTtl, operations: { may: (...args) => operations().may(...args) } }));
  const tus = once(() => createTusService({ store, backend: storage(), clock, maxUploadBytes: config.maxUploadSize, expirySeconds: config.uploadExpiry, maxOpenUploads: config.maxOpenUploads, usage: storageUsage(), operations: operations(), versions: versions() }));
  const usage = once(() => accountUsage(storageUsage()));
  const account = once(() => createAccountService({ store, auth: auth(), users: users(), secondFactor: secondFactor(), usage: usage(), clock }));
  const shares: () => ShareService = tracked(built, 'shares', () => createShareService({ store, backend: storage(), files: files(), operations: operations(), hasher: hasher(), clock, secret: secret(), onError: warn('ending the shares of a deleted or moved path failed') }));
  const thumbnails = once(() =>
    createThumbnailService({
      backend: storage(),
      options: {
        ...DEFAULT_THUMBNAIL_LIMITS,
        // Per node, whatever the storage: docs/storage.md ("Thumbnails").
        cacheDir: join(resolve(config.dataDir), 'cache', 'thumbnails'),
        namespace: config.storage.kind === 'file' ? 'file' : `s3:${config.storage.endpoint ?? ''}/${config.storage.bucket}/${config.storage.prefix}`,
        concurrency: availableParallelism(),
        stagingDir: join(resolve(config.dataDir), 'tmp'),
      },
      onToolMissing: (tool) => opts.log.warn({ tool }, `${tool} is not installed: PDFs or videos get no thumbnail on this node (docs/operations.md)`),
    }),
  );
  const changeSignal = tracked(built, 'changeSignal', () => createChangeSignal({ latest: () => store.changes.latest(), redis: opts.redis, channel: opts.deployment ? `fc:changes:${opts.deployment}` : 'fc:changes', onError: warn('change stream wake-up failed') }));
  const changes = once(() => createChangeService({ store, clock, retentionSeconds: config.changesRetention, cursors: createCursorCodec(secret()), enabled: config.changes }));
  const changeWaker = once(() => createChangeWaker({ signal: changeSignal(), changes: store.changes, grants: store.grants, onError: warn('change stream wake-up failed') }));
  const changeStreams = once(() => createChangeStreams({ changes: changes(), waker: changeWaker(), slots: createStreamSlots({ leases: store.leases, clock, perUser: STREAMS_PER_USER, holdMs: STREAM_SLOT_MS }), onError: warn('change stream ended') }));
  // The layer is asked only when a search is answered: a rescan (`file-cloud index`) builds no file service.
  const search = tracked(built, 'search', () => createSearchService({ store, backend: storage(), operations: { as: (principal) => operations().as(principal) }, onError: warn('updating the search index failed'), ...(config.changes ? { onChange: () => changeSignal().notify() } : {}) }));
  // An entry appended on the leader wakes webhook delivery at once (onAuditAppend); elsewhere the leader's next round finds it.
  let auditAppended = () => {};
  const audit = tracked(built, 'audit', () =>
    createAuditService({
      repo: store.audit,
      clock,
      retentionDays: config.auditRetention,
      exportTo: opts.command ? undefined : config.auditLog,
      exportLine: (row) => JSON.stringify(auditView(row)),
      onAppend: () => auditAppended(),
      onError: (err) => log.error({ err }, 'recording an audit event failed'),
    }),
  );
  const webhooks = tracked(built, 'webhooks', () =>
    createWebhookService({
      repo: store.webhooks,
      sources: [auditEventSource(store.audit), changeJournalSource(store.changes)],
      clock,
      allowPrivate: config.webhooksAllowPrivate,
      leading,
      onDisabled: (hook, reason) => void audit().record({ type: 'webhook.disabled', target: hook.id, outcome: 'failure', detail: { url: hook.url, reason } }),
      body: webhookBody,
      onError: warn('webhook delivery failed'),
    }),
  );
  const keys = once(() => createApiKeyService({ store, clock, onError: warn('recording an app password\'s last use failed') }));
  const sshKeys = once(() => createSshKeyService({ store, clock, onError: warn('recording an SSH key\'s last use failed') }));
  const davSync = once(() => createDavSync({ files: files(), backend: storage(), changes: changes(), folderEtags: folderEtags() }));

  // RFC 4331 quota-available-bytes: the free space of the disk under the data dir; an object store has no such figure.
  const storageDir = join(resolve(config.dataDir), 'storage');
  const freeBytes = config.storage.kind === 'file' ? async () => statfs(storageDir).then((s) => s.bavail * s.bsize, () => undefined) : undefined;
  // WebDAV's rules over the tree, for /dav/ and the SFTP front end alike.
  const dav: () => DavService = once(() => createDavService({ folderEtags: folderEtags(), files: files(), usage: storageUsage(), backend: storage(), store, clock, freeBytes, operations: operations(), limits: { properties: config.davMaxProperties, propertySize: config.davMaxPropertySize, locks: config.davMaxLocks } }));
  let closing: Promise<void> | undefined;
  const ifBuilt = <T>(name: string, get: () => T): T | undefined => (built.has(name) ? get() : undefined);

  return {
    clock,
    /** Whether this process does the deployment's background work now (opts.isLeader). */
    leading,
    /** The Redis client when --redis is given (the health check pings it). */
    redis: opts.redis,
    get hasher() { return hasher(); },
    get throttle() { return throttle(); },
    get auth() { return auth(); },
    get users() { return users(); },
    /** The single sign-on settings (undefined when not configured); reading --oidc-client-secret-file is why it is async. */
    oidcSettings,
    /** Single sign-on, undefined when not configured. */
    oidc: () => oidc(),
    get groups() { return groups(); },
    get trash() { return trash(); },
    get versions() { return versions(); },
    /** Storage usage with the quota's reclaim of versions and trash (accountUsage: the account's view of it). */
    get storageUsage() { return storageUsage(); },
    get usage() { return usage(); },
    get folderEtags() { return folderEtags(); },
    get files() { return files(); },
    get zips() { return zips(); },
    get grants() { return grants(); },
    get operations() { return operations(); },
    /** What the operation layer is built on (tests build it again with a spy `decide`). */
    get operationDeps() { return operationDeps(); },
    get pathTokens() { return pathTokens(); },
    get tus() { return tus(); },
    get account() { return account(); },
    get shares() { return shares(); },
    get thumbnails() { return thumbnails(); },
    get changeSignal() { return changeSignal(); },
    get changes() { return changes(); },
    get changeWaker() { return changeWaker(); },
    get changeStreams() { return changeStreams(); },
    get search() { return search(); },
    get audit() { return audit(); },
    get webhooks() { return webhooks(); },
    get keys() { return keys(); },
    get sshKeys() { return sshKeys(); },
    get davSync() { return davSync(); },
    get dav() { return dav(); },
    /** Calls `wake` after each audit entry this process appends (the webhook delivery loop). */
    onAuditAppend(wake: () => void): void {
      auditAppended = wake;
    },
    /** Ends the services that were built (storage-event subscriptions, pending writes, sign-in discovery, the audit export); once, however often called. */
    close(): Promise<void> {
      closing ??= (async () => {
        auditAppended = () => {};
        ifBuilt('search', search)?.close();
        await ifBuilt('changeSignal', changeSignal)?.close();
        await ifBuilt('shares', shares)?.close();
        ifBuilt('grants', grants)?.close();
        ifBuilt('versions', versions)?.close();
        ifBuilt('davRecords', davRecords)?.();
        await ifBuilt('storageUsage', storageUsage)?.close();
        (await ifBuilt('oidc', oidc))?.close();
        await ifBuilt('webhooks', webhooks)?.settle();
        await ifBuilt('audit', audit)?.close();
      })();
      return closing;
    },
  };
}

export type Services = ReturnType<typeof createServices>;
