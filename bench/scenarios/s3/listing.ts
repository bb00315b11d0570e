/** s3listing: the many/ folder, one client: File Cloud's folder JSON against ListObjectsV2 pages with delimiter '/'. */
import { expectStatus, request } from '../../lib/http.js';
import { wants } from '../../lib/options.js';
import { BenchError } from '../../lib/paths.js';
import { listFolder, loop } from '../../lib/s3-direct.js';
import { cell, row } from '../../lib/stats.js';
import { fcKey, type S3Context } from './context.js';

export async function s3Listing(c: S3Context): Promise<void> {
  if (!wants(c.o, 's3listing')) return;
  const label = `${c.manyCount.toLocaleString('en-US')}-key folder listing`;
  const rps = row('s3_listing_rps', `${label}, 1 client`, 'req/s', true, { kind: 'ratio_at_least', value: 0.8 });
  const p50 = row('s3_listing_p50', `${label}, p50 latency`, 'ms', false);
  c.rows.push(rps, p50);
  const direct = (seconds: number) =>
    loop(1, seconds, async () => {
      const n = await listFolder(c.s3, c.bucket, fcKey('many/'));
      if (n !== c.manyCount) throw new BenchError(`direct: listing has ${n} entries, expected ${c.manyCount}`);
    });
  const viaFc = (seconds: number) =>
    loop(1, seconds, async () => {
      const r = await request(c.fc, 'GET', c.fc.path('many/'));
      expectStatus(c.fc, 'listing', r, [200]);
    });
  await direct(0); // warm-up: one listing each
  await viaFc(0);
  for (let i = 0; i < c.o.reps; i++) {
    for (const [r, m] of [[await direct(c.o.seconds), 'ref'], [await viaFc(c.o.seconds), 'fileCloud']] as const) {
      rps[m].push(r.rps);
      p50[m].push(r.p50);
    }
  }
  c.log(`S3 ${rps.label}: direct ${cell(rps.ref, 'req/s')}, File Cloud ${cell(rps.fileCloud, 'req/s')}; p50 ${cell(p50.ref, 'ms')} / ${cell(p50.fileCloud, 'ms')} ms`);
}
