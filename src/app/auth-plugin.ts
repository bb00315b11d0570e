import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import { decide, type AccessRule, type Denial, type GrantAccess, type Resource, type Throttle } from '../domain/access.js';
import { AppError } from '../domain/errors.js';
import type { Principal } from '../domain/principal.js';
import { parseSessionCookie, SESSION_COOKIE } from '../basic/session.js';
import { DAV_CHALLENGE, type BasicAuthenticator } from '../dav/basic-auth.js';
import { cookieValues, parseCookies, SHARE_COOKIE } from '../http/cookies.js';
import { isUiPage, rawPath, routePattern } from '../http/url.js';
import type { Clock } from '../lib/clock.js';
import { KEY_PREFIX, type ApiKeyService } from '../services/api-keys.js';
import type { AuthService } from '../services/auth.js';
import type { PathTokenService } from '../services/path-token-service.js';
import type { ShareService } from '../services/shares.js';
import type { GrantService } from '../services/grants.js';
import type { RateLimiter } from '../store/rate-limiter.js';
import type { VisitorLimiter } from './visitor-limit.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Who is asking; set by the auth hook (null on public routes and for anonymous /basic/ visitors). */
    principal: Principal | null;
    /** What the URL names, from the route's `config.resource`; `{kind: 'none'}` when it declares none. */
    resource: Resource;
    /** The account the credential named, even when the route then refused it (403): the audit log's actor. */
    actor: string | null;
    /**
     * Runs the authenticator chain and the route's check again on this request's credential: false
     * once it no longer passes (a logout, a password change, a disabled user, a revoked key, an
     * expired token). For answers that last (the change stream), which must not outlive it.
     */
    stillAuthorized(): Promise<boolean>;
  }
  interface FastifyContextConfig {
    /** What the route needs (src/domain/access.ts). Every route declares one; buildApp refuses a route without. */
    access?: AccessRule;
    /** Parses what the route's URL names (a storage key, a share id), for the owner and path-token checks. */
    resource?: (request: FastifyRequest) => Resource;
    /** @deprecated the declaration before `access`: `['user']` is `{who: 'user'}`, with `'pathToken'` also `pathToken: true`. */
    auth?: readonly ('user' | 'pathToken')[];
    /** @deprecated with `auth`: `hide: true`. */
    hideOnAuthFailure?: boolean;
  }
  interface FastifyInstance {
    /** Every route with its access rule, as registered (the authorization matrix test reads it). */
    routeTable: RouteEntry[];
  }
}

export type RouteEntry = { readonly method: string; readonly url: string; readonly access: AccessRule };

export type AuthDeps = {
  auth: AuthService;
  keys: ApiKeyService;
  pathTokens: PathTokenService;
  basic: BasicAuthenticator;
  shares: ShareService;
  clock: Clock;
  /** The login throttle (Redis-backed in a cluster); undefined with --dev. */
  throttle: RateLimiter | undefined;
  /** Share visitors' per-process request limit; undefined when off. */
  visitors: VisitorLimiter | undefined;
  /** Which grant reaches another user's storage key (src/services/grants.ts). */
  grants: Pick<GrantService, 'access'>;
};

const NONE: Resource = { kind: 'none' };

/** A route's rule, from `access` or the older `auth` list; undefined when it declares neither. */
function ruleOf(config: { access?: AccessRule; auth?: readonly string[]; hideOnAuthFailure?: boolean } | undefined): AccessRule | undefined {
  if (config?.access) return config.access;
  if (!config?.auth) return undefined;
  return { who: 'user', pathToken: config.auth.includes('pathToken'), hide: config.hideOnAuthFailure };
}

/**
 * The one authorization model (docs/security.md): per request, the route's
 * declared throttles count first (before the body is read, so a throttled or
 * unauthenticated upload stores nothing), then the authenticator chain turns
 * the credential into a principal, then one check (domain/access.ts decide)
 * enforces the route's rule. Handlers read `request.principal` and
 * `request.resource`; they never parse credentials.
 */
