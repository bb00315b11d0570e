import type { Share } from '../domain/share.js';

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
  /** TOTP is on (a confirmed secret exists): logins need a code, WebDAV refuses the account password. */
  readonly totpEnabled: boolean;
  /** A disabled user keeps their account and files, but no credential of theirs works (docs/security.md). */
  readonly disabled: boolean;
};

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

/** Thrown when a change would leave no administrator (the last admin demoted or removed). */
export class LastAdminError extends Error {}

export class StoreConflictError extends Error {}

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

/** A user's TOTP state (the secret in clear: codes are computed from it). */
export type TotpState = { readonly secret: string | null; readonly pending: string | null; readonly lastStep: number | null };

/** TOTP secrets, replay protection and recovery codes (RFC 6238; docs/security.md). */
export interface TotpRepo {
  get(userId: string): Promise<TotpState | undefined>;
  /** Stores a secret awaiting confirmation; false when TOTP is already on (or no such user). */
  setPending(userId: string, secret: string): Promise<boolean>;
  /**
   * Turns TOTP on with the pending secret `secret`, accepting time step `step`, and replaces the
   * recovery codes, in one transaction. False when that secret is no longer the pending one.
   */
  enable(userId: string, secret: string, step: number, recoveryHashes: readonly string[]): Promise<boolean>;
  /**
   * Records `step` as used: one conditional UPDATE that succeeds only when TOTP is on and no
   * step at or after it was used, so a code is accepted once across all nodes.
   */
  claimStep(userId: string, step: number): Promise<boolean>;
  /** Consumes a recovery code by its hash; false when it is unknown or already used. */
  useRecoveryCode(userId: string, codeHash: string): Promise<boolean>;
  recoveryCodesLeft(userId: string): Promise<number>;
  /** Turns TOTP off: secret, pending secret, last step and recovery codes go. */
  disable(userId: string): Promise<void>;
}

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

/**
 * Named leases: mutual exclusion across processes and nodes that ends by
 * itself when the holder stops renewing (it crashed). Times are epoch ms.
 */
export interface LeaseRepo {
  /** Takes `name` for `owner` until `expiresAt` if it is free or expired (or already `owner`'s); false when another holds it. */
  acquire(name: string, owner: string, now: number, expiresAt: number): Promise<boolean>;
  /** Extends a lease `owner` still holds; false when it was lost (expired and taken). */
  renew(name: string, owner: string, expiresAt: number): Promise<boolean>;
  /** Frees the lease if `owner` holds it. */
  release(name: string, owner: string): Promise<void>;
}

/** Leases in the metadata store, where a lease that ran out stays visible until somebody takes it (Redis forgets it). */
export interface StoredLeaseRepo extends LeaseRepo {
  /**
   * Deletes the leases named `prefix`… that expired at or before `now` and returns them, each to
   * exactly one caller however many ask at once. `prefix` holds no `%`, `_` or backslash.
   */
  takeExpired(prefix: string, now: number): Promise<{ name: string; owner: string; expiresAt: number }[]>;
  /** The names of the leases `prefix`… that are held at `now` (not expired). `prefix` holds no `%`, `_` or backslash. */
  held(prefix: string, now: number): Promise<string[]>;
}

export type JournalRecord = { readonly id: string; readonly kind: string; readonly data: string; readonly createdAt: number; readonly updatedAt: number };

/** Intent records of multi-step work, written before the first step and deleted after the last. */
export interface JournalRepo {
  put(r: { id: string; kind: string; data: string; now: number }): Promise<void>;
  /** Replaces the data (the next step) and the update time; false when the record is gone. */
  update(id: string, data: string, now: number): Promise<boolean>;
  get(id: string): Promise<JournalRecord | undefined>;
  /** Records of a kind last updated before `updatedBefore`, oldest first. */
  list(kind: string, updatedBefore: number, limit: number): Promise<JournalRecord[]>;
  delete(id: string): Promise<void>;
}

