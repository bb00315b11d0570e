import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { AbortMultipartUploadCommand, CompleteMultipartUploadCommand, CreateMultipartUploadCommand, GetObjectCommand, UploadPartCommand, UploadPartCopyCommand, type CompletedPart, type S3Client } from '@aws-sdk/client-s3';
import { isStorageError, StorageError, type WriteOptions } from '../backend.js';
import { recycles } from '../body.js';
import type { Coordination } from '../coordination.js';
import { isNotFound, s3Call, statusOf } from './client.js';
import { copySource } from './keys.js';
import { MTIME, mtimeValue } from './objects.js';
import { dependencyErrorIn } from '../../lib/dependency-error.js';

const MiB = 1024 * 1024;
/**
 * Smallest part we send (S3 takes ≥ 5 MiB). 8 MiB × 3 in flight keeps most of 16 MiB × 3's speed on
 * radosgw with half the memory (docs/performance.md, "Figures behind the code").
 */
export const MIN_PART = 8 * MiB;
/** Parts uploading at once: memory per upload stays ≤ (PARALLEL + 1) × part size (32 MiB at 8 MiB parts). */
const PARALLEL = 3;
/** S3 allows 10,000 parts; leave room for a body longer than declared. */
const MAX_PARTS = 9_000;
/** How often a slow upload refreshes its journal record between parts. */
const TOUCH_EVERY_MS = 60_000;

export const UPLOAD_JOURNAL = 's3-upload';

/** What the journal keeps of an upload in progress, so a sweeper can abort it after a crash. */
export type UploadRecord = { readonly bucket: string; readonly key: string; readonly uploadId: string | null };

/** Bytes received: small bodies as one buffer (PutObject at commit), large ones as an open multipart upload. */
export type Received =
  | { readonly kind: 'single'; readonly body: Buffer }
  | { readonly kind: 'multipart'; readonly size: number; complete(): Promise<void>; abort(): Promise<void> };

export const receivedSize = (r: Received): number => (r.kind === 'single' ? r.body.length : r.size);

/** The object metadata that keeps a write's client-set time (objects.ts MTIME), or none. */
export const clientTime = (opts: { readonly modified?: Date | undefined }): Record<string, string> | undefined => (opts.modified ? { [MTIME]: mtimeValue(opts.modified) } : undefined);

/** Part size for a body: as small as allowed, as large as needed to fit the declared length in MAX_PARTS. */
export function partSizeFor(sizeHint: number | undefined): number {
  if (sizeHint === undefined || !Number.isFinite(sizeHint)) return MIN_PART;
  return Math.max(MIN_PART, Math.ceil(sizeHint / MAX_PARTS / MiB) * MiB);
}

/**
 * Reads body into S3 under the key `keyAt` gives: up to one part stays in memory
 * and becomes a PutObject at commit (the caller's, under the key it claimed); a
 * longer body streams into a multipart upload, under the key asked as it starts, whose
 * parts upload PARALLEL at a time while the next is read (the body is not
 * read faster than S3 takes it). The upload is journaled before it starts and
 * aborted on any failure, so no multipart upload outlives its writer unnoticed.
 * Like the local backend, a limit stops reading without destroying the body
 * (its owner answers 413); an abort destroys it.
 */