export function installAuth(app: FastifyInstance, deps: AuthDeps): void {
  app.decorateRequest('principal', null);
  app.decorateRequest('resource', null as never);
  app.decorateRequest('actor', null);
  app.decorateRequest('stillAuthorized', async function stillAuthorized(this: FastifyRequest): Promise<boolean> {
    const rule = ruleOf(this.routeOptions.config);
    const held = this.principal;
    if (!rule || rule.who === 'public' || !held) return true;
    const { principal, denial } = await authorize(credentialsOf(this), rule, this.resource, deps);
    if (principal?.kind !== held.kind || principal.username !== held.username) return false;
    return denial === undefined;
  });
  const table: RouteEntry[] = [];
  app.decorate('routeTable', table);

  // A route without a rule would be open by accident: refuse to start instead (the matrix test lists them all).
  app.addHook('onRoute', (route: RouteOptions) => {
    const access = ruleOf(route.config as never);
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (!access) throw new Error(`route ${methods.join(',')} ${route.url} declares no access rule (config.access, src/domain/access.ts)`);
    for (const method of methods) table.push({ method, url: route.url, access });
  });

  app.addHook('onRequest', async (request, reply) => {
    const config = request.routeOptions.config;
    const rule = ruleOf(config);
    // Fastify's own 404 route and the CORS preflight have no rule: nothing to authorize.
    if (!rule) return;
    for (const t of rule.throttle ?? []) await throttle(t, request, deps);
    if (rule.who === 'public') return;
    // Node keeps only the first of repeated Authorization headers, and a proxy in front may keep
    // another: refuse the ambiguity rather than authenticate a request two parties read differently.
    if (headerCount(request.raw.rawHeaders, 'authorization') > 1) throw new AppError('bad_request', 'Send at most one Authorization header.');
    // A malformed path is reported only to someone who may learn about it (after authentication).
    let resource: Resource = NONE;
    let resourceError: unknown;
    try {
      resource = config.resource?.(request) ?? NONE;
    } catch (e) {
      resourceError = e;
    }
    const { principal, denial } = await authorize(credentialsOf(request), rule, resource, deps);
    if (principal?.kind === 'user') request.actor = principal.username;
    if (principal && resourceError !== undefined) throw resourceError;
    if (denial) {
      if (rule.basic && denial.code === 'unauthorized') reply.headers(DAV_CHALLENGE);
      throw new AppError(denial.code, denial.message);
    }
    request.principal = principal ?? null;
    request.resource = resource;
  });
}

/** Who a request's credential names, the grant through which they reach the URL's storage key, and why the rule refuses them (undefined: it lets them through). */
export type Authorization = { readonly principal: Principal | undefined; readonly grant: GrantAccess | undefined; readonly denial: Denial | undefined };

/**
 * The one authorization of a request, for Fastify's hook and the fast read path alike (an adapter
 * over it): the authenticator chain, the grant that reaches the storage key the URL names, and the
 * one check (`decide`) of the route's rule.
 */
export async function authorize(credentials: Credentials, rule: AccessRule, resource: Resource, deps: AuthDeps): Promise<Authorization> {
  const principal = await authenticate(credentials, rule, resource, deps);
  const grant = resource.kind === 'storage' ? await deps.grants.access(principal, resource.key) : undefined;
  return { principal, grant, denial: decide(rule, principal, credentials.method, resource, grant) };
}

async function throttle(kind: Throttle, request: FastifyRequest, deps: AuthDeps): Promise<void> {
  const now = deps.clock.now();
  const [wait, what] =
    kind === 'visitor'
      ? [request.visitCountedBefore ?? deps.visitors?.hit(request.ip, now) ?? 0, 'requests']
      : kind === 'share-password'
        ? [(await deps.throttle?.hit(`share:${request.ip}`, now)) ?? 0, 'password attempts']
        : [(await deps.throttle?.hit(request.ip, now)) ?? 0, 'sign-in attempts'];
  if (wait > 0) throw new AppError('rate_limited', `Too many ${what}; try again in ${wait} seconds.`, { headers: { 'retry-after': String(wait) } });
}

