/** get4k, listing, head: request rates and p50/p99 latency at fixed connections (wrk; HEAD from Node). */
import { headLoad } from '../lib/head-load.js';
import { wants, type MetricGroup } from '../lib/options.js';
import type { Server } from '../lib/server.js';
import { cell, row, type Target } from '../lib/stats.js';
import { wrk } from '../lib/wrk.js';
import { side, type Context } from './context.js';

type Rate = { group: MetricGroup; id: string; label: string; method: 'GET' | 'HEAD'; paths: (s: Server) => string[]; connections: number; targets: { rps?: Target; p99?: Target } };

async function rate(c: Context, m: Rate): Promise<void> {
  if (!wants(c.o, m.group)) return;
  const rps = row(`${m.id}_rps`, `${m.label}, ${m.connections} connections`, 'req/s', true, m.targets.rps);
  const p50 = row(`${m.id}_p50`, `${m.label}, p50 latency`, 'ms', false);
  const p99 = row(`${m.id}_p99`, `${m.label}, p99 latency`, 'ms', false, m.targets.p99);
  c.rows.push(rps, p50, p99);
  const load = (s: Server, seconds: number, warmup: boolean) =>
    m.method === 'HEAD' ? headLoad(s, m.paths(s)[0] as string, m.connections, seconds) : wrk(s, c.tmp, { name: m.id, method: m.method, paths: m.paths(s), connections: m.connections, seconds, warmup });
  for (const s of c.servers) await load(s, 1, true); // warm-up
  for (let i = 0; i < c.o.reps; i++) {
    for (const s of c.servers) {
      const r = await load(s, c.o.seconds, false);
      rps[side(c, s)].push(r.rps);
      p50[side(c, s)].push(r.p50);
      p99[side(c, s)].push(r.p99);
    }
  }
  c.log(`${rps.label}: nginx ${cell(rps.ref, 'req/s')}, File Cloud ${cell(rps.fileCloud, 'req/s')}; p99 ${cell(p99.ref, 'ms')} / ${cell(p99.fileCloud, 'ms')} ms`);
}

export async function requestRates(c: Context): Promise<void> {
  const { smallNames, manyCount } = c.data;
  await rate(c, { group: 'get4k', id: 'get4k', label: `4 KiB GET (${smallNames.length} files)`, method: 'GET', paths: (s) => smallNames.map((n) => s.path(`small/${n}`)), connections: 64, targets: { rps: { kind: 'ratio_at_least', value: 0.3 }, p99: { kind: 'fc_at_most', value: 10 } } });
  await rate(c, { group: 'listing', id: 'listing', label: `${manyCount.toLocaleString('en-US')}-entry listing`, method: 'GET', paths: (s) => [s.path('many/')], connections: 8, targets: { rps: { kind: 'ratio_at_least', value: 1.0 } } });
  await rate(c, { group: 'head', id: 'head_stats', label: 'HEAD /api/stats [Node client; nginx: return 200]', method: 'HEAD', paths: (s) => [s.statsPath], connections: 64, targets: {} });
}
