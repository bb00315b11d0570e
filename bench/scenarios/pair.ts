/**
 * Two File Cloud set-ups side by side on the same dataset, every metric
 * alternating them (as nginx and File Cloud alternate in the local
 * scenarios): `--workers 1` beside `--workers N`, or 1 node beside N
 * nodes behind nginx. The same loads as get4k and download1/download4: wrk
 * with 64 connections over the 1,000 4 KiB files, and the big file with 1
 * and 4 parallel streams from Node's http; plus the server CPU time per
 * 4 KiB GET over every process of each set-up (and of the balancer).
 * Also File Cloud with and without `--encryption-key-file` (encryption.ts).
 */
import { expectStatus, request } from '../lib/http.js';
import { BenchError, MiB } from '../lib/paths.js';
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import { CLK_TCK, cpuSeconds, memOf } from '../lib/processes.js';
import type { Server } from '../lib/server.js';
import { cell, row, type Row, type Target } from '../lib/stats.js';
import { download, settleDisk } from '../lib/transfers.js';
import { wrkPut } from '../lib/wrk-put.js';
import { wrk } from '../lib/wrk.js';
import type { Dataset } from './context.js';

export type Pair = {
  /** Short id prefix of the rows ('workers', 'nodes'). */
  id: string;
  tmp: string;
  data: Dataset;
  /** The reference column (`--workers 1`, 1 node) and the subject column (`--workers N`, N nodes). */
  a: Server;
  b: Server;
  reps: number;
  seconds: number;
  /** Other processes whose CPU is counted apart (the balancer, the services), each in its own row. */
  asides?: { id: string; label: string; pids(): Promise<number[]> }[];
  rows: Row[];
  log(msg: string): void;
};

/** Per-process CPU seconds of one wrk run, by set-up (JSON detail); `others`: the asides' and wrk's CPU seconds. */
export type CpuDetail = { setup: string; rep: number; seconds: number; requests: number; perProcess: { pid: number; cpuSeconds: number }[]; others: Record<string, number> };

/**
 * CPU seconds of this process's children that have ended and been waited
 * for (cutime + cstime of /proc/self/stat): across one wrk run, that is
 * wrk's own CPU time (nothing else we started ends meanwhile).
 */
async function endedChildrenCpu(): Promise<number> {
  const stat = await readFile('/proc/self/stat', 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[13]) + Number(f[14])) / CLK_TCK;
}

/** Before measuring: both set-ups serve a small file with its 4 KiB and the big file's size (HEAD). */
export async function pairSanity(p: Pair): Promise<void> {
  for (const s of [p.a, p.b]) {
    const f = await request(s, 'GET', s.path(`small/${p.data.smallNames[0]}`));
    expectStatus(s, 'GET small', f, [200]);
    if (f.bytes !== 4096) throw new BenchError(`${s.name}: small file has ${f.bytes} bytes`);
    const h = await request(s, 'GET', s.path('big.bin'), { headers: { range: 'bytes=0-0' } });
    expectStatus(s, 'GET big.bin (range)', h, [206]);
  }
}

const cores = os.availableParallelism();

const delta = (before: Map<number, number>, after: Map<number, number>) => [...after].map(([pid, t]) => ({ pid, cpuSeconds: t - (before.get(pid) ?? 0) }));

/**
 * 4 KiB GETs under wrk: req/s, p50, p99, and CPU per request of File Cloud
 * (every process of the set-up), of each aside and of wrk. Returns the
 * per-process CPU of every run.
 */
export async function pairGet4k(p: Pair, target?: Target): Promise<CpuDetail[]> {
  const names = p.data.smallNames;
  const label = `4 KiB GET (${names.length} files)`;
  const rps = row(`${p.id}_get4k_rps`, `${label}, 64 connections`, 'req/s', true, target);
  const p50 = row(`${p.id}_get4k_p50`, `${label}, p50 latency`, 'ms', false);
  const p99 = row(`${p.id}_get4k_p99`, `${label}, p99 latency`, 'ms', false);
  const cpu = row(`${p.id}_get4k_cpu`, `${label}, CPU per request: File Cloud, all processes`, 'µs', false);
  const asides = (p.asides ?? []).map((a) => ({ ...a, row: row(`${p.id}_get4k_cpu_${a.id}`, `${label}, CPU per request: ${a.label}`, 'µs', false) }));
  const wrkRow = row(`${p.id}_get4k_cpu_wrk`, `${label}, CPU per request: wrk (the load generator)`, 'µs', false);
  p.rows.push(rps, p50, p99, cpu, ...asides.map((a) => a.row), wrkRow);
  const detail: CpuDetail[] = [];
  const run = (s: Server, seconds: number, warmup: boolean) => wrk(s, p.tmp, { name: `${p.id}-get4k`, method: 'GET', paths: names.map((n) => s.path(`small/${n}`)), connections: 64, seconds, warmup });
  for (const s of [p.a, p.b]) await run(s, 1, true); // warm-up
  for (let i = 0; i < p.reps; i++) {
    for (const [s, side] of [[p.a, 'ref'], [p.b, 'fileCloud']] as const) {
      const pids = await s.pids();
      const asidePids = await Promise.all(asides.map((a) => a.pids()));
      const before = await cpuSeconds(pids);
      const asideBefore = await Promise.all(asidePids.map(cpuSeconds));
      const wrkBefore = await endedChildrenCpu();
      const r = await run(s, p.seconds, false);
      const wrkSeconds = (await endedChildrenCpu()) - wrkBefore;
      const per = delta(before, await cpuSeconds(pids));
      const others: Record<string, number> = {};
      for (const [j, a] of asides.entries()) {
        const used = delta(asideBefore[j] as Map<number, number>, await cpuSeconds(asidePids[j] as number[])).reduce((x, y) => x + y.cpuSeconds, 0);
        others[a.label] = used;
        a.row[side].push((used / r.requests) * 1e6);
      }
      others.wrk = wrkSeconds;
      wrkRow[side].push((wrkSeconds / r.requests) * 1e6);
      rps[side].push(r.rps);
      p50[side].push(r.p50);
      p99[side].push(r.p99);
      cpu[side].push((per.reduce((a, x) => a + x.cpuSeconds, 0) / r.requests) * 1e6);
      detail.push({ setup: s.name, rep: i, seconds: p.seconds, requests: r.requests, perProcess: per, others });
    }
  }
  const last = (s: Server) => detail.filter((d) => d.setup === s.name).at(-1);
  p.log(`${rps.label}: ${p.a.name} ${cell(rps.ref, 'req/s')}, ${p.b.name} ${cell(rps.fileCloud, 'req/s')}; p99 ${cell(p99.ref, 'ms')} / ${cell(p99.fileCloud, 'ms')} ms; File Cloud CPU per request ${cell(cpu.ref, 'µs')} / ${cell(cpu.fileCloud, 'µs')} µs`);
  for (const s of [p.a, p.b]) {
    const d = last(s);
    if (!d) continue;
    const fc = d.perProcess.map((x) => `${x.pid} ${x.cpuSeconds.toFixed(1)}`).join(', ');
    const rest = Object.entries(d.others).map(([k, v]) => `${k} ${v.toFixed(1)}`).join(', ');
    const busy = d.perProcess.reduce((a, x) => a + x.cpuSeconds, 0) + Object.values(d.others).reduce((a, x) => a + x, 0);
    p.log(`  ${s.name}, last run (${d.requests.toLocaleString('en-US')} requests in ${d.seconds} s), CPU s: File Cloud ${fc}; ${rest}; together ${busy.toFixed(1)} of ${(d.seconds * cores).toFixed(0)} core-seconds`);
  }
  return detail;
}

