import type { StorageKey } from './storage-path.js';
import { isSameOrInside, keyId } from './storage-path.js';
import type { Principal } from './principal.js';

/**
 * What a route needs, declared once on the route (`config: { access }`) and
 * enforced by one check (src/app/auth-plugin.ts). docs/security.md has the
 * matrix of who gets what.
 */
export type AccessRule = {
  /**
   * - `public`: anyone, no credential is looked at.
   * - `user`: a signed-in account (session token, app password; WebDAV Basic when `basic`).
   * - `admin`: as `user`, and the account is an admin (else 403).
   * - `share`: a visitor of the live share link the URL names.
   * - `cookie`: the /basic/ pages' cookie session, optional: the page redirects to its sign-in itself.
   */
  readonly who: 'public' | 'user' | 'admin' | 'share' | 'cookie';
  /** A path token also opens it, for GET/HEAD of exactly the route's storage key. */
  readonly pathToken?: boolean;
  /** HTTP Basic is accepted (account password or app password): WebDAV. Its 401s carry the Basic challenge. */
  readonly basic?: boolean;
  /**
   * An app password is not enough (403): managing app passwords and the account itself needs a session.
   * Every `admin` route is session-only too (see `accountLevel`).
   */
  readonly sessionOnly?: boolean;
  /** A missing or bad credential gets 404 instead of 401: the URL itself is private (a tus upload). */
  readonly hide?: boolean;
  /** Whether the route changes anything; default from the method (see isWriteMethod). Read-only keys get 403 on writes. */
  readonly write?: boolean;
  /**
   * A write route whose body names an action that may only read (POST /storage: MakePathToken): a
   * read-only grant lets the request through to the handler, which asks `decide` again for the
   * actions that write. Only for grants: a read-only app password still gets 403 (CONTRACT).
   */
  readonly readingAction?: boolean;
  /**
   * Share routes: both ask a locked link's password first, whatever the method, so a locked link tells
   * nothing else. Then `api` (default) enforces the link's kind (upload-only links only take uploads and
   * read nothing; others take no uploads); `page` (a locked link's page is its password form) refuses only
   * an upload to a link that takes none.
   * What an unlocked page shows (the drop zone or what is shared) the operation layer asks under `api`.
   */
  readonly share?: 'api' | 'page';
  /** Counters consulted before anything else, even before the body is read. */
  readonly throttle?: readonly Throttle[];
};

/** Reading storage (GET/HEAD /storage/…): an account, or a path token for exactly that path. */
export const STORAGE_READ: AccessRule = { who: 'user', pathToken: true };

/** Writing storage (PUT, DELETE /storage/…): an account; the operation layer asks `decide` for each key. */
export const STORAGE_WRITE: AccessRule = { who: 'user' };

/** WebDAV (/dav/…): Basic with the account or an app password, or a Bearer token; writes need a key that is not read-only. */
export const DAV_ACCESS: AccessRule = { who: 'user', basic: true };

/** A share link's machine API (/share/<id>/…): the live link, its kind and password; every visit counts towards the visitor limit. */
export const SHARE_LINK: AccessRule = { who: 'share', throttle: ['visitor'] };

/**
 * A share link's public pages (/s/<id>/…): the live link, and its password before anything else (the page
 * shows its own password form); every visit counts towards the visitor limit.
 */
export const SHARE_PAGE: AccessRule = { who: 'share', share: 'page', throttle: ['visitor'] };

/**
 * - `login`: the login throttle (per client address, shared by every node): sign-in forms and password checks.
 * - `share-password`: the same counter for share-link passwords, in a bucket of its own.
 * - `visitor`: the per-process request limit of share-link visitors (--share-rate-limit).
 */
export type Throttle = 'login' | 'share-password' | 'visitor';

/** What a route's URL names, parsed by the route's own `resource` function. */
export type Resource =
  | { readonly kind: 'storage'; readonly key: StorageKey; readonly trailingSlash: boolean }
  | { readonly kind: 'share'; readonly id: string; readonly rest: string | undefined }
  | { readonly kind: 'none' };

/**
 * A grant that reaches a storage key of another user's tree (src/services/grants.ts finds the one
 * that gives the most): the granted item (`root`), whether it is a file, and what it allows.
 */
export type GrantAccess = { readonly root: StorageKey; readonly isFile: boolean; readonly permission: 'read' | 'write' };

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'PROPFIND', 'REPORT']);

/** Reads are GET, HEAD, OPTIONS and WebDAV's PROPFIND and REPORT (sync-collection); everything else may change something. */
export const isWriteMethod = (method: string): boolean => !READ_METHODS.has(method.toUpperCase());

export type Denial = { readonly code: 'unauthorized' | 'forbidden' | 'not_found' | 'password_required'; readonly message: string };

const denied = (code: Denial['code'], message: string): Denial => ({ code, message });

