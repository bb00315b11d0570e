import * as oidc from 'openid-client';
import { AppError } from '../domain/errors.js';
import { isValidUsername } from '../domain/names.js';
import type { Clock } from '../lib/clock.js';
import { randomToken, sha256Hex } from '../lib/crypto.js';
import type { MetadataStore } from '../store/metadata-store.js';
import type { User } from '../store/users.js';
import type { AuthService, ClientInfo, TokenSet } from './auth.js';
import { USERNAME_RULE, type UserService } from './users.js';
import { sentence } from '../lib/i18n/sentences.js';

/** What --oidc-* configure (src/config/options.ts), with the client secret read from its file. */
export type OidcSettings = {
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly scopes: string;
  readonly usernameClaim: string;
  readonly groupsClaim: string;
  readonly adminGroup: string;
  readonly createUsers: boolean;
  readonly buttonLabel: string;
  readonly only: boolean;
};

/** Where a finished sign-in goes: the web UI (a one-time hand-off code) or /basic/ (a cookie session). */
export type SignInTarget = 'web' | 'basic';

/** A sign-in under way, from /auth/oidc/login to its callback: at most this long at the provider. */
const LOGIN_TTL_MS = 10 * 60_000;
/** The hand-off code from the callback to the web UI's POST /auth/oidc/session: used at once by the page. */
const HANDOFF_TTL_MS = 60_000;
/** Discovery retries: first after RETRY_MIN_MS, doubling to RETRY_MAX_MS while the provider stays away. */
const RETRY_MIN_MS = 2_000;
const RETRY_MAX_MS = 60_000;

type LoginRequest = { verifier: string; nonce: string; redirectUri: string; to: SignInTarget };
type Handoff = { userId: string; username: string };

export type OidcStatus = { readonly enabled: true; readonly label: string; readonly only: boolean; readonly available: boolean; readonly problem: string | null };

export type OidcService = ReturnType<typeof createOidcService>;

function describe(e: unknown): string {
  if (e instanceof oidc.ResponseBodyError) return `${e.error}${e.error_description ? `: ${e.error_description}` : ''}`;
  const err = e as { message?: string; cause?: { message?: string; code?: string } };
  const cause = err.cause?.code ?? err.cause?.message;
  return `${err.message ?? String(e)}${cause && typeof cause === 'string' && !err.message?.includes(cause) ? ` (${cause})` : ''}`;
}

/** A network failure reaching the provider (as opposed to an answer that did not check out). */
const unreachable = (e: unknown) => e instanceof TypeError || (e as { name?: string }).name === 'TimeoutError' || (e as { name?: string }).name === 'AbortError';

/**
 * Single sign-on with an OpenID Connect provider (issue 32): the authorization
 * code flow with PKCE, state and nonce, on `openid-client` (discovery, JWKS
 * and its key rotation, ID-token checks: signature, issuer, audience, expiry,
 * nonce, algorithms the provider announces). Accounts are found by the
 * provider's `sub`, never by name. Knows no HTTP: the routes in
 * src/routes/oidc.ts turn its answers into redirects and pages.
 *
 * The provider being down never stops File Cloud: discovery runs in the
 * background and is retried (2 s doubling to a minute), and a sign-in while it
 * is away answers 503 with the reason; password sign-in is untouched.
 */