/** Server-wide values shared by every node (the path-token key when the database is PostgreSQL). */
export interface SettingsRepo {
  /** The value of `name`, set to `make()` first if it has none; concurrent callers all get the first value stored. */
  getOrCreate(name: string, make: () => string): Promise<string>;
}

/** Attempt counting for rate limits, exact across processes (used when there is no Redis). */
export interface RateRepo {
  /** Records an attempt in `bucket`; 0 when it is within `limit` per `windowMs`, else the seconds until one is allowed (the attempt is then not kept). */
  hit(bucket: string, now: number, windowMs: number, limit: number): Promise<number>;
  /** Takes back one attempt recorded in `bucket` at `at` (one that turned out not to count); nothing if there is none. */
  release(bucket: string, at: number): Promise<void>;
  /** Forgets attempts older than `before` (buckets of addresses that never came back). */
  deleteBefore(before: number): Promise<void>;
}

/**
 * A WebDAV write lock (RFC 4918 §6, §9.10). `path` is the locked resource inside
 * `user`'s tree: '' for the root, otherwise segments joined by '/' ('a/b.txt').
 */
export type DavLock = {
  /** The lock token, `urn:uuid:<uuid>`; unique. */
  readonly token: string;
  /** Whose tree the lock is in. */
  readonly user: string;
  readonly path: string;
  readonly depth: 0 | 'infinity';
  readonly scope: 'exclusive' | 'shared';
  /** The client's `<D:owner>` element, serialized as received ('' when none). */
  readonly owner: string;
  /** Who took the lock (the authenticated user name). */
  readonly principal: string;
  readonly timeoutSeconds: number;
  readonly createdAt: number;
  readonly expiresAt: number;
};

export type DavLockConflict = { readonly created: false; readonly conflict: DavLock };
/** The user already holds as many live locks as they may. */
export type DavLockLimit = { readonly created: false; readonly tooMany: true };

/**
 * WebDAV locks, seen by every process and node. Locks whose expiresAt is at
 * or before `now` are dead: never returned, never in conflict.
 */
export interface DavLockRepo {
  /**
   * Creates `lock` unless a live lock of the same user conflicts: one on the same
   * path, on an ancestor with depth infinity, or (when `lock.depth` is infinity) on
   * a descendant — where either lock is exclusive. Exact across processes: two
   * conflicting creations at once never both succeed (both may fail).
   *
   * With `maxLive`, also refused (tooMany) when the user would then hold more
   * live locks than that: inserted, then counted, as for conflicts, so two
   * creations at once never both pass the count (at worst both give way).
   */
  create(lock: DavLock, now: number, maxLive?: number): Promise<{ readonly created: true } | DavLockConflict | DavLockLimit>;
  get(token: string, now: number): Promise<DavLock | undefined>;
  /** Live locks that apply to `path`: on it, or on an ancestor with depth infinity. */
  covering(user: string, path: string, now: number): Promise<DavLock[]>;
  /** Live locks on `path` or anywhere below it. */
  within(user: string, path: string, now: number): Promise<DavLock[]>;
  /** New timeout for a live lock; undefined when it is gone or expired. */
  refresh(token: string, timeoutSeconds: number, now: number): Promise<DavLock | undefined>;
  /** False when there was no such lock. */
  delete(token: string): Promise<boolean>;
  /** Removes every lock on `path` and below (after a DELETE or MOVE of it). */
  deleteWithin(user: string, path: string): Promise<number>;
  /** The locks `principal` holds in other users' trees (`owner`: in that one's only), expired ones too. */
  heldElsewhere(principal: string, owner?: string): Promise<DavLock[]>;
  deleteExpired(now: number): Promise<number>;
}

/** A dead property (RFC 4918 §4): namespace, local name, and the whole element serialized as XML. */
export type DeadProperty = { readonly ns: string; readonly name: string; readonly xml: string };

export type DeadPropertyChange = { readonly op: 'set'; readonly prop: DeadProperty } | { readonly op: 'remove'; readonly ns: string; readonly name: string };

/** What dead properties take: how many, and the characters of their stored XML. */
export type DeadPropertyTotals = { readonly count: number; readonly size: number };