/**
 * Account-level powers (the admin API, the password, app passwords, TOTP, sessions) need a signed-in
 * session: an app password (Bearer or WebDAV Basic) or the account password over Basic gets 403, read-only
 * or not. Why: an app password is made to be typed into a WebDAV client or a script and may leak from
 * there; it must not be enough to create an administrator, reset a password or turn off TOTP (issue 27).
 */
export const accountLevel = (rule: AccessRule): boolean => rule.who === 'admin' || rule.sessionOnly === true;
const NOT_YOURS = 'You are not allowed to access this path.';

/**
 * What only the owner does to the granted item itself: move or delete it, and lock it — a lock there
 * (above all `Depth: infinity` on a shared folder) would hold the owner's whole item against them.
 */
const ITEM_OWNER_ONLY = new Set(['DELETE', 'MOVE', 'LOCK']);

/**
 * Whether a grant that reaches `key` lets its recipient do the write `method` there: undefined when it
 * does, else why not. Part of `decide`, and asked on its own when a grant ends or narrows, to tell which
 * of the recipient's WebDAV locks another grant still lets them hold (`endLocksBeyondGrants`).
 */
export function grantRefusal(grant: GrantAccess, key: StorageKey, method: string, readingAction = false): Denial | undefined {
  if (grant.permission !== 'write' && !readingAction) return denied('forbidden', 'This item is shared with you read-only.');
  // Inside a writable folder anything goes; the granted item itself is the owner's to move, delete or lock
  // (uploads into a writable folder and replacing a writable file are writes *to* it, and allowed).
  // A move by a JSON action (POST) names its source in the body: the storage route asks with method MOVE.
  const itself = grant.root.segments.length === key.segments.length;
  if (itself && ITEM_OWNER_ONLY.has(method)) return denied('forbidden', 'The shared item itself can only be renamed, moved, deleted or locked by its owner.');
  return undefined;
}

/**
 * The one check: may `principal` do `method` on `resource` under `rule`?
 * Undefined when allowed, else why not. Pure (table-tested in access.test.ts);
 * the authenticators have already refused disabled users, dead links and bad
 * or expired credentials by yielding no principal.
 */
export function decide(rule: AccessRule, principal: Principal | undefined, method: string, resource: Resource, grant?: GrantAccess): Denial | undefined {
  if (rule.who === 'public' || rule.who === 'cookie') return undefined;
  const write = rule.write ?? isWriteMethod(method);
  if (!principal) {
    if (rule.hide) return denied('not_found', 'Nothing exists at this address.');
    if (rule.who === 'share') return denied('not_found', 'This link does not exist or is no longer available.');
    return denied('unauthorized', rule.basic ? 'Sign in with your File Cloud username and password (or an app password).' : 'A valid access token is required.');
  }
  if (rule.who === 'share') {
    if (principal.kind !== 'share') return denied('not_found', 'This link does not exist or is no longer available.');
    if (rule.share === 'page') {
      // A locked link's page is its password form, whatever the link is and whatever is below it.
      if (!principal.unlocked) return denied('password_required', 'This link needs a password.');
      if (write && !principal.share.uploadOnly) return denied('forbidden', 'This link does not accept uploads.');
      return undefined;
    }
    // The password first, as on the pages: a locked link tells its kind to no one without it.
    if (!principal.unlocked) return denied('password_required', 'This link needs a password: POST {"password"} to <link>/auth first.');
    // An upload-only link reads nothing, not even that it exists.
    if (!write && principal.share.uploadOnly) return denied('not_found', 'This link does not exist or is no longer available.');
    if (write && !principal.share.uploadOnly) return denied('forbidden', 'This link does not accept uploads.');
    return undefined;
  }
  if (principal.kind === 'share') return denied('unauthorized', 'A valid access token is required.');
  if (principal.kind === 'pathToken') {
    const exact = rule.pathToken && (method === 'GET' || method === 'HEAD') && resource.kind === 'storage' && resource.key.user === principal.username && keyId(resource.key) === principal.path;
    return exact ? undefined : denied('unauthorized', NOT_YOURS);
  }
  if (resource.kind === 'storage' && resource.key.user !== principal.username) {
    // Outside a grant: the same 401 whether or not the other user or the path exists (CONTRACT "Authentication").
    if (!grant || !isSameOrInside(resource.key, grant.root)) return denied('unauthorized', NOT_YOURS);
    if (write) {
      if (principal.readOnly) return denied('forbidden', 'This app password is read-only.');
      const refused = grantRefusal(grant, resource.key, method, rule.readingAction);
      if (refused) return refused;
    }
    if (rule.who === 'admin' || accountLevel(rule)) return denied('unauthorized', NOT_YOURS);
    return undefined;
  }
  if (rule.who === 'admin' && !principal.isAdmin) return denied('forbidden', 'Only an administrator may do this.');
  if (accountLevel(rule) && principal.via !== 'session') return denied('forbidden', 'An app password cannot do this; sign in with your account password.');
  if (write && principal.readOnly) return denied('forbidden', 'This app password is read-only.');
  return undefined;
}
