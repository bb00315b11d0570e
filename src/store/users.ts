export type User = {
  readonly id: string;
  readonly username: string;
  readonly passwordHash: string;
  readonly isAdmin: boolean;
  /** Changes with every password change; path tokens and sessions are bound to it. */
  readonly authEpoch: string;
  readonly createdAt: number;
  /** TOTP is on (a confirmed secret exists): logins need a code, WebDAV refuses the account password. */
  readonly totpEnabled: boolean;
  /** A disabled user keeps their account and files, but no credential of theirs works (docs/security.md). */
  readonly disabled: boolean;
};

/** Thrown when a change would leave no administrator (the last admin demoted or removed). */
export class LastAdminError extends Error {}

export interface UserRepo {
  /** Throws StoreConflictError when the name is taken. */
  create(u: { username: string; passwordHash: string; isAdmin: boolean; authEpoch: string; now: number }): Promise<User>;
  getByName(username: string): Promise<User | undefined>;
  list(): Promise<User[]>;
  count(): Promise<number>;
  /**
   * Sets the hash and a new auth epoch and deletes all the user's sessions, in one transaction,
   * except `keepSessionId` (the caller's own session when users change their own password). False if no such user.
   */
  setPassword(username: string, passwordHash: string, authEpoch: string, keepSessionId?: string): Promise<boolean>;
  /**
   * Deletes the user and, with them, all their sessions and access tokens. False if no such user.
   * With `keepAnAdmin`, throws LastAdminError instead when the user is the last administrator.
   */
  delete(username: string, opts?: { keepAnAdmin?: boolean }): Promise<boolean>;
  /**
   * Grants or takes the admin right. Taking it from the last administrator throws LastAdminError;
   * exact across processes and nodes (concurrent demotions are serialized). False if no such user.
   */
  setAdmin(username: string, isAdmin: boolean): Promise<boolean>;
  /** Sets the disabled flag (the column comes with migration 0008_api_keys_disabled). False if no such user. */
  setDisabled(username: string, disabled: boolean): Promise<boolean>;
}
