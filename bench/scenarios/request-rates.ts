/**
 * get4k, head, pathtoken, listing: request rates and p50/p99 latency at
 * fixed connections (wrk; HEAD from Node, which wrk cannot time).
 */
import { mkdir, readFile, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { headLoad } from '../lib/head-load.js';
import { servingProcesses, startNodeCeiling } from '../lib/node-ceiling.js';
import { cpuSeconds, sleep, stopChild, waitFor } from '../lib/processes.js';
import { expectStatus, request } from '../lib/http.js';
import { wants, type MetricGroup } from '../lib/options.js';
import { BenchError, USER } from '../lib/paths.js';
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

/** Issue 30: File Cloud's 4 KiB GETs at 0.9× the Node ceiling or better. */
const CEILING_TARGET: Target = { kind: 'ratio_at_least', value: 0.9 };

/**
 * The 4 KiB GETs of get4k against the Node ceiling (bench/node-ceiling-server.ts:
 * a bare node:http server with File Cloud's worker count doing the contract's
 * work for an authorized GET and nothing else), on the same files, alternating.
 * The same count as the File Cloud measured (one process on a small box, as
 * `auto` is since issue 53): a ceiling of more processes than the one it is
 * compared with measures the box's cores, not what Node allows a server.
 */
async function ceilingRate(c: Context, small: string[], label: string): Promise<void> {
  const rps = row('get4k_node_ceiling_rps', `${label} against the Node ceiling, 64 connections`, 'req/s', true, CEILING_TARGET, '[reference: the Node ceiling]');
  const cpu = row('get4k_node_ceiling_cpu', `${label}: CPU per request, all processes`, 'µs', false, undefined, '[reference: the Node ceiling]');
  c.rows.push(rps, cpu);
  // The dataset is served from where it is: the ceiling's user root is a link to it (resolved once, as File Cloud does).
  const root = join(c.tmp, 'node-ceiling-get-root');
  await mkdir(root, { recursive: true });
  await symlink(c.data.dir, join(root, USER));
  const ceiling = await startNodeCeiling(c.tmp, 'get', root, servingProcesses(c.o.fcArgs));
  try {
    const first = await request(ceiling, 'GET', ceiling.path(small[0] as string));
    if (first.status !== 200 || first.bytes !== 4096) throw new BenchError(`the Node ceiling answered GET ${small[0]} with ${first.status} (${first.bytes} bytes)`);
    const pair = [ceiling, c.fc];
    const load = (s: Server, seconds: number, warmup: boolean) => wrk(s, c.tmp, { name: 'get4k-ceiling', method: 'GET', paths: small.map((rel) => s.path(rel)), connections: 64, seconds, warmup });
    for (const s of pair) await load(s, 1, true);
    for (let i = 0; i < c.o.reps; i++) {
      for (const s of i % 2 === 0 ? pair : [...pair].reverse()) {
        const pids = await s.pids();
        const cpu0 = await cpuSeconds(pids);
        const r = await load(s, c.o.seconds, false);
        const cpu1 = await cpuSeconds(pids);
        const used = pids.reduce((a, p) => a + (cpu1.get(p) ?? 0) - (cpu0.get(p) ?? 0), 0);
        const side = s === c.fc ? 'fileCloud' : 'ref';
        rps[side].push(r.rps);
        cpu[side].push((used / (r.rps * c.o.seconds)) * 1e6);
      }
    }
    c.log(`${rps.label}: Node ceiling ${cell(rps.ref, 'req/s')}, File Cloud ${cell(rps.fileCloud, 'req/s')}; CPU per request ${cell(cpu.ref, 'µs')} / ${cell(cpu.fileCloud, 'µs')} µs`);
  } finally {
    await stopChild(ceiling.proc, 'SIGTERM', 5_000);
  }
}

/**
 * Waits (up to 15 minutes) for File Cloud's log to say its first rescan of storage into the index ended (or failed).
 * That rescan (30 s after start; minutes for the dataset's 111,000 names on a loaded box) would otherwise
 * be timed as request work when these groups run early (`--only get4k`); it stays inside the run's peak.
 */
async function firstRescan(c: Context): Promise<void> {
  const log = c.fc.logFile;
  const at = c.o.fcArgs.lastIndexOf('--index-interval');
  if (log === undefined || (at !== -1 && Number(c.o.fcArgs[at + 1]) === 0)) return;
  await waitFor("File Cloud's first rescan", 15 * 60_000, async () => ((await readFile(log, 'utf8').catch(() => '')).match(/search index rescan(?:ned| failed)/) ? true : (await sleep(1000), undefined)));
}

export async function requestRates(c: Context): Promise<void> {
  const { smallNames, manyCount } = c.data;
  const small = smallNames.map((n) => `small/${n}`);
  const smallLabel = `${smallNames.length} files`;
  await firstRescan(c);
  if (wants(c.o, 'get4k')) {
    await rate(c, { group: 'get4k', id: 'get4k', label: `4 KiB GET (${smallLabel})`, method: 'GET', paths: (s) => small.map((rel) => s.path(rel)), connections: 64, targets: SMALL_TARGETS });
    await ceilingRate(c, small, `4 KiB GET (${smallLabel})`);
  }
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
