import type { Share } from './share.js';

/** What every account-holding principal carries (other modules code against these names). */
type Account = {
  readonly kind: 'user';
  readonly userId: string;
  readonly username: string;
  readonly isAdmin: boolean;
  /** A read-only app password: every write is refused with 403. */
  readonly readOnly: boolean;
};

/**
 * Who is making a request, resolved once per request by the authenticator
 * chain (src/app/auth-plugin.ts, docs/security.md "Authorization"):
 * - `user` via `session`: an access token (or the /basic/ cookie) of a signed-in session.
 * - `user` via `key`: an app password / API key, as Bearer or as the WebDAV Basic password.
 * - `user` via `password`: the account password over WebDAV Basic or SFTP.
 * - `user` via `ssh-key`: a public key from /api/me/ssh-keys, over SFTP.
 * - `pathToken`: a signed path token from `?token=`; it authorizes GET/HEAD of
 *   exactly `path` (a normalized storage key id, `alice/a/b.txt`) and nothing else.
 * - `share`: a visitor of a live share link; `username` is the owner.
 */
export type Principal =
  | (Account & { readonly via: 'session'; readonly sessionId: string; readonly readOnly: false })
  | (Account & { readonly via: 'key'; readonly keyId: string; readonly sessionId?: undefined })
  | (Account & { readonly via: 'password'; readonly sessionId?: undefined; readonly readOnly: false })
  | (Account & { readonly via: 'ssh-key'; readonly sshKeyId: string; readonly sessionId?: undefined; readonly readOnly: false })
  | { readonly kind: 'pathToken'; readonly username: string; readonly path: string; readonly readOnly: true }
  | {
      readonly kind: 'share';
      readonly shareId: string;
      readonly username: string;
      readonly share: Share;
      /** The link has no password, or the visitor's cookie proves it. */
      readonly unlocked: boolean;
      readonly readOnly: boolean;
    };

export type UserPrincipal = Extract<Principal, { kind: 'user' }>;
export type SessionPrincipal = Extract<Principal, { via: 'session' }>;
export type AuthKind = Principal['kind'];

/**
 * Who writes into a tree, as the quota's rules see them: an account's username (the owner, or
 * someone a grant lets in), or null for anyone else (a share link's visitor, whose principal
 * carries the owner's name). Only the owner's own upload may purge the owner's kept bytes.
 */
export type Writer = string | null;

export const writerOf = (principal: Principal | null | undefined): Writer => (principal?.kind === 'user' ? principal.username : null);
