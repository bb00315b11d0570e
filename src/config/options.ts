import { parseS3Url, S3LocationError, type S3Location } from '../storage/s3/location.js';

/**
 * The one table of File Cloud's options. Every option has a flag and an
 * environment variable (flags win); nothing else in the program reads
 * process.env. The README's configuration table is checked against this
 * table by src/config/options.test.ts.
 */
export type OptionScope = 'global' | 'serve';

export type OptionSpec<T> = {
  readonly key: string;
  readonly flag: string;
  readonly env: string;
  readonly scope: OptionScope;
  /** Boolean options are flags without a value. */
  readonly type: 'string' | 'boolean';
  readonly default: T;
  readonly parse: (raw: string) => T;
  readonly description: string;
  /** Never logged in clear. */
  readonly secret?: boolean;
  /** Shown in docs as the default when the value itself is computed. */
  readonly defaultLabel?: string;
};

export class OptionValueError extends Error {}

/** Seconds, fractions allowed (0.5), within [min, max]. */
function seconds(min: number, max: number) {
  return (raw: string): number => {
    const v = raw.trim();
    if (!/^\d+(\.\d+)?$/.test(v)) throw new OptionValueError(`expected a number of seconds, got "${raw}"`);
    const n = Number(v);
    if (n < min || n > max) throw new OptionValueError(`expected seconds from ${min} to ${max}, got "${raw}"`);
    return n;
  };
}

function integer(min: number, max: number) {
  return (raw: string): number => {
    if (!/^\d+$/.test(raw.trim())) throw new OptionValueError(`expected a whole number, got "${raw}"`);
    const n = Number(raw.trim());
    if (!Number.isSafeInteger(n) || n < min || n > max) throw new OptionValueError(`expected a number from ${min} to ${max}, got "${raw}"`);
    return n;
  };
}

export function parseBoolean(raw: string): boolean {
  const v = raw.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(v)) return true;
  if (['0', 'false', 'no', 'off', ''].includes(v)) return false;
  throw new OptionValueError(`expected true or false, got "${raw}"`);
}

/** Bytes with an optional binary unit: 1048576, 512K, 100M, 2G, 1T; "unlimited" or 0 means no limit. */
export function parseSize(raw: string): number {
  const v = raw.trim().toLowerCase();
  if (v === 'unlimited' || v === '0') return Infinity;
  const m = /^(\d+)\s*([kmgt]?)i?b?$/.exec(v);
  if (!m) throw new OptionValueError(`expected a size such as 1048576, 500M or 2G, got "${raw}"`);
  const mult = { '': 1, k: 2 ** 10, m: 2 ** 20, g: 2 ** 30, t: 2 ** 40 }[m[2] as '' | 'k' | 'm' | 'g' | 't'];
  const n = Number(m[1]) * mult;
  if (!Number.isSafeInteger(n)) throw new OptionValueError(`size too large: "${raw}"`);
  return n;
}

function host(raw: string): string {
  const v = raw.trim();
  if (v === '' || /\s/.test(v)) throw new OptionValueError(`expected a host name or address, got "${raw}"`);
  return v;
}

function nonEmpty(raw: string): string {
  if (raw.trim() === '') throw new OptionValueError('expected a value');
  return raw;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
function logLevel(raw: string): (typeof LOG_LEVELS)[number] {
  const v = raw.trim().toLowerCase();
  if (!(LOG_LEVELS as readonly string[]).includes(v)) throw new OptionValueError(`expected one of ${LOG_LEVELS.join(', ')}, got "${raw}"`);
  return v as (typeof LOG_LEVELS)[number];
}

/** A URL path prefix such as /files: leading slash, no trailing slash; "/" or "" means none (stored as ""). */
export function parseBasePath(raw: string): string {
  const v = raw.trim().replace(/\/+$/, '');
  if (v === '') return '';
  if (!v.startsWith('/') || !/^(\/[A-Za-z0-9._~-]+)+$/.test(v) || v.split('/').some((s) => s === '.' || s === '..')) {
    throw new OptionValueError(`expected a path such as /files (letters, digits, . _ ~ - between slashes), got "${raw}"`);
  }
  return v;
}

/** The external http(s) address of the base path, without a trailing slash, query or fragment. */
export function parsePublicUrl(raw: string): string {
  const v = raw.trim();
  if (v === '') return '';
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw new OptionValueError(`expected an http:// or https:// URL, got "${raw}"`);
  }
  if ((u.protocol !== 'http:' && u.protocol !== 'https:') || u.search || u.hash || u.username || u.password) {
    throw new OptionValueError(`expected an http:// or https:// URL without query, fragment or credentials, got "${raw}"`);
  }
  return `${u.origin}${u.pathname.replace(/\/+$/, '')}`;
}