/** WebDAV dead properties per resource (same `path` convention as DavLock). */
export interface DavPropertyRepo {
  /** The user's properties in all, or only those at or below `path`. */
  totals(user: string, path?: string): Promise<DeadPropertyTotals>;
  list(user: string, path: string): Promise<DeadProperty[]>;
  /** The properties of the direct members of collection `path` (for PROPFIND with Depth 1), each with its member's path. */
  listChildren(user: string, path: string): Promise<(DeadProperty & { readonly path: string })[]>;
  /**
   * Applies every change in order, all or nothing (PROPPATCH is atomic).
   * With `limit`: false, and nothing changed, when the user's totals would
   * then pass it and grow (a change that shrinks them is always allowed).
   * Checked in the change's transaction: exact on SQLite; on PostgreSQL two
   * patches at once may each miss the other, so a user can pass the limit by
   * at most what their concurrent requests add.
   */
  patch(user: string, path: string, changes: readonly DeadPropertyChange[], limit?: DeadPropertyTotals): Promise<boolean>;
  /** COPY: the properties of `from` and below, copied to the same relative paths under `to` (replacing theirs). */
  copyTree(user: string, from: string, to: string): Promise<void>;
  /** MOVE: the properties of `from` and below now belong to `to` (replacing theirs). */
  moveTree(user: string, from: string, to: string): Promise<void>;
  /** DELETE: the properties of `path` and below are gone. */
  deleteTree(user: string, path: string): Promise<void>;
}

/**
 * A resumable (tus) upload. `folder` is the target folder's path in the
 * owner's tree ('' for the root, 'a/b'); `offset` is the last durable offset
 * (the bytes before it are safely staged); `length` is undefined while
 * deferred. `finalPath` is set once the file was committed (`/<user>/<path>`;
 * '' when a crash lost which name it got).
 */
export type TusUpload = {
  readonly id: string;
  /** The owner of the folder it goes to: its bytes count against their quota. */
  readonly user: string;
  /** Who sends it, when not the owner (through a writable grant); only they reach its URL. */
  readonly uploader?: string | undefined;
  readonly offset: number;
  readonly length: number | undefined;
  /** The Upload-Metadata header as the client sent it, echoed on HEAD. */
  readonly metadata: string;
  readonly folder: string;
  readonly filename: string;
  readonly overwrite: boolean;
  readonly finalPath: string | undefined;
  readonly createdAt: number;
  readonly expiresAt: number;
};

/** Upload state of resumable uploads; the bytes are in the storage backend's staging. */
export interface TusUploadRepo {
  /**
   * Records a new upload and, in the same transaction, holds its bytes on the
   * owner's row (`users.staged_bytes`: its length, or its offset while the
   * length is deferred) when they fit the quota, and checks that the owner has
   * fewer than `maxOpen` unfinished, unexpired uploads. The owner's row is
   * locked first, so concurrent creations on any node are counted one after
   * the other. Nothing is recorded unless the answer is 'created'.
   */
  create(u: TusUpload, limits: { readonly maxOpen: number }): Promise<'created' | 'quota_exceeded' | 'too_many_uploads'>;
  /** The upload, also when expired (the caller decides; the sweeper removes it). */
  get(id: string): Promise<TusUpload | undefined>;
  /**
   * Moves the offset from `from` to `to` and the expiry forward; false (nothing
   * changed) when the stored offset is not `from` or the upload is gone. An
   * upload of deferred length holds what it has staged, so its owner's
   * `staged_bytes` grow by `to - from` in the same transaction, and
   * `fromReserved` of those bytes move out of `reserved_bytes` (the PATCH had
   * reserved them while they arrived), so they are never counted nowhere.
   */
  advance(id: string, from: number, to: number, expiresAt: number, opts?: { readonly fromReserved?: number }): Promise<boolean>;
  /**
   * Sets a deferred length once, at `offset`, holding the rest (`length -
   * offset`) when it fits the quota: 'gone' when a length is already set, the
   * offset moved or the upload is gone; 'quota_exceeded' (nothing changed)
   * when the rest does not fit.
   */
  setLength(id: string, length: number, offset: number): Promise<'set' | 'gone' | 'quota_exceeded'>;
  /** Records the committed file's path and gives back the bytes the upload held (once). */
  finish(id: string, finalPath: string): Promise<void>;
  /** False when there was no such upload; an unfinished one gives back the bytes it held. */
  delete(id: string): Promise<boolean>;
  /** Uploads whose expiresAt is at or before `now`, oldest first. */
  listExpired(now: number, limit: number): Promise<TusUpload[]>;
}


