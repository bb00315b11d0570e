import type { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  type CompletedPart,
  CreateMultipartUploadCommand,
  DeleteObjectsCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type PutObjectCommandInput,
  UploadPartCopyCommand,
  type _Object,
  type S3Client,
} from '@aws-sdk/client-s3';
import { contentTypeFor } from '../../lib/mime.js';
import { StorageError } from '../backend.js';
import { s3Call } from './client.js';
import { copySource } from './keys.js';

/** A GetObject answer's body of `length` bytes, read whole (a body cut short is an error, never fewer bytes). */
export function bodyBytes(body: Readable, length: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    body.on('data', (c: Buffer) => {
      chunks.push(c);
      size += c.length;
    });
    body.once('error', reject);
    body.once('end', () => {
      if (size !== length) reject(new StorageError('unavailable', `The object store sent ${size} of ${length} bytes.`));
      else resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
    });
  });
}

/** What a PutObject's answer says of the object it stored: its ETag, and the answer's `Date` (whole seconds), when sent. */
export type Stored = { readonly etag: string; readonly date: Date | undefined };

/**
 * One PutObject, with the store's `Date` header of its answer, which the SDK drops: a PutObject
 * answers without the object's time, and this spares the HEAD that would ask for it
 * (docs/storage.md, "Dates of new files").
 */
export async function putObject(s3: S3Client, input: PutObjectCommandInput, what = 'Storing the file'): Promise<Stored> {
  const command = new PutObjectCommand(input);
  let date: string | undefined;
  command.middlewareStack.add(
    (next) => async (args) => {
      const r = await next(args);
      date = (r.response as { headers?: Record<string, string | undefined> } | undefined)?.headers?.date;
      return r;
    },
    { step: 'deserialize', name: 'answerDate' },
  );
  const r = await s3Call(what, () => s3.send(command));
  const at = date === undefined ? Number.NaN : Date.parse(date);
  return { etag: r.ETag ?? '""', date: Number.isNaN(at) ? undefined : new Date(at) };
}

/** Largest object CopyObject copies in one request; beyond it, UploadPartCopy. */
const COPY_LIMIT = 5 * 1024 ** 3;
const COPY_PART = 512 * 1024 ** 2;

/** Every object whose key starts with prefix, in pages of up to 1,000 (byte order). */
export async function* objectPages(s3: S3Client, bucket: string, prefix: string): AsyncGenerator<_Object[]> {
  let token: string | undefined;
  do {
    const r = await s3Call('Listing objects', () => s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token })));
    yield r.Contents ?? [];
    token = r.IsTruncated ? r.NextContinuationToken : undefined;
  } while (token);
}

/** Deletes keys in batches of 1,000 (DeleteObjects); a key that is already gone counts as deleted. */
export async function deleteKeys(s3: S3Client, bucket: string, keys: readonly string[]): Promise<void> {
  for (let i = 0; i < keys.length; i += 1000) {
    const batch = keys.slice(i, i + 1000);
    const r = await s3Call('Deleting objects', () => s3.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true } })));
    if (r.Errors?.length) throw new StorageError('failed', `Deleting objects failed: ${r.Errors[0]?.Code ?? 'unknown'} for ${r.Errors.length} key(s).`);
  }
}

/**
 * Adds radosgw's own name of the copy-source ETag condition to a copy's
 * request: radosgw (16 and older) reads `x-amz-copy-if-match` and ignores the
 * standard `x-amz-copy-source-if-match` (which the command sends), so
 * without it a conditional copy there copies whatever version is current.
 */
function radosgwIfMatch(request: unknown, ifMatch: string | undefined): void {
  const headers = (request as { headers?: Record<string, string> }).headers;
  if (headers && ifMatch !== undefined) headers['x-amz-copy-if-match'] = ifMatch;
}
const RADOSGW_IF_MATCH = { step: 'build', name: 'radosgwCopyIfMatch' } as const;

