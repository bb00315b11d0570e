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