/** Share links, seen by every process and node at once. */
export interface ShareRepo {
  /** `downloadUnits` starts at 0 whatever the argument says. */
  create(s: Share): Promise<void>;
  /** The share as stored, also when expired or used up (the caller decides). */
  get(id: string): Promise<Share | undefined>;
  /** The owner's shares, newest first. */
  listByOwner(ownerId: string): Promise<Share[]>;
  /** Deletes the share if `ownerId` owns it; false otherwise (unknown or someone else's). */
  delete(id: string, ownerId: string): Promise<boolean>;
  /**
   * Adds `units` to the download count unless that takes it past the limit
   * (max_downloads × UNITS_PER_DOWNLOAD + ROUNDING_ALLOWANCE): one conditional
   * UPDATE, exact under concurrency across nodes. False when it would, or the link is gone.
   */
  claimUnits(id: string, units: number): Promise<boolean>;
  /** Gives back units claimed for bytes an answer did not send after all (an interrupted download); never below 0. */
  refundUnits(id: string, units: number): Promise<void>;
  /** Adds `units` to the count without a check (links without a limit, counted in batches). */
  addUnits(id: string, units: number): Promise<void>;
  /** Ends every share of `owner` whose target is `path` or below it (deleted or moved away). */
  deleteWithin(owner: string, path: string): Promise<number>;
  /** Removes shares whose expiry is at or before `now`. */
  deleteExpired(now: number): Promise<number>;
}

/** Remembered CRC-32s of file contents for folder zips (src/zip/stream.ts CrcCache). */
export interface ZipCrcRepo {
  getMany(keys: readonly string[]): Promise<Map<string, number>>;
  /** Inserts the rows whose key is new; an existing key keeps its value (it names the same content). */
  putMany(rows: readonly { key: string; crc: number }[], now: number): Promise<void>;
}

/** An item in an owner's trash (src/services/trash.ts). `path` is where it was, below the owner ('a/b'). */
export type TrashItem = {
  readonly id: string;
  readonly owner: string;
  readonly path: string;
  readonly name: string;
  readonly isFile: boolean;
  readonly size: number;
  readonly deletedAt: number;
  /** `moving`: written before the move into the trash, until it is known to be done. */
  readonly state: 'moving' | 'trashed';
};

export interface TrashRepo {
  add(item: TrashItem): Promise<void>;
  /** Marks a `moving` row trashed with the size and kind the move found. */
  settle(id: string, found: { isFile: boolean; size: number }): Promise<void>;
  get(id: string): Promise<TrashItem | undefined>;
  /** The owner's trashed items, newest first. */
  list(owner: string): Promise<TrashItem[]>;
  /** Trashed items deleted before `before`, oldest first (purge by age). */
  trashedBefore(before: number, limit: number): Promise<TrashItem[]>;
  /** `moving` rows written before `before`: moves that may have died. */
  movingBefore(before: number, limit: number): Promise<TrashItem[]>;
  /** The owner's trashed items, oldest first (room for an upload). */
  oldest(owner: string, limit: number): Promise<TrashItem[]>;
  /** Deletes the row; false when it was gone already (someone else took it). */
  delete(id: string): Promise<boolean>;
  /** Deletes every row of the owner (the account was removed). */
  deleteOwner(owner: string): Promise<void>;
}

