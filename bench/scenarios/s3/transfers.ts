/** s3get, s3put: big.bin through File Cloud (HTTP) and directly (GetObject; a 16 MiB × 3 multipart upload), and File Cloud's RSS while it uploads. */
import { join } from 'node:path';
import { expectStatus, request } from '../../lib/http.js';
import { wants } from '../../lib/options.js';
import { BenchError, MiB } from '../../lib/paths.js';
import { rssSampler } from '../../lib/processes.js';
import { deleteMany, getBytes, putMultipart, sizeOf } from '../../lib/s3-direct.js';
import { collectGarbage } from '../../lib/s3-service.js';
import { memTotal } from '../../lib/server.js';
import { cell, row } from '../../lib/stats.js';
import { checkWritten, download } from '../../lib/transfers.js';
import { DIRECT_PREFIX, fcKey, type S3Context } from './context.js';

const mibs = (bytes: number, t0: number) => bytes / MiB / ((performance.now() - t0) / 1000);

async function directGet(c: S3Context): Promise<number> {
  const t0 = performance.now();
  const bytes = await getBytes(c.s3, c.bucket, fcKey('big.bin'));
  const r = mibs(bytes, t0);
  if (bytes !== c.data.bigSize) throw new BenchError(`direct: GetObject big.bin gave ${bytes} bytes, expected ${c.data.bigSize}`);
  return r;
}

export async function s3Gets(c: S3Context): Promise<void> {
  if (!wants(c.o, 's3get')) return;
  const { bigSize } = c.data;
  const r = row('s3_get', `${Math.round(bigSize / MiB)} MiB GET`, 'MiB/s', true, { kind: 'ratio_at_least', value: 0.8 });
  c.rows.push(r);
  await directGet(c); // warm-up: connections, code paths
  await download(c.fc, 'big.bin', bigSize, 1);
  for (let i = 0; i < c.o.reps; i++) {
    r.ref.push(await directGet(c));
    r.fileCloud.push(await download(c.fc, 'big.bin', bigSize, 1));
  }
  c.log(`S3 ${r.label}: direct ${cell(r.ref, 'MiB/s')}, File Cloud ${cell(r.fileCloud, 'MiB/s')}`);
}

/** Checks the stored size, deletes the object and has radosgw free its memory. */
async function verifyAndDrop(c: S3Context, who: string, key: string): Promise<void> {
  const size = await sizeOf(c.s3, c.bucket, key);
  if (size !== c.data.bigSize) throw new BenchError(`${who}: ${key} has ${size} bytes after the PUT, expected ${c.data.bigSize}`);
  await deleteMany(c.s3, c.bucket, [key]);
  collectGarbage(c.svc);
}

export async function s3Puts(c: S3Context): Promise<void> {
  if (!wants(c.o, 's3put')) return;
  const { bigSize } = c.data;
  const file = join(c.data.dir, 'big.bin');
  const bigMiB = Math.round(bigSize / MiB);
  const r = row('s3_put', `${bigMiB} MiB PUT`, 'MiB/s', true, { kind: 'ratio_at_least', value: 0.8 }, '[File Cloud: raw PUT; direct: multipart, 16 MiB parts × 3]');
  // (PARALLEL + 1) × 16 MiB of parts by design, plus the allowance of the local upload target.
  const growth = row('s3_put_rss_growth', `RSS growth during ${bigMiB} MiB PUT`, 'MiB', false, { kind: 'fc_at_most', value: 96 });
  const peak = row('s3_put_peak_rss', `peak RSS during ${bigMiB} MiB PUT`, 'MiB', false);
  c.rows.push(r, growth, peak);
  for (let i = 0; i < c.o.reps; i++) {
    const dkey = `${DIRECT_PREFIX}/put-${i}.bin`;
    let t0 = performance.now();
    await putMultipart(c.s3, c.bucket, dkey, file, bigSize);
    r.ref.push(mibs(bigSize, t0));
    await verifyAndDrop(c, 'direct', dkey);

    const name = `put-${i}.bin`;
    const before = (await memTotal(c.fc)).rss;
    const sampler = rssSampler(() => c.fc.pids(), before);
    t0 = performance.now();
    let res;
    let speed;
    try {
      res = await request(c.fc, 'PUT', c.fc.path(`up/${name}`), { upload: { file, size: bigSize } });
      speed = mibs(bigSize, t0);
    } finally {
      await sampler.stop();
    }
    const top = await sampler.stop();
    r.fileCloud.push(speed);
    growth.fileCloud.push((top - before) / MiB);
    peak.fileCloud.push(top / MiB);
    expectStatus(c.fc, `PUT ${name}`, res, [201]);
    checkWritten(res, name);
    await verifyAndDrop(c, 'File Cloud', fcKey(`up/${name}`));
  }
  c.log(`S3 ${r.label}: direct ${cell(r.ref, 'MiB/s')}, File Cloud ${cell(r.fileCloud, 'MiB/s')}; RSS growth ${cell(growth.fileCloud, 'MiB')} MiB, peak ${cell(peak.fileCloud, 'MiB')} MiB`);
}
