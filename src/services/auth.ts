import { AppError } from '../domain/errors.js';
import type { SessionPrincipal } from '../domain/principal.js';
import type { Clock } from '../lib/clock.js';
import { randomToken, sha256Hex } from '../lib/crypto.js';
import { QueueFullError } from '../lib/semaphore.js';
import type { MetadataStore } from '../store/metadata-store.js';
import type { User } from '../store/users.js';
import type { PasswordHasher } from './passwords.js';
import type { SecondFactor } from './second-factor.js';

/** Who is signing in from where: shown in the sessions list (GET /api/sessions). */
export type ClientInfo = { readonly client?: string | undefined; readonly address?: string | undefined };

/** A session's last use is written at most this often from access-token use (one UPDATE a minute at most). */
export const LAST_USED_RESOLUTION_MS = 60_000;

/** The token set of seed §2.1. */
/** A session's tokens; `validForSeconds` is the access token's expected lifetime. */
export type TokenSet = { accessToken: string; refreshToken: string; validForSeconds: number };

/**
 * Tokens are opaque random strings with distinct prefixes, stored only as
 * SHA-256 hashes in distinct tables, so one kind can never pass for another:
 * access tokens 256 bits (`fca_`), refresh tokens 256 bits (`fcr_`).
 */
const ACCESS_PREFIX = 'fca_';
const REFRESH_PREFIX = 'fcr_';

export type AuthService = ReturnType<typeof createAuthService>;