/** An earlier content of a file (src/services/versions.ts). `path` is the file's, below the owner ('a/b'). */
export type FileVersion = { readonly id: string; readonly owner: string; readonly path: string; readonly size: number; readonly createdAt: number };

export interface VersionRepo {
  add(v: FileVersion): Promise<void>;
  get(id: string): Promise<FileVersion | undefined>;
  /** The versions of one file, newest first. */
  list(owner: string, path: string): Promise<FileVersion[]>;
  /** The owner's versions, oldest first (room for an upload). */
  oldest(owner: string, limit: number): Promise<FileVersion[]>;
  /** Deletes the row; false when it was gone already. */
  delete(id: string): Promise<boolean>;
  /** Deletes every row of the owner (the account was removed). */
  deleteOwner(owner: string): Promise<void>;
  /** The owner's versions of files at or below `path` (a deleted file or folder). */
  listWithin(owner: string, path: string): Promise<FileVersion[]>;
  /** Carries the owner's versions at or below `from` over to `to` (a file or folder renamed or moved). */
  moveWithin(owner: string, from: string, to: string): Promise<void>;
}

/** A user's storage usage and quota, in bytes. */
/**
 * `used`: bytes of the user's files; `reserved`: bytes of uploads under way
 * (one request each); `staged`: bytes held by unfinished resumable uploads
 * (their length, or what they staged while it is deferred) until they finish,
 * are terminated or expire. Uploads fit while used + reserved + staged <= quota.
 */
export type Usage = { readonly used: number; readonly reserved: number; readonly staged: number; readonly quota: number | undefined };

/**
 * Usage and quotas (0011_usage_quota). Every change is one atomic UPDATE of
 * the user's row (`used = used + delta`), never read-modify-write, so
 * concurrent writers on any node lose no update.
 */
export interface UsageRepo {
  /** undefined when no such user. */
  get(username: string): Promise<Usage | undefined>;
  /** Adds delta (may be negative) to the user's used bytes; no-op for an unknown user. */
  add(username: string, delta: number): Promise<void>;
  /**
   * Sets used bytes outright (a recount by `file-cloud index`), clears
   * reservations, and sets staged bytes from the unfinished resumable uploads.
   */
  setUsed(username: string, used: number): Promise<boolean>;
  /**
   * Reserves bytes for an upload under way when they fit: `used + reserved +
   * staged + bytes <= quota`, checked and applied in one statement. 'unlimited' (nothing
   * reserved) when the user has no quota; 'refused' when it does not fit.
   */
  reserve(username: string, bytes: number): Promise<'reserved' | 'unlimited' | 'refused'>;
  /** Gives back bytes reserved earlier. */
  release(username: string, bytes: number): Promise<void>;
  /** Sets (bytes) or removes (null) the user's quota. False if no such user. */
  setQuota(username: string, quota: number | null): Promise<boolean>;
}

/**
 * One file or folder in the search index (CONTRACT "Search, thumbnails,
 * usage"). `path` is its path in `user`'s tree ('a/b.txt'; never '', the root
 * is not indexed); `modified` is epoch ms.
 */
export type IndexedEntry = {
  readonly user: string;
  readonly path: string;
  readonly isFile: boolean;
  readonly size: number;
  readonly modified: number;
  /** The backend's ETag, when the writer knows it (the change journal carries it). */
  readonly etag?: string | undefined;
  /**
   * Storage reported the write as a creation (nothing was at the name): journaled as created
   * without reading what the index held there (an entry of a file other tools removed, not swept yet).
   */
  readonly created?: boolean;
  /**
   * SHA-256 (hex) of the file's bytes when the writer knows it. Absent: the row keeps the hash it
   * has while its ETag is the same (the same bytes), else it has none (docs/sync.md).
   */
  readonly sha256?: string | undefined;
  /** The File-Cloud-Origin of the request that made the change, for its journal entry. */
  readonly origin?: string | undefined;
};

/** What the index knows of an entry for sync: its stable id, a file's SHA-256 (null until known), its ETag then. */
export type EntryIdentity = { readonly id: string | null; readonly isFile: boolean; readonly size: number; readonly modified: number; readonly sha256: string | null; readonly etag: string | null };

