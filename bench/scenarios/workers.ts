/**
 * workers: the measurement behind `--workers auto` (one process on a small
 * box, one per core otherwise). File Cloud on the local disk with
 * `--workers 1` (one process) beside `--workers N`, N the cores here and at
 * least 2 (a node:cluster primary and N workers), both running at once on the
 * same data dir (SQLite, the dataset of the nginx comparison), the loads
 * alternating between them: the resident memory of every process at idle
 * after start, 4 KiB GETs (wrk, 64 connections), 4 KiB uploads (wrk, 8
 * connections) and the big file (1 and 4 streams); then the resident memory
 * and peak of every process and of each whole process tree.
 */
import os from 'node:os';
import { logIn, startFileCloud, stopFileCloud } from '../lib/file-cloud.js';
import type { Options } from '../lib/options.js';
import type { Server } from '../lib/server.js';
import { row, type Row } from '../lib/stats.js';
import type { Dataset } from './context.js';
import { IDLE_AFTER_MS } from './memory.js';
import { memDetail, memText, pairDownloads, pairGet4k, pairSanity, pairSmallPuts, type CpuDetail, type MemDetail, type Pair } from './pair.js';
import { sleep } from '../lib/processes.js';

export type WorkersRun = { rows: Row[]; workers: number; cpu: CpuDetail[]; idle: MemDetail[]; memory: MemDetail[] };

/** The count beside one process: one per core, and at least two. */
export const SEVERAL = Math.max(2, os.availableParallelism());

/** The primary first, then its workers (the process tree in the order processTree walks it). */
const roles = async (s: Server, single: boolean) => {
  const [primary, ...workers] = await s.pids();
  return [{ role: single ? 'process' : 'primary', pids: primary === undefined ? [] : [primary] }, ...workers.map((pid, i) => ({ role: `worker ${i + 1}`, pids: [pid] }))];
};

/** Rows of one memory reading of both set-ups: the one process beside the primary, each worker, and the totals. */
function memoryRows(id: string, what: string, one: MemDetail, several: MemDetail, read: 'rssMiB' | 'hwmMiB'): Row[] {
  const primary = row(`workers_${id}_primary`, `${what}, primary [--workers 1: the one process]`, 'MiB', false);
  primary.ref.push(one.processes[0]?.[read] ?? NaN);
  primary.fileCloud.push(several.processes[0]?.[read] ?? NaN);
  const each = row(`workers_${id}_worker`, `${what}, each worker`, 'MiB', false);
  each.fileCloud.push(...several.processes.slice(1).map((x) => x[read]));
  const total = row(`workers_${id}_total`, `${what}, whole process tree`, 'MiB', false);
  const sum = (m: MemDetail) => m.processes.reduce((a, x) => a + x[read], 0);
  total.ref.push(sum(one));
  total.fileCloud.push(sum(several));
  return [primary, each, total];
}

export async function workersScenario(o: Options, tmp: string, dataDir: string, data: Dataset, log: (msg: string) => void): Promise<WorkersRun> {
  let one: Server | undefined;
  let several: Server | undefined;
  try {
    const a = await startFileCloud(o, tmp, dataDir, { name: '--workers 1', logName: 'file-cloud-workers-1.log', args: ['--workers', '1'] });
    one = a.server;
    const b = await startFileCloud(o, tmp, dataDir, { name: `--workers ${SEVERAL}`, logName: `file-cloud-workers-${SEVERAL}.log`, args: ['--workers', String(SEVERAL)] });
    several = b.server;
    await sleep(IDLE_AFTER_MS);
    const idle = [await memDetail('--workers 1', await roles(one, true)), await memDetail(`--workers ${SEVERAL}`, await roles(several, false))];
    for (const m of idle) log(`${m.setup}, at idle after start: ${memText(m)}`);
    await logIn(one, a.password);
    await logIn(several, b.password);
    log(`--workers 1: pid ${one.proc.pid}; --workers ${SEVERAL}: primary ${several.proc.pid} and worker(s) ${(await several.pids()).slice(1).join(', ')}`);
    const rows: Row[] = [...memoryRows('idle_rss', `RSS at idle after start (${IDLE_AFTER_MS / 1000} s)`, idle[0] as MemDetail, idle[1] as MemDetail, 'rssMiB')];
    // --quick: one repetition (the CI smoke test only proves the path works).
    const p: Pair = { id: 'workers', tmp, data, a: one, b: several, reps: o.quick ? 1 : o.reps, seconds: o.seconds, rows, log };
    await pairSanity(p);
    const cpu = await pairGet4k(p);
    await pairSmallPuts(p, o.quick ? 200 : 2000);
    await pairDownloads(p);

    const memory = [await memDetail('--workers 1', await roles(one, true)), await memDetail(`--workers ${SEVERAL}`, await roles(several, false))];
    for (const m of memory) log(`${m.setup}: ${memText(m)}`);
    const [m1, mN] = memory as [MemDetail, MemDetail];
    rows.push(...memoryRows('rss', 'RSS after the loads', m1, mN, 'rssMiB'), ...memoryRows('hwm', 'peak RSS (VmHWM)', m1, mN, 'hwmMiB'));
    return { rows, workers: SEVERAL, cpu, idle, memory };
  } finally {
    if (several) await stopFileCloud(several);
    if (one) await stopFileCloud(one);
  }
}