/** Comma-separated origins (scheme://host[:port]) or "*"; empty = no cross-origin access. */
export function parseCorsOrigins(raw: string): readonly string[] {
  const parts = raw.split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (parts.includes('*')) {
    if (parts.length > 1) throw new OptionValueError('"*" cannot be combined with other origins');
    return Object.freeze(['*']);
  }
  const out = parts.map((p) => {
    let u: URL;
    try {
      u = new URL(p);
    } catch {
      throw new OptionValueError(`expected origins such as https://app.example.com, got "${p}"`);
    }
    if ((u.protocol !== 'http:' && u.protocol !== 'https:') || u.origin !== p.replace(/\/$/, '')) throw new OptionValueError(`expected an origin (scheme://host[:port], no path), got "${p}"`);
    return u.origin;
  });
  return Object.freeze(out);
}

const LOG_FORMATS = ['auto', 'json', 'pretty'] as const;
function logFormat(raw: string): (typeof LOG_FORMATS)[number] {
  const v = raw.trim().toLowerCase();
  if (!(LOG_FORMATS as readonly string[]).includes(v)) throw new OptionValueError(`expected auto, json or pretty, got "${raw}"`);
  return v as (typeof LOG_FORMATS)[number];
}

function otlpEndpoint(raw: string): string {
  const v = raw.trim();
  if (v === '') return '';
  try {
    const u = new URL(v);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('scheme');
  } catch {
    throw new OptionValueError(`expected an http:// or https:// URL, got "${raw}"`);
  }
  return v.replace(/\/+$/, '');
}

/** The OpenID provider's issuer URL: https, or http only on a loopback host (a provider on the same machine, tests). */
export function parseIssuer(raw: string): string {
  const v = raw.trim();
  if (v === '') return '';
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw new OptionValueError(`expected the provider's issuer URL, such as https://auth.example.com/realms/main, got "${raw}"`);
  }
  const loopback = ['127.0.0.1', 'localhost', '[::1]'].includes(u.hostname);
  if (u.protocol !== 'https:' && !(u.protocol === 'http:' && loopback)) throw new OptionValueError(`expected an https:// issuer URL (http:// only on a loopback host), got "${raw}"`);
  if (u.search || u.hash || u.username || u.password) throw new OptionValueError(`expected an issuer URL without query, fragment or credentials, got "${raw}"`);
  return v;
}

/** Space- or comma-separated OAuth scopes; openid is always among them. */
function scopes(raw: string): string {
  const list = raw.split(/[\s,]+/).filter((s) => s !== '');
  if (list.some((s) => !/^[\x21\x23-\x5b\x5d-\x7e]+$/.test(s))) throw new OptionValueError(`expected scopes such as "openid profile email", got "${raw}"`);
  return [...new Set(['openid', ...list])].join(' ');
}

const DAY = 86400;

/** The metadata store: SQLite in the data dir (default), or a PostgreSQL URL shared by every node. */
export type DatabaseUrl = { readonly kind: 'sqlite' } | { readonly kind: 'postgres'; readonly url: string };

export function parseDatabaseUrl(raw: string): DatabaseUrl {
  const v = raw.trim();
  if (v === 'sqlite:' || v === 'sqlite' || v === '') return Object.freeze({ kind: 'sqlite' });
  if (/^postgres(ql)?:\/\/[^/]/.test(v)) {
    try {
      new URL(v);
    } catch {
      throw new OptionValueError('expected postgres://USER:PASSWORD@HOST:PORT/DATABASE');
    }
    return Object.freeze({ kind: 'postgres', url: v });
  }
  throw new OptionValueError('expected sqlite: or postgres://USER:PASSWORD@HOST:PORT/DATABASE');
}

