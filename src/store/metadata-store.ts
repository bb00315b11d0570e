import type { ApiKeyRepo } from './api-keys.js';
import type { AuditRepo } from './audit.js';
import type { ChangeRepo } from './changes.js';
import type { DavLockRepo } from './dav-locks.js';
import type { DavPropertyRepo } from './dav-properties.js';
import type { GrantRepo } from './grants.js';
import type { GroupRepo } from './groups.js';
import type { JournalRepo } from './journal.js';
import type { StoredLeaseRepo } from './leases.js';
import type { OidcRepo } from './oidc.js';
import type { RateRepo } from './rate.js';
import type { SearchRepo } from './search.js';
import type { SessionRepo } from './sessions.js';
import type { SettingsRepo } from './settings.js';
import type { ShareRepo } from './shares.js';
import type { SshKeyRepo } from './ssh-keys.js';
import type { TotpRepo } from './totp.js';
import type { TrashRepo } from './trash.js';
import type { TusUploadRepo } from './tus-uploads.js';
import type { UsageRepo } from './usage.js';
import type { UserRepo } from './users.js';
import type { VersionRepo } from './versions.js';
import type { WebhookRepo } from './webhooks.js';
import type { ZipCrcRepo } from './zip-crcs.js';

/** A unique name or link is taken already (a user name, an OIDC subject). */
export class StoreConflictError extends Error {}

/**
 * The metadata seam: small repositories per aggregate, each declared beside its
 * repository (src/store/users.ts beside users-repo.ts …). Implementations share
 * one Kysely repository code base (src/store/*-repo.ts) over SQLite and
 * PostgreSQL; each must pass src/store/conformance/index.test-suite.ts.
 * Times are epoch milliseconds.
 */
export interface MetadataStore {
  readonly users: UserRepo;
  readonly sessions: SessionRepo;
  readonly totp: TotpRepo;
  readonly leases: StoredLeaseRepo;
  readonly journal: JournalRepo;
  readonly settings: SettingsRepo;
  readonly rates: RateRepo;
  readonly zipCrcs: ZipCrcRepo;
  readonly davLocks: DavLockRepo;
  readonly davProperties: DavPropertyRepo;
  readonly tusUploads: TusUploadRepo;
  readonly shares: ShareRepo;
  readonly apiKeys: ApiKeyRepo;
  readonly sshKeys: SshKeyRepo;
  readonly usage: UsageRepo;
  readonly search: SearchRepo;
  readonly changes: ChangeRepo;
  readonly oidc: OidcRepo;
  readonly groups: GroupRepo;
  readonly grants: GrantRepo;
  readonly trash: TrashRepo;
  readonly versions: VersionRepo;
  readonly audit: AuditRepo;
  readonly webhooks: WebhookRepo;
  close(): Promise<void>;
}
