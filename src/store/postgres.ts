import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { StoreOpenError } from './sqlite.js';
import type { Database as Schema } from './schema.js';
import type { MetadataStore } from './types.js';
import { migrateToLatest } from './migrations.js';
import { createUserRepo } from './users-repo.js';
import { createSessionRepo } from './sessions-repo.js';
import { createTotpRepo } from './totp-repo.js';
import { createLeaseRepo } from './leases-repo.js';
import { createJournalRepo } from './journal-repo.js';
import { createSettingsRepo } from './settings-repo.js';
import { createZipCrcRepo } from './zip-crcs-repo.js';
import { createRateRepo } from './rate-repo.js';
import { createDavLockRepo } from './dav-locks-repo.js';
import { createDavPropertyRepo } from './dav-properties-repo.js';
import { createTusUploadRepo } from './tus-uploads-repo.js';
import { createShareRepo } from './shares-repo.js';
import { createApiKeyRepo } from './api-keys-repo.js';
import { createUsageRepo } from './usage-repo.js';
import { createSearchRepo } from './search-repo.js';
import { createGroupRepo } from './groups-repo.js';
import { createGrantRepo } from './grants-repo.js';

/** pg_advisory_lock key for migrations: "FCMIGRAT" as a 64-bit number, the same on every node. */
const MIGRATION_LOCK = 0x46434d4947524154n;

/**
 * Opens the PostgreSQL metadata store and migrates it. The same repositories
 * and migrations as SQLite (one SQL through Kysely); nodes starting together
 * migrate one after another under an advisory lock, so each migration runs once.
 */
export async function openPostgresStore(url: string, opts: { poolSize?: number } = {}): Promise<MetadataStore & { readonly kind: 'postgres'; readonly db: Kysely<Schema> }> {
  const pool = new pg.Pool({ connectionString: url, max: opts.poolSize ?? 10, connectionTimeoutMillis: 5000, idleTimeoutMillis: 30_000 });
  // An idle connection the server closed must not crash the process; the next query reconnects.
  pool.on('error', () => undefined);
  const db = new Kysely<Schema>({ dialect: new PostgresDialect({ pool }) });
  try {
    await db.connection().execute(async (conn) => {
      await sql`SELECT pg_advisory_lock(${MIGRATION_LOCK})`.execute(conn);
      try {
        await migrateToLatest(conn as unknown as Kysely<unknown>);
      } finally {
        await sql`SELECT pg_advisory_unlock(${MIGRATION_LOCK})`.execute(conn);
      }
    });
  } catch (e) {
    await db.destroy().catch(() => undefined);
    const where = redactUrl(url);
    throw new StoreOpenError(`cannot open the database ${where}: ${(e as Error).message}`, { cause: e });
  }
  return {
    kind: 'postgres',
    db,
    users: createUserRepo(db),
    sessions: createSessionRepo(db),
    totp: createTotpRepo(db),
    leases: createLeaseRepo(db),
    journal: createJournalRepo(db),
    settings: createSettingsRepo(db),
    rates: createRateRepo(db),
    zipCrcs: createZipCrcRepo(db),
    davLocks: createDavLockRepo(db),
    davProperties: createDavPropertyRepo(db),
    tusUploads: createTusUploadRepo(db),
    shares: createShareRepo(db),
    apiKeys: createApiKeyRepo(db),
    usage: createUsageRepo(db),
    search: createSearchRepo(db),
    groups: createGroupRepo(db),
    grants: createGrantRepo(db),
    close: () => db.destroy(),
  };
}

/** The URL without its password, for messages and logs. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'postgres://…';
  }
}