export function createAuthService(deps: {
  store: MetadataStore;
  hasher: PasswordHasher;
  clock: Clock;
  accessTokenTtl: number;
  refreshTokenTtl: number;
  secondFactor: SecondFactor;
  /** Whether this account may sign in with its password at all (--oidc-only: local accounts only). */
  passwordAllowed?: (user: User) => Promise<boolean>;
}) {
  const { store, hasher, clock } = deps;
  const accessMs = deps.accessTokenTtl * 1000;
  const refreshMs = deps.refreshTokenTtl * 1000;
  const invalidCredentials = () => new AppError('invalid_credentials', 'The username or password is wrong.');
  const invalidRefresh = () => new AppError('unauthorized', 'The refresh token is invalid, expired or revoked; log in again.');

  async function issueAccessToken(sessionId: string, now: number): Promise<string> {
    const token = randomToken(ACCESS_PREFIX, 32);
    await store.sessions.addAccessToken({ tokenHash: sha256Hex(token), sessionId, expiresAt: now + accessMs });
    return token;
  }

  async function findSession(username: string, refreshToken: string) {
    if (!refreshToken.startsWith(REFRESH_PREFIX)) return undefined;
    const now = clock.now();
    const session = await store.sessions.findByRefreshHash(sha256Hex(refreshToken), now);
    const user = session && (await store.users.getByName(username));
    // A refresh token presented with another user's name is refused like a wrong one; a disabled user's sessions are dead.
    if (!session || !user || user.id !== session.userId || user.disabled) return undefined;
    return { session, user, now };
  }

  /** The user whose password this is, or undefined; the one password check of the API login, /basic/ and WebDAV. */
  async function verifyPassword(username: string, password: string): Promise<User | undefined> {
    const user = await store.users.getByName(username);
    let ok: boolean;
    try {
      // Unknown users are checked against a dummy hash: the same work, so timing does not reveal who exists.
      ok = await hasher.verify(password, user?.passwordHash ?? (await hasher.dummyHash));
    } catch (e) {
      if (e instanceof QueueFullError) throw new AppError('unavailable', 'The server is busy checking other logins; try again in a moment.', { headers: { 'retry-after': '1' } });
      throw e;
    }
    // A disabled user's right password is as wrong as any other (docs/security.md): the same answer, the same work.
    if (!user || !ok || user.disabled) return undefined;
    // Asked only after the hash: a refused account costs the same time as a wrong password.
    if (deps.passwordAllowed && !(await deps.passwordAllowed(user))) return undefined;
    return user;
  }

  /**
   * Checks the password and, when the account has TOTP on, the code (a missing one → totp_required,
   * asked only once the password is right; a wrong one → invalid_credentials), then opens a session.
   * The same for the API login and the /basic/ cookie.
   */
  async function openSession(username: string, password: string, totp: string | undefined, from: ClientInfo) {
    const user = await verifyPassword(username, password);
    if (!user) throw invalidCredentials();
    if (user.totpEnabled) {
      if (totp === undefined || totp.trim() === '') throw new AppError('totp_required', 'This account uses two-factor sign-in: send the code from its authenticator app in the field "totp".');
      if (!(await deps.secondFactor.check(user.id, totp))) throw invalidCredentials();
    }
    return openSessionOf(user, from);
  }

  /** A session for a user whose identity is proven already (a password above, or the OpenID provider). */
  async function openSessionOf(user: User, from: ClientInfo) {
    const now = clock.now();
    const refreshToken = randomToken(REFRESH_PREFIX, 32);
    const session = await store.sessions.create({ userId: user.id, refreshHash: sha256Hex(refreshToken), now, expiresAt: now + refreshMs, client: from.client ?? null, address: from.address ?? null });
    return { session, refreshToken, now };
  }

  return {
    verifyPassword,

    async login(username: string, password: string, totp?: string, from: ClientInfo = {}): Promise<TokenSet> {
      const { session, refreshToken, now } = await openSession(username, password, totp, from);
      return { accessToken: await issueAccessToken(session.id, now), refreshToken, validForSeconds: deps.accessTokenTtl };
    },

    async refresh(username: string, refreshToken: string, from: ClientInfo = {}): Promise<TokenSet> {
      const found = await findSession(username, refreshToken);
      if (!found) throw invalidRefresh();
      await store.sessions.touch(found.session.id, found.now, found.now + refreshMs, from.address);
      return { accessToken: await issueAccessToken(found.session.id, found.now), refreshToken, validForSeconds: deps.accessTokenTtl };
    },

    async logout(username: string, refreshToken: string): Promise<void> {
      const found = await findSession(username, refreshToken);
      if (!found) throw invalidRefresh();
      await store.sessions.delete(found.session.id);
    },

    /**
     * A cookie session for the no-JavaScript UI (/basic/): the same session row as an API login, so it is
     * seen by every node and revoked with the user's other sessions, but no access token is issued: the
     * refresh token itself is the cookie's secret (stored only as its hash).
     */
    async startSession(username: string, password: string, totp?: string, from: ClientInfo = {}): Promise<{ refreshToken: string; sessionId: string }> {
      const { session, refreshToken } = await openSession(username, password, totp, from);
      return { refreshToken, sessionId: session.id };
    },

    /**
     * The principal behind a cookie session, or undefined when it is unknown, expired or revoked. Its
     * inactivity expiry slides as a refresh does, written at most once a minute to spare the database.
     */
    async resumeSession(username: string, refreshToken: string, from: ClientInfo = {}): Promise<SessionPrincipal | undefined> {
      const found = await findSession(username, refreshToken);
      if (!found) return undefined;
      const { session, user, now } = found;
      if (now - session.lastUsedAt > LAST_USED_RESOLUTION_MS) await store.sessions.touch(session.id, now, now + refreshMs, from.address);
      return { kind: 'user', via: 'session', userId: user.id, username: user.username, isAdmin: user.isAdmin, sessionId: session.id, readOnly: false };
    },

    /** A token set for a user the OpenID provider signed in (src/services/oidc.ts): the same session as a password login. */
    async loginVerified(user: User, from: ClientInfo = {}): Promise<TokenSet> {
      const { session, refreshToken, now } = await openSessionOf(user, from);
      return { accessToken: await issueAccessToken(session.id, now), refreshToken, validForSeconds: deps.accessTokenTtl };
    },

    /** A /basic/ cookie session for a user the OpenID provider signed in. */
    async startVerifiedSession(user: User, from: ClientInfo = {}): Promise<{ refreshToken: string; sessionId: string }> {
      const { session, refreshToken } = await openSessionOf(user, from);
      return { refreshToken, sessionId: session.id };
    },

    /** Ends a session (its refresh token and access tokens stop working at once). */
    endSession: (sessionId: string) => store.sessions.delete(sessionId),

    /**
     * The principal behind an access token, or undefined for any token that is not a live access token
     * (or whose user is disabled). The session's last use (and `address`) is recorded at most once a
     * minute: the row just read says when it was, so most requests write nothing.
     */
    async authenticate(accessToken: string, address?: string): Promise<SessionPrincipal | undefined> {
      if (!accessToken.startsWith(ACCESS_PREFIX) || accessToken.length > 128) return undefined;
      const now = clock.now();
      const found = await store.sessions.findAccess(sha256Hex(accessToken), now);
      if (!found || found.user.disabled) return undefined;
      const { user, session } = found;
      if (now - session.lastUsedAt >= LAST_USED_RESOLUTION_MS) await store.sessions.markUsed(session.id, now, address, LAST_USED_RESOLUTION_MS);
      return { kind: 'user', via: 'session', userId: user.id, username: user.username, isAdmin: user.isAdmin, sessionId: session.id, readOnly: false };
    },

    /** Removes expired sessions and tokens; run periodically. */
    sweep: () => store.sessions.deleteExpired(clock.now()),
  };
}