export type SearchQuery = {
  readonly user: string;
  /** The query normalized (src/domain/search-text.ts normalizeName); not empty. */
  readonly text: string;
  /** Only entries strictly below this folder ('' = the user's whole tree). */
  readonly within: string;
  readonly type: 'file' | 'folder' | undefined;
  readonly limit: number;
};

/**
 * The search index of names, shared by every node. Names match by substring
 * of their normalized form; results come best first: exact name, prefix,
 * substring, then shallower paths, then by normalized name and path.
 * Prefix conditions are path ranges, never LIKE (a name may hold % or _).
 */
export interface SearchRepo {
  /** Inserts or updates entries by (user, path); each one written counts as seen by a running rescan. */
  put(entries: readonly IndexedEntry[]): Promise<void>;
  /** Which of `paths` are indexed for `user`. */
  existing(user: string, paths: readonly string[]): Promise<Set<string>>;
  /**
   * Removes `path` and everything below it ('' removes all of `user`'s entries); returns how many went.
   * `isFile`: storage deleted it (an event), so the journal says so even if the index never had it.
   */
  deleteWithin(user: string, path: string, isFile?: boolean, origin?: string): Promise<number>;
  /** The id, hash and ETag the index holds for each of `paths` of `user` (those it has). */
  identities(user: string, paths: readonly string[]): Promise<Map<string, EntryIdentity>>;
  /**
   * `from` and everything below it move to `to`; what was at `to` and below goes first. Returns how many moved.
   * `current` is the moved entry as storage has it now (an object store's copy has a new time): its row takes it.
   */
  moveWithin(user: string, from: string, to: string, current?: IndexedEntry, origin?: string): Promise<number>;
  /** At most `limit` entries, best first; `truncated` when more match. */
  search(q: SearchQuery): Promise<{ entries: IndexedEntry[]; truncated: boolean }>;
  /** Rescan start: marks all of `user`'s entries with `scan`; put() clears the mark. */
  markAll(user: string, scan: string): Promise<void>;
  /** Rescan end: removes `user`'s entries still marked with `scan` (neither seen by the walk nor written since). */
  sweepMarked(user: string, scan: string): Promise<number>;
  /** Every user name that has entries. */
  users(): Promise<string[]>;
}

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

/** A group of accounts (admin-managed); `members` are usernames in code-point order. */
export type Group = { readonly name: string; readonly createdAt: number; readonly members: readonly string[] };

/** Groups and their members (migration 0015_groups). Names are unique; a removed user leaves every group. */
export interface GroupRepo {
  /** False when the name is taken. */
  create(id: string, name: string, now: number): Promise<boolean>;
  /** False when there is no such group. */
  delete(name: string): Promise<boolean>;
  get(name: string): Promise<Group | undefined>;
  /** The group's id (grants name groups by id, so a group's grants end with it). */
  idOf(name: string): Promise<string | undefined>;
  /** Every group, by name (code-point order). */
  list(): Promise<Group[]>;
  /**
   * Adds and removes members by username in one transaction; unknown users are refused before
   * anything changes. Undefined when there is no such group, else the usernames that were unknown.
   */
  changeMembers(name: string, add: readonly string[], remove: readonly string[]): Promise<{ unknown: string[] } | undefined>;
  /** The names of the groups `username` belongs to, in code-point order. */
  groupsOf(username: string): Promise<string[]>;
}

/**
 * An item shared with another account or a group. `path` is the item in its owner's tree ('a/b.txt');
 * `toName` is the recipient's username or group name at the time it was read.
 */
export type Grant = {
  readonly id: string;
  readonly ownerId: string;
  readonly owner: string;
  readonly path: string;
  readonly isFile: boolean;
  readonly toKind: 'user' | 'group';
  readonly toId: string;
  readonly toName: string;
  readonly permission: 'read' | 'write';
  readonly createdAt: number;
};