export function headerCount(rawHeaders: readonly string[], name: string): number {
  let n = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i]?.toLowerCase() === name) n++;
  return n;
}

/** `Bearer <token>` or, as older clients send it, the bare token. */
export function accessTokenFrom(header: string): string {
  const m = /^\s*Bearer\s+(\S+)\s*$/i.exec(header);
  return m ? (m[1] as string) : header.trim();
}

/** What the authenticator chain reads of a request (the fast read path, src/app/fast-read.ts, has no FastifyRequest). */
export type Credentials = {
  readonly method: string;
  readonly headers: IncomingHttpHeaders;
  /** The client's address as request.ip gives it. */
  readonly ip: string;
  /** The `token` query parameter, decoded. */
  readonly queryToken: string | undefined;
};

function credentialsOf(request: FastifyRequest): Credentials {
  const token = (request.query as Record<string, unknown> | undefined)?.token;
  return { method: request.method, headers: request.headers, ip: request.ip, queryToken: typeof token === 'string' ? token : undefined };
}

/**
 * The authenticator chain. Which links apply depends on the route: a share
 * route knows only its link (and the password cookie), the /basic/ pages only
 * their cookie session, every other route the Authorization header (an
 * access token or an app password as Bearer, Basic where the route takes it),
 * and without that header a path token where the route takes one. An
 * Authorization header is decisive: a bad one is not rescued by a ?token=.
 */
export async function authenticate(request: Credentials, rule: AccessRule, resource: Resource, deps: AuthDeps): Promise<Principal | undefined> {
  if (rule.who === 'share') {
    if (resource.kind !== 'share') return undefined;
    const share = await deps.shares.find(resource.id);
    const unlocked = deps.shares.unlocked(share, cookieValues(request.headers.cookie, SHARE_COOKIE));
    return { kind: 'share', shareId: share.id, username: share.owner, share, unlocked, readOnly: !share.uploadOnly };
  }
  if (rule.who === 'cookie') {
    const cookie = parseSessionCookie(parseCookies(request.headers.cookie).get(SESSION_COOKIE));
    return cookie ? deps.auth.resumeSession(cookie.username, cookie.refreshToken, { address: request.ip }) : undefined;
  }
  const header = request.headers.authorization;
  if (header !== undefined) {
    const basic = /^\s*Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
    if (basic) return rule.basic ? deps.basic.authenticate(basic[1] as string, request.ip) : undefined;
    const token = accessTokenFrom(header);
    return token.startsWith(KEY_PREFIX) ? deps.keys.authenticate(token) : deps.auth.authenticate(token, request.ip);
  }
  if (!rule.pathToken || (request.method !== 'GET' && request.method !== 'HEAD') || resource.kind !== 'storage') return undefined;
  return request.queryToken !== undefined ? deps.pathTokens.verify(request.queryToken, resource.key) : undefined;
}

/**
 * The methods that have a route for `request`'s path, from the route table: for the 405 answer with
 * Allow. The web UI's catch-all (`/*`) counts only for the UI's own pages; other paths are not known.
 */
export function methodsFor(app: FastifyInstance, basePath: string): (request: FastifyRequest) => string[] {
  let compiled: { method: string; re: RegExp; catchAll: boolean }[] | undefined;
  return (request) => {
    compiled ??= app.routeTable.map((r) => ({ method: r.method, re: routePattern(r.url), catchAll: r.url === `${basePath}/*` }));
    const path = rawPath(request.url);
    if (!path.startsWith(`${basePath}/`)) return [];
    const page = isUiPage(path.slice(basePath.length));
    const methods = new Set<string>();
    for (const r of compiled) if ((!r.catchAll || page) && r.re.test(path)) methods.add(r.method);
    return [...methods];
  };
}
