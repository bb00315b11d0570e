/**
 * workers: File Cloud on the local disk with `--workers 1` (one process)
 * beside `--workers auto` (a node:cluster primary and one worker per core),
 * both running at once on the same data dir (SQLite, the dataset of the
 * nginx comparison), the loads alternating between them: 4 KiB GETs (wrk,
 * 64 connections) and the big file (1 and 4 streams); then the resident
 * memory of every process and of each whole process tree.
 */
import { logIn, startFileCloud, stopFileCloud } from '../lib/file-cloud.js';
import type { Options } from '../lib/options.js';
import type { Server } from '../lib/server.js';
import { row, type Row } from '../lib/stats.js';
import type { Dataset } from './context.js';
import { memDetail, memText, pairDownloads, pairGet4k, pairSanity, type CpuDetail, type MemDetail, type Pair } from './pair.js';

export type WorkersRun = { rows: Row[]; workers: number; cpu: CpuDetail[]; memory: MemDetail[] };

/** The primary first, then its workers (the process tree in the order processTree walks it). */
const roles = async (s: Server, single: boolean) => {
  const [primary, ...workers] = await s.pids();
  return [{ role: single ? 'process' : 'primary', pids: primary === undefined ? [] : [primary] }, ...workers.map((pid, i) => ({ role: `worker ${i + 1}`, pids: [pid] }))];
};

export async function workersScenario(o: Options, tmp: string, dataDir: string, data: Dataset, log: (msg: string) => void): Promise<WorkersRun> {
  let one: Server | undefined;
  let auto: Server | undefined;
  try {
    const a = await startFileCloud(o, tmp, dataDir, { name: '--workers 1', logName: 'file-cloud-workers-1.log', args: ['--workers', '1'] });
    one = a.server;
    const b = await startFileCloud(o, tmp, dataDir, { name: '--workers auto', logName: 'file-cloud-workers-auto.log', args: ['--workers', 'auto'] });
    auto = b.server;
    await logIn(one, a.password);
    await logIn(auto, b.password);
    const workers = (await auto.pids()).length - 1;
    log(`--workers 1: pid ${one.proc.pid}; --workers auto: primary ${auto.proc.pid} and ${workers} worker(s) ${(await auto.pids()).slice(1).join(', ')}`);
    const rows: Row[] = [];
    // --quick: one repetition (the CI smoke test only proves the path works).
    const p: Pair = { id: 'workers', tmp, data, a: one, b: auto, reps: o.quick ? 1 : o.reps, seconds: o.seconds, rows, log };
    await pairSanity(p);
    const cpu = await pairGet4k(p);
    await pairDownloads(p);

    const memory = [await memDetail('--workers 1', await roles(one, true)), await memDetail('--workers auto', await roles(auto, false))];
    for (const m of memory) log(`${m.setup}: ${memText(m)}`);
    const [m1, mAuto] = memory as [MemDetail, MemDetail];
    const primary = row('workers_rss_primary', 'RSS after the loads, primary [--workers 1: the one process]', 'MiB', false);
    primary.ref.push(m1.totalRssMiB);
    primary.fileCloud.push(mAuto.processes[0]?.rssMiB ?? NaN);
    const each = row('workers_rss_worker', 'RSS after the loads, each worker', 'MiB', false);
    each.fileCloud.push(...mAuto.processes.slice(1).map((x) => x.rssMiB));
    const total = row('workers_rss_total', 'RSS after the loads, total (primary + workers)', 'MiB', false);
    total.ref.push(m1.totalRssMiB);
    total.fileCloud.push(mAuto.totalRssMiB);
    const hwm = row('workers_hwm_total', 'peak RSS (VmHWM), summed over the processes', 'MiB', false);
    hwm.ref.push(m1.totalHwmMiB);
    hwm.fileCloud.push(mAuto.totalHwmMiB);
    rows.push(primary, each, total, hwm);
    return { rows, workers, cpu, memory };
  } finally {
    if (auto) await stopFileCloud(auto);
    if (one) await stopFileCloud(one);
  }
}
