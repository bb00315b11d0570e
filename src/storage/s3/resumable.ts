import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { StorageKey } from '../../domain/storage-path.js';
import { StorageError, type CommitOptions, type Entry, type WriteOptions } from '../backend.js';
import { checkTailSize, checkUploadId, chunkBytes, MAX_TAIL_BYTES, isUploadId, type ChunkReading, type AppendResult, type ResumableStaging } from '../resumable.js';
import { fromS3Error, isNotFound, s3Call } from './client.js';
import { resumableArea, resumableRoot, resumableSegmentKey, resumableTailKey, segmentOffset } from './keys.js';
import { deleteKeys, objectPages } from './objects.js';
import { copySegments, receive, type Received } from './upload.js';
import type { Coordination } from '../coordination.js';

/**
 * Bytes per staging segment. A PATCH is stored as it arrives, one segment
 * object per this many bytes (and one for what is left when the body ends
 * or is cut), so memory per upload stays at a few segments and a cut keeps
 * exactly what arrived.
 */
const SEGMENT = 8 * 1024 * 1024;
/** Segments uploading at once: memory per PATCH stays at (PARALLEL + 1) × SEGMENT. */
const PARALLEL = 2;

/**
 * Resumable staging on S3: plain objects under the reserved key area
 * `PREFIX.file-cloud/tus/<id>/`, one per segment, named by the offset it
 * starts at. Any node can append or finish, since the bytes are in the
 * store and the offset in the metadata store. The area is outside every
 * user's tree (no user name starts with a dot), so listings never show it.
 *
 * A crash may leave segments past the recorded offset; they are never read:
 * commit follows the chain from offset 0 (each segment starts where the one
 * before ended), and a later append at a recorded offset overwrites the key.
 */
/** Brings a write's bytes to the claimed object key, asked of `keyAt` before a byte is stored under it. */
export type Produce = (keyAt: () => Promise<string>, contentType: string) => Promise<Received>;

/** A write whose bytes `produce` brings to the claimed object key (the S3 backend's claim, commit and events). */
export type CommitFrom = (key: StorageKey, opts: WriteOptions, produce: Produce, commitOpts?: CommitOptions) => Promise<Entry>;

/** Beyond this many segments (S3 allows 10,000 parts) the file is assembled by streaming instead. */
const MAX_COPY_PARTS = 9_000;

