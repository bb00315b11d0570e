import type { Generated } from 'kysely';

/**
 * Table shapes for Kysely. Dialect-neutral on purpose: text ids made by the
 * application, booleans as 0/1 integers, times as bigint milliseconds (the
 * pg driver returns int8 as a string, so repositories read them with Number()).
 */
export interface Database {
  users: {
    id: string;
    username: string;
    password_hash: string;
    is_admin: number;
    auth_epoch: string;
    created_at: number | string | bigint;
    /** 0009_accounts: TOTP secret when on, the secret awaiting confirmation, the last accepted time step. */
    totp_secret: string | null;
    totp_pending: string | null;
    totp_last_step: number | string | bigint | null;
    disabled: Generated<number>;
    /** 0011_usage_quota: bytes, NULL = no quota. */
    quota: Generated<number | string | bigint | null>;
    used_bytes: Generated<number | string | bigint>;
    reserved_bytes: Generated<number | string | bigint>;
    /** 0013_tus_staged_bytes: bytes held by unfinished tus uploads (their length, or offset while deferred). */
    staged_bytes: Generated<number | string | bigint>;
  };
  sessions: {
    id: string;
    user_id: string;
    refresh_hash: string;
    created_at: number | string | bigint;
    last_used_at: number | string | bigint;
    expires_at: number | string | bigint;
    /** 0009_accounts: User-Agent and address of the client (NULL for sessions opened before). */
    client: string | null;
    address: string | null;
  };
  access_tokens: {
    token_hash: string;
    session_id: string;
    expires_at: number | string | bigint;
  };
  api_keys: {
    id: string;
    user_id: string;
    name: string;
    key_hash: string;
    read_only: number;
    created_at: number | string | bigint;
    expires_at: number | string | bigint | null;
    last_used_at: number | string | bigint | null;
  };
  ssh_keys: {
    id: string;
    user_id: string;
    name: string;
    algorithm: string;
    public_key: string;
    fingerprint: string;
    created_at: number | string | bigint;
    last_used_at: number | string | bigint | null;
  };
  leases: {
    name: string;
    owner: string;
    expires_at: number | string | bigint;
  };
  journal: {
    id: string;
    kind: string;
    data: string;
    created_at: number | string | bigint;
    updated_at: number | string | bigint;
  };
  settings: {
    name: string;
    value: string;
  };
  rate_hits: {
    seq: Generated<number | string>;
    bucket: string;
    at: number | string | bigint;
  };
  dav_locks: {
    token: string;
    user_name: string;
    path: string;
    depth: string;
    scope: string;
    owner: string;
    principal: string;
    timeout_seconds: number | string;
    created_at: number | string | bigint;
    expires_at: number | string | bigint;
  };
  dav_properties: {
    user_name: string;
    path: string;
    ns: string;
    name: string;
    xml: string;
  };
  tus_uploads: {
    id: string;
    user_name: string;
    upload_offset: number | string | bigint;
    upload_length: number | string | bigint | null;
    metadata: string;
    folder: string;
    filename: string;
    overwrite: number;
    final_path: string | null;
    created_at: number | string | bigint;
    expires_at: number | string | bigint;
    /** 0017_tus_uploader: the sender when not the owner (a grant's recipient), else NULL. */
    uploader: Generated<string | null>;
  };
  /** 0015_groups. */
  groups: {
    id: string;
    name: string;
    created_at: number | string | bigint;
  };
  group_members: {
    group_id: string;
    user_id: string;
  };
  /** 0016_grants. */
  grants: {
    id: string;
    owner_id: string;
    owner_name: string;
    path: string;
    is_file: number;
    to_kind: string;
    to_id: string;
    permission: string;
    created_at: number | string | bigint;
  };
  shares: {
    id: string;
    owner_id: string;
    owner_name: string;
    path: string;
    is_file: number;
    upload_only: number;
    password_hash: string | null;
    max_downloads: number | string | bigint | null;
    downloads: Generated<number | string | bigint>;
    expires_at: number | string | bigint | null;
    created_at: number | string | bigint;
  };
  totp_recovery_codes: {
    user_id: string;
    code_hash: string;
  };
  zip_crcs: {
    key: string;
    crc: number | string | bigint;
    created_at: number | string | bigint;
  };
  search_entries: {
    id: Generated<number | string>;
    user_name: string;
    path: string;
    name: string;
    norm: string;
    depth: number;
    is_file: number;
    size: number | string | bigint;
    modified: number | string | bigint;
    scan: string | null;
    /** 0018_changes. */
    etag: string | null;
    tree_cursor: Generated<number | string | bigint | null>;
    /** 0026_sync_fields. */
    file_id: string | null;
    sha256: string | null;
  };
  /** 0018_changes (src/store/changes-repo.ts). */
  changes: {
    cursor: Generated<number | string>;
    owner: string;
    type: string;
    path: string;
    from_path: string | null;
    is_file: number;
    size: number | string | bigint | null;
    modified: number | string | bigint | null;
    etag: string | null;
    created_at: number | string | bigint;
    /** 0026_sync_fields. */
    file_id: Generated<string | null>;
    sha256: Generated<string | null>;
    origin: Generated<string | null>;
  };
  changes_horizon: {
    id: number;
    purged_through: number | string | bigint;
  };
  /** 0014_oidc (src/store/oidc-repo.ts). */
  oidc_accounts: {
    user_id: string;
    issuer: string;
    subject: string;
    groups: string;
    created_at: number | string | bigint;
    last_login_at: number | string | bigint;
  };
  local_accounts: {
    user_id: string;
  };
  oidc_link_pending: {
    user_id: string;
  };
  oidc_requests: {
    id: string;
    kind: string;
    data: string;
    expires_at: number | string | bigint;
  };
  /** 0019_trash (src/store/trash-repo.ts). */
  trash_items: {
    id: string;
    owner_name: string;
    path: string;
    name: string;
    is_file: number;
    size: number | string | bigint;
    deleted_at: number | string | bigint;
    state: string;
    /** 0028_trash_sha256: a file's SHA-256 when it was known for exactly the bytes trashed. */
    sha256: string | null;
  };
  /** 0029_trash_files (src/store/trash-repo.ts): the files of a trashed folder whose hash was known. */
  trash_files: {
    trash_id: string;
    /** Below the folder ('x/y.txt'). */
    path: string;
    sha256: string;
    size: number | string | bigint;
  };
  /** 0019_trash (src/store/versions-repo.ts). */
  file_versions: {
    id: string;
    owner_name: string;
    path: string;
    size: number | string | bigint;
    created_at: number | string | bigint;
  };
  /** 0020_audit (src/store/audit-repo.ts). */
  audit_events: {
    seq: number | string | bigint;
    at: number | string | bigint;
    type: string;
    actor: string | null;
    address: string | null;
    user_agent: string | null;
    target: string | null;
    outcome: string;
    detail: string | null;
    prev_hash: string;
    hash: string;
  };
  audit_head: {
    id: number;
    seq: number | string | bigint;
    hash: string;
    anchor_seq: number | string | bigint;
    anchor_hash: string;
  };
  /** 0020_audit (src/store/webhooks-repo.ts). */
  webhooks: {
    id: string;
    url: string;
    /** JSON array of event types. */
    events: string;
    path_prefix: string | null;
    secret: string;
    enabled: number;
    disabled_reason: string | null;
    failing_since: number | string | bigint | null;
    attempts: Generated<number>;
    next_attempt_at: Generated<number | string | bigint>;
    created_at: number | string | bigint;
  };
  webhook_cursors: {
    hook_id: string;
    source: string;
    cursor: string;
  };
  webhook_deliveries: {
    id: string;
    hook_id: string;
    event_id: string;
    event_type: string;
    attempt: number;
    at: number | string | bigint;
    status: number | null;
    duration_ms: number;
    error: string | null;
    next_retry_at: number | string | bigint | null;
  };
}
