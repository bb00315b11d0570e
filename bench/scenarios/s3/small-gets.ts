/**
 * s3get4k: 4 KiB objects, 64 at a time: File Cloud under wrk (C), the SDK in
 * a Node loop in this process (its own CPU cost counts against it: see
 * docs/performance.md).
 */
import { wants } from '../../lib/options.js';
import { BenchError } from '../../lib/paths.js';
import { getBytes, loop } from '../../lib/s3-direct.js';
import { cell, row } from '../../lib/stats.js';
import { wrk } from '../../lib/wrk.js';
import { fcKey, type S3Context } from './context.js';

const CONNECTIONS = 64;

export async function s3SmallGets(c: S3Context): Promise<void> {
  if (!wants(c.o, 's3get4k')) return;
  const names = c.data.smallNames;
  const label = `4 KiB GET (${names.length} objects)`;
  // Issue 30: ≥ 0.8× the SDK's direct GETs.
  const rps = row('s3_get4k_rps', `${label}, ${CONNECTIONS} connections`, 'req/s', true, { kind: 'ratio_at_least', value: 0.8 }, '[File Cloud: wrk; direct: Node loop]');
  const p50 = row('s3_get4k_p50', `${label}, p50 latency`, 'ms', false);
  const p99 = row('s3_get4k_p99', `${label}, p99 latency`, 'ms', false);
  c.rows.push(rps, p50, p99);
  const keys = names.map((n) => fcKey(`small/${n}`));
  const direct = (seconds: number) =>
    loop(CONNECTIONS, seconds, async (i) => {
      const key = keys[i % keys.length] as string;
      const bytes = await getBytes(c.s3, c.bucket, key);
      if (bytes !== 4096) throw new BenchError(`direct: GetObject ${key} gave ${bytes} bytes`);
    });
  const viaFc = (seconds: number, warmup: boolean) => wrk(c.fc, c.tmp, { name: 's3-get4k', method: 'GET', paths: names.map((n) => c.fc.path(`small/${n}`)), connections: CONNECTIONS, seconds, warmup });
  await direct(1); // warm-up
  await viaFc(1, true);
  for (let i = 0; i < c.o.reps; i++) {
    for (const [r, m] of [[await direct(c.o.seconds), 'ref'], [await viaFc(c.o.seconds, false), 'fileCloud']] as const) {
      rps[m].push(r.rps);
      p50[m].push(r.p50);
      p99[m].push(r.p99);
    }
  }
  c.log(`S3 ${rps.label}: direct ${cell(rps.ref, 'req/s')}, File Cloud ${cell(rps.fileCloud, 'req/s')}; p99 ${cell(p99.ref, 'ms')} / ${cell(p99.fileCloud, 'ms')} ms`);
}
