/** An account's link to an OpenID provider's subject (single sign-on, docs/operations.md). */
export type OidcLink = { readonly userId: string; readonly username: string; readonly issuer: string; readonly subject: string; readonly groups: readonly string[]; readonly lastLoginAt: number };

export interface OidcRepo {
  findBySubject(issuer: string, subject: string): Promise<OidcLink | undefined>;
  linkOf(userId: string): Promise<OidcLink | undefined>;
  /** StoreConflictError when the user or the subject is linked already. */
  link(l: { userId: string; issuer: string; subject: string; groups: readonly string[] }, now: number): Promise<void>;
  /** Keeps the groups claim of the latest sign-in. */
  recordLogin(userId: string, groups: readonly string[], now: number): Promise<void>;
  linkedUserIds(): Promise<Set<string>>;
  /** Local accounts keep password sign-in under --oidc-only. */
  isLocal(userId: string): Promise<boolean>;
  setLocal(userId: string, local: boolean): Promise<void>;
  localUserIds(): Promise<Set<string>>;
  /** `user sso NAME on`: the next single sign-on with this account's name may link it. */
  setLinkPending(userId: string, pending: boolean): Promise<void>;
  /** Links a pending account to the subject and clears the mark, in one transaction; false when it was not pending (or is linked already). */
  linkPending(l: { userId: string; issuer: string; subject: string; groups: readonly string[] }, now: number): Promise<boolean>;
  /** A sign-in under way or a hand-off code, by the hash of its random id. */
  putRequest(id: string, kind: 'login' | 'handoff', data: string, expiresAt: number): Promise<void>;
  /** Removes and returns the request's data; undefined when unknown, of another kind, taken already or expired. */
  takeRequest(id: string, kind: 'login' | 'handoff', now: number): Promise<string | undefined>;
  deleteExpired(now: number): Promise<void>;
}
