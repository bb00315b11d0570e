import { randomUUID } from 'node:crypto';
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { Coordination } from '../coordination.js';
import { tryHold, tryHoldAll, waitFreeWithin } from '../coordination.js';
import { s3Call } from './client.js';
import { copyObject, deleteKeys, objectPages } from './objects.js';

export const MOVE_JOURNAL = 's3-folder-move';

/**
 * A folder move on S3 is many requests (copy every key, then delete every
 * source key), so it runs as a journaled job: the record is written before
 * the first request and names the phase reached; whoever finds a record
 * whose lease is free (its process died) finishes it from that phase. Every
 * phase is idempotent, so running one twice is harmless. The tree is never
 * half moved without a record of it; readers may see a move in progress.
 */
export type MoveJob = {
  readonly bucket: string;
  /** Source folder prefix, ending in '/'. */
  readonly from: string;
  /** Destination name (object key of the folder, no trailing '/'). */
  readonly to: string;
  /** Marker that keeps the source's parent folder when it becomes empty, or null (user root). */
  readonly parentMarker: string | null;
  readonly phase: 'clear' | 'copy' | 'delete';
};

export async function startFolderMove(s3: S3Client, c: Coordination, job: MoveJob): Promise<void> {
  const id = randomUUID();
  const lease = await tryHold(c, `${MOVE_JOURNAL}:${id}`);
  await c.journal.put({ id, kind: MOVE_JOURNAL, data: JSON.stringify(job), now: (c.now ?? Date.now)() });
  try {
    await runPhases(s3, c, id, job);
  } finally {
    await lease?.release();
  }
}

/**
 * Finishes moves whose process died: records not updated for staleMs whose lease is free. `editsOf` names
 * the edit leases the move's first run held (its source's and its destination's): held again while it
 * resumes, so a rescan's walk leaves its halfway destination to it (busy-paths.ts) and a change inside
 * either steps back or is waited for, as around the first run. A move one of whose leases is held now
 * is left to the next sweep.
 */
export async function resumeFolderMoves(s3: S3Client, c: Coordination, staleMs: number, editsOf: (job: MoveJob) => readonly string[] = () => []): Promise<number> {
  const now = (c.now ?? Date.now)();
  let finished = 0;
  for (const record of await c.journal.list(MOVE_JOURNAL, now - staleMs, 100)) {
    const lease = await tryHold(c, `${MOVE_JOURNAL}:${record.id}`);
    if (!lease) continue;
    try {
      const current = await c.journal.get(record.id);
      if (current) {
        const job = JSON.parse(current.data) as MoveJob;
        const own = editsOf(job);
        const edits = await tryHoldAll(c, own);
        if (!edits) continue;
        try {
          // The changes below either end that began before the leases were taken end before a key is listed (the first run's settle).
          for (const name of own) await waitFreeWithin(c, `${name}/`, own);
          await runPhases(s3, c, record.id, job);
        } finally {
          await edits.release();
        }
      }
      finished++;
    } finally {
      await lease.release();
    }
  }
  return finished;
}

async function runPhases(s3: S3Client, c: Coordination, id: string, job: MoveJob): Promise<void> {
  const now = c.now ?? Date.now;
  const step = async (phase: MoveJob['phase']) => {
    job = { ...job, phase };
    await c.journal.update(id, JSON.stringify(job), now());
  };
  if (job.phase === 'clear') {
    // overwrite: what was at the destination goes first, file and folder alike.
    await deleteKeys(s3, job.bucket, [job.to]);
    for await (const page of objectPages(s3, job.bucket, `${job.to}/`)) await deleteKeys(s3, job.bucket, page.map((o) => o.Key as string));
    await step('copy');
  }
  if (job.phase === 'copy') {
    // The destination's marker first: the moved folder exists even if it is empty.
    await s3Call('Creating a folder', () => s3.send(new PutObjectCommand({ Bucket: job.bucket, Key: `${job.to}/`, Body: '', ContentLength: 0, ContentType: 'application/x-directory' })));
    for await (const page of objectPages(s3, job.bucket, job.from)) {
      for (const o of page) {
        const rest = (o.Key as string).slice(job.from.length);
        if (rest !== '') await copyObject(s3, job.bucket, o.Key as string, `${job.to}/${rest}`, o.Size ?? 0);
      }
      await c.journal.update(id, JSON.stringify(job), now());
    }
    await step('delete');
  }
  if (job.parentMarker) {
    const Key = job.parentMarker;
    await s3Call('Keeping the parent folder', () => s3.send(new PutObjectCommand({ Bucket: job.bucket, Key, Body: '', ContentLength: 0, ContentType: 'application/x-directory' })));
  }
  for await (const page of objectPages(s3, job.bucket, job.from)) await deleteKeys(s3, job.bucket, page.map((o) => o.Key as string));
  await c.journal.delete(id);
}
