import { CATALOGS } from '../../../src/lib/i18n/catalogs';
import { locale, t, type MessageKey } from '../lib/i18n';
import { localizeSentence } from '../../../src/lib/i18n/sentences';
/**
 * The error codes the server sends as `{"error": code, "message": sentence}`
 * (CONTRACT "Errors", src/domain/errors.ts): each has its sentence in the catalogs as
 * `apiError.<code>`, in the UI's language. The UI never shows raw JSON: a code it does not
 * know falls back to the server's own sentence, then to a sentence chosen by HTTP status.
 */
const PREFIX = 'apiError.';

export const KNOWN_ERROR_CODES = (Object.keys(CATALOGS.en) as MessageKey[]).filter((k) => k.startsWith(PREFIX) && /^[a-z_]+$/.test(k.slice(PREFIX.length))).map((k) => k.slice(PREFIX.length));

const known = new Set(KNOWN_ERROR_CODES);

const sentenceOf = (code: string): string => t(`${PREFIX}${code}` as MessageKey);

const BY_STATUS: Record<number, string> = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  409: 'already_exists',
  413: 'too_large',
  416: 'range_not_satisfiable',
  429: 'rate_limited',
  431: 'headers_too_large',
  502: 'storage_failed',
  503: 'unavailable',
  507: 'disk_full',
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

export function networkError(): ApiError {
  return new ApiError(0, 'network', t('apiFallback.network'));
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
  const byStatus = BY_STATUS[status];
  let message: string = known.has(code) ? sentenceOf(code) : serverMessage || (byStatus ? sentenceOf(byStatus) : t('apiFallback.status', { status: String(status) }));
  // The server's sentence is more precise for bad input (it names the field or the rule). It is
  // English: another language gets it worded in that language when it is a catalog sentence, else
  // keeps the catalog's sentence for the code.
  if ((code === 'bad_request' || code === 'invalid_path') && serverMessage) message = locale() === 'en' ? serverMessage : (localizeSentence(serverMessage, t) ?? message);
  if (status === 429 && retryAfter !== undefined) message = t('apiFallback.retryIn', { wait: formatWait(retryAfter) });
  return new ApiError(status, code || `http_${status}`, message, retryAfter);
}

export function formatWait(seconds: number): string {
  if (seconds < 60) return t('time.seconds', { count: seconds });
  return t('time.minutes', { count: Math.ceil(seconds / 60) });
}

/** The sentence to show for anything thrown. */
export function messageOf(e: unknown): string {
  if (e instanceof ApiError) return e.message;
  if (e instanceof Error && e.name === 'AbortError') return t('apiFallback.cancelled');
  return t('apiFallback.unknown');
}
