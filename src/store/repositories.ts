import type { Kysely } from 'kysely';
import type { Database } from './schema.js';
import type { ChangeStamp } from './stamped-cache.js';
import type { Ride, StepRunner } from './steps.js';
import type { IndexWrite } from './search-repo.js';
import type { MetadataStore } from './metadata-store.js';
import { createAuditRepo } from './audit-repo.js';
import { createWebhookRepo } from './webhooks-repo.js';
import { createApiKeyRepo } from './api-keys-repo.js';
import { createSshKeyRepo } from './ssh-keys-repo.js';
import { createChangeRepo } from './changes-repo.js';
import { createDavLockRepo } from './dav-locks-repo.js';
import { createDavPropertyRepo } from './dav-properties-repo.js';
import { createGrantRepo } from './grants-repo.js';
import { createGroupRepo } from './groups-repo.js';
import { createJournalRepo } from './journal-repo.js';
import { createLeaseRepo, type Flight } from './leases-repo.js';
import { createOidcRepo } from './oidc-repo.js';
import { createRateRepo } from './rate-repo.js';
import { createSearchRepo } from './search-repo.js';
import { createSessionRepo } from './sessions-repo.js';
import { createSettingsRepo } from './settings-repo.js';
import { createShareRepo } from './shares-repo.js';
import { createTotpRepo } from './totp-repo.js';
import { createTusUploadRepo } from './tus-uploads-repo.js';
import { createUsageRepo } from './usage-repo.js';
import { createUserRepo } from './users-repo.js';
import { createZipCrcRepo } from './zip-crcs-repo.js';
import { createTrashRepo } from './trash-repo.js';
import { createVersionRepo } from './versions-repo.js';

/** How a store is opened (beside where). */
export type StoreOptions = {
  /** Whether index writes append to the change journal (--changes, default on). */
  readonly journal?: boolean;
};

/** What a database's driver adds beside its Kysely instance. */
export type Engine = {
  /** SQLite only: lets the token and share lookups cache between writes to their tables (sqliteAuthStamp). */
  readonly changeStamp?: ChangeStamp | undefined;
  /** SQLite only: runs a pass over every entry with the connection's page cache small (SearchRepo.sweeping). */
  readonly sweeping?: (<T>(run: () => Promise<T>) => Promise<T>) | undefined;
  /** How the upload's index transaction runs (steps.ts); Kysely's own transaction when not given. */
  readonly steps?: StepRunner | undefined;
  /** SQLite: the upload's index transaction, run in the index writer's thread (sqlite-writer.ts); `steps` here when not given. */
  readonly write?: IndexWrite | undefined;
  /** Lets the usage counter's writes share a commit with the index's (steps.ts Ride). */
  readonly ride?: Ride | undefined;
  /** Sends a lease's statements in one round trip (leases-repo.ts Flight); one after another when not given. */
  readonly flight?: Flight | undefined;
};

/**
 * Every repository of the metadata store over one Kysely instance. SQLite and PostgreSQL run the
 * same SQL, so they are wired here once; a new repository is added in this one place. `changeStamp`
 * (SQLite only) lets the token and share lookups cache between writes: PostgreSQL, shared by
 * other nodes, has no cheap stamp of another node's writes, so it gets none and asks each time.
 */
export function createRepositories(db: Kysely<Database>, engine: Engine, opts: StoreOptions = {}): Omit<MetadataStore, 'close'> {
  const { changeStamp } = engine;
  return {
    users: createUserRepo(db, changeStamp),
    sessions: createSessionRepo(db, changeStamp),
    totp: createTotpRepo(db),
    leases: createLeaseRepo(db, engine.flight),
    journal: createJournalRepo(db),
    settings: createSettingsRepo(db),
    rates: createRateRepo(db),
    zipCrcs: createZipCrcRepo(db),
    davLocks: createDavLockRepo(db, changeStamp),
    davProperties: createDavPropertyRepo(db),
    tusUploads: createTusUploadRepo(db),
    shares: createShareRepo(db, changeStamp),
    apiKeys: createApiKeyRepo(db, changeStamp),
    sshKeys: createSshKeyRepo(db),
    usage: createUsageRepo(db, engine.ride),
    search: createSearchRepo(db, { journal: opts.journal ?? true, steps: engine.steps, write: engine.write, sweeping: engine.sweeping }),
    changes: createChangeRepo(db),
    oidc: createOidcRepo(db),
    groups: createGroupRepo(db),
    grants: createGrantRepo(db),
    trash: createTrashRepo(db),
    versions: createVersionRepo(db),
    audit: createAuditRepo(db),
    webhooks: createWebhookRepo(db),
  };
}