export async function receive(s3: S3Client, c: Coordination, bucket: string, keyAt: () => Promise<string>, contentType: string, body: Readable, opts: WriteOptions): Promise<Received> {
  const max = opts.maxBytes;
  let partSize = partSizeFor(opts.sizeHint);
  // The first part is kept as the chunks arrived, so a small body never costs a whole part buffer.
  let head: Buffer[] = [];
  let headBytes = 0;
  // Later parts are copied into part buffers reused from part to part: memory stays at (PARALLEL + 1) × part size,
  // and no dead part-sized buffers pile up waiting for the garbage collector.
  const spare: Buffer[] = [];
  let part: Buffer | undefined;
  let fill = 0;
  let total = 0;
  let upload: { id: string; journalId: string } | undefined;
  const parts: CompletedPart[] = [];
  let nextPartNumber = 1;
  const inFlight = new Set<Promise<void>>();
  let partError: unknown;
  const now = c.now ?? Date.now;
  let touched = now();

  /** The object key, asked when the multipart upload starts (a small body never needs it here). */
  let key = '';
  const start = async (): Promise<{ id: string; journalId: string }> => {
    key = await keyAt();
    const journalId = randomUUID();
    // The intent first: a crash between here and CreateMultipartUpload leaves a record the sweeper resolves.
    await c.journal.put({ id: journalId, kind: UPLOAD_JOURNAL, data: JSON.stringify({ bucket, key, uploadId: null } satisfies UploadRecord), now: now() });
    const created = await s3Call('Starting the upload', () => s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key, ContentType: contentType, Metadata: clientTime(opts) })));
    const id = created.UploadId as string;
    try {
      await c.journal.update(journalId, JSON.stringify({ bucket, key, uploadId: id } satisfies UploadRecord), now());
    } catch (e) {
      // The database went away between the intent and its id: the upload is aborted now (the sweeper
      // would find it by key and time, but only once the database is back).
      await s3.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: id })).catch(() => undefined);
      throw e;
    }
    return { id, journalId };
  };

  const send = (u: { id: string; journalId: string }, partNumber: number, data: Buffer, buffer?: Buffer) => {
    const p: Promise<void> = s3Call('Uploading a part', () => s3.send(new UploadPartCommand({ Bucket: bucket, Key: key, UploadId: u.id, PartNumber: partNumber, Body: data, ContentLength: data.length })))
      .then(async (r) => {
        parts.push({ PartNumber: partNumber, ETag: r.ETag });
        // Progress keeps the record fresh: the sweeper takes only uploads that stopped moving.
        await c.journal.update(u.journalId, JSON.stringify({ bucket, key, uploadId: u.id } satisfies UploadRecord), now());
      })
      .catch((e: unknown) => {
        partError ??= e;
      })
      .finally(() => {
        inFlight.delete(p);
        if (buffer && buffer.length === partSize && spare.length < PARALLEL) spare.push(buffer);
      });
    inFlight.add(p);
  };

  /** A free part buffer, once fewer than PARALLEL parts are in flight: the body is read no faster than S3 takes it. */
  const nextBuffer = async (): Promise<Buffer> => {
    while (inFlight.size >= PARALLEL) await Promise.race(inFlight);
    if (partError !== undefined) throw partError;
    return spare.pop() ?? Buffer.allocUnsafeSlow(partSize);
  };

  const sendFull = async (full: Buffer) => {
    upload ??= await start();
    const number = nextPartNumber++;
    send(upload, number, full, full);
    // An unknown length grows its parts so it still fits in S3's part count.
    if (number % 2000 === 0) partSize *= 2;
  };

  // A body that takes its chunks back (an encrypted upload's sealed chunks, src/lib/encryption/seal-stream.ts)
  // gets each once it is copied into a part buffer; one kept in the first part is kept as it is.
  const recycle = recycles(body) ? (chunk: Buffer) => body.recycle(chunk) : undefined;
  const append = async (bytes: Buffer) => {
    let offset = 0;
    while (offset < bytes.length) {
      if (!part) {
        if (!upload && headBytes + bytes.length - offset <= partSize) {
          head.push(offset === 0 ? bytes : bytes.subarray(offset));
          headBytes += bytes.length - offset;
          return;
        }
        part = await nextBuffer();
        fill = 0;
        for (const h of head) {
          fill += h.copy(part, fill);
          recycle?.(h);
        }
        head = [];
        headBytes = 0;
      }
      const n = bytes.copy(part, fill, offset, Math.min(bytes.length, offset + part.length - fill));
      fill += n;
      offset += n;
      if (fill === part.length) {
        const full = part;
        part = undefined;
        await sendFull(full);
      }
    }
    recycle?.(bytes);
    // A part slower than the stale-upload threshold must not look abandoned to the sweeper.
    if (upload && now() - touched > TOUCH_EVERY_MS) {
      touched = now();
      await c.journal.update(upload.journalId, JSON.stringify({ bucket, key, uploadId: upload.id } satisfies UploadRecord), touched);
    }
  };

  const abort = async () => {
    await Promise.all(inFlight);
    if (!upload) return;
    const u = upload;
    await s3.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: u.id })).catch((e: unknown) => {
      if (!isNotFound(e)) throw e;
    });
    await c.journal.delete(u.journalId);
  };

  const onAbort = () => body.destroy();
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    if (opts.signal?.aborted) throw new Error('aborted before it started');
    for await (const chunk of body.iterator({ destroyOnReturn: false })) {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
      total += bytes.length;
      if (max !== undefined && total > max) throw new StorageError('too_large', `The body is larger than ${max} bytes.`);
      await append(bytes);
      if (partError !== undefined) throw partError;
    }
    if (opts.signal?.aborted) throw new Error('aborted while finishing');
    if (!upload) return { kind: 'single', body: head.length === 1 ? (head[0] as Buffer) : Buffer.concat(head, headBytes) };
    const u = upload;
    if (part && fill > 0) send(u, nextPartNumber++, part.subarray(0, fill));
    part = undefined;
    // The first part that fails fails the upload: the others (a store that hangs answers none) are waited for by the abort.
    while (inFlight.size > 0 && partError === undefined) await Promise.race(inFlight);
    if (partError !== undefined) throw partError;
    return {
      kind: 'multipart',
      size: total,
      async complete() {
        const sorted = [...parts].sort((a, b) => (a.PartNumber ?? 0) - (b.PartNumber ?? 0));
        await s3Call('Finishing the upload', () => s3.send(new CompleteMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: u.id, MultipartUpload: { Parts: sorted } })));
        await c.journal.delete(u.journalId);
      },
      abort,
    };
  } catch (e) {
    // With the store (or the database) out, the abort waits for the parts in flight to time out and may
    // fail itself: the client gets its 503 now, the abort goes on behind it, and what it cannot do the
    // sweeper does once the service is back. Otherwise the abort is done before the answer.
    const cleanup = abort().catch(() => undefined);
    if (!(isStorageError(e) && e.code === 'unavailable') && !dependencyErrorIn(e)) await cleanup;
    if (isStorageError(e) && e.code !== 'aborted') throw e;
    // The store refused a request of ours: not the client's fault, not an interrupted body.
    if (statusOf(e) !== undefined) throw e;
    // Only a body that broke off (or our own abort) is the client's interruption; a service that
    // failed meanwhile (the database for the journal, Redis) is a 503 of its own, never a 400.
    if (!isStorageError(e) && !opts.signal?.aborted && !body.errored && !(body.destroyed && !body.readableEnded)) throw e;
    throw new StorageError('aborted', 'The body ended before it was complete.', { cause: e });
  } finally {
    opts.signal?.removeEventListener('abort', onAbort);
  }
}

