import { ApiError, errorFromResponse, networkError } from './errors';
import { withBase } from '../lib/base';
import { t } from '../lib/i18n';

/**
 * The session of the signed-in user. Only the username and the refresh token
 * are kept (localStorage), never the password; the access token lives in
 * memory only. The access token is refreshed shortly before it expires and,
 * should the server still refuse it (restart, clock skew, a sleeping laptop),
 * once more on a 401, after which the request is retried once.
 */
export type StoredSession = { readonly username: string; readonly refresh_token: string; /** Signed in through the OpenID provider: signing out also signs out there. */ readonly sso?: boolean };

type TokenSet = { access_token: string; refresh_token: string; valid_for_seconds: number };
type Access = { token: string; expiresAt: number; ttlMs: number };

export type SessionEnd = 'signed_out' | 'expired';

const STORAGE_KEY = 'file-cloud.session';
/** Set (sessionStorage) when the user signed out, so the sign-in page does not redirect to the provider at once. */
export const SIGNED_OUT_KEY = 'file-cloud.signed-out';

function loadSession(): StoredSession | null {
  try {
    const raw = localStorage.getItem(STORAGE_KEY);
    if (!raw) return null;
    const v = JSON.parse(raw) as Partial<StoredSession>;
    if (typeof v.username !== 'string' || typeof v.refresh_token !== 'string') return null;
    return v.sso === true ? { username: v.username, refresh_token: v.refresh_token, sso: true } : { username: v.username, refresh_token: v.refresh_token };
  } catch {
    return null;
  }
}

async function postJson(url: string, body: unknown): Promise<Response> {
  try {
    return await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), cache: 'no-store' });
  } catch {
    throw networkError();
  }
}

async function failure(res: Response): Promise<ApiError> {
  const text = await res.text().catch(() => '');
  return errorFromResponse(res.status, text, res.headers.get('retry-after'));
}

export type RequestOptions = {
  method?: string;
  json?: unknown;
  body?: string | Blob | FormData;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** The browser cache mode; default no-store. Thumbnails use no-cache: revalidated by ETag, a 304 costs no bytes. */
  cache?: RequestCache;
};

export class ApiClient {
  private session: StoredSession | null = loadSession();
  private access: Access | null = null;
  private refreshing: Promise<Access> | null = null;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly listeners = new Set<(why: SessionEnd) => void>();

  constructor() {
    // Another tab signed out (or in as someone else): follow it.
    window.addEventListener('storage', (e) => {
      if (e.key !== STORAGE_KEY) return;
      const next = loadSession();
      const before = this.session;
      if (next?.username === before?.username && next?.refresh_token === before?.refresh_token) return;
      this.session = next;
      this.dropAccess();
      if (!next) this.emit('signed_out');
      // Signed in as someone else elsewhere: this page shows the old user's files, start over.
      else if (before && next.username !== before.username) location.reload();
    });
  }

  get username(): string | null {
    return this.session?.username ?? null;
  }

  /** Who was signed in before the session ended, to prefill the sign-in form. */
  lastUsername: string | null = null;

  get signedIn(): boolean {
    return this.session !== null;
  }

