import { Kysely, PostgresAdapter, sql } from 'kysely';
import { Migrator, type Migration, type MigrationProvider } from 'kysely/migration';

/** An auto-incrementing 64-bit key: the one column type the two dialects spell differently. */
const isPostgres = (db: Kysely<unknown>) => db.getExecutor().adapter instanceof PostgresAdapter;

/** SQLite: entries waiting for the text index go in together once this many wait (0025_search_text_batched). */
export const SEARCH_TEXT_BATCH = 256;

/** Tables whose every change moves SQLite's auth stamp (0023_auth_stamp). */
export const AUTH_TABLES = ['sessions', 'access_tokens', 'api_keys', 'shares'] as const;
/** The users columns whose update moves it: all but the usage counters, which every upload writes. */
export const USER_AUTH_COLUMNS = ['id', 'username', 'password_hash', 'is_admin', 'auth_epoch', 'created_at', 'totp_secret', 'totp_pending', 'totp_last_step', 'disabled'] as const;
/** The users columns that do not move it. */
export const USER_USAGE_COLUMNS = ['quota', 'used_bytes', 'reserved_bytes', 'staged_bytes'] as const;

/** Adds a nullable text column unless the table has it (a migration that runs again changes nothing). */
async function addTextColumn(db: Kysely<unknown>, table: string, column: string): Promise<void> {
  if (isPostgres(db)) return void (await sql.raw(`ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS ${column} text`).execute(db));
  const columns = await sql<{ name: string }>`SELECT name FROM pragma_table_info(${table})`.execute(db);
  if (!columns.rows.some((c) => c.name === column)) await sql.raw(`ALTER TABLE ${table} ADD COLUMN ${column} TEXT`).execute(db);
}

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
  '0011_usage_quota': {
    async up(db: Kysely<unknown>) {
      // Per-user quota (bytes, NULL = none) and usage kept beside it, so one conditional
      // UPDATE of the user's row checks and reserves atomically on SQLite and PostgreSQL
      // alike (src/store/usage-repo.ts). used_bytes: bytes of the user's files, kept from
      // storage events; reserved_bytes: bytes of uploads under way, not yet committed.
      await db.schema.alterTable('users').addColumn('quota', 'bigint').execute();
      await db.schema.alterTable('users').addColumn('used_bytes', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
      await db.schema.alterTable('users').addColumn('reserved_bytes', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
    },
  },
  '0012_share_download_units': {
    async up(db: Kysely<unknown>) {
      // shares.downloads counts fractions of downloads from now on (issue 27: every answer adds
      // bytes sent ÷ size), as integers: 10¹² units to a download (src/domain/download-units.ts).
      // Limits above the new maximum (10⁶) are lowered to it so the limit × units fits 64 bits.
      await sql`UPDATE shares SET max_downloads = 1000000 WHERE max_downloads > 1000000`.execute(db);
      await sql`UPDATE shares SET downloads = CASE WHEN downloads > 9000000 THEN 9000000000000000000 ELSE downloads * 1000000000000 END`.execute(db);
    },
  },
  '0013_tus_staged_bytes': {
    async up(db: Kysely<unknown>) {
      // Bytes of unfinished resumable (tus) uploads count against the quota until the upload
      // finishes, is terminated or expires: each upload holds its length (or, while deferred,
      // its offset) in its owner's row, changed in the same transaction as the upload's own row
      // (src/store/tus-uploads-repo.ts), so the quota check stays one conditional UPDATE.
      await db.schema.alterTable('users').addColumn('staged_bytes', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
      await sql`UPDATE users SET staged_bytes = COALESCE((SELECT SUM(COALESCE(t.upload_length, t.upload_offset)) FROM tus_uploads t
        WHERE t.user_name = users.username AND t.final_path IS NULL), 0)`.execute(db);
      // Counting a user's open uploads (the cap) reads only their rows.
      await db.schema.createIndex('tus_uploads_user').on('tus_uploads').column('user_name').execute();
    },
  },
  '0014_oidc': {
    async up(db: Kysely<unknown>) {
      // Single sign-on (issue 32): an account signs in through the provider when it is linked to
      // the provider's subject (`sub`), never by a username match, so a name changed at the
      // provider cannot take over another account. `groups` keeps the last groups claim (JSON).
      await db.schema
        .createTable('oidc_accounts')
        .addColumn('user_id', 'text', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
        .addColumn('issuer', 'text', (c) => c.notNull())
        .addColumn('subject', 'text', (c) => c.notNull())
        .addColumn('groups', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('last_login_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('oidc_accounts_subject').on('oidc_accounts').columns(['issuer', 'subject']).unique().execute();
      // Accounts that keep password sign-in under --oidc-only (a break-glass administrator).
      await db.schema
        .createTable('local_accounts')
        .addColumn('user_id', 'text', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
        .execute();
      // Password accounts an administrator opened to single sign-on (`user sso NAME on`): the next
      // sign-in whose username claim is this name links the account to its sub, once.
      await db.schema
        .createTable('oidc_link_pending')
        .addColumn('user_id', 'text', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
        .execute();
      // Sign-ins under way (state → PKCE verifier, nonce) and the one-time codes that hand a
      // finished sign-in to the web UI: in the database, so a callback may land on any node.
      // Keyed by the SHA-256 of the random value; each row is taken (deleted) exactly once.
      await db.schema
        .createTable('oidc_requests')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('data', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('oidc_requests_expires_at').on('oidc_requests').column('expires_at').execute();
    },
  },
  '0015_groups': {
    async up(db: Kysely<unknown>) {
      // Groups of accounts, managed by admins (docs/api.md "Groups"). Members go with the user and with
      // the group (ON DELETE CASCADE; SQLite enforces it with the foreign_keys pragma the store sets).
      await db.schema
        .createTable('groups')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull().unique())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('group_members')
        .addColumn('group_id', 'text', (c) => c.notNull().references('groups.id').onDelete('cascade'))
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addPrimaryKeyConstraint('group_members_pk', ['group_id', 'user_id'])
        .execute();
      await db.schema.createIndex('group_members_user_id').on('group_members').column('user_id').execute();
    },
  },
  '0016_grants': {
    async up(db: Kysely<unknown>) {
      // Grants: an owner's file or folder shared with another account or a group (docs/api.md "Grants").
      // owner_name + path name the item as shares do ('a/b', never '' — the root is not granted), so a
      // rename or move rebases the rows below it and a delete removes them (src/services/grants.ts).
      // to_id is a user id (to_kind 'user') or a group id ('group'); rows go with the owner, and
      // users-repo and groups-repo delete a removed recipient's rows explicitly.
      await db.schema
        .createTable('grants')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('owner_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('owner_name', 'text', (c) => c.notNull())
        .addColumn('path', 'text', (c) => c.notNull())
        .addColumn('is_file', 'integer', (c) => c.notNull())
        .addColumn('to_kind', 'text', (c) => c.notNull())
        .addColumn('to_id', 'text', (c) => c.notNull())
        .addColumn('permission', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('grants_owner_name_path').on('grants').columns(['owner_name', 'path']).execute();
      await db.schema.createIndex('grants_to').on('grants').columns(['to_kind', 'to_id']).execute();
      await db.schema.createIndex('grants_item_recipient').on('grants').columns(['owner_name', 'path', 'to_kind', 'to_id']).unique().execute();
    },
  },
  '0018_changes': {
    async up(db: Kysely<unknown>) {
      // The change journal (src/store/changes-repo.ts): one row per change to the search index, which
      // is the metadata store's picture of every tree; a row is written in the same transaction as the
      // index change it records. `cursor` only grows: AUTOINCREMENT (SQLite) never reuses a number,
      // even after the oldest rows are purged, and a sequence (PostgreSQL) neither; writers take one
      // advisory lock first, so cursors commit in order and a reader never skips one committed late.
      // `path`/`from_path` are paths in `owner`'s tree (no leading slash).
      if (isPostgres(db)) {
        await sql`CREATE TABLE changes (
          cursor bigserial PRIMARY KEY, owner text NOT NULL, type text NOT NULL, path text COLLATE "C" NOT NULL,
          from_path text COLLATE "C", is_file integer NOT NULL, size bigint, modified bigint, etag text,
          created_at bigint NOT NULL)`.execute(db);
      } else {
        await sql`CREATE TABLE changes (
          cursor INTEGER PRIMARY KEY AUTOINCREMENT, owner TEXT NOT NULL, type TEXT NOT NULL, path TEXT NOT NULL,
          from_path TEXT, is_file INTEGER NOT NULL, size BIGINT, modified BIGINT, etag TEXT,
          created_at BIGINT NOT NULL)`.execute(db);
      }
      await db.schema.createIndex('changes_owner_cursor').on('changes').columns(['owner', 'cursor']).execute();
      await db.schema.createIndex('changes_created').on('changes').columns(['created_at']).execute();
      // The highest cursor purged by retention: an older cursor has lost entries (410 cursor_expired).
      await db.schema.createTable('changes_horizon').addColumn('id', 'integer', (c) => c.primaryKey()).addColumn('purged_through', 'bigint', (c) => c.notNull()).execute();
      await sql`INSERT INTO changes_horizon (id, purged_through) VALUES (1, 0)`.execute(db);
      // The entry's ETag as the backend gave it: a replace that keeps size and time (another inode,
      // another object) is still a change, and folder ETags are derived from their contents'.
      await db.schema.alterTable('search_entries').addColumn('etag', 'text').execute();
      // The cursor of the latest journal entry at or below a folder (src/store/changes-repo.ts): its
      // ETag, which so changes whenever anything beneath it changes (also on an object store).
      await db.schema.alterTable('search_entries').addColumn('tree_cursor', 'bigint').execute();
    },
  },
  '0017_tus_uploader': {
    async up(db: Kysely<unknown>) {
      // Who sends a resumable upload when it is not the folder's owner (a recipient of a writable grant):
      // the upload's bytes and quota stay the owner's (user_name), its URL answers only its uploader.
      await db.schema.alterTable('tus_uploads').addColumn('uploader', 'text').execute();
    },
  },
  '0019_trash': {
    async up(db: Kysely<unknown>) {
      // The owners' trash (--trash-days; src/services/trash.ts). A row is written ('moving') before the
      // item leaves its path and marked 'trashed' once it is in the trash area, so a kill in between is
      // found and settled by the sweep (the item is where the storage says it is). owner_name + path
      // name where the item was ('a/b'), to go back to on restore.
      await db.schema
        .createTable('trash_items')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('owner_name', 'text', (c) => c.notNull())
        .addColumn('path', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('is_file', 'integer', (c) => c.notNull())
        .addColumn('size', 'bigint', (c) => c.notNull())
        .addColumn('deleted_at', 'bigint', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('trash_items_owner').on('trash_items').columns(['owner_name', 'deleted_at']).execute();
      await db.schema.createIndex('trash_items_deleted').on('trash_items').columns(['state', 'deleted_at']).execute();
      // File versions (--versions; src/services/versions.ts): the earlier contents of the file at owner_name +
      // path ('a/b'), the bytes in the backend's version area under the row's id.
      await db.schema
        .createTable('file_versions')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('owner_name', 'text', (c) => c.notNull())
        .addColumn('path', 'text', (c) => c.notNull())
        .addColumn('size', 'bigint', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('file_versions_path').on('file_versions').columns(['owner_name', 'path', 'created_at']).execute();
      await db.schema.createIndex('file_versions_owner').on('file_versions').columns(['owner_name', 'created_at']).execute();
    },
  },
  '0020_audit': {
    async up(db: Kysely<unknown>) {
      // The audit log (src/services/audit.ts, docs/operations.md "Audit log"): one hash chain per
      // deployment. seq is given by the appender (head.seq + 1), not by a sequence, so a gap always
      // means a removed entry (a PostgreSQL sequence skips values on rollback).
      await db.schema
        .createTable('audit_events')
        .addColumn('seq', 'bigint', (c) => c.primaryKey())
        .addColumn('at', 'bigint', (c) => c.notNull())
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('actor', 'text')
        .addColumn('address', 'text')
        .addColumn('user_agent', 'text')
        .addColumn('target', 'text')
        .addColumn('outcome', 'text', (c) => c.notNull())
        .addColumn('detail', 'text')
        .addColumn('prev_hash', 'text', (c) => c.notNull())
        .addColumn('hash', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('audit_events_at').on('audit_events').column('at').execute();
      // One row: the chain's head (the lock every append takes, so appends from all nodes form one
      // chain) and its anchor (the last entry retention purged, where verification starts).
      await db.schema
        .createTable('audit_head')
        .addColumn('id', 'integer', (c) => c.primaryKey())
        .addColumn('seq', 'bigint', (c) => c.notNull())
        .addColumn('hash', 'text', (c) => c.notNull())
        .addColumn('anchor_seq', 'bigint', (c) => c.notNull())
        .addColumn('anchor_hash', 'text', (c) => c.notNull())
        .execute();
      const genesis = '0'.repeat(64);
      await sql`INSERT INTO audit_head (id, seq, hash, anchor_seq, anchor_hash) VALUES (1, 0, ${genesis}, 0, ${genesis})`.execute(db);
      // Webhooks (src/services/webhooks.ts). A hook reads each event source (the audit log, the change
      // journal) by its own cursor, so delivery is durable, ordered, and costs requests nothing.
      await db.schema
        .createTable('webhooks')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('events', 'text', (c) => c.notNull())
        .addColumn('path_prefix', 'text')
        .addColumn('secret', 'text', (c) => c.notNull())
        .addColumn('enabled', 'integer', (c) => c.notNull())
        .addColumn('disabled_reason', 'text')
        .addColumn('failing_since', 'bigint')
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('next_attempt_at', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('webhook_cursors')
        .addColumn('hook_id', 'text', (c) => c.notNull().references('webhooks.id').onDelete('cascade'))
        .addColumn('source', 'text', (c) => c.notNull())
        .addColumn('cursor', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('webhook_cursors_pk', ['hook_id', 'source'])
        .execute();
      await db.schema
        .createTable('webhook_deliveries')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('hook_id', 'text', (c) => c.notNull().references('webhooks.id').onDelete('cascade'))
        .addColumn('event_id', 'text', (c) => c.notNull())
        .addColumn('event_type', 'text', (c) => c.notNull())
        .addColumn('attempt', 'integer', (c) => c.notNull())
        .addColumn('at', 'bigint', (c) => c.notNull())
        .addColumn('status', 'integer')
        .addColumn('duration_ms', 'integer', (c) => c.notNull())
        .addColumn('error', 'text')
        .addColumn('next_retry_at', 'bigint')
        .execute();
      await db.schema.createIndex('webhook_deliveries_hook_at').on('webhook_deliveries').columns(['hook_id', 'at']).execute();
    },
  },
  '0021_changes_by_cursor': {
    async up(db: Kysely<unknown>) {
      // Retention purges in cursor order (changes-repo.ts purgeBefore): the index on the time cost
      // every journal entry a B-tree write and served one query an hour.
      await db.schema.dropIndex('changes_created').execute();
    },
  },
  '0022_changes_plain_cursor': {
    async up(db: Kysely<unknown>) {
      // SQLite: the journal's cursor loses AUTOINCREMENT, which made every entry also rewrite the
      // sqlite_sequence row (one more B-tree write and write-ahead-log page per commit: about a third
      // of what an entry cost, docs/performance.md "Change feed"). A plain INTEGER PRIMARY KEY takes the
      // highest cursor plus one, so it never reuses a cursor as long as the newest entry stays: the
      // retention purge keeps it, behind the horizon (changes-repo.ts purgeBefore). PostgreSQL's
      // sequence costs nothing of the kind and stays. SQLite cannot drop AUTOINCREMENT in place: the
      // table is copied, in one transaction (migrations on SQLite run without one).
      if (isPostgres(db)) return;
      await sql`BEGIN IMMEDIATE`.execute(db);
      try {
        const table = await sql<{ sql: string }>`SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'changes'`.execute(db);
        if (/AUTOINCREMENT/i.test(table.rows[0]?.sql ?? '')) {
          await sql`CREATE TABLE changes_plain (
            cursor INTEGER PRIMARY KEY, owner TEXT NOT NULL, type TEXT NOT NULL, path TEXT NOT NULL,
            from_path TEXT, is_file INTEGER NOT NULL, size BIGINT, modified BIGINT, etag TEXT,
            created_at BIGINT NOT NULL)`.execute(db);
          await sql`INSERT INTO changes_plain SELECT cursor, owner, type, path, from_path, is_file, size, modified, etag, created_at FROM changes`.execute(db);
          // AUTOINCREMENT's counter is past every row when the newest entries were purged (a journal
          // idle longer than the retention): a placeholder at that number keeps the next cursor above
          // it. It lies at the horizon, where no reader looks (changes-repo.ts).
          const seq = Number((await sql<{ seq: number | null }>`SELECT seq FROM sqlite_sequence WHERE name = 'changes'`.execute(db)).rows[0]?.seq ?? 0);
          const max = Number((await sql<{ m: number | null }>`SELECT max(cursor) AS m FROM changes_plain`.execute(db)).rows[0]?.m ?? 0);
          if (seq > max) {
            await sql`INSERT INTO changes_plain (cursor, owner, type, path, is_file, created_at) VALUES (${seq}, '', 'deleted', '', 0, 0)`.execute(db);
            await sql`UPDATE changes_horizon SET purged_through = ${seq} WHERE id = 1 AND purged_through < ${seq}`.execute(db);
          }
          await sql`DROP TABLE changes`.execute(db);
          await sql`ALTER TABLE changes_plain RENAME TO changes`.execute(db);
          await db.schema.createIndex('changes_owner_cursor').on('changes').columns(['owner', 'cursor']).execute();
        }
        await sql`COMMIT`.execute(db);
      } catch (e) {
        await sql`ROLLBACK`.execute(db);
        throw e;
      }
    },
  },
  '0023_auth_stamp': {
    async up(db: Kysely<unknown>) {
      // SQLite: a counter that moves with every commit to what the cached credential and link
      // lookups read (sessions-repo, api-keys-repo, users-repo, shares-repo through sqliteAuthStamp).
      // Their cache was dropped by any commit at all, so under uploads (each one commits usage,
      // index and journal) a token's join ran again on almost every request (docs/performance.md,
      // "Figures behind the code"). Triggers count the changes in the same
      // transaction as the change itself, whichever process or tool makes it (the CLI, sqlite3).
      // A users column that a cached lookup reads must be in USER_AUTH_COLUMNS (the table test in
      // sqlite.test.ts fails for a column that is in neither list). PostgreSQL caches nothing.
      if (isPostgres(db)) return;
      // Idempotent (IF NOT EXISTS, OR IGNORE): SQLite's migrations run without a transaction.
      await sql`CREATE TABLE IF NOT EXISTS auth_stamp (id INTEGER PRIMARY KEY, n INTEGER NOT NULL)`.execute(db);
      await sql`INSERT OR IGNORE INTO auth_stamp (id, n) VALUES (1, 0)`.execute(db);
      const bump = 'UPDATE auth_stamp SET n = n + 1 WHERE id = 1;';
      for (const table of AUTH_TABLES) {
        for (const event of ['INSERT', 'UPDATE', 'DELETE']) {
          await sql.raw(`CREATE TRIGGER IF NOT EXISTS ${table}_auth_${event.toLowerCase()} AFTER ${event} ON ${table} BEGIN ${bump} END`).execute(db);
        }
      }
      for (const event of ['INSERT', 'DELETE']) await sql.raw(`CREATE TRIGGER IF NOT EXISTS users_auth_${event.toLowerCase()} AFTER ${event} ON users BEGIN ${bump} END`).execute(db);
      await sql.raw(`CREATE TRIGGER IF NOT EXISTS users_auth_update AFTER UPDATE OF ${USER_AUTH_COLUMNS.join(', ')} ON users BEGIN ${bump} END`).execute(db);
    },
  },
  '0024_search_scan_partial': {
    async up(db: Kysely<unknown>) {
      // Only a running rescan marks entries (scan is NULL otherwise), and only its sweep looks them
      // up: an index of the marked ones alone costs an upload no B-tree write (a write-ahead-log
      // page on SQLite, docs/performance.md "Fifth change"). `scan = ?` implies IS NOT NULL, so both
      // databases still use it for the sweep (a test reads SQLite's plan).
      await db.schema.dropIndex('search_entries_user_scan').ifExists().execute();
      await db.schema.createIndex('search_entries_user_scan').ifNotExists().on('search_entries').columns(['user_name', 'scan']).where(sql.ref('scan'), 'is not', null).execute();
    },
  },
  '0025_search_text_batched': {
    async up(db: Kysely<unknown>) {
      // SQLite: an entry reaches the trigram index in batches instead of in its own upload's commit,
      // where it cost about half the pages that commit wrote (a new FTS5 segment, its structure
      // record and size row per entry: 6.8 of 14.5 pages, docs/performance.md "Fifth change").
      // Entries with an id above `search_fts_mark.w` are not in the text index yet. They go in
      // together when 256 are waiting (the insert trigger below, in that insert's transaction) and
      // before every search that reads the text index (search-repo.ts indexWaiting), so a search
      // still finds a file uploaded a moment ago. A new entry takes the highest id plus one, so it
      // is above the mark unless the highest entries were deleted after they were indexed: such an
      // entry is indexed at once, as before. Deleting or renaming a waiting entry touches nothing.
      // PostgreSQL's trigram index is an ordinary index of the table and stays as it is.
      if (isPostgres(db)) return;
      await sql`CREATE TABLE IF NOT EXISTS search_fts_mark (id INTEGER PRIMARY KEY, w INTEGER NOT NULL)`.execute(db);
      // Every entry there is now was indexed by the old triggers.
      await sql`INSERT OR IGNORE INTO search_fts_mark (id, w) VALUES (1, (SELECT coalesce(max(id), 0) FROM search_entries))`.execute(db);
      const mark = '(SELECT w FROM search_fts_mark WHERE id = 1)';
      for (const t of ['search_entries_ai', 'search_entries_ad', 'search_entries_au']) await sql.raw(`DROP TRIGGER IF EXISTS ${t}`).execute(db);
      await sql.raw(`CREATE TRIGGER search_entries_ai AFTER INSERT ON search_entries BEGIN
        INSERT INTO search_fts(rowid, norm) SELECT new.id, new.norm WHERE new.id <= ${mark};
        INSERT INTO search_fts(rowid, norm) SELECT id, norm FROM search_entries WHERE id > ${mark} AND new.id - ${mark} >= ${SEARCH_TEXT_BATCH} ORDER BY id;
        UPDATE search_fts_mark SET w = (SELECT max(id) FROM search_entries) WHERE id = 1 AND new.id - w >= ${SEARCH_TEXT_BATCH}; END`).execute(db);
      await sql.raw(`CREATE TRIGGER search_entries_ad AFTER DELETE ON search_entries WHEN old.id <= ${mark} BEGIN
        INSERT INTO search_fts(search_fts, rowid, norm) VALUES ('delete', old.id, old.norm); END`).execute(db);
      // Only a changed name touches the text index: a folder move rewrites paths, not names.
      await sql.raw(`CREATE TRIGGER search_entries_au AFTER UPDATE OF norm ON search_entries WHEN old.norm IS NOT new.norm AND old.id <= ${mark} BEGIN
        INSERT INTO search_fts(search_fts, rowid, norm) VALUES ('delete', old.id, old.norm);
        INSERT INTO search_fts(rowid, norm) VALUES (new.id, new.norm); END`).execute(db);
    },
  },
  '0026_sync_fields': {
    async up(db: Kysely<unknown>) {
      // Sync (CONTRACT "Sync"): every indexed file and folder gets a stable id (kept by moves, renames
      // and overwrites of one name: search-repo.ts) and a file the SHA-256 of its bytes (hashed as they
      // come in, src/storage/hashing.ts; NULL until known, e.g. a file another tool put there before a
      // rescan). Journal entries carry both, and the `origin` the writer named (File-Cloud-Origin).
      // Rows indexed before this get their ids now; their hashes come with the next rescan.
      // Idempotent (a column only where missing, ids only where none): SQLite's migrations run without a transaction.
      const add = (table: string, column: string) => addTextColumn(db, table, column);
      await add('search_entries', 'file_id');
      await add('search_entries', 'sha256');
      if (isPostgres(db)) await sql`UPDATE search_entries SET file_id = md5(random()::text || clock_timestamp()::text || id::text) WHERE file_id IS NULL`.execute(db);
      else await sql`UPDATE search_entries SET file_id = lower(hex(randomblob(16))) WHERE file_id IS NULL`.execute(db);
      for (const column of ['file_id', 'sha256', 'origin']) await add('changes', column);
    },
  },
  '0010_search_index': {
    async up(db: Kysely<unknown>) {
      // The search index of file and folder names (src/store/search-repo.ts). `norm` is the name
      // as search compares it (src/domain/search-text.ts); `path` is the entry's path in its
      // owner's tree. Both compare byte-wise (SQLite's BINARY; PostgreSQL's "C"), so a subtree
      // is a range of the (user_name, path) index and the names of one depth starting with a
      // prefix a range of (user_name, depth, norm, path).
      // `scan` marks entries a rescan has not confirmed yet (file-cloud index).
      if (isPostgres(db)) {
        await sql`CREATE TABLE search_entries (
          id bigserial PRIMARY KEY, user_name text NOT NULL, path text COLLATE "C" NOT NULL, name text NOT NULL,
          norm text COLLATE "C" NOT NULL, depth integer NOT NULL, is_file integer NOT NULL, size bigint NOT NULL,
          modified bigint NOT NULL, scan text)`.execute(db);
        // Substring search: a GIN trigram index (pg_trgm, in Debian's postgresql package). Without the
        // extension (a server without contrib, or no right to create it) search still works, by scanning
        // one user's rows; docs/architecture.md says so.
        const available = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_available_extensions WHERE name = 'pg_trgm'`.execute(db);
        if ((available.rows[0]?.n ?? 0) > 0) {
          await sql`SAVEPOINT search_trgm`.execute(db);
          try {
            await sql`CREATE EXTENSION IF NOT EXISTS pg_trgm`.execute(db);
            await sql`CREATE INDEX search_entries_norm_trgm ON search_entries USING gin (norm gin_trgm_ops)`.execute(db);
            await sql`RELEASE SAVEPOINT search_trgm`.execute(db);
          } catch {
            await sql`ROLLBACK TO SAVEPOINT search_trgm`.execute(db);
          }
        }
      } else {
        await sql`CREATE TABLE search_entries (
          id INTEGER PRIMARY KEY, user_name TEXT NOT NULL, path TEXT NOT NULL, name TEXT NOT NULL,
          norm TEXT NOT NULL, depth INTEGER NOT NULL, is_file INTEGER NOT NULL, size BIGINT NOT NULL,
          modified BIGINT NOT NULL, scan TEXT)`.execute(db);
        // Substring search: an FTS5 trigram index over norm, kept in step by triggers (external
        // content: the text is stored once). The explicit integer key keeps rowids stable across VACUUM.
        // case_sensitive 1: norm is folded already (src/domain/search-text.ts); SQLite's own folding
        // differs in places (Greek final sigma), and matches must be exactly PostgreSQL's LIKE on norm.
        await sql`CREATE VIRTUAL TABLE search_fts USING fts5(norm, content='search_entries', content_rowid='id', tokenize='trigram case_sensitive 1')`.execute(db);
        await sql`CREATE TRIGGER search_entries_ai AFTER INSERT ON search_entries BEGIN
          INSERT INTO search_fts(rowid, norm) VALUES (new.id, new.norm); END`.execute(db);
        await sql`CREATE TRIGGER search_entries_ad AFTER DELETE ON search_entries BEGIN
          INSERT INTO search_fts(search_fts, rowid, norm) VALUES ('delete', old.id, old.norm); END`.execute(db);
        // Only a changed name touches the text index: a folder move rewrites paths, not names.
        await sql`CREATE TRIGGER search_entries_au AFTER UPDATE OF norm ON search_entries WHEN old.norm IS NOT new.norm BEGIN
          INSERT INTO search_fts(search_fts, rowid, norm) VALUES ('delete', old.id, old.norm);
          INSERT INTO search_fts(rowid, norm) VALUES (new.id, new.norm); END`.execute(db);
      }
      await db.schema.createIndex('search_entries_user_path').on('search_entries').columns(['user_name', 'path']).unique().execute();
      // Best-first order itself (depth, then name): a query matching a large share of the names
      // reads this index in order and stops at the limit instead of sorting every match.
      await db.schema.createIndex('search_entries_user_order').on('search_entries').columns(['user_name', 'depth', 'norm', 'path']).execute();
      await db.schema.createIndex('search_entries_user_scan').on('search_entries').columns(['user_name', 'scan']).execute();
    },
  },
  '0027_ssh_keys': {
    async up(db: Kysely<unknown>) {
      // Public keys for SFTP sign-in (CONTRACT "SFTP (opt-in)"): the key's wire blob in base64 and
      // its SHA-256 fingerprint, found by (user, fingerprint) when a client offers a key. A key is
      // added once per account; the owner's keys go with the user (users-repo deletes them too).
      // Idempotent, as every migration after 0022 is: the upgrade tests run the later ones again.
      await db.schema
        .createTable('ssh_keys')
        .ifNotExists()
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('algorithm', 'text', (c) => c.notNull())
        .addColumn('public_key', 'text', (c) => c.notNull())
        .addColumn('fingerprint', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('last_used_at', 'bigint')
        .execute();
      await db.schema.createIndex('ssh_keys_user_fingerprint').ifNotExists().on('ssh_keys').columns(['user_id', 'fingerprint']).unique().execute();
    },
  },
  '0028_trash_sha256': {
    async up(db: Kysely<unknown>) {
      // A trashed file's SHA-256, from the index when it held the hash of exactly the bytes that moved
      // (src/services/trash.ts): a sync client then knows the server keeps a local file's bytes without
      // reading the item. NULL for folders, and for items trashed before this or whose hash was unknown.
      await addTextColumn(db, 'trash_items', 'sha256');
    },
  },
  '0029_trash_files': {
    async up(db: Kysely<unknown>) {
      // The SHA-256 of each file inside a trashed folder, known as 0028 knows a trashed file's: from the
      // index, for exactly the bytes that moved (src/services/trash.ts). A sync client then keeps no copy
      // of a server-deleted folder's files the trash holds (GET /api/trash/hashes). Only files whose
      // hash was known have a row; the rows go with their item (trash-repo deletes both).
      await db.schema
        .createTable('trash_files')
        .ifNotExists()
        .addColumn('trash_id', 'text', (c) => c.notNull())
        .addColumn('path', 'text', (c) => c.notNull())
        .addColumn('sha256', 'text', (c) => c.notNull())
        .addColumn('size', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('trash_files_pk', ['trash_id', 'path'])
        .execute();
    },
  },
  '0030_dav_lock_stamp': {
    async up(db: Kysely<unknown>) {
      // SQLite: every change to the WebDAV locks moves the stamp of 0023 too, so "this user holds no
      // lock row" can be cached between lock changes (dav-locks-repo `mayHold`): a WebDAV PUT or an
      // SFTP upload then makes no lock query when there is none (docs/performance.md "Fourteenth
      // change"). Locks change rarely (LOCK, UNLOCK, a refresh, a removed tree), so the credential
      // caches that share the stamp lose nothing that counts. PostgreSQL caches nothing.
      if (isPostgres(db)) return;
      for (const event of ['INSERT', 'UPDATE', 'DELETE']) {
        await sql.raw(`CREATE TRIGGER IF NOT EXISTS dav_locks_stamp_${event.toLowerCase()} AFTER ${event} ON dav_locks BEGIN UPDATE auth_stamp SET n = n + 1 WHERE id = 1; END`).execute(db);
      }
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
