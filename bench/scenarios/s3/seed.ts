/** A fresh bucket with File Cloud's part of the dataset: big.bin, small/ (4 KiB objects), many/ (empty objects), up/. */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { S3Client } from '@aws-sdk/client-s3';
import { createBucket, putMany, putMultipart } from '../../lib/s3-direct.js';
import type { Dataset } from '../context.js';
import { fcKey } from './context.js';

export const manyName = (i: number): string => `e${String(i).padStart(5, '0')}.txt`;

/** Creates the bucket and uploads the objects; returns its name. */
export async function seed(s3: S3Client, data: Dataset, manyCount: number): Promise<string> {
  const bucket = `fc-bench-${randomBytes(6).toString('hex')}`;
  await createBucket(s3, bucket);
  await putMultipart(s3, bucket, fcKey('big.bin'), join(data.dir, 'big.bin'), data.bigSize);
  await putMany(s3, bucket, data.smallNames.map((n) => fcKey(`small/${n}`)), (key) => readFile(join(data.dir, 'small', key.slice(key.lastIndexOf('/') + 1))));
  const empty = Buffer.alloc(0);
  await putMany(s3, bucket, [fcKey('up/'), ...Array.from({ length: manyCount }, (_, i) => fcKey(`many/${manyName(i)}`))], () => empty);
  return bucket;
}
