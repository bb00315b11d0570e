/**
 * The one error type of File Cloud. Every failure a client may see is an
 * AppError; its code alone chooses the HTTP status (see ERRORS), and the one
 * error handler in src/http/error-handler.ts turns it into the contract's
 * `{ "error": code, "message": sentence }` body.
 */
export const ERRORS = {
  bad_request: 400,
  digest_mismatch: 400,
  invalid_path: 400,
  invalid_name: 400,
  invalid_json: 400,
  unknown_action: 400,
  into_itself: 400,
  invalid_credentials: 401,
  unauthorized: 401,
  password_required: 401,
  totp_required: 401,
  forbidden: 403,
  propfind_finite_depth: 403,
  valid_sync_token: 403,
  supported_report: 403,
  not_found: 404,
  no_thumbnail: 404,
  changes_disabled: 404,
  method_not_allowed: 405,
  cursor_expired: 410,
  already_exists: 409,
  not_a_directory: 409,
  is_a_directory: 409,
  lock_token_mismatch: 409,
  offset_mismatch: 409,
  upload_busy: 409,
  last_admin: 409,
  admin_must_be_enabled: 409,
  precondition_failed: 412,
  too_large: 413,
  unsupported_media_type: 415,
  range_not_satisfiable: 416,
  locked: 423,
  rate_limited: 429,
  too_many_uploads: 429,
  too_many_streams: 429,
  headers_too_large: 431,
  checksum_mismatch: 460,
  internal: 500,
  storage_failed: 502,
  unavailable: 503,
  storage_unavailable: 503,
  database_unavailable: 503,
  coordination_unavailable: 503,
  disk_full: 507,
  quota_exceeded: 507,
  dav_limit_reached: 507,
  number_of_matches_within_limits: 507,
} as const;

export type ErrorCode = keyof typeof ERRORS;

/**
 * 507s that answer what the client asked for, not a fault of the server: its own quota, its own
 * WebDAV limits, a sync it asked to cut where it cannot be cut. Refusals like any 4xx.
 */
const CLIENT_CAUSED_5XX: ReadonlySet<ErrorCode> = new Set(['quota_exceeded', 'dav_limit_reached', 'number_of_matches_within_limits']);

/**
 * True when the server failed (a bug, a service down, its disk full); false for a refusal the
 * client caused. Only faults are logged as errors with their cause: any user can cause refusals
 * at will, and the error log must stay the operator's list of what went wrong.
 */
export function isServerFault(code: ErrorCode): boolean {
  return ERRORS[code] >= 500 && !CLIENT_CAUSED_5XX.has(code);
}

export class AppError extends Error {
  readonly status: number;
  /** Extra response headers, e.g. Retry-After on 429 or Content-Range on 416. */
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    readonly code: ErrorCode,
    message: string,
    opts: { cause?: unknown; headers?: Record<string, string> } = {},
  ) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'AppError';
    this.status = ERRORS[code];
    this.headers = opts.headers ?? {};
  }
}

export const isAppError = (e: unknown): e is AppError => e instanceof AppError;