function redisUrl(raw: string): string {
  const v = raw.trim();
  if (v === '') return '';
  if (!/^rediss?:\/\/[^/]/.test(v)) throw new OptionValueError('expected redis://[:PASSWORD@]HOST:PORT[/DB] or rediss://…');
  return v;
}

/** Worker processes: a count, or auto (src/cli/worker-count.ts). */
function workers(raw: string): number | 'auto' {
  const v = raw.trim().toLowerCase();
  if (v === 'auto') return 'auto';
  return integer(1, 256)(v);
}

/** Where users' files live: local disk (`file:`, the data dir's storage/) or an S3 bucket. */
export type StorageUrl = { readonly kind: 'file' } | ({ readonly kind: 's3' } & S3Location);

export function parseStorageUrl(raw: string): StorageUrl {
  const v = raw.trim();
  if (v === 'file:' || v === 'file://' || v === 'file') return Object.freeze({ kind: 'file' });
  if (!v.startsWith('s3://')) throw new OptionValueError(`expected file: or s3://BUCKET[/PREFIX]?endpoint=URL&region=R&path_style=true, got "${raw}"`);
  try {
    return Object.freeze({ kind: 's3', ...parseS3Url(v) });
  } catch (e) {
    if (e instanceof S3LocationError) throw new OptionValueError(e.message);
    throw e;
  }
}

