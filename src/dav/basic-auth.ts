import { AppError } from '../domain/errors.js';
import type { Principal } from '../domain/principal.js';
import type { Clock } from '../lib/clock.js';
import type { RateLimiter } from '../store/rate-limiter.js';
import type { AuthService } from '../services/auth.js';
import { KEY_PREFIX, type ApiKeyService } from '../services/api-keys.js';
import type { MetadataStore } from '../store/metadata-store.js';
import type { User } from '../store/users.js';
import { hmacSha256 } from '../lib/crypto.js';

/** The challenge every WebDAV 401 carries (CONTRACT "WebDAV"). */
export const DAV_CHALLENGE = { 'www-authenticate': 'Basic realm="File Cloud", charset="UTF-8"' };

/** How long a verified password is trusted without hashing it again. */
export const CREDENTIAL_TTL_MS = 60_000;
const MAX_CACHED = 10_000;

type Verified = { readonly userId: string; readonly authEpoch: string; readonly expiresAt: number };

export type BasicAuthenticator = ReturnType<typeof createBasicAuthenticator>;

/**
 * WebDAV clients send HTTP Basic with every request, and a password check is
 * expensive on purpose (scrypt). A verified credential is therefore
 * remembered for a minute under an HMAC of user and password (keyed by the
 * server secret, so the cache holds nothing a password can be guessed from
 * offline), and each reuse still reads the user: a changed password (new
 * auth epoch) or a removed user drops it at once, on every node, because
 * the epoch lives in the shared database. Concurrent requests with the same
 * new credential (Finder opens several connections at once) share one check.
 * Every full check counts towards the login throttle, as a login does.
 *
 * The password may also be an app password (`fck_…`, src/services/api-keys.ts)
 * of the named user: a cheap hashed lookup, so it is not cached; a wrong one
 * counts towards the throttle like a wrong password. A disabled user gets
 * nothing either way.
 */
export function createBasicAuthenticator(deps: {
  store: MetadataStore;
  auth: AuthService;
  keys: ApiKeyService;
  throttle: RateLimiter | undefined;
  clock: Clock;
  secret: Buffer;
  /** Told of each refused credential (the audit log's login.failed); awaited, so the entry is in before the refusal goes out. */
  onFailure?: (username: string, address: string) => Promise<void>;
}) {
  const { store, clock } = deps;
  const keyOf = hmacSha256(deps.secret);
  const cache = new Map<string, Verified>();
  const checking = new Map<string, Promise<Verified | undefined>>();
  const totpOn = () => new AppError('unauthorized', 'This account uses two-factor sign-in: WebDAV needs an app password instead of the account password.', { headers: DAV_CHALLENGE });
  const count = async (ip: string) => {
    const wait = (await deps.throttle?.hit(ip, clock.now())) ?? 0;
    if (wait > 0) throw new AppError('rate_limited', `Too many login attempts; try again in ${wait} seconds.`, { headers: { 'retry-after': String(wait) } });
  };

  async function fullCheck(username: string, password: string, ip: string): Promise<Verified | undefined> {
    await count(ip);
    const user = await deps.auth.verifyPassword(username, password);
    return user && { userId: user.id, authEpoch: user.authEpoch, expiresAt: clock.now() + CREDENTIAL_TTL_MS };
  }

  /** User name and password of `Authorization: Basic <encoded>`; undefined when it names no user. */
  function split(encoded: string): { username: string; password: string } | undefined {
    const decoded = Buffer.from(encoded, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    return colon <= 0 ? undefined : { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
  }
  const principalOf = (user: { id: string; username: string; isAdmin: boolean }): Principal => ({ kind: 'user', via: 'password', userId: user.id, username: user.username, isAdmin: user.isAdmin, readOnly: false });
  /** The account of a remembered credential, while it is still the user's (same id and auth epoch, not disabled). */
  const stillValid = (cached: Verified | undefined, user: User, now: number): boolean =>
    cached !== undefined && cached.expiresAt > now && !user.disabled && user.id === cached.userId && user.authEpoch === cached.authEpoch;

  async function basic(encoded: string, ip: string): Promise<Principal | undefined> {
    const named = split(encoded);
    if (!named) return undefined;
    const { username, password } = named;
    if (password.startsWith(KEY_PREFIX)) {
      const principal = await deps.keys.authenticate(password);
      if (principal && principal.username === username) return principal;
      await deps.onFailure?.(username, ip);
      await count(ip);
      return undefined;
    }
    const id = keyOf(username, '\0', password).toString('base64url');
    const now = clock.now();
    const cached = cache.get(id);
    const user = await store.users.getByName(username);
    if (user && stillValid(cached, user, now)) {
      if (user.totpEnabled) throw totpOn();
      return principalOf(user);
    }
    if (cached) cache.delete(id);
    let pending = checking.get(id);
    if (!pending) {
      pending = fullCheck(username, password, ip).finally(() => checking.delete(id));
      checking.set(id, pending);
    }
    const verified = await pending;
    if (!verified || !user || verified.userId !== user.id) {
      await deps.onFailure?.(username, ip);
      return undefined;
    }
    // WebDAV clients cannot ask for a TOTP code: with two-factor sign-in on, the account password alone
    // must not open the files (docs/security.md). Told only after the password proved right.
    if (user.totpEnabled) throw totpOn();
    if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value as string);
    cache.set(id, verified);
    return principalOf(user);
  }

  /**
   * The account behind a credential known without a password check: an app password, or an account
   * password verified within CREDENTIAL_TTL_MS. Anything else is undefined, with no side effect (no
   * throttle count, no audit entry, no check): the small-upload fast path (src/app/fast-write.ts)
   * hands such a request to Fastify, whose `authenticate` then does all of it once.
   */
  async function known(encoded: string): Promise<Principal | undefined> {
    const named = split(encoded);
    if (!named) return undefined;
    const { username, password } = named;
    if (password.startsWith(KEY_PREFIX)) {
      const principal = await deps.keys.authenticate(password);
      return principal?.username === username ? principal : undefined;
    }
    const user = await store.users.getByName(username);
    return user && stillValid(cache.get(keyOf(username, '\0', password).toString('base64url')), user, clock.now()) && !user.totpEnabled ? principalOf(user) : undefined;
  }

  return {
    /** The account behind `Authorization: Basic <encoded>` (account or app password), or undefined. */
    authenticate: basic,
    known,
  };
}
