import { t } from '../lib/i18n';
/**
 * The error codes the server sends as `{"error": code, "message": sentence}`
 * (CONTRACT "Errors", src/domain/errors.ts) and the sentence the web UI shows
 * for each. The UI never shows raw JSON: a code it does not know falls back
 * to the server's own sentence, then to a sentence chosen by HTTP status.
 */
export const ERROR_MESSAGES = {
  bad_request: 'The server could not accept this request.',
  digest_mismatch: 'The file arrived damaged (its checksum did not match). Try the upload again.',
  invalid_path: 'That name or path is not allowed.',
  invalid_name: 'That name is not allowed. Names cannot be “.” or “..” or contain “/” or “\\”.',
  invalid_json: 'The server could not read the request.',
  unknown_action: 'The server does not know this action.',
  into_itself: 'A folder cannot be moved into itself.',
  invalid_credentials: 'Wrong username or password.',
  unauthorized: 'Your session has ended or you are not allowed to do this. Sign in again.',
  password_required: 'This share link needs its password.',
  totp_required: 'Enter the 6-digit code from your authenticator app (or a recovery code).',
  forbidden: 'You are not allowed to do this.',
  propfind_finite_depth: 'The server does not list a whole tree at once; ask one folder at a time.',
  not_found: 'It no longer exists. It may have been moved or deleted.',
  no_thumbnail: 'There is no thumbnail for this file.',
  already_exists: 'Something with this name already exists here.',
  not_a_directory: 'A file is in the way where a folder is needed.',
  is_a_directory: 'A folder already has this name.',
  lock_token_mismatch: 'That lock does not belong to this file or folder.',
  offset_mismatch: 'The upload went out of step with the server; it resumes from where the server is.',
  upload_busy: 'Another request is sending this upload right now.',
  last_admin: 'This is the last administrator. Make another user an administrator first.',
  admin_must_be_enabled: 'Administrators cannot be disabled: take the administrator right away first (or enable the user before making them one).',
  precondition_failed: 'It changed since you last looked at it. Reload and try again.',
  method_not_allowed: 'This operation is not possible here.',
  valid_sync_token: 'The sync state is too old; sync again from the start.',
  cursor_expired: 'The list of changes has moved on; reload the folder.',
  changes_disabled: 'This server does not keep a list of changes; reload the folder to see them.',
  supported_report: 'This server does not support that WebDAV report.',
  unsupported_media_type: 'The server does not accept this kind of request body here.',
  locked: 'It is locked by another program (a WebDAV lock). Try again when it is released.',
  too_large: 'The file is larger than this server accepts.',
  range_not_satisfiable: 'The requested part of the file is outside it.',
  headers_too_large: 'The request was too large for the server (too many or too long headers).',
  checksum_mismatch: 'A piece of the upload arrived damaged; it is sent again.',
  rate_limited: 'Too many attempts. Wait a moment and try again.',
  too_many_uploads: 'You have too many unfinished uploads. Let some finish or cancel them, then try again.',
  too_many_streams: 'You have this page open in too many tabs or devices; close some of them.',
  internal: 'Something went wrong on the server. Try again.',
  unavailable: 'The server is busy or shutting down. Try again shortly.',
  storage_unavailable: 'The server cannot reach its file storage right now. Try again shortly.',
  database_unavailable: 'The server cannot reach its database right now. Try again shortly.',
  coordination_unavailable: 'The server cannot reach its coordination service right now. Try again shortly.',
  storage_failed: 'The server’s file storage failed to carry this out. Try again shortly.',
  disk_full: 'The server’s disk is full.',
  quota_exceeded: 'Not enough space left in your storage quota. Delete some files or ask an administrator for more space.',
  dav_limit_reached: 'Too many WebDAV properties or locks for this account. Remove some, then try again.',
  number_of_matches_within_limits: 'More results than the sync asked for at most. Ask without a limit, or with a larger one.',
} as const;

export type ErrorCode = keyof typeof ERROR_MESSAGES;

export const KNOWN_ERROR_CODES = Object.keys(ERROR_MESSAGES) as ErrorCode[];

const BY_STATUS: Record<number, string> = {
  400: ERROR_MESSAGES.bad_request,
  401: ERROR_MESSAGES.unauthorized,
  403: 'You are not allowed to do this.',
  404: ERROR_MESSAGES.not_found,
  409: ERROR_MESSAGES.already_exists,
  413: ERROR_MESSAGES.too_large,
  416: ERROR_MESSAGES.range_not_satisfiable,
  429: ERROR_MESSAGES.rate_limited,
  431: ERROR_MESSAGES.headers_too_large,
  502: ERROR_MESSAGES.storage_failed,
  503: ERROR_MESSAGES.unavailable,
  507: ERROR_MESSAGES.disk_full,
};

/** An answer from the server that was not a success, or no answer at all (status 0). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    /** The readable sentence to show. */
    message: string,
    /** Seconds to wait, from Retry-After on 429. */
    readonly retryAfter?: number,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  get isNetwork(): boolean {
    return this.status === 0;
  }
}

export const NETWORK_MESSAGE = 'Cannot reach the server. Check your connection and that File Cloud is running.';

export function networkError(): ApiError {
  return new ApiError(0, 'network', NETWORK_MESSAGE);
}

function isKnown(code: string): code is ErrorCode {
  return Object.prototype.hasOwnProperty.call(ERROR_MESSAGES, code);
}

/** Parses Retry-After (seconds or an HTTP date) into whole seconds. */
export function parseRetryAfter(value: string | null): number | undefined {
  if (!value) return undefined;
  const n = Number(value);
  if (Number.isFinite(n)) return Math.max(0, Math.ceil(n));
  const t = Date.parse(value);
  return Number.isNaN(t) ? undefined : Math.max(0, Math.ceil((t - Date.now()) / 1000));
}

/** Builds the error for a failed answer from its status, body text and Retry-After header. */
export function errorFromResponse(status: number, bodyText: string, retryAfterHeader: string | null): ApiError {
  let code = '';
  let serverMessage = '';
  try {
    const body = JSON.parse(bodyText) as unknown;
    if (body && typeof body === 'object') {
      const b = body as { error?: unknown; message?: unknown };
      if (typeof b.error === 'string') code = b.error;
      if (typeof b.message === 'string') serverMessage = b.message;
    }
  } catch {
    // Not JSON (a proxy's HTML page, say): the status decides the sentence.
  }
  const retryAfter = parseRetryAfter(retryAfterHeader);
  let message: string = isKnown(code) ? ERROR_MESSAGES[code] : serverMessage || BY_STATUS[status] || `The server answered with an error (${status}).`;
  // The server's sentence is more precise for bad input (it names the field or the rule).
  if ((code === 'bad_request' || code === 'invalid_path') && serverMessage) message = serverMessage;
  if (status === 429 && retryAfter !== undefined) message = `Too many attempts. Try again in ${formatWait(retryAfter)}.`;
  return new ApiError(status, code || `http_${status}`, message, retryAfter);
}

export function formatWait(seconds: number): string {
  if (seconds < 60) return t('time.seconds', { count: seconds });
  return t('time.minutes', { count: Math.ceil(seconds / 60) });
}

/** The sentence to show for anything thrown. */
export function messageOf(e: unknown): string {
  if (e instanceof ApiError) return e.message;
  if (e instanceof Error && e.name === 'AbortError') return 'Cancelled.';
  return 'Something went wrong. Try again.';
}