/**
 * The user metadata that carries a file's modification time as its client set it (SFTP's setstat,
 * `sftp -p`, `rsync -t` over sshfs): the key and format rclone's S3 backend uses (seconds since 1970,
 * a decimal fraction allowed), so either tool reads the other's times.
 */
export const MTIME = 'mtime';
export const mtimeValue = (when: Date): string => String(when.getTime() / 1000);
/** The time in an object's metadata; undefined when there is none or it is not a time. */
export function mtimeOf(metadata: Record<string, string> | undefined): Date | undefined {
  const raw = metadata?.[MTIME];
  const seconds = raw === undefined || raw.trim() === '' ? Number.NaN : Number(raw);
  return Number.isFinite(seconds) ? new Date(Math.round(seconds * 1000)) : undefined;
}

/**
 * Server-side copy of one object. The copy's Content-Type follows its new
 * name; its user metadata (the client's time, MTIME) goes along: `metadata`
 * when given replaces it, else a copy under a name of the same type copies
 * it whole, and one whose type changes gets none. Objects over 5 GiB are
 * copied in 512 MiB UploadPartCopy ranges.
 */
export async function copyObject(s3: S3Client, bucket: string, from: string, to: string, size: number, ifMatch?: string, metadata?: Record<string, string>): Promise<void> {
  const ContentType = to.endsWith('/') ? 'application/x-directory' : contentTypeFor(to);
  const sameType = ContentType === (from.endsWith('/') ? 'application/x-directory' : contentTypeFor(from));
  // With ifMatch the store refuses (412) to copy any version but the one measured, so the copy is never bigger than its size says.
  const CopySourceIfMatch = ifMatch;
  if (size <= COPY_LIMIT) {
    const input = metadata === undefined && sameType && from !== to ? { MetadataDirective: 'COPY' as const } : { MetadataDirective: 'REPLACE' as const, ContentType, Metadata: metadata };
    const command = new CopyObjectCommand({ Bucket: bucket, Key: to, CopySource: copySource(bucket, from), CopySourceIfMatch, ...input });
    command.middlewareStack.add((next) => (args) => (radosgwIfMatch(args.request, ifMatch), next(args)), RADOSGW_IF_MATCH);
    await s3Call('Copying an object', () => s3.send(command));
    return;
  }
  // A multipart copy starts with no metadata of its own: the source's is asked once (a copy this large is rare).
  const Metadata = metadata ?? (sameType ? (await s3Call('Copying an object', () => s3.send(new HeadObjectCommand({ Bucket: bucket, Key: from })))).Metadata : undefined);
  const created = await s3Call('Copying an object', () => s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: to, ContentType, Metadata })));
  const parts: CompletedPart[] = [];
  try {
    await copyParts();
  } catch (e) {
    // A part refused (the source changed: 412) or failed: the upload goes, nothing of it is left in the store.
    await s3.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: to, UploadId: created.UploadId })).catch(() => undefined);
    throw e;
  }
  await s3Call('Copying an object', () => s3.send(new CompleteMultipartUploadCommand({ Bucket: bucket, Key: to, UploadId: created.UploadId, MultipartUpload: { Parts: parts } })));

  async function copyParts() {
    for (let start = 0, n = 1; start < size; start += COPY_PART, n++) {
      const end = Math.min(start + COPY_PART, size) - 1;
      const command = new UploadPartCopyCommand({ Bucket: bucket, Key: to, UploadId: created.UploadId, PartNumber: n, CopySource: copySource(bucket, from), CopySourceIfMatch, CopySourceRange: `bytes=${start}-${end}` });
      command.middlewareStack.add((next) => (args) => (radosgwIfMatch(args.request, ifMatch), next(args)), RADOSGW_IF_MATCH);
      const r = await s3Call('Copying an object', () => s3.send(command));
      parts.push({ PartNumber: n, ETag: r.CopyPartResult?.ETag });
    }
  }
}
