/**
 * The reference for `--storage s3`: the same operations done directly with
 * the AWS SDK (path-style, checksums only when required, as File Cloud's own
 * client in src/storage/s3/client.ts).
 */
import { open } from 'node:fs/promises';
import { Agent } from 'node:http';
import type { Readable } from 'node:stream';
import {
  CompleteMultipartUploadCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteBucketCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
  type CompletedPart,
} from '@aws-sdk/client-s3';
import { radosgwCompatible } from '../../src/storage/s3/client.js';
import { BenchError, MiB } from './paths.js';
import type { S3Service } from './s3-service.js';
import { percentiles, type WrkResult } from './wrk.js';

/** The shape of File Cloud's uploads (src/storage/s3/upload.ts): 16 MiB parts, 3 in flight. */
export const PART_SIZE = 16 * MiB;
export const PARALLEL_PARTS = 3;

export function s3Client(s: S3Service): S3Client {
  return new S3Client({
    endpoint: s.endpoint,
    region: s.region,
    credentials: { accessKeyId: s.accessKeyId, secretAccessKey: s.secretAccessKey },
    ...radosgwCompatible(),
    // Keep-alive and enough sockets for 64 requests at once, like File Cloud's client.
    requestHandler: { httpAgent: new Agent({ keepAlive: true, maxSockets: 256 }), requestTimeout: 600_000 },
  });
}

export async function createBucket(s3: S3Client, bucket: string): Promise<void> {
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
}

/** GetObject, reading the body to the end; returns its byte count. */
export async function getBytes(s3: S3Client, bucket: string, key: string): Promise<number> {
  const r = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  let bytes = 0;
  for await (const chunk of r.Body as Readable) bytes += (chunk as Buffer).length;
  return bytes;
}

/** One object's size (HeadObject), or undefined when there is none. */
export async function sizeOf(s3: S3Client, bucket: string, key: string): Promise<number | undefined> {
  try {
    return (await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }))).ContentLength;
  } catch (e) {
    if ((e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return undefined;
    throw e;
  }
}

/** A file as a multipart upload: PART_SIZE parts read one after another, PARALLEL_PARTS uploading at once. */
export async function putMultipart(s3: S3Client, bucket: string, key: string, file: string, size: number): Promise<void> {
  const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key, ContentType: 'application/octet-stream' }));
  const parts: CompletedPart[] = [];
  const inFlight = new Set<Promise<void>>();
  let failure: unknown;
  const fh = await open(file, 'r');
  try {
    for (let pos = 0, n = 1; pos < size; pos += PART_SIZE, n++) {
      const len = Math.min(PART_SIZE, size - pos);
      const buf = Buffer.allocUnsafe(len);
      const { bytesRead } = await fh.read(buf, 0, len, pos);
      if (bytesRead !== len) throw new BenchError(`short read of ${file} at ${pos}`);
      const PartNumber = n;
      const p: Promise<void> = s3
        .send(new UploadPartCommand({ Bucket: bucket, Key: key, UploadId, PartNumber, Body: buf, ContentLength: len }))
        .then((r) => void parts.push({ PartNumber, ETag: r.ETag }))
        .catch((e: unknown) => void (failure ??= e))
        .finally(() => inFlight.delete(p));
      inFlight.add(p);
      while (inFlight.size >= PARALLEL_PARTS) await Promise.race(inFlight);
      if (failure !== undefined) throw failure;
    }
    await Promise.all(inFlight);
    if (failure !== undefined) throw failure;
  } finally {
    await fh.close();
  }
  parts.sort((a, b) => (a.PartNumber ?? 0) - (b.PartNumber ?? 0));
  await s3.send(new CompleteMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId, MultipartUpload: { Parts: parts } }));
}

/** PutObject of every key (`body(key)`), `concurrency` at a time. */
export async function putMany(s3: S3Client, bucket: string, keys: string[], body: (key: string) => Promise<Buffer> | Buffer, concurrency = 32): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < keys.length) {
        const Key = keys[next++] as string;
        const Body = await body(Key);
        await s3.send(new PutObjectCommand({ Bucket: bucket, Key, Body, ContentLength: Body.length }));
      }
    }),
  );
}

/** DeleteObjects in batches of 1,000. */
export async function deleteMany(s3: S3Client, bucket: string, keys: string[]): Promise<void> {
  for (let i = 0; i < keys.length; i += 1000) {
    const r = await s3.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: keys.slice(i, i + 1000).map((Key) => ({ Key })), Quiet: true } }));
    if (r.Errors?.length) throw new BenchError(`DeleteObjects: ${r.Errors[0]?.Code} for ${r.Errors.length} key(s)`);
  }
}

/** Deletes every object of a bench bucket, then the bucket (a store from the environment stays clean). */
export async function emptyBucket(s3: S3Client, bucket: string): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    const r = await s3.send(new ListObjectsV2Command({ Bucket: bucket }));
    const keys = (r.Contents ?? []).map((o) => o.Key as string);
    if (keys.length === 0) break;
    await deleteMany(s3, bucket, keys);
  }
  await s3.send(new DeleteBucketCommand({ Bucket: bucket }));
}

/** One folder listing as File Cloud makes it: ListObjectsV2 with delimiter '/', every page; returns the entry count. */
export async function listFolder(s3: S3Client, bucket: string, prefix: string): Promise<number> {
  let token: string | undefined;
  let n = 0;
  do {
    const r = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, Delimiter: '/', ContinuationToken: token }));
    n += (r.Contents?.length ?? 0) + (r.CommonPrefixes?.length ?? 0);
    token = r.IsTruncated ? r.NextContinuationToken : undefined;
  } while (token);
  return n;
}

/**
 * `concurrency` loops, each doing `op` one at a time for `seconds` (every
 * result checked by `op`): the Node counterpart of a wrk run.
 */
export async function loop(concurrency: number, seconds: number, op: (i: number) => Promise<void>): Promise<WrkResult> {
  const latencies: number[] = [];
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  let i = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      // Each loop does at least one operation, however short `seconds`.
      for (let n = 0; n < 10_000_000 && (n === 0 || performance.now() < end); n++) {
        const start = performance.now();
        await op(i++);
        latencies.push(performance.now() - start);
      }
    }),
  );
  const elapsed = (performance.now() - t0) / 1000;
  return { rps: latencies.length / elapsed, ...percentiles(latencies), requests: latencies.length };
}
