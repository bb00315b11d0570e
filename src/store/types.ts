/**
 * The metadata seam: small repositories per aggregate. Implementations share
 * one Kysely repository code base (src/store/*-repo.ts) over SQLite today and
 * PostgreSQL later; each must pass src/store/conformance.ts.
 * Times are epoch milliseconds.
 */
export type User = {
  readonly id: string;
  readonly username: string;
  readonly passwordHash: string;
  readonly isAdmin: boolean;
  /** Changes with every password change; path tokens and sessions are bound to it. */
  readonly authEpoch: string;
  readonly createdAt: number;
};

export type Session = {
  readonly id: string;
  readonly userId: string;
  readonly createdAt: number;
  readonly lastUsedAt: number;
  /** Refresh-token expiry: slides forward to lastUsedAt + TTL on each refresh. */
  readonly expiresAt: number;
};

export class StoreConflictError extends Error {}

export interface UserRepo {
  /** Throws StoreConflictError when the name is taken. */
  create(u: { username: string; passwordHash: string; isAdmin: boolean; authEpoch: string; now: number }): Promise<User>;
  getByName(username: string): Promise<User | undefined>;
  list(): Promise<User[]>;
  count(): Promise<number>;
  /** Sets the hash and a new auth epoch and deletes all the user's sessions, in one transaction. False if no such user. */
  setPassword(username: string, passwordHash: string, authEpoch: string): Promise<boolean>;
  /** Deletes the user and, with them, all their sessions and access tokens. False if no such user. */
  delete(username: string): Promise<boolean>;
}

export interface SessionRepo {
  create(s: { userId: string; refreshHash: string; now: number; expiresAt: number }): Promise<Session>;
  /** The live session whose refresh token hashes to this, or undefined (also when expired at `now`). */
  findByRefreshHash(refreshHash: string, now: number): Promise<Session | undefined>;
  touch(sessionId: string, now: number, expiresAt: number): Promise<void>;
  addAccessToken(a: { tokenHash: string; sessionId: string; expiresAt: number }): Promise<void>;
  /** The session and user behind a live access token, or undefined (expired, revoked, unknown). */
  findAccess(tokenHash: string, now: number): Promise<{ session: Session; user: User } | undefined>;
  /** Deletes a session and its access tokens. */
  delete(sessionId: string): Promise<void>;
  /** Removes expired sessions and access tokens; returns how many rows went. */
  deleteExpired(now: number): Promise<number>;
}

export interface MetadataStore {
  readonly users: UserRepo;
  readonly sessions: SessionRepo;
  close(): Promise<void>;
}
