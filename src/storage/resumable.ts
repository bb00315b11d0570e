import type { Hash } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { StorageKey } from '../domain/storage-path.js';
import type { Entry } from './entry.js';
import { StorageError } from './errors.js';

/**
 * The storage seam's companion for resumable (tus) uploads: bytes that
 * arrive over many requests, possibly on different nodes, and become a
 * file only when the last one is in. Staging lives outside every user's
 * tree and is never listed: local disk under `data/tmp/tus/<id>`, S3 under
 * the reserved key area `PREFIX.file-cloud/tus/<id>/` (no user name can
 * start with a dot). The upload's state (offset, length, owner) lives in
 * the metadata store; the caller serializes appends to one upload (a lease)
 * and passes in the durable offset it recorded.
 */
export interface ResumableStaging {
  /** Prepares empty staging for a new upload id. */
  create(id: string): Promise<void>;

  /**
   * Appends body at `offset`, which must be the durable offset the caller
   * recorded (staged bytes beyond it are never-reported leftovers of a crash
   * and are dropped). Without a checksum, bytes become durable as they
   * arrive (`onDurable` is awaited with each new offset) and a body cut off
   * midway keeps exactly what arrived; with one, the chunk is kept whole
   * or not at all. More than `maxBytes` → `too_large`, the chunk dropped.
   */
  append(id: string, offset: number, body: Readable, opts: AppendOptions): Promise<AppendResult>;

  /**
   * Makes the first `size` staged bytes the file at key (`replace`, or
   * `rename` for a collision name, exactly like a PUT) and removes the
   * staging. Parents must exist. Returns the entry written, or undefined
   * when the staging shows that an earlier commit already made the file
   * (its process died before the caller recorded it): it is not made twice,
   * and where it went is not known here. `beforeReplace` as in a write's CommitOptions
   * (storage/backend.ts): a replace calls it with the name held, before the file takes it.
   */
  commit(id: string, size: number, key: StorageKey, opts: { ifExists: 'replace' | 'rename'; beforeReplace?: (previousSize: number) => Promise<void> }): Promise<Entry | undefined>;

  /** Removes the staging of an upload (terminated or expired); nothing there is fine. */
  remove(id: string): Promise<void>;

  /**
   * Every upload id that has staging, with when it last changed (epoch ms):
   * the sweep removes staging whose upload record is gone (a crash between
   * creating the staging and recording the upload, or between the reverse).
   */
  list(): Promise<{ readonly id: string; readonly modified: number }[]>;

  /**
   * The staged bytes start..end (inclusive) as stored, fewer when the staging
   * ends sooner: for a layer below the caller that reads back what it
   * staged (the encryption layer's header and last chunk). Small ranges only.
   */
  read(id: string, range: { readonly start: number; readonly end: number }): Promise<Buffer>;

  /**
   * A small record kept with an upload's staging under the offset it belongs
   * to, stored whole or not at all (the encryption layer's sealed partial
   * chunk), removed with the staging. `getTail` gives undefined when none is
   * kept for that offset; `dropTails` removes all but the one for `keep`.
   */
  putTail(id: string, offset: number, bytes: Buffer): Promise<void>;
  /** A record is at most MAX_TAIL_BYTES (`putTail` refuses more, `getTail` reads no more): never a user's file. */
  getTail(id: string, offset: number): Promise<Buffer | undefined>;
  dropTails(id: string, keep?: number): Promise<void>;
}

const UPLOAD_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** True for the ids this server makes (lower-case UUIDs). */
export const isUploadId = (id: string): boolean => UPLOAD_ID.test(id);

export type AppendOptions = {
  readonly maxBytes: number;
  /** The SHA-1 the whole chunk must have (tus checksum extension). */
  readonly sha1?: Buffer;
  /** Awaited each time more bytes are durable, with the new offset (never with sha1: the chunk is all or nothing). */
  readonly onDurable?: (offset: number) => Promise<void>;
};

/**
 * How an append ended: `complete` (the body ended and everything is kept),
 * `cut` (the body failed midway; without a checksum what arrived is kept),
 * `checksum_mismatch` (nothing of this chunk is kept).
 */
export type AppendResult = { readonly offset: number; readonly outcome: 'complete' | 'cut' | 'checksum_mismatch' };

/** Upload ids are our own UUIDs; anything else never reaches a file system path or an object key. */
export function checkUploadId(id: string): void {
  if (!isUploadId(id)) throw new StorageError('invalid_path', 'Not an upload id.');
}

/** What reading a chunk's body found: how many bytes arrived, and whether the body was cut off. */
export type ChunkReading = { cut: boolean; received: number };

/**
 * The bytes of a chunk's body, with the rules both backends share: only the
 * body's own failure (its client went away) is a cut, reported in
 * `reading.cut` instead of thrown; every byte counts towards `maxBytes`
 * (beyond it, `dropChunk` runs and `too_large` is thrown) and goes into the
 * chunk's hash. The stream is left as it is when the reader stops early.
 */
export async function* chunkBytes(body: Readable, opts: { maxBytes: number; hash?: Hash; dropChunk: () => Promise<void> }, reading: ChunkReading): AsyncGenerator<Buffer> {
  const source = body.iterator({ destroyOnReturn: false });
  for (;;) {
    let next: IteratorResult<unknown>;
    try {
      next = await source.next();
    } catch {
      reading.cut = true;
      return;
    }
    if (next.done) return;
    const chunk = next.value as Buffer | string;
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    reading.received += bytes.length;
    if (reading.received > opts.maxBytes) {
      await opts.dropChunk();
      throw new StorageError('too_large', `The chunk is larger than the ${opts.maxBytes} bytes left of the upload.`);
    }
    opts.hash?.update(bytes);
    yield bytes;
  }
}

/** The largest record `putTail` keeps: one sealed 64 KiB chunk with room to spare. */
export const MAX_TAIL_BYTES = 256 * 1024;

/** `putTail`'s guard, shared by the backends. */
export function checkTailSize(bytes: Buffer): void {
  if (bytes.length > MAX_TAIL_BYTES) throw new StorageError('too_large', `An upload record holds at most ${MAX_TAIL_BYTES} bytes.`);
}