/** Grants (migration 0016_grants). */
export interface GrantRepo {
  /** False when the same item is granted to the same recipient already. */
  create(g: Omit<Grant, 'toName'>): Promise<boolean>;
  get(id: string): Promise<Grant | undefined>;
  /** The grants an owner gave, newest first. */
  listByOwner(ownerId: string): Promise<Grant[]>;
  /** The grants that reach a user, directly or through a group they are in, newest first; `owner` narrows them to one owner's tree. */
  listForRecipient(userId: string, owner?: string): Promise<Grant[]>;
  /** The names of the users any grant of these owners reaches, directly or through a group (each once). */
  recipientsOf(owners: readonly string[]): Promise<string[]>;
  setPermission(id: string, permission: Grant['permission']): Promise<boolean>;
  delete(id: string): Promise<boolean>;
  /** Ends the grants of `path` and of everything below it in `owner`'s tree (the item was deleted). */
  deleteWithin(owner: string, path: string): Promise<void>;
  /** Carries the grants of `from` and below to `to` in the same owner's tree (the item was renamed or moved). */
  moveWithin(owner: string, from: string, to: string): Promise<void>;
}

/**
 * One entry of the change journal (migration 0018). Every write of the search index that changes
 * what a tree holds appends one in the same transaction (src/store/search-repo.ts), so the journal
 * and the index never disagree. Paths are in the owner's tree, without a leading slash.
 */
export type ChangeRecord = {
  readonly cursor: number;
  readonly owner: string;
  readonly type: 'created' | 'modified' | 'deleted' | 'moved';
  readonly path: string;
  readonly from?: string | undefined;
  readonly isFile: boolean;
  readonly size?: number | undefined;
  readonly modified?: number | undefined;
  readonly etag?: string | undefined;
  readonly at: number;
  /** 0026_sync_fields: the item's stable id, a file's SHA-256, the writer's File-Cloud-Origin. */
  readonly id?: string | undefined;
  readonly sha256?: string | undefined;
  readonly origin?: string | undefined;
};

export interface ChangeRepo {
  /** The highest cursor written (or purged): what `cursor=now` answers. */
  latest(): Promise<number>;
  /** The highest cursor purged by retention; a cursor below it has lost entries. */
  horizon(): Promise<number>;
  /** Entries after `cursor` (up to and including `upTo`), oldest first, every owner's: for consumers that are not a user (webhooks). */
  changesSince(cursor: number, limit: number, upTo?: number): Promise<ChangeRecord[]>;
  /** As changesSince, only entries of the given owners' trees. */
  changesSinceFor(owners: readonly string[], cursor: number, limit: number, upTo?: number): Promise<ChangeRecord[]>;
  /** The owners of the trees that entries after `cursor`, up to and including `upTo`, changed (each once). */
  ownersBetween(cursor: number, upTo: number): Promise<string[]>;
  /**
   * Of the given folders of `owner` ('' = the root), the cursor of the latest entry at or below each (none:
   * not indexed yet). Folder ETags derive from it.
   */
  treeCursors(owner: string, paths: readonly string[]): Promise<Map<string, number>>;
  /** Removes entries written before `time` (ms); returns how many went. */
  purgeBefore(time: number): Promise<number>;
}

export interface MetadataStore {
  readonly users: UserRepo;
  readonly sessions: SessionRepo;
  readonly totp: TotpRepo;
  readonly leases: StoredLeaseRepo;
  readonly journal: JournalRepo;
  readonly settings: SettingsRepo;
  readonly rates: RateRepo;
  readonly zipCrcs: ZipCrcRepo;
  readonly davLocks: DavLockRepo;
  readonly davProperties: DavPropertyRepo;
  readonly tusUploads: TusUploadRepo;
  readonly shares: ShareRepo;
  readonly apiKeys: ApiKeyRepo;
  readonly usage: UsageRepo;
  readonly search: SearchRepo;
  readonly changes: ChangeRepo;
  readonly oidc: OidcRepo;
  readonly groups: GroupRepo;
  readonly grants: GrantRepo;
  readonly trash: TrashRepo;
  readonly versions: VersionRepo;
  readonly audit: AuditRepo;
  readonly webhooks: WebhookRepo;
  close(): Promise<void>;
}

