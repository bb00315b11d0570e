/**
 * `--storage s3`: File Cloud serving `s3://BUCKET/fc?endpoint=…&path_style=true`
 * beside the same operations done directly with the AWS SDK, on the same
 * radosgw, in the same run, on the same objects (the direct side reads the
 * objects File Cloud serves). Starts the store if the environment names
 * none, seeds a fresh bucket, and leaves nothing behind: the objects are
 * deleted (memstore keeps them in RAM) and our radosgw is stopped.
 */
import { join } from 'node:path';
import type { S3Client } from '@aws-sdk/client-s3';
import { logIn, startFileCloud, stopFileCloud } from '../../lib/file-cloud.js';
import { expectStatus, request } from '../../lib/http.js';
import type { Options } from '../../lib/options.js';
import { BenchError } from '../../lib/paths.js';
import { emptyBucket, s3Client } from '../../lib/s3-direct.js';
import { memstoreBytes, startS3, type S3Service } from '../../lib/s3-service.js';
import type { Server } from '../../lib/server.js';
import type { Row } from '../../lib/stats.js';
import type { Dataset } from '../context.js';
import { FC_PREFIX, type S3Context } from './context.js';
import { s3Listing } from './listing.js';
import { seed } from './seed.js';
import { s3SmallGets } from './small-gets.js';
import { s3Gets, s3Puts } from './transfers.js';

export type S3Run = { rows: Row[]; store: { endpoint: string; startedHere: boolean; bucket: string } };

export async function s3Scenarios(o: Options, tmp: string, data: Dataset, log: (msg: string) => void): Promise<S3Run> {
  const manyCount = o.quick ? 1_000 : 10_000;
  const rows: Row[] = [];
  let svc: S3Service | undefined;
  let s3: S3Client | undefined;
  let bucket: string | undefined;
  let fc: Server | undefined;
  try {
    svc = await startS3(join(tmp, 's3'), memstoreBytes(data.bigSize));
    log(`S3 store at ${svc.endpoint}${svc.cephConf ? ' (radosgw started here)' : ''}`);
    s3 = s3Client(svc);
    bucket = await seed(s3, data, manyCount);
    log(`S3 bucket ${bucket} seeded`);
    const storage = `s3://${bucket}/${FC_PREFIX}?endpoint=${encodeURIComponent(svc.endpoint)}&region=${svc.region}&path_style=true`;
    const started = await startFileCloud(o, tmp, join(tmp, 'data-s3'), {
      logName: 'file-cloud-s3.log',
      args: ['--storage', storage],
      env: { AWS_ACCESS_KEY_ID: svc.accessKeyId, AWS_SECRET_ACCESS_KEY: svc.secretAccessKey, AWS_REGION: svc.region },
    });
    fc = started.server;
    await logIn(fc, started.password);
    const c: S3Context = { o, tmp, data, svc, s3, bucket, manyCount, fc, rows, log };
    await sanity(c);
    await s3Gets(c);
    await s3Puts(c);
    await s3SmallGets(c);
    await s3Listing(c);
    return { rows, store: { endpoint: svc.endpoint, startedHere: svc.cephConf !== undefined, bucket } };
  } finally {
    if (fc) await stopFileCloud(fc);
    if (s3 && bucket) await emptyBucket(s3, bucket).catch((e: unknown) => console.error(`bench: emptying S3 bucket ${bucket} failed: ${(e as Error).message}`));
    s3?.destroy();
    svc?.stop();
  }
}

/** File Cloud sees the seeded objects: the listing is complete and a small file has its 4 KiB. */
async function sanity(c: S3Context): Promise<void> {
  const l = await request(c.fc, 'GET', c.fc.path('many/'));
  expectStatus(c.fc, 'S3 listing', l, [200]);
  const n = (JSON.parse(l.body) as { entries: unknown[] }).entries.length;
  if (n !== c.manyCount) throw new BenchError(`File Cloud on S3: listing has ${n} entries, expected ${c.manyCount}`);
  const f = await request(c.fc, 'GET', c.fc.path(`small/${c.data.smallNames[0]}`));
  expectStatus(c.fc, 'S3 GET small', f, [200]);
  if (f.bytes !== 4096) throw new BenchError(`File Cloud on S3: small file has ${f.bytes} bytes`);
}
