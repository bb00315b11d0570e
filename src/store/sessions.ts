import type { User } from './users.js';

export type Session = {
  readonly id: string;
  readonly userId: string;
  readonly createdAt: number;
  readonly lastUsedAt: number;
  /** Refresh-token expiry: slides forward to lastUsedAt + TTL on each refresh. */
  readonly expiresAt: number;
  /** The client's User-Agent at sign-in, and its address as last seen (null: not known). */
  readonly client: string | null;
  readonly address: string | null;
};

export interface SessionRepo {
  create(s: { userId: string; refreshHash: string; now: number; expiresAt: number; client?: string | null; address?: string | null }): Promise<Session>;
  /** The live session whose refresh token hashes to this, or undefined (also when expired at `now`). */
  findByRefreshHash(refreshHash: string, now: number): Promise<Session | undefined>;
  /** A refresh: last used now, expiry slid to `expiresAt`, and the address seen (when given). */
  touch(sessionId: string, now: number, expiresAt: number, address?: string): Promise<void>;
  /**
   * Records a use of the session (an access token) unless one was recorded in the last
   * `minIntervalMs`: one conditional UPDATE, so busy sessions cost a write a minute at most.
   */
  markUsed(sessionId: string, now: number, address: string | undefined, minIntervalMs: number): Promise<void>;
  /** The user's live sessions, most recently used first. */
  listByUser(userId: string, now: number): Promise<Session[]>;
  /** Deletes a session and its access tokens if `userId` owns it; false otherwise (unknown or another user's). */
  deleteOwned(sessionId: string, userId: string): Promise<boolean>;
  addAccessToken(a: { tokenHash: string; sessionId: string; expiresAt: number }): Promise<void>;
  /** The session and user behind a live access token, or undefined (expired, revoked, unknown). */
  findAccess(tokenHash: string, now: number): Promise<{ session: Session; user: User } | undefined>;
  /** Deletes a session and its access tokens. */
  delete(sessionId: string): Promise<void>;
  /** Removes expired sessions and access tokens; returns how many rows went. */
  deleteExpired(now: number): Promise<number>;
}