/** S3's smallest part (all but the last part of a multipart upload). */
const S3_MIN_PART = 5 * MiB;

/**
 * Assembles objects already in the bucket (a resumable upload's segments, in
 * order) into one new object at `key`, inside the store: a multipart upload
 * whose parts are `UploadPartCopy`s of the segments. Segments below S3's
 * 5 MiB part minimum (a chunk cut short) are read and sent merged with the
 * ones after them until a part is big enough, so at most ~13 MiB passes
 * through File Cloud at a time. Journaled and aborted on failure like
 * `receive`; an empty source becomes a single empty object.
 */
export async function copySegments(s3: S3Client, c: Coordination, bucket: string, key: string, contentType: string, segments: readonly { key: string; size: number }[]): Promise<Received> {
  const total = segments.reduce((n, s) => n + s.size, 0);
  if (total === 0) return { kind: 'single', body: Buffer.alloc(0) };
  const now = c.now ?? Date.now;
  const journalId = randomUUID();
  await c.journal.put({ id: journalId, kind: UPLOAD_JOURNAL, data: JSON.stringify({ bucket, key, uploadId: null } satisfies UploadRecord), now: now() });
  let uploadId: string | undefined;
  const abort = async () => {
    if (uploadId) {
      await s3.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: uploadId })).catch((e: unknown) => {
        if (!isNotFound(e)) throw e;
      });
    }
    await c.journal.delete(journalId);
  };
  try {
    const created = await s3Call('Starting the upload', () => s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key, ContentType: contentType })));
    const id = created.UploadId as string;
    uploadId = id;
    await c.journal.update(journalId, JSON.stringify({ bucket, key, uploadId: id } satisfies UploadRecord), now());
    const parts: CompletedPart[] = [];
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    const touch = () => c.journal.update(journalId, JSON.stringify({ bucket, key, uploadId: id } satisfies UploadRecord), now());
    const sendPending = async () => {
      const PartNumber = parts.length + 1;
      const data = Buffer.concat(pending, pendingBytes);
      pending = [];
      pendingBytes = 0;
      const r = await s3Call('Uploading a part', () => s3.send(new UploadPartCommand({ Bucket: bucket, Key: key, UploadId: id, PartNumber, Body: data, ContentLength: data.length })));
      parts.push({ PartNumber, ETag: r.ETag });
      await touch();
    };
    for (const [i, seg] of segments.entries()) {
      const last = i === segments.length - 1;
      if (pendingBytes === 0 && (seg.size >= S3_MIN_PART || last)) {
        const PartNumber = parts.length + 1;
        const r = await s3Call('Copying a part', () => s3.send(new UploadPartCopyCommand({ Bucket: bucket, Key: key, UploadId: id, PartNumber, CopySource: copySource(bucket, seg.key) })));
        parts.push({ PartNumber, ETag: r.CopyPartResult?.ETag });
        await touch();
        continue;
      }
      const got = await s3Call('Reading an upload segment', () => s3.send(new GetObjectCommand({ Bucket: bucket, Key: seg.key })));
      const bytes = Buffer.from(await (got.Body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray());
      if (bytes.length !== seg.size) throw new StorageError('failed', `An upload segment holds ${bytes.length} bytes, not ${seg.size}.`);
      pending.push(bytes);
      pendingBytes += bytes.length;
      if (pendingBytes >= S3_MIN_PART || last) await sendPending();
    }
    return {
      kind: 'multipart',
      size: total,
      async complete() {
        await s3Call('Finishing the upload', () => s3.send(new CompleteMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: id, MultipartUpload: { Parts: parts } })));
        await c.journal.delete(journalId);
      },
      abort,
    };
  } catch (e) {
    await abort().catch(() => undefined);
    throw e;
  }
}