/** One entry of the audit log (0020_audit, src/services/audit.ts). Times are epoch milliseconds. */
export type AuditRow = {
  readonly seq: number;
  readonly at: number;
  readonly type: string;
  readonly actor: string | null;
  readonly address: string | null;
  readonly userAgent: string | null;
  readonly target: string | null;
  readonly outcome: string;
  /** JSON object text, or null. */
  readonly detail: string | null;
  readonly prevHash: string;
  readonly hash: string;
};
export type AuditDraft = Omit<AuditRow, 'seq' | 'prevHash' | 'hash'>;
export type AuditHead = { readonly seq: number; readonly hash: string; readonly anchorSeq: number; readonly anchorHash: string };
export type AuditFilter = { readonly since?: number; readonly until?: number; readonly actor?: string; readonly type?: string; readonly beforeSeq?: number; readonly limit: number };

export interface AuditRepo {
  /**
   * Appends one entry as the chain's next: under the head row's lock (every node's appends queue
   * there), seq = head + 1 and prevHash = the head's hash; `hashOf` seals the entry.
   */
  append(draft: AuditDraft, hashOf: (entry: Omit<AuditRow, 'hash'>) => string): Promise<AuditRow>;
  /** Newest first, matching the filter, below `beforeSeq` when given. */
  list(filter: AuditFilter): Promise<AuditRow[]>;
  /** Oldest first: the entries after `afterSeq` (verification, webhook delivery). */
  after(afterSeq: number, limit: number): Promise<AuditRow[]>;
  head(): Promise<AuditHead>;
  /**
   * Removes the oldest entries recorded before `before`, moving the anchor to the last one removed
   * (its seq and hash), so what remains still verifies. Returns how many went.
   */
  purgeBefore(before: number): Promise<number>;
}

/** A webhook (0020_audit, src/services/webhooks.ts). */
export type WebhookRow = {
  readonly id: string;
  readonly url: string;
  readonly events: readonly string[];
  readonly pathPrefix: string | null;
  /** `whsec_<base64>` (Standard Webhooks). */
  readonly secret: string;
  readonly enabled: boolean;
  readonly disabledReason: string | null;
  /** When the current run of failed attempts began; null while deliveries succeed. */
  readonly failingSince: number | null;
  /** Failed attempts in the current run. */
  readonly attempts: number;
  /** The next delivery attempt waits until then (backoff). */
  readonly nextAttemptAt: number;
  readonly createdAt: number;
};
export type WebhookChange = Partial<Pick<WebhookRow, 'url' | 'events' | 'pathPrefix' | 'enabled' | 'disabledReason' | 'failingSince' | 'attempts' | 'nextAttemptAt'>>;
export type DeliveryRow = {
  readonly id: string;
  readonly hookId: string;
  readonly eventId: string;
  readonly eventType: string;
  readonly attempt: number;
  readonly at: number;
  /** The HTTP status answered, null when none came (refused, timed out). */
  readonly status: number | null;
  readonly durationMs: number;
  readonly error: string | null;
  readonly nextRetryAt: number | null;
};

export interface WebhookRepo {
  /** Creates the hook with its starting cursor in each event source, in one transaction. */
  create(hook: WebhookRow, cursors: Readonly<Record<string, string>>): Promise<void>;
  get(id: string): Promise<WebhookRow | undefined>;
  list(): Promise<WebhookRow[]>;
  update(id: string, change: WebhookChange): Promise<boolean>;
  delete(id: string): Promise<boolean>;
  cursor(hookId: string, source: string): Promise<string | undefined>;
  setCursor(hookId: string, source: string, cursor: string): Promise<void>;
  addDelivery(d: DeliveryRow): Promise<void>;
  /** Newest first. */
  deliveries(hookId: string, limit: number): Promise<DeliveryRow[]>;
  deleteDeliveriesBefore(at: number): Promise<void>;
}