export const OPTIONS = {
  dataDir: { key: 'dataDir', flag: '--data-dir', env: 'FILE_CLOUD_DATA_DIR', scope: 'global', type: 'string', default: './data', parse: nonEmpty, description: 'Data directory: storage/, file-cloud.db, secret, tmp/.' },
  debug: { key: 'debug', flag: '--debug', env: 'FILE_CLOUD_DEBUG', scope: 'global', type: 'boolean', default: false, parse: parseBoolean, description: 'Print stack traces of command-line failures.' },
  storage: { key: 'storage', flag: '--storage', env: 'FILE_CLOUD_STORAGE', scope: 'global', type: 'string', default: Object.freeze({ kind: 'file' }) as StorageUrl, defaultLabel: 'file: (data/storage/)', parse: parseStorageUrl, description: 'Where files live: file: (local disk) or s3://BUCKET[/PREFIX]?endpoint=URL&region=R&path_style=true (docs/storage.md).' },
  database: { key: 'database', flag: '--database', env: 'FILE_CLOUD_DATABASE', scope: 'global', type: 'string', default: Object.freeze({ kind: 'sqlite' }) as DatabaseUrl, defaultLabel: 'sqlite: (data/file-cloud.db)', parse: parseDatabaseUrl, secret: true, description: 'Metadata store: sqlite: (in the data dir) or postgres://USER:PASSWORD@HOST:PORT/DB, shared by every node.' },
  redis: { key: 'redis', flag: '--redis', env: 'FILE_CLOUD_REDIS', scope: 'serve', type: 'string', default: '', defaultLabel: 'none (the database)', parse: redisUrl, secret: true, description: 'Redis URL for the login throttle and locks; without it they live in the database.' },
  encryptionKeyFile: { key: 'encryptionKeyFile', flag: '--encryption-key-file', env: 'FILE_CLOUD_ENCRYPTION_KEY_FILE', scope: 'global', type: 'string', default: '', defaultLabel: 'none (files are stored as they are)', parse: nonEmpty, description: 'File holding the 32-byte master key (base64; `file-cloud encryption keygen PATH` makes one): every file written is stored encrypted (docs/operations.md "Encryption at rest").' },
  serviceTimeout: { key: 'serviceTimeout', flag: '--service-timeout', env: 'FILE_CLOUD_SERVICE_TIMEOUT', scope: 'global', type: 'string', default: 4, parse: seconds(0.5, 300), description: 'Seconds a PostgreSQL query or connection, a Redis command, or an S3 request (or its stalled transfer) may take before the service counts as unavailable (503); docs/operations.md.' },
  requestDeadline: { key: 'requestDeadline', flag: '--request-deadline', env: 'FILE_CLOUD_REQUEST_DEADLINE', scope: 'serve', type: 'string', default: 10, parse: seconds(1, 3600), description: 'Seconds a request may wait for a service without progress (no answer begun, no request bytes received, no service answered) before it is answered 503 unavailable; docs/operations.md.' },
  secretFile: { key: 'secretFile', flag: '--secret-file', env: 'FILE_CLOUD_SECRET_FILE', scope: 'serve', type: 'string', default: '', defaultLabel: 'data/secret (in the database with PostgreSQL)', parse: nonEmpty, description: 'File holding the key that signs path tokens.' },
  workers: { key: 'workers', flag: '--workers', env: 'FILE_CLOUD_WORKERS', scope: 'serve', type: 'string', default: 'auto' as number | 'auto', parse: workers, description: 'Processes serving the port: a number, or auto (one on a machine with fewer than 4 cores or less than 4 GiB of memory, else one per core).' },
  host: { key: 'host', flag: '--host', env: 'FILE_CLOUD_HOST', scope: 'serve', type: 'string', default: '127.0.0.1', parse: host, description: 'Address to listen on (0.0.0.0 for every interface).' },
  port: { key: 'port', flag: '--port', env: 'FILE_CLOUD_PORT', scope: 'serve', type: 'string', default: 8000, parse: integer(0, 65535), description: 'TCP port to listen on (0 picks a free one).' },
  sftpPort: { key: 'sftpPort', flag: '--sftp-port', env: 'FILE_CLOUD_SFTP_PORT', scope: 'serve', type: 'string', default: undefined as number | undefined, defaultLabel: 'unset (SFTP off)', parse: integer(0, 65535), description: 'Serve the same files over SFTP on this TCP port (0 picks a free one); docs/sftp.md.' },
  sftpHost: { key: 'sftpHost', flag: '--sftp-host', env: 'FILE_CLOUD_SFTP_HOST', scope: 'serve', type: 'string', default: '', defaultLabel: 'the --host address', parse: host, description: 'Address the SFTP port listens on.' },
  dev: { key: 'dev', flag: '--dev', env: 'FILE_CLOUD_DEV', scope: 'serve', type: 'boolean', default: false, parse: parseBoolean, description: 'Development mode: lifts the login throttle.' },
  accessTokenTtl: { key: 'accessTokenTtl', flag: '--access-token-ttl', env: 'FILE_CLOUD_ACCESS_TOKEN_TTL', scope: 'serve', type: 'string', default: 3600, parse: integer(1, 365 * DAY), description: 'Access-token lifetime in seconds (valid_for_seconds).' },
  refreshTokenTtl: { key: 'refreshTokenTtl', flag: '--refresh-token-ttl', env: 'FILE_CLOUD_REFRESH_TOKEN_TTL', scope: 'serve', type: 'string', default: 30 * DAY, parse: integer(1, 10 * 365 * DAY), description: 'Seconds of inactivity after which a refresh token expires.' },
  pathTokenTtl: { key: 'pathTokenTtl', flag: '--path-token-ttl', env: 'FILE_CLOUD_PATH_TOKEN_TTL', scope: 'serve', type: 'string', default: DAY, parse: integer(1, 10 * 365 * DAY), description: 'Default and maximum path-token lifetime in seconds.' },
  loginRateLimit: { key: 'loginRateLimit', flag: '--login-rate-limit', env: 'FILE_CLOUD_LOGIN_RATE_LIMIT', scope: 'serve', type: 'string', default: 10, parse: integer(1, 1_000_000), description: 'Login attempts per minute per client address, and failed grant creations per minute per user (lifted by --dev).' },
  shareRateLimit: { key: 'shareRateLimit', flag: '--share-rate-limit', env: 'FILE_CLOUD_SHARE_RATE_LIMIT', scope: 'serve', type: 'string', default: 1200, parse: integer(0, 1_000_000), description: 'Requests per minute per client address to share links (/s/, /share/), per process; 0 turns the limit off.' },
  maxUploadSize: { key: 'maxUploadSize', flag: '--max-upload-size', env: 'FILE_CLOUD_MAX_UPLOAD_SIZE', scope: 'serve', type: 'string', default: Infinity, defaultLabel: 'unlimited', parse: parseSize, description: 'Largest accepted file in bytes (suffixes K, M, G, T); larger uploads get 413.' },
  davMaxProperties: { key: 'davMaxProperties', flag: '--dav-max-properties', env: 'FILE_CLOUD_DAV_MAX_PROPERTIES', scope: 'serve', type: 'string', default: 10_000, parse: integer(0, 100_000_000), description: 'WebDAV dead properties a user may keep in all (PROPPATCH, COPY beyond it: 507 dav_limit_reached).' },
  davMaxPropertySize: { key: 'davMaxPropertySize', flag: '--dav-max-property-size', env: 'FILE_CLOUD_DAV_MAX_PROPERTY_SIZE', scope: 'serve', type: 'string', default: 16 * 1024 * 1024, parse: integer(0, Number.MAX_SAFE_INTEGER), description: 'Total size, in characters of their XML, of the WebDAV dead properties a user may keep (beyond it: 507 dav_limit_reached).' },
  davMaxLocks: { key: 'davMaxLocks', flag: '--dav-max-locks', env: 'FILE_CLOUD_DAV_MAX_LOCKS', scope: 'serve', type: 'string', default: 1_000, parse: integer(0, 10_000_000), description: 'Live WebDAV locks a user may hold at once (a LOCK beyond it: 507 dav_limit_reached).' },
  trustProxy: { key: 'trustProxy', flag: '--trust-proxy', env: 'FILE_CLOUD_TRUST_PROXY', scope: 'serve', type: 'boolean', default: false, parse: parseBoolean, description: 'Take the client address from the nearest proxy\'s X-Forwarded-For entry.' },
  staleUploadAfter: { key: 'staleUploadAfter', flag: '--stale-upload-after', env: 'FILE_CLOUD_STALE_UPLOAD_AFTER', scope: 'serve', type: 'string', default: 3600, parse: integer(1, 30 * DAY), description: 'Seconds without progress after which an upload\'s staging (temp file, S3 multipart upload) is presumed dead and swept.' },
  uploadExpiry: { key: 'uploadExpiry', flag: '--upload-expiry', env: 'FILE_CLOUD_UPLOAD_EXPIRY', scope: 'serve', type: 'string', default: DAY, parse: integer(1, 365 * DAY), description: 'Seconds an unfinished resumable (tus) upload is kept after its last chunk; then it and its staged bytes are removed.' },
  maxOpenUploads: { key: 'maxOpenUploads', flag: '--max-open-uploads', env: 'FILE_CLOUD_MAX_OPEN_UPLOADS', scope: 'serve', type: 'string', default: 100, parse: integer(1, 100_000), description: 'Unfinished resumable (tus) uploads one user may have open at a time; a creation past it answers 429 too_many_uploads.' },
  auditLog: { key: 'auditLog', flag: '--audit-log', env: 'FILE_CLOUD_AUDIT_LOG', scope: 'serve', type: 'string', default: '', defaultLabel: 'unset (database only)', parse: nonEmpty, description: 'Also write every audit event as one JSON line to this file (appended), or to stdout with -.' },
  auditRetention: { key: 'auditRetention', flag: '--audit-retention', env: 'FILE_CLOUD_AUDIT_RETENTION', scope: 'serve', type: 'string', default: 365, parse: integer(0, 100 * 365), description: 'Days audit events are kept in the database (the leader purges older ones, keeping the chain verifiable); 0 keeps them all.' },
  webhooksAllowPrivate: { key: 'webhooksAllowPrivate', flag: '--webhooks-allow-private', env: 'FILE_CLOUD_WEBHOOKS_ALLOW_PRIVATE', scope: 'serve', type: 'boolean', default: false, parse: parseBoolean, description: 'Let webhooks deliver to loopback, link-local and private addresses (a LAN setup); refused by default.' },
  indexInterval: { key: 'indexInterval', flag: '--index-interval', env: 'FILE_CLOUD_INDEX_INTERVAL', scope: 'serve', type: 'string', default: 3600, parse: integer(0, 30 * DAY), description: 'Seconds between rescans of storage into the search index and change journal (files other tools changed), on the leader; one also runs 30–40 s after any process of the deployment, on any node, dies without stopping. 0 turns them all off.' },
  trashDays: { key: 'trashDays', flag: '--trash-days', env: 'FILE_CLOUD_TRASH_DAYS', scope: 'serve', type: 'string', default: 0, defaultLabel: '0 (deletions are permanent)', parse: integer(0, 36_500), description: 'Days a deleted file or folder is kept in its owner\'s trash (restorable, counted against the quota) before the leader purges it; 0 keeps the interface document\'s rule: deletions are permanent, no trash (docs/operations.md).' },
  versions: { key: 'versions', flag: '--versions', env: 'FILE_CLOUD_VERSIONS', scope: 'serve', type: 'boolean', default: false, parse: parseBoolean, description: 'Keep the earlier content of a file when it is replaced (PUT, WebDAV PUT), thinned like Nextcloud and counted against the quota; off: a replace is final (docs/api.md "Versions").' },
  versionsMaxDays: { key: 'versionsMaxDays', flag: '--versions-max-days', env: 'FILE_CLOUD_VERSIONS_MAX_DAYS', scope: 'serve', type: 'string', default: 0, defaultLabel: '0 (no cap)', parse: integer(0, 36_500), description: 'With --versions: versions older than this many days are deleted; 0 keeps them, thinned to one a week.' },
  changes: { key: 'changes', flag: '--changes', env: 'FILE_CLOUD_CHANGES', scope: 'global', type: 'string', default: true, parse: parseBoolean, description: 'Keep the change journal (on or off). Off: writes append nothing to it, GET /api/changes and its stream answer 404 changes_disabled, WebDAV sync-collection 403, webhooks send no file events, and folder ETags are the storage backend\'s own (docs/sync.md "Without the feed").' },
  changesRetention: { key: 'changesRetention', flag: '--changes-retention', env: 'FILE_CLOUD_CHANGES_RETENTION', scope: 'serve', type: 'string', default: 30 * DAY, parse: integer(60, 3650 * DAY), description: 'Seconds the change journal (GET /api/changes) keeps an entry; an older cursor gets 410 cursor_expired. Purged by the leader.' },
  logLevel: { key: 'logLevel', flag: '--log-level', env: 'FILE_CLOUD_LOG_LEVEL', scope: 'serve', type: 'string', default: 'info', parse: logLevel, description: 'Log level: fatal, error, warn, info, debug, trace or silent.' },
  logFormat: { key: 'logFormat', flag: '--log-format', env: 'FILE_CLOUD_LOG_FORMAT', scope: 'serve', type: 'string', default: 'auto', parse: logFormat, description: 'Log format: auto (pretty when stdout is a terminal, json otherwise), json (one JSON object a line) or pretty (short readable lines).' },
  basePath: { key: 'basePath', flag: '--base-path', env: 'FILE_CLOUD_BASE_PATH', scope: 'serve', type: 'string', default: '', defaultLabel: '/ (none)', parse: parseBasePath, description: 'URL path prefix to serve everything under, e.g. /files behind a reverse proxy.' },
  publicUrl: { key: 'publicUrl', flag: '--public-url', env: 'FILE_CLOUD_PUBLIC_URL', scope: 'serve', type: 'string', default: '', defaultLabel: 'the address in the browser', parse: parsePublicUrl, description: 'External address of the base path (e.g. https://example.com/files), used in share links.' },
  corsOrigin: { key: 'corsOrigin', flag: '--cors-origin', env: 'FILE_CLOUD_CORS_ORIGIN', scope: 'serve', type: 'string', default: Object.freeze([]) as readonly string[], defaultLabel: 'none', parse: parseCorsOrigins, description: 'Origins allowed to call the API from a browser: comma-separated, or * for any.' },
  metrics: { key: 'metrics', flag: '--metrics', env: 'FILE_CLOUD_METRICS', scope: 'serve', type: 'boolean', default: false, parse: parseBoolean, description: 'Serve Prometheus metrics at <base>/metrics (protect it: see docs/operations.md).' },
  otlpEndpoint: { key: 'otlpEndpoint', flag: '--otlp-endpoint', env: 'OTEL_EXPORTER_OTLP_ENDPOINT', scope: 'serve', type: 'string', default: '', defaultLabel: 'unset (tracing off)', parse: otlpEndpoint, description: 'OpenTelemetry OTLP/HTTP endpoint; when set, traces are sent to <endpoint>/v1/traces.' },
  oidcIssuer: { key: 'oidcIssuer', flag: '--oidc-issuer', env: 'FILE_CLOUD_OIDC_ISSUER', scope: 'serve', type: 'string', default: '', defaultLabel: 'unset (single sign-on off)', parse: parseIssuer, description: 'OpenID Connect provider (issuer URL) for single sign-on; its discovery document is read from <issuer>/.well-known/openid-configuration.' },
  oidcClientId: { key: 'oidcClientId', flag: '--oidc-client-id', env: 'FILE_CLOUD_OIDC_CLIENT_ID', scope: 'serve', type: 'string', default: '', defaultLabel: 'unset', parse: nonEmpty, description: 'Client id of File Cloud at the OpenID provider.' },
  oidcClientSecret: { key: 'oidcClientSecret', flag: '--oidc-client-secret', env: 'FILE_CLOUD_OIDC_CLIENT_SECRET', scope: 'serve', type: 'string', default: '', defaultLabel: 'unset', parse: nonEmpty, secret: true, description: 'Client secret at the OpenID provider (prefer --oidc-client-secret-file: a flag shows in the process list).' },
  oidcClientSecretFile: { key: 'oidcClientSecretFile', flag: '--oidc-client-secret-file', env: 'FILE_CLOUD_OIDC_CLIENT_SECRET_FILE', scope: 'serve', type: 'string', default: '', defaultLabel: 'unset', parse: nonEmpty, description: 'File holding the client secret (trailing newline ignored).' },
  oidcScopes: { key: 'oidcScopes', flag: '--oidc-scopes', env: 'FILE_CLOUD_OIDC_SCOPES', scope: 'serve', type: 'string', default: 'openid profile email', parse: scopes, description: 'Scopes asked of the provider (openid is always added); add the one that carries the groups claim if the provider needs it.' },
  oidcUsernameClaim: { key: 'oidcUsernameClaim', flag: '--oidc-username-claim', env: 'FILE_CLOUD_OIDC_USERNAME_CLAIM', scope: 'serve', type: 'string', default: 'preferred_username', parse: nonEmpty, description: 'ID-token claim that names a new account (it must be a valid username; it is not used to find accounts, sub is).' },
  oidcGroupsClaim: { key: 'oidcGroupsClaim', flag: '--oidc-groups-claim', env: 'FILE_CLOUD_OIDC_GROUPS_CLAIM', scope: 'serve', type: 'string', default: 'groups', parse: nonEmpty, description: 'ID-token claim with the user\'s groups (a list of names).' },
  oidcAdminGroup: { key: 'oidcAdminGroup', flag: '--oidc-admin-group', env: 'FILE_CLOUD_OIDC_ADMIN_GROUP', scope: 'serve', type: 'string', default: '', defaultLabel: 'unset (administrators set in File Cloud)', parse: nonEmpty, description: 'Members of this provider group are administrators, and only they: set on each single sign-on.' },
  oidcCreateUsers: { key: 'oidcCreateUsers', flag: '--oidc-create-users', env: 'FILE_CLOUD_OIDC_CREATE_USERS', scope: 'serve', type: 'string', default: true, parse: parseBoolean, description: 'The first single sign-on of someone without an account creates one (on or off).' },
  oidcButtonLabel: { key: 'oidcButtonLabel', flag: '--oidc-button-label', env: 'FILE_CLOUD_OIDC_BUTTON_LABEL', scope: 'serve', type: 'string', default: 'single sign-on', parse: nonEmpty, description: 'Shown on the sign-in button: "Sign in with <label>".' },
  oidcOnly: { key: 'oidcOnly', flag: '--oidc-only', env: 'FILE_CLOUD_OIDC_ONLY', scope: 'serve', type: 'boolean', default: false, parse: parseBoolean, description: 'Password sign-in off for every account not marked local (file-cloud user local NAME on); the sign-in page goes straight to the provider.' },
  adminPassword: { key: 'adminPassword', flag: '--admin-password', env: 'FILE_CLOUD_ADMIN_PASSWORD', scope: 'serve', type: 'string', default: '', defaultLabel: 'random, printed once', parse: nonEmpty, secret: true, description: 'Password for the first-run admin user (used only when no user exists).' },
} as const satisfies Record<string, OptionSpec<unknown>>;

export type OptionKey = keyof typeof OPTIONS;
type ValueOf<K extends OptionKey> = ReturnType<(typeof OPTIONS)[K]['parse']>;
export type Config = { readonly [K in OptionKey]: ValueOf<K> };