  /** Called when the session ends (sign out, or the server refused the refresh token). */
  onSessionEnd(listener: (why: SessionEnd) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Signs in. With TOTP on for the account, the server answers 401
   * `totp_required` until `totp` (a code from the app, or a recovery code) is sent too.
   */
  async login(username: string, password: string, totp?: string): Promise<void> {
    const res = await postJson(withBase('/auth/login'), totp === undefined ? { username, password } : { username, password, totp });
    if (!res.ok) throw await failure(res);
    const set = (await res.json()) as TokenSet;
    this.session = { username, refresh_token: set.refresh_token };
    localStorage.setItem(STORAGE_KEY, JSON.stringify(this.session));
    this.setAccess(set);
  }

  /**
   * Single sign-on: the callback's one-time code (the `sso` of the URL fragment) for a session,
   * the same token set as a password sign-in.
   */
  async loginWithCode(code: string): Promise<void> {
    const res = await postJson(withBase('/auth/oidc/session'), { code });
    if (!res.ok) throw await failure(res);
    const set = (await res.json()) as TokenSet & { username: string };
    this.session = { username: set.username, refresh_token: set.refresh_token, sso: true };
    localStorage.setItem(STORAGE_KEY, JSON.stringify(this.session));
    this.setAccess(set);
  }

  /** Revokes the session on the server, then forgets it here whatever the server said; a single sign-on session signs out at the provider too. */
  async logout(): Promise<void> {
    const s = this.session;
    this.forget();
    if (s) {
      const res = await postJson(withBase('/auth/logout'), { username: s.username, refresh_token: s.refresh_token }).catch(() => undefined);
      if (res && !res.ok && res.status !== 401) throw await failure(res);
    }
    if (s?.sso) {
      // Back on the sign-in page, --oidc-only must not send the browser straight to the provider again.
      sessionStorage.setItem(SIGNED_OUT_KEY, '1');
      location.assign(withBase('/auth/oidc/logout'));
    }
    this.emit('signed_out');
  }

  /** A valid access token, refreshed first when missing or about to expire. */
  async token(): Promise<string> {
    const a = this.access;
    if (a && a.expiresAt - Date.now() > margin(a.ttlMs)) return a.token;
    return (await this.refresh()).token;
  }

  /**
   * Gets a new access token. `stale` is the token the server just refused:
   * if another request has refreshed meanwhile, that newer token is used
   * instead of refreshing again.
   */
  async refresh(stale?: string): Promise<Access> {
    if (stale !== undefined && this.access && this.access.token !== stale) return this.access;
    if (!this.refreshing) {
      this.refreshing = this.doRefresh().finally(() => {
        this.refreshing = null;
      });
    }
    return this.refreshing;
  }

  private async doRefresh(): Promise<Access> {
    const s = this.session;
    if (!s) throw new ApiError(401, 'unauthorized', t('session.signedOut'));
    const res = await postJson(withBase('/auth/refresh'), { username: s.username, refresh_token: s.refresh_token });
    if (res.status === 401 || res.status === 400 || res.status === 403) {
      // The session was revoked or expired, or the account disabled: nothing will work until the user signs in again.
      this.forget();
      this.emit('expired');
      throw new ApiError(401, 'unauthorized', t('session.ended'));
    }
    if (!res.ok) throw await failure(res);
    return this.setAccess((await res.json()) as TokenSet);
  }

  /** fetch with the access token; on 401 refreshes once and retries once. Throws ApiError unless 2xx/3xx. */
  async request(url: string, opts: RequestOptions = {}): Promise<Response> {
    const attempt = async (token: string): Promise<Response> => {
      const headers: Record<string, string> = { ...opts.headers, authorization: `Bearer ${token}` };
      let body = opts.body;
      if (opts.json !== undefined) {
        headers['content-type'] = 'application/json';
        body = JSON.stringify(opts.json);
      }
      try {
        return await fetch(url, { method: opts.method ?? 'GET', headers, body, signal: opts.signal, cache: opts.cache ?? 'no-store' });
      } catch (e) {
        if (e instanceof DOMException && e.name === 'AbortError') throw e;
        throw networkError();
      }
    };
    let token = await this.token();
    let res = await attempt(token);
    if (res.status === 401 && this.session && !(await isWrongSecret(res))) {
      token = (await this.refresh(token)).token;
      res = await attempt(token);
    }
    if (!res.ok) throw await failure(res);
    return res;
  }

  async json<T>(url: string, opts: RequestOptions = {}): Promise<T> {
    const res = await this.request(url, opts);
    return (await res.json()) as T;
  }

  private setAccess(set: TokenSet): Access {
    const ttlMs = Math.max(1, set.valid_for_seconds) * 1000;
    this.access = { token: set.access_token, expiresAt: Date.now() + ttlMs, ttlMs };
    clearTimeout(this.timer);
    // Refresh ahead of expiry so a request never waits for it; token() covers a throttled timer.
    this.timer = setTimeout(() => {
      this.refresh().catch(() => undefined);
    }, Math.max(500, ttlMs - margin(ttlMs)));
    return this.access;
  }

  private dropAccess(): void {
    this.access = null;
    clearTimeout(this.timer);
  }

  private forget(): void {
    if (this.session) this.lastUsername = this.session.username;
    this.session = null;
    this.dropAccess();
    localStorage.removeItem(STORAGE_KEY);
  }

  private emit(why: SessionEnd): void {
    for (const l of this.listeners) l(why);
  }
}

/**
 * A 401 that refuses a password or code in the request (changing one's own
 * password, TOTP), not the token: refreshing would not help, and the retry
 * would count as a second attempt against the throttle.
 */
async function isWrongSecret(res: Response): Promise<boolean> {
  try {
    return ((await res.clone().json()) as { error?: unknown }).error === 'invalid_credentials';
  } catch {
    return false;
  }
}

/** How long before expiry a token counts as expiring: a fifth of its life, at most a minute. */
function margin(ttlMs: number): number {
  return Math.min(60_000, ttlMs / 5);
}

export { failure as responseError };
