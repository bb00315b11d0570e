import { randomUUID } from 'node:crypto';
import { HeadObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { Coordination } from '../coordination.js';
import { tryHold } from '../coordination.js';
import { isNotFound, s3Call } from './client.js';
import { copyObject, deleteKeys } from './objects.js';

export const FILE_MOVE_JOURNAL = 's3-file-move';

/**
 * A file moved between areas of the bucket (into or out of the trash) is two
 * requests, a copy and a delete: a kill between them left the file under both
 * names. So, like a folder move (folder-move.ts), it is a journaled job that
 * whoever finds it with a free lease finishes: the copy again when the source
 * is still the version recorded (its ETag), then the delete of the source.
 */
export type FileMoveJob = {
  readonly bucket: string;
  readonly from: string;
  readonly to: string;
  readonly size: number;
  /** The source's ETag when the job began: a file written at that name since is never taken along. */
  readonly etag: string;
  /** Marker that keeps the source's parent folder when it becomes empty, or null. */
  readonly parentMarker: string | null;
};

export async function startFileMove(s3: S3Client, c: Coordination, job: FileMoveJob): Promise<void> {
  const id = randomUUID();
  const lease = await tryHold(c, `${FILE_MOVE_JOURNAL}:${id}`);
  await c.journal.put({ id, kind: FILE_MOVE_JOURNAL, data: JSON.stringify(job), now: (c.now ?? Date.now)() });
  try {
    await run(s3, c, id, job, true);
  } finally {
    await lease?.release();
  }
}

/** Finishes file moves whose process died (records older than staleMs whose lease is free). */
export async function resumeFileMoves(s3: S3Client, c: Coordination, staleMs: number): Promise<void> {
  const now = (c.now ?? Date.now)();
  for (const record of await c.journal.list(FILE_MOVE_JOURNAL, now - staleMs, 100)) {
    const lease = await tryHold(c, `${FILE_MOVE_JOURNAL}:${record.id}`);
    if (!lease) continue;
    try {
      const current = await c.journal.get(record.id);
      if (current) await run(s3, c, record.id, JSON.parse(current.data) as FileMoveJob, false);
    } finally {
      await lease.release();
    }
  }
}

async function etagOf(s3: S3Client, bucket: string, key: string): Promise<string | undefined> {
  try {
    const h = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
    return h.ETag;
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}

async function run(s3: S3Client, c: Coordination, id: string, job: FileMoveJob, live: boolean): Promise<void> {
  // Resumed: the source is taken along only if it is still the version the job began with.
  const sourceIsOurs = live || (await etagOf(s3, job.bucket, job.from)) === job.etag;
  if (sourceIsOurs) {
    if (live || (await etagOf(s3, job.bucket, job.to)) === undefined) await copyObject(s3, job.bucket, job.from, job.to, job.size, job.etag);
    if (job.parentMarker) {
      const Key = job.parentMarker;
      await s3Call('Keeping the parent folder', () => s3.send(new PutObjectCommand({ Bucket: job.bucket, Key, Body: '', ContentLength: 0, ContentType: 'application/x-directory' })));
    }
    await deleteKeys(s3, job.bucket, [job.from]);
  }
  await c.journal.delete(id);
}