export function createS3Resumable(s3: S3Client, c: Coordination, bucket: string, prefix: string, commitFrom: CommitFrom): ResumableStaging {
  const area = (id: string) => {
    checkUploadId(id);
    return resumableArea(prefix, id);
  };

  async function segments(id: string): Promise<Map<number, { key: string; size: number }>> {
    const p = area(id);
    const out = new Map<number, { key: string; size: number }>();
    for await (const page of objectPages(s3, bucket, p)) {
      for (const o of page) {
        const start = segmentOffset(p, o.Key ?? '');
        if (start !== undefined) out.set(start, { key: o.Key as string, size: o.Size ?? 0 });
      }
    }
    return out;
  }

  async function removeAll(id: string): Promise<void> {
    const keys: string[] = [];
    for await (const page of objectPages(s3, bucket, area(id))) for (const o of page) keys.push(o.Key as string);
    await deleteKeys(s3, bucket, keys);
  }

  const put = (key: string, data: Buffer) => s3Call('Storing an upload segment', () => s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: data, ContentLength: data.length, ContentType: 'application/octet-stream' })));

  return {
    // Nothing to prepare: the first segment creates the area.
    async create(id) {
      area(id);
    },

    async append(id, offset, body, opts): Promise<AppendResult> {
      const p = area(id);
      const hash = opts.sha1 ? createHash('sha1') : undefined;
      const written: string[] = [];
      let durable = offset;
      let queued = offset;
      let parts: Buffer[] = [];
      let partBytes = 0;
      // Up to PARALLEL segments upload at once; the offset moves (and is reported) only over the
      // segments stored without a gap before them, in order.
      const inFlight: { end: number; stored: boolean; done: Promise<void> }[] = [];
      let putError: unknown;
      const advance = async () => {
        while (inFlight[0]?.stored) {
          durable = (inFlight.shift() as { end: number }).end;
          if (!hash) await opts.onDurable?.(durable);
        }
        if (putError !== undefined) throw putError;
      };
      const send = async () => {
        if (partBytes === 0) return;
        const data = parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts, partBytes);
        parts = [];
        partBytes = 0;
        const key = resumableSegmentKey(p, queued);
        queued += data.length;
        written.push(key);
        const entry = { end: queued, stored: false, done: Promise.resolve() };
        // Settles without rejecting (the error is kept): nothing may be left rejected and unwatched.
        entry.done = put(key, data).then(
          () => void (entry.stored = true),
          (e: unknown) => void (putError ??= e),
        );
        inFlight.push(entry);
        while (inFlight.length >= PARALLEL) {
          await inFlight[0]?.done;
          await advance();
        }
      };
      /** Sends what is buffered and waits until every segment is stored. */
      const flush = async () => {
        await send();
        await Promise.all(inFlight.map((e) => e.done));
        await advance();
      };
      // Drops the chunk's segments: only with a checksum, where none of them was recorded (without one,
      // each stored segment is recorded at once and only the unsent rest is dropped).
      const rollback = async () => {
        await Promise.all(inFlight.map((e) => e.done));
        if (hash) await deleteKeys(s3, bucket, written);
      };

      const reading: ChunkReading = { cut: false, received: 0 };
      for await (const bytes of chunkBytes(body, { maxBytes: opts.maxBytes, hash, dropChunk: rollback }, reading)) {
        parts.push(bytes);
        partBytes += bytes.length;
        if (partBytes >= SEGMENT) await send();
      }
      const cut = reading.cut;
      if (hash && (cut || !hash.digest().equals(opts.sha1 as Buffer))) {
        await rollback();
        return { offset, outcome: cut ? 'cut' : 'checksum_mismatch' };
      }
      await flush();
      if (hash && durable !== offset + reading.received) throw new StorageError('failed', 'The upload staging lost a segment.');
      return { offset: durable, outcome: cut ? 'cut' : 'complete' };
    },

    async commit(id, size, key, opts) {
      const all = await segments(id);
      // Only a commit removes the segments of an upload that still exists (after storing the file).
      if (size > 0 && all.size === 0) return undefined;
      // The chain from 0: leftovers of crashed appends (not on the chain) are skipped.
      const chain: { key: string; size: number }[] = [];
      for (let pos = 0; pos < size; ) {
        const s = all.get(pos);
        if (!s || s.size === 0) throw new StorageError('failed', `The staged upload is missing its bytes from offset ${pos}.`);
        chain.push(s);
        pos += s.size;
        if (pos > size) throw new StorageError('failed', 'The staged upload holds more bytes than its length.');
      }
      const read = async function* () {
        for (const s of chain) {
          const r = await s3Call('Reading an upload segment', () => s3.send(new GetObjectCommand({ Bucket: bucket, Key: s.key })));
          yield* r.Body as Readable;
        }
      };
      const writeOpts = { ifExists: opts.ifExists, sizeHint: size, maxBytes: size };
      // The backend's own claim and commit: the same collision names, atomic appearance and events as a PUT.
      // The bytes are copied inside the store (UploadPartCopy); only a gigantic upload streams through File Cloud.
      const entry = await commitFrom(
        key,
        writeOpts,
        async (keyAt, contentType) => (chain.length <= MAX_COPY_PARTS ? copySegments(s3, c, bucket, await keyAt(), contentType, chain) : receive(s3, c, bucket, keyAt, contentType, Readable.from(read()), writeOpts)),
        { beforeReplace: opts.beforeReplace },
      );
      if (entry.size !== size) throw new StorageError('failed', `The stored file holds ${entry.size} bytes, not ${size}.`);
      await removeAll(id).catch(() => undefined);
      return entry;
    },

    remove: removeAll,

    async read(id, range) {
      // Along the chain from 0, as a commit reads it: leftovers of crashed appends are not on it.
      const all = await segments(id);
      const parts: Buffer[] = [];
      for (let pos = 0; pos <= range.end; ) {
        const s = all.get(pos);
        if (!s || s.size === 0) break;
        const from = Math.max(range.start, pos);
        const to = Math.min(range.end, pos + s.size - 1);
        if (from <= to) {
          const r = await s3Call('Reading an upload segment', () => s3.send(new GetObjectCommand({ Bucket: bucket, Key: s.key, Range: `bytes=${from - pos}-${to - pos}` })));
          parts.push(Buffer.from(await r.Body!.transformToByteArray()));
        }
        pos += s.size;
      }
      return Buffer.concat(parts);
    },

    async putTail(id, offset, bytes) {
      checkTailSize(bytes);
      await put(resumableTailKey(area(id), offset), bytes);
    },

    async getTail(id, offset) {
      try {
        // A ranged GET: never more than the bound (one over it tells a record that is not ours).
        const r = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: resumableTailKey(area(id), offset), Range: `bytes=0-${MAX_TAIL_BYTES}` }));
        const bytes = Buffer.from(await r.Body!.transformToByteArray());
        if (bytes.length > MAX_TAIL_BYTES) throw new StorageError('too_large', 'An upload record is larger than any this server writes.');
        return bytes;
      } catch (e) {
        if (e instanceof StorageError) throw e;
        if (isNotFound(e)) return undefined;
        throw fromS3Error(e, 'Reading an upload record');
      }
    },

    async dropTails(id, keep) {
      const p = area(id);
      const kept = keep === undefined ? undefined : resumableTailKey(p, keep);
      const keys: string[] = [];
      for await (const page of objectPages(s3, bucket, resumableTailKey(p, ''))) for (const o of page) if (o.Key !== kept) keys.push(o.Key as string);
      await deleteKeys(s3, bucket, keys);
    },

    async list() {
      const root = resumableRoot(prefix);
      const latest = new Map<string, number>();
      for await (const page of objectPages(s3, bucket, root)) {
        for (const o of page) {
          const id = (o.Key ?? '').slice(root.length).split('/')[0] ?? '';
          if (!isUploadId(id)) continue;
          latest.set(id, Math.max(latest.get(id) ?? 0, o.LastModified?.getTime() ?? 0));
        }
      }
      return [...latest].map(([id, modified]) => ({ id, modified }));
    },
  };
}