/**
 * `files` 4 KiB uploads over 8 keep-alive connections (wrk, raw PUTs to new
 * names), each set-up into a folder of its own per repetition, after a run
 * of each that is not counted: files/s.
 */
export async function pairSmallPuts(p: Pair, files: number, target?: Target): Promise<void> {
  const r = row(`${p.id}_put4k`, `${files.toLocaleString('en-US')} × 4 KiB uploads, 8 connections`, 'files/s', true, target);
  p.rows.push(r);
  const run = async (s: Server, tag: string) => {
    const folder = `${p.id}-put4k-${s.name.replace(/[^A-Za-z0-9]+/g, '-')}-${tag}`;
    const made = await request(s, 'POST', s.path(`${folder}/`), { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ action: 'CreateFolder' }) });
    expectStatus(s, `CreateFolder ${folder}`, made, [201]);
    settleDisk();
    return (await wrkPut(s, p.tmp, { name: folder, folder: s.path(`${folder}/`), files, fileSize: 4096, connections: 8, perRequest: 1, maxSeconds: 300 })).filesPerSecond;
  };
  for (const s of [p.a, p.b]) await run(s, 'warm-up');
  for (let i = 0; i < p.reps; i++) {
    r.ref.push(await run(p.a, String(i)));
    r.fileCloud.push(await run(p.b, String(i)));
  }
  p.log(`${r.label}: ${p.a.name} ${cell(r.ref, 'files/s')}, ${p.b.name} ${cell(r.fileCloud, 'files/s')}`);
}

/** The big file with 1 and 4 parallel streams (MiB/s). */
export async function pairDownloads(p: Pair): Promise<void> {
  const { bigSize } = p.data;
  const bigMiB = Math.round(bigSize / MiB);
  for (const streams of [1, 4]) {
    const r = row(`${p.id}_get_${streams}`, `${bigMiB} MiB GET, ${streams} stream${streams > 1 ? 's' : ''}`, 'MiB/s', true);
    p.rows.push(r);
    for (const s of [p.a, p.b]) await download(s, 'big.bin', bigSize, 1); // warm-up (page cache, code paths, connections)
    for (let i = 0; i < p.reps; i++) {
      r.ref.push(await download(p.a, 'big.bin', bigSize, streams));
      r.fileCloud.push(await download(p.b, 'big.bin', bigSize, streams));
    }
    p.log(`${r.label}: ${p.a.name} ${cell(r.ref, 'MiB/s')}, ${p.b.name} ${cell(r.fileCloud, 'MiB/s')}`);
  }
}

/** RSS of every process of a set-up: `groups` names each group of pids (the primary, each worker; or each node). */
export type MemDetail = { setup: string; processes: { role: string; pid: number; rssMiB: number; hwmMiB: number }[]; totalRssMiB: number; totalHwmMiB: number };

export async function memDetail(setup: string, groups: { role: string; pids: number[] }[]): Promise<MemDetail> {
  const processes: MemDetail['processes'] = [];
  for (const g of groups) {
    for (const pid of g.pids) {
      const m = await memOf(pid);
      processes.push({ role: g.role, pid, rssMiB: m.rss / MiB, hwmMiB: m.hwm / MiB });
    }
  }
  return { setup, processes, totalRssMiB: processes.reduce((a, x) => a + x.rssMiB, 0), totalHwmMiB: processes.reduce((a, x) => a + x.hwmMiB, 0) };
}

export const memText = (m: MemDetail): string =>
  `${m.processes.map((x) => `${x.role} ${x.rssMiB.toFixed(0)}`).join(' + ')} = ${m.totalRssMiB.toFixed(0)} MiB RSS (VmHWM sum ${m.totalHwmMiB.toFixed(0)} MiB)`;
