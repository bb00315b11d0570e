import type { User } from './users.js';

/** An app password / API key (CONTRACT "Accounts and API"); the key itself is never stored, only its SHA-256. */
export type ApiKey = {
  readonly id: string;
  readonly userId: string;
  readonly name: string;
  readonly readOnly: boolean;
  readonly createdAt: number;
  /** Undefined: never expires. */
  readonly expiresAt: number | undefined;
  /** Undefined: never used. Updated at most about once a minute (ApiKeyRepo.touch). */
  readonly lastUsedAt: number | undefined;
};

export interface ApiKeyRepo {
  create(k: ApiKey & { keyHash: string }): Promise<void>;
  /** The live key (not expired at `now`) with this hash and its user, or undefined. */
  findByHash(keyHash: string, now: number): Promise<{ key: ApiKey; user: User } | undefined>;
  /** The user's keys, newest first. */
  listByUser(userId: string): Promise<ApiKey[]>;
  /** Deletes the key if `userId` owns it; false otherwise (unknown or someone else's). */
  delete(id: string, userId: string): Promise<boolean>;
  /** Records a use at `now` unless one was recorded after `notBefore` (one conditional UPDATE). */
  touch(id: string, now: number, notBefore: number): Promise<void>;
}
