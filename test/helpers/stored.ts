import { readdir } from 'node:fs/promises';
import { ListMultipartUploadsCommand } from '@aws-sdk/client-s3';
import { RESUMABLE_DIR } from '../../src/storage/local/staging.js';
import type { TestApp } from './app.js';
import { s3Client } from './services.js';

/** What a test app's backend really holds, read past the product's own figures. */

/** Bytes of a user's files, counted by walking their storage (what usage must equal). */
export async function bytesStored(t: TestApp, user: string): Promise<number> {
  let n = 0;
  for await (const w of t.backend.walk({ user, segments: [] })) if (w.entry.isFile) n += w.entry.size;
  return n;
}

/**
 * What a write may leave behind: data/tmp entries on disk, open multipart uploads under the app's
 * prefix on S3. `resumable: 'ignore'` leaves out the folder of open tus uploads, which are kept on purpose.
 */
export async function stagingLeft(t: TestApp, opts: { resumable?: 'count' | 'ignore' } = {}): Promise<string[]> {
  if (t.config.storage.kind !== 's3') {
    const names = await readdir(t.paths.tmp);
    return opts.resumable === 'ignore' ? names.filter((n) => n !== RESUMABLE_DIR) : names;
  }
  const { bucket, prefix } = t.config.storage;
  const s3 = s3Client();
  try {
    const r = await s3.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: prefix }));
    return (r.Uploads ?? []).map((u) => u.Key ?? '');
  } finally {
    s3.destroy();
  }
}
