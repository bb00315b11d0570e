import { Kysely, Migrator, PostgresAdapter, sql, type Migration, type MigrationProvider } from 'kysely';

/** An auto-incrementing 64-bit key: the one column type the two dialects spell differently. */
const isPostgres = (db: Kysely<unknown>) => db.getExecutor().adapter instanceof PostgresAdapter;

/**
 * Forward-only migrations, applied at startup in name order. Never edit a
 * released migration: add the next one. Only Kysely's schema builder, so the
 * same migrations run on SQLite and PostgreSQL.
 */
const MIGRATIONS: Record<string, Migration> = {
  '0001_users_sessions': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('users')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('username', 'text', (c) => c.notNull().unique())
        .addColumn('password_hash', 'text', (c) => c.notNull())
        .addColumn('is_admin', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('auth_epoch', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('sessions')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('refresh_hash', 'text', (c) => c.notNull().unique())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('last_used_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('sessions_user_id').on('sessions').column('user_id').execute();
      await db.schema.createIndex('sessions_expires_at').on('sessions').column('expires_at').execute();
      await db.schema
        .createTable('access_tokens')
        .addColumn('token_hash', 'text', (c) => c.primaryKey())
        .addColumn('session_id', 'text', (c) => c.notNull().references('sessions.id').onDelete('cascade'))
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('access_tokens_session_id').on('access_tokens').column('session_id').execute();
      await db.schema.createIndex('access_tokens_expires_at').on('access_tokens').column('expires_at').execute();
    },
  },
  '0002_leases_journal': {
    async up(db: Kysely<unknown>) {
      // Named leases: a lock that expires by itself when its holder dies (S3 name claims, folder moves).
      await db.schema
        .createTable('leases')
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('owner', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .execute();
      // Intent records of multi-step storage work (folder moves, multipart uploads), so a crash
      // halfway is finished or undone by whoever finds the record.
      await db.schema
        .createTable('journal')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('data', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('journal_kind_updated').on('journal').columns(['kind', 'updated_at']).execute();
    },
  },
  '0003_settings_rate_hits': {
    async up(db: Kysely<unknown>) {
      // Server-wide values every node must share, such as the path-token key with PostgreSQL.
      await db.schema
        .createTable('settings')
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('value', 'text', (c) => c.notNull())
        .execute();
      // Attempts counted by the rate limiter when there is no Redis: one row per attempt, in
      // insertion order (seq), so "the 11th within a minute" has one answer across nodes.
      let table = db.schema.createTable('rate_hits');
      table = isPostgres(db) ? table.addColumn('seq', sql`bigserial`, (c) => c.primaryKey()) : table.addColumn('seq', 'integer', (c) => c.primaryKey().autoIncrement());
      await table
        .addColumn('bucket', 'text', (c) => c.notNull())
        .addColumn('at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('rate_hits_bucket_at').on('rate_hits').columns(['bucket', 'at']).execute();
    },
  },
  '0004_dav': {
    async up(db: Kysely<unknown>) {
      // WebDAV locks and dead properties, in the database so every worker and node sees them.
      // Paths are the resource's path in its owner's tree ('' for the root, 'a/b.txt').
      await db.schema
        .createTable('dav_locks')
        .addColumn('token', 'text', (c) => c.primaryKey())
        .addColumn('user_name', 'text', (c) => c.notNull())
        .addColumn('path', 'text', (c) => c.notNull())
        .addColumn('depth', 'text', (c) => c.notNull())
        .addColumn('scope', 'text', (c) => c.notNull())
        .addColumn('owner', 'text', (c) => c.notNull())
        .addColumn('principal', 'text', (c) => c.notNull())
        .addColumn('timeout_seconds', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('dav_locks_user_path').on('dav_locks').columns(['user_name', 'path']).execute();
      await db.schema.createIndex('dav_locks_expires_at').on('dav_locks').column('expires_at').execute();
      await db.schema
        .createTable('dav_properties')
        .addColumn('user_name', 'text', (c) => c.notNull())
        .addColumn('path', 'text', (c) => c.notNull())
        .addColumn('ns', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('xml', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('dav_properties_pk', ['user_name', 'path', 'ns', 'name'])
        .execute();
    },
  },
  '0005_tus_uploads': {
    async up(db: Kysely<unknown>) {
      // Resumable (tus) uploads in progress, in the database so any worker or node can resume
      // one: the durable offset, the target, and when it expires. The bytes live in the
      // backend's staging area, never under a user's folder.
      await db.schema
        .createTable('tus_uploads')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('user_name', 'text', (c) => c.notNull())
        .addColumn('upload_offset', 'bigint', (c) => c.notNull())
        .addColumn('upload_length', 'bigint')
        .addColumn('metadata', 'text', (c) => c.notNull())
        .addColumn('folder', 'text', (c) => c.notNull())
        .addColumn('filename', 'text', (c) => c.notNull())
        .addColumn('overwrite', 'integer', (c) => c.notNull())
        .addColumn('final_path', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('tus_uploads_expires_at').on('tus_uploads').column('expires_at').execute();
    },
  },
  '0006_shares': {
    async up(db: Kysely<unknown>) {
      // Share links (CONTRACT "Share links"). The id is the primary key in clear: the owner's
      // listing shows the link again (docs/security.md). owner_name + path name the target
      // ('' for the root, 'a/b.txt'), so the rows of a deleted or moved path are found by prefix.
      // The owner's rows go with the user: ON DELETE CASCADE, and users-repo deletes them
      // explicitly too (SQLite enforces foreign keys only with its pragma).
      await db.schema
        .createTable('shares')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('owner_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('owner_name', 'text', (c) => c.notNull())
        .addColumn('path', 'text', (c) => c.notNull())
        .addColumn('is_file', 'integer', (c) => c.notNull())
        .addColumn('upload_only', 'integer', (c) => c.notNull())
        .addColumn('password_hash', 'text')
        .addColumn('max_downloads', 'bigint')
        .addColumn('downloads', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('expires_at', 'bigint')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('shares_owner_id').on('shares').column('owner_id').execute();
      await db.schema.createIndex('shares_owner_name_path').on('shares').columns(['owner_name', 'path']).execute();
      await db.schema.createIndex('shares_expires_at').on('shares').column('expires_at').execute();
    },
  },
  '0007_zip_crcs': {
    async up(db: Kysely<unknown>) {
      // CRC-32s of file contents for folder zips (src/zip/), keyed by a hash of path and storage
      // ETag: a zip answer that starts late (a resumed download) needs the CRCs of files it does
      // not send. Shared by every node; a missing row only costs a read of the file.
      await db.schema
        .createTable('zip_crcs')
        .addColumn('key', 'text', (c) => c.primaryKey())
        .addColumn('crc', 'bigint', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
    },
  },
  '0008_api_keys_disabled': {
    async up(db: Kysely<unknown>) {
      // App passwords / API keys (CONTRACT "Accounts and API"): stored only as the SHA-256 of the
      // key, like access tokens. The owner's keys go with the user (ON DELETE CASCADE, and
      // users-repo deletes them explicitly, as SQLite enforces foreign keys only with its pragma).
      await db.schema
        .createTable('api_keys')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('key_hash', 'text', (c) => c.notNull().unique())
        .addColumn('read_only', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint')
        .addColumn('last_used_at', 'bigint')
        .execute();
      await db.schema.createIndex('api_keys_user_id').on('api_keys').column('user_id').execute();
      // A disabled user keeps their data but nothing of theirs authenticates (docs/security.md).
      await db.schema.alterTable('users').addColumn('disabled', 'integer', (c) => c.notNull().defaultTo(0)).execute();
    },
  },
  '0009_accounts': {
    async up(db: Kysely<unknown>) {
      // The sessions list (GET /api/sessions) shows where a session signs in from: the client's
      // User-Agent and address, set at login and refreshed with last_used_at (at most once a minute).
      await db.schema.alterTable('sessions').addColumn('client', 'text').execute();
      await db.schema.alterTable('sessions').addColumn('address', 'text').execute();
      // TOTP (RFC 6238): the confirmed secret (NULL = off), a secret waiting for its first code,
      // and the last time step accepted, so a code is never accepted twice (one conditional UPDATE,
      // exact across nodes). On users, so every login reads it with the user, at no extra query.
      await db.schema.alterTable('users').addColumn('totp_secret', 'text').execute();
      await db.schema.alterTable('users').addColumn('totp_pending', 'text').execute();
      await db.schema.alterTable('users').addColumn('totp_last_step', 'bigint').execute();
      // Recovery codes, each usable once: only their SHA-256 (they are 80 random bits each).
      await db.schema
        .createTable('totp_recovery_codes')
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('code_hash', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('totp_recovery_codes_pk', ['user_id', 'code_hash'])
        .execute();
    },
  },
};

/** Every migration's name, in the order they apply. */
export const MIGRATION_NAMES = Object.keys(MIGRATIONS).sort();

const provider: MigrationProvider = { getMigrations: async () => MIGRATIONS };

export async function migrateToLatest(db: Kysely<unknown>): Promise<void> {
  const { error, results } = await new Migrator({ db, provider }).migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(`database migration ${failed} failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}