export function createOidcService(deps: {
  settings: OidcSettings;
  store: MetadataStore;
  users: UserService;
  auth: AuthService;
  clock: Clock;
  log: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };
}) {
  const { settings, store, users, auth, clock } = deps;
  const issuerUrl = new URL(settings.issuer);
  let config: oidc.Configuration | undefined;
  let problem: string | null = sentence('apiPart.ssoNotContacted');
  let discovering: Promise<void> | undefined;
  let retryMs = RETRY_MIN_MS;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let closed = false;

  function prepare(c: oidc.Configuration): void {
    // http:// is accepted only for a loopback issuer (src/config/options.ts parseIssuer).
    if (issuerUrl.protocol === 'http:') oidc.allowInsecureRequests(c);
    // Check the ID token's signature against the provider's JWKS too, not only the TLS channel it came over.
    oidc.enableNonRepudiationChecks(c);
    c.timeout = 10;
  }

  /**
   * The configuration one callback redeems its code with: a fresh copy of the discovered one, so its
   * JWKS is read anew. Sign-ins are few; a provider's rotated key is accepted at once instead of
   * after the library's cache (up to 5 minutes, and a new key only after a minute) lets go.
   */
  function forOneSignIn(c: oidc.Configuration): oidc.Configuration {
    const fresh = new oidc.Configuration(c.serverMetadata(), settings.clientId, settings.clientSecret || undefined, settings.clientSecret ? undefined : oidc.None());
    prepare(fresh);
    return fresh;
  }

  function discover(): Promise<void> {
    discovering ??= (async () => {
      try {
        const c = await oidc.discovery(issuerUrl, settings.clientId, settings.clientSecret || undefined, settings.clientSecret ? undefined : oidc.None(), {
          execute: issuerUrl.protocol === 'http:' ? [oidc.allowInsecureRequests] : [],
          timeout: 10,
        });
        prepare(c);
        config = c;
        problem = null;
        retryMs = RETRY_MIN_MS;
        deps.log.info({ issuer: settings.issuer }, 'single sign-on: provider discovered');
      } catch (e) {
        problem = sentence('apiPart.ssoCannotUse', { issuer: settings.issuer, why: describe(e) });
        deps.log.warn({ issuer: settings.issuer, problem }, `single sign-on unavailable; retrying in ${Math.round(retryMs / 1000)} s`);
        if (!closed) {
          clearTimeout(timer);
          timer = setTimeout(() => void discover(), retryMs);
          timer.unref();
          retryMs = Math.min(RETRY_MAX_MS, retryMs * 2);
        }
      } finally {
        discovering = undefined;
      }
    })();
    return discovering;
  }
  void discover();

  async function ready(): Promise<oidc.Configuration> {
    if (config) return config;
    // A sign-in while the provider is away tries once more at once (it may be back before the next retry).
    await discover();
    if (config) return config;
    throw new AppError('unavailable', sentence('apiDetail.ssoUnavailable', { problem: problem ?? '' }), { headers: { 'retry-after': String(Math.ceil(retryMs / 1000)) } });
  }

  const signInFailed = (why: string) => new AppError('unauthorized', sentence('apiDetail.ssoFailed', { why }));

  function groupsOf(claims: Record<string, unknown>): string[] {
    const v = claims[settings.groupsClaim];
    if (typeof v === 'string') return [v];
    return Array.isArray(v) ? v.filter((g): g is string => typeof g === 'string') : [];
  }

  /** The account linked to `sub`, or a new one from the username claim; never an existing account found by name. */
  async function accountFor(claims: Record<string, unknown>, sub: string, groups: readonly string[]): Promise<User> {
    const linked = await store.oidc.findBySubject(settings.issuer, sub);
    if (linked) {
      const user = await store.users.getByName(linked.username);
      if (user && user.id === linked.userId) return user;
    }
    const claim = claims[settings.usernameClaim];
    if (typeof claim !== 'string' || !isValidUsername(claim)) {
      const shown = typeof claim === 'string' ? `"${claim}"` : 'missing';
      throw new AppError('bad_request', sentence('apiDetail.ssoClaim', { claim: settings.usernameClaim, shown, rule: USERNAME_RULE }));
    }
    const existing = await store.users.getByName(claim);
    // An administrator opened this password account to single sign-on (`file-cloud user sso NAME on`): linked now, once.
    if (existing && (await store.oidc.linkPending({ userId: existing.id, issuer: settings.issuer, subject: sub, groups }, clock.now()))) return existing;
    if (existing) {
      const other = await store.oidc.linkOf(existing.id);
      if (other) throw new AppError('forbidden', sentence('apiDetail.ssoOtherIdentity', { name: claim }));
      throw new AppError('forbidden', sentence('apiDetail.ssoPasswordAccount', { name: claim }));
    }
    if (!settings.createUsers) throw new AppError('forbidden', sentence('apiDetail.ssoNoAccount'));
    const isAdmin = settings.adminGroup !== '' && groups.includes(settings.adminGroup);
    let user: User;
    try {
      user = await users.addExternal(claim, isAdmin);
    } catch (e) {
      // Two first sign-ins of one person at once: the other one created it; it is theirs if linked to this sub.
      if (e instanceof AppError && e.code === 'already_exists') {
        const again = await store.oidc.findBySubject(settings.issuer, sub);
        const user2 = again && (await store.users.getByName(claim));
        if (user2 && user2.id === again.userId) return user2;
      }
      throw e;
    }
    await store.oidc.link({ userId: user.id, issuer: settings.issuer, subject: sub, groups }, clock.now());
    return user;
  }

  /** --oidc-admin-group: the administrator right follows the group, both ways, on each sign-in (never from the last administrator). */
  async function syncAdmin(user: User, groups: readonly string[]): Promise<User> {
    if (settings.adminGroup === '') return user;
    const want = groups.includes(settings.adminGroup);
    if (want === user.isAdmin) return user;
    try {
      await users.setAdmin(user.username, want);
      return { ...user, isAdmin: want };
    } catch (e) {
      if (e instanceof AppError && e.code === 'last_admin') {
        deps.log.warn({ user: user.username }, 'single sign-on: the provider removed the last administrator from the admin group; kept as administrator');
        return user;
      }
      throw e;
    }
  }

  /**
   * The groups claim decides an SSO account's membership of File Cloud's groups, on each sign-in:
   * it joins every existing group the claim names and leaves every other. Administrators make the
   * groups (a claim never creates one), so a provider's many groups do not all appear here.
   */
  async function syncGroups(user: User, claimed: readonly string[]): Promise<void> {
    const want = new Set(claimed);
    const have = new Set(await store.groups.groupsOf(user.username));
    for (const name of want) if (!have.has(name)) await store.groups.changeMembers(name, [user.username], []);
    for (const name of have) if (!want.has(name)) await store.groups.changeMembers(name, [], [user.username]);
  }

  return {
    status(): OidcStatus {
      return { enabled: true, label: settings.buttonLabel, only: settings.only, available: config !== undefined, problem };
    },

    /** --oidc-only: password sign-in only for accounts marked local. */
    async passwordAllowed(user: User): Promise<boolean> {
      return !settings.only || (await store.oidc.isLocal(user.id));
    },

    /** Starts a sign-in: the provider's authorization URL; state, nonce and PKCE verifier kept in the database for any node's callback. */
    async start(redirectUri: string, to: SignInTarget): Promise<string> {
      const c = await ready();
      const state = oidc.randomState();
      const nonce = oidc.randomNonce();
      const verifier = oidc.randomPKCECodeVerifier();
      const request: LoginRequest = { verifier, nonce, redirectUri, to };
      await store.oidc.putRequest(sha256Hex(state), 'login', JSON.stringify(request), clock.now() + LOGIN_TTL_MS);
      // OpenID Connect's own parameter names, sent to the provider (not this API's wire).
      /* eslint-disable no-restricted-syntax */
      const url = oidc.buildAuthorizationUrl(c, {
        redirect_uri: redirectUri,
        scope: settings.scopes,
        state,
        nonce,
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      });
      /* eslint-enable no-restricted-syntax */
      return url.href;
    },

    /**
     * The provider's redirect back: takes the state (once: a replayed callback finds nothing), redeems
     * the code with the PKCE verifier, checks the ID token, finds or creates the account.
     */
    async finish(query: URLSearchParams): Promise<{ user: User; to: SignInTarget }> {
      const state = query.get('state');
      if (!state) throw new AppError('bad_request', sentence('apiDetail.ssoNoState'));
      const raw = await store.oidc.takeRequest(sha256Hex(state), 'login', clock.now());
      if (raw === undefined) throw signInFailed(sentence('apiPart.ssoUnknownState'));
      const request = JSON.parse(raw) as LoginRequest;
      const error = query.get('error');
      if (error) throw new AppError('forbidden', sentence('apiDetail.ssoDenied', { why: query.get('error_description') ?? error }));
      const c = forOneSignIn(await ready());
      const currentUrl = new URL(request.redirectUri);
      currentUrl.search = query.toString();
      let claims: Record<string, unknown>;
      try {
        // eslint-disable-next-line no-restricted-syntax -- OpenID Connect's parameter, sent to the provider.
        const tokens = await oidc.authorizationCodeGrant(c, currentUrl, { pkceCodeVerifier: request.verifier, expectedState: state, expectedNonce: request.nonce, idTokenExpected: true }, { redirect_uri: request.redirectUri });
        claims = (tokens.claims() ?? {}) as Record<string, unknown>;
        // Providers that put profile claims only in the UserInfo answer (Authelia's default, oidc-provider's):
        // ask it for what the ID token lacks; the ID token's own claims win, and the sub must be the same.
        const lacking = claims[settings.usernameClaim] === undefined || claims[settings.groupsClaim] === undefined;
        if (lacking && typeof claims.sub === 'string' && c.serverMetadata().userinfo_endpoint) {
          claims = { ...(await oidc.fetchUserInfo(c, tokens.access_token, claims.sub)), ...claims };
        }
      } catch (e) {
        deps.log.warn({ problem: describe(e) }, 'single sign-on: the provider\'s answer was refused');
        if (unreachable(e)) throw new AppError('unavailable', sentence('apiDetail.ssoUnreachable', { why: describe(e) }));
        throw signInFailed(sentence('apiPart.ssoAnswerRefused', { why: describe(e) }));
      }
      const sub = claims.sub;
      if (typeof sub !== 'string' || sub === '') throw signInFailed(sentence('apiPart.ssoNoSubject'));
      const groups = groupsOf(claims);
      let user = await accountFor(claims, sub, groups);
      if (user.disabled) throw new AppError('forbidden', sentence('apiDetail.accountDisabled', { name: user.username }));
      user = await syncAdmin(user, groups);
      await syncGroups(user, groups);
      await store.oidc.recordLogin(user.id, groups, clock.now());
      return { user, to: request.to };
    },

    /** A one-time code the web UI exchanges for its token set (POST /auth/oidc/session): no token ever sits in a URL. */
    async handOff(user: User): Promise<string> {
      const code = randomToken('fch_', 32);
      const data: Handoff = { userId: user.id, username: user.username };
      await store.oidc.putRequest(sha256Hex(code), 'handoff', JSON.stringify(data), clock.now() + HANDOFF_TTL_MS);
      return code;
    },

    async redeem(code: string, from: ClientInfo): Promise<TokenSet & { username: string }> {
      const raw = await store.oidc.takeRequest(sha256Hex(code), 'handoff', clock.now());
      const data = raw === undefined ? undefined : (JSON.parse(raw) as Handoff);
      const user = data && (await store.users.getByName(data.username));
      if (!data || !user || user.id !== data.userId || user.disabled) throw new AppError('unauthorized', sentence('apiDetail.ssoCodeUnknown'));
      return { username: user.username, ...(await auth.loginVerified(user, from)) };
    },

    /** RP-initiated logout: the provider's end-session URL, or undefined when it offers none (or is away). */
    endSessionUrl(postLogoutRedirectUri: string): string | undefined {
      if (!config?.serverMetadata().end_session_endpoint) return undefined;
      // eslint-disable-next-line no-restricted-syntax -- OpenID Connect's parameters, sent to the provider.
      return oidc.buildEndSessionUrl(config, { client_id: settings.clientId, post_logout_redirect_uri: postLogoutRedirectUri }).href;
    },

    /** Sign-ins never finished (and hand-offs never taken) are removed; run with the other sweeps. */
    sweep: () => store.oidc.deleteExpired(clock.now()),

    close(): void {
      closed = true;
      clearTimeout(timer);
    },
  };
}
