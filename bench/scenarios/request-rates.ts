/**
 * get4k, head, pathtoken, listing: request rates and p50/p99 latency at
 * fixed connections (wrk; HEAD from Node, which wrk cannot time).
 */
import { headLoad } from '../lib/head-load.js';
import { expectStatus, request } from '../lib/http.js';
import { wants, type MetricGroup } from '../lib/options.js';
import { BenchError } from '../lib/paths.js';
import type { Server } from '../lib/server.js';
import { cell, row, type Target } from '../lib/stats.js';
import { wrk } from '../lib/wrk.js';
import { side, type Context } from './context.js';

type Rate = {
  group: MetricGroup;
  id: string;
  label: string;
  method: 'GET' | 'HEAD';
  paths: (s: Server) => string[];
  connections: number;
  targets: { rps?: Target; p99?: Target };
  /** The server as this load sees it (e.g. File Cloud without its Authorization header); default: as it is. */
  as?: (s: Server) => Server;
};

/** Issue 18: small requests (4 KiB GET, HEAD, path-token GET) at 0.3× nginx or better, p99 ≤ 10 ms. */
const SMALL_TARGETS: Rate['targets'] = { rps: { kind: 'ratio_at_least', value: 0.3 }, p99: { kind: 'fc_at_most', value: 10 } };

async function rate(c: Context, m: Rate): Promise<void> {
  const rps = row(`${m.id}_rps`, `${m.label}, ${m.connections} connections`, 'req/s', true, m.targets.rps);
  const p50 = row(`${m.id}_p50`, `${m.label}, p50 latency`, 'ms', false);
  const p99 = row(`${m.id}_p99`, `${m.label}, p99 latency`, 'ms', false, m.targets.p99);
  c.rows.push(rps, p50, p99);
  const load = (s: Server, seconds: number, warmup: boolean) => {
    const target = m.as ? m.as(s) : s;
    return m.method === 'HEAD' ? headLoad(target, m.paths(s), m.connections, seconds) : wrk(target, c.tmp, { name: m.id, method: m.method, paths: m.paths(s), connections: m.connections, seconds, warmup });
  };
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

/**
 * A path token for each of `rels` (POST {"action":"MakePathToken"}, a few
 * at a time), as the URL paths that carry them: `/storage/admin/<rel>?token=…`.
 */
async function pathTokenPaths(fc: Server, rels: string[]): Promise<string[]> {
  const out: string[] = new Array<string>(rels.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let i = next++; i < rels.length; i = next++) {
        const rel = rels[i] as string;
        const r = await request(fc, 'POST', fc.path(rel), { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ action: 'MakePathToken' }) });
        expectStatus(fc, `MakePathToken ${rel}`, r, [200]);
        const token = (JSON.parse(r.body) as { token?: unknown }).token;
        if (typeof token !== 'string' || token === '') throw new BenchError(`File Cloud: MakePathToken ${rel} gave no token: ${r.body.slice(0, 200)}`);
        out[i] = `${fc.path(rel)}?token=${encodeURIComponent(token)}`;
      }
    }),
  );
  return out;
}

export async function requestRates(c: Context): Promise<void> {
  const { smallNames, manyCount } = c.data;
  const small = smallNames.map((n) => `small/${n}`);
  const smallLabel = `${smallNames.length} files`;
  if (wants(c.o, 'get4k')) await rate(c, { group: 'get4k', id: 'get4k', label: `4 KiB GET (${smallLabel})`, method: 'GET', paths: (s) => small.map((rel) => s.path(rel)), connections: 64, targets: SMALL_TARGETS });
  if (wants(c.o, 'head')) {
    await rate(c, { group: 'head', id: 'head_small', label: `HEAD of the 4 KiB files (${smallLabel}) [Node client]`, method: 'HEAD', paths: (s) => small.map((rel) => s.path(rel)), connections: 64, targets: SMALL_TARGETS });
    await rate(c, { group: 'head', id: 'head_stats', label: 'HEAD /api/stats [Node client; nginx: return 200]', method: 'HEAD', paths: (s) => [s.statsPath], connections: 64, targets: {} });
  }
  if (wants(c.o, 'pathtoken')) {
    // File Cloud: each file with its own path token and no Authorization header; nginx: the same files, plain.
    const tokenPaths = await pathTokenPaths(c.fc, small);
    const anonymous = (s: Server): Server => ({ ...s, headers: {} });
    const first = await request(anonymous(c.fc), 'GET', tokenPaths[0] as string);
    expectStatus(c.fc, 'GET with a path token, no Authorization', first, [200]);
    if (first.bytes !== 4096) throw new BenchError(`File Cloud: GET with a path token gave ${first.bytes} bytes`);
    const refused = await request(anonymous(c.fc), 'GET', c.fc.path(small[0] as string));
    if (refused.status !== 401) throw new BenchError(`File Cloud answered a GET with neither token nor Authorization with ${refused.status}`);
    await rate(c, { group: 'pathtoken', id: 'pathtoken_get4k', label: `4 KiB GET with a path token (${smallLabel}) [nginx: plain GET]`, method: 'GET', paths: (s) => (s === c.fc ? tokenPaths : small.map((rel) => s.path(rel))), connections: 64, targets: SMALL_TARGETS, as: (s) => (s === c.fc ? anonymous(s) : s) });
  }
  if (wants(c.o, 'listing')) await rate(c, { group: 'listing', id: 'listing', label: `${manyCount.toLocaleString('en-US')}-entry listing`, method: 'GET', paths: (s) => [s.path('many/')], connections: 8, targets: { rps: { kind: 'ratio_at_least', value: 1.0 } } });
}
