/**
 * Memory of each process, File Cloud with its defaults beside nginx: the
 * resident memory at idle right after start (before any request), and the
 * whole run's peak (VmHWM) — the largest process against issue 18's 150 MiB,
 * the sum against issue 53's 256 MiB.
 */
import { sleep } from '../lib/processes.js';
import { MiB } from '../lib/paths.js';
import { memEach, type Server } from '../lib/server.js';
import { row, type Row } from '../lib/stats.js';
import type { Context } from './context.js';

/** Issue 18: peak RSS of the server ≤ 150 MiB per process (primary and each worker). */
export const PEAK_PER_PROCESS_MIB = 150;
/** Issue 53, memory with the default settings: the whole process tree ≤ 128 MiB at idle after start, ≤ 256 MiB at its peak over the run. */
export const IDLE_TREE_MIB = 128;
export const PEAK_TREE_MIB = 256;
/** How long after its listening line a server is left alone before its idle memory is read: its start-up work (first run, migrations, the first collections) is over by then. */
export const IDLE_AFTER_MS = 5000;

export type PeakMemory = { processes: { role: string; pid: number; hwmMiB: number; rssMiB: number }[]; largestMiB: number; totalMiB: number };

/** The processes of `s` with their roles: the first pid is the primary (nginx: master), the others its workers. */
async function peaks(s: Server, primaryRole: string): Promise<PeakMemory> {
  const each = await memEach(s);
  const processes = each.map((m, i) => ({ role: each.length === 1 ? 'process' : i === 0 ? primaryRole : `worker ${i}`, pid: m.pid, hwmMiB: m.hwm / MiB, rssMiB: m.rss / MiB }));
  return { processes, largestMiB: Math.max(...processes.map((p) => p.hwmMiB)), totalMiB: processes.reduce((a, p) => a + p.hwmMiB, 0) };
}

/** Adds the peak rows to `c.rows` (read at the end of the run: VmHWM is each process's peak since it started). */
export async function peakMemory(c: Context): Promise<PeakMemory> {
  const fc = await peaks(c.fc, 'primary');
  const ng = await peaks(c.ng, 'master');
  const rows: Row[] = [];
  const primary = row('peak_rss_primary', `peak RSS (VmHWM), ${fc.processes.length === 1 ? 'the one process' : 'primary'}`, 'MiB', false, undefined, '[nginx: master]');
  primary.ref.push(ng.processes[0]?.hwmMiB ?? NaN);
  primary.fileCloud.push(fc.processes[0]?.hwmMiB ?? NaN);
  rows.push(primary);
  const workers = Math.max(fc.processes.length, ng.processes.length) - 1;
  for (let i = 1; i <= workers; i++) {
    const w = row(`peak_rss_worker_${i}`, `peak RSS (VmHWM), worker ${i}`, 'MiB', false);
    const n = ng.processes[i];
    const f = fc.processes[i];
    if (n) w.ref.push(n.hwmMiB);
    if (f) w.fileCloud.push(f.hwmMiB);
    rows.push(w);
  }
  const largest = row('peak_rss_largest', 'peak RSS (VmHWM), largest process', 'MiB', false, { kind: 'fc_at_most', value: PEAK_PER_PROCESS_MIB });
  largest.ref.push(ng.largestMiB);
  largest.fileCloud.push(fc.largestMiB);
  const total = row('peak_rss', 'peak RSS (VmHWM), whole run, summed over the processes', 'MiB', false, { kind: 'fc_at_most', value: PEAK_TREE_MIB }, '[nginx: master + workers]');
  total.ref.push(ng.totalMiB);
  total.fileCloud.push(fc.totalMiB);
  rows.push(largest, total);
  c.rows.push(...rows);
  const text = (m: PeakMemory) => m.processes.map((p) => `${p.role} ${p.hwmMiB.toFixed(0)}`).join(' + ');
  c.log(`peak RSS (VmHWM) per process: File Cloud ${text(fc)} = ${fc.totalMiB.toFixed(0)} MiB; nginx ${text(ng)} = ${ng.totalMiB.toFixed(0)} MiB`);
  return fc;
}

/**
 * Adds the idle rows to `c.rows`: each process's RSS and the tree's, read
 * IDLE_AFTER_MS after the servers started, before any request (File Cloud's
 * admin not yet signed in).
 */
export async function idleMemory(c: Context): Promise<PeakMemory> {
  await sleep(IDLE_AFTER_MS);
  const fc = await peaks(c.fc, 'primary');
  const ng = await peaks(c.ng, 'master');
  const rows: Row[] = [];
  const count = Math.max(fc.processes.length, ng.processes.length);
  for (let i = 0; i < count; i++) {
    const f = fc.processes[i];
    const n = ng.processes[i];
    const r = row(`idle_rss_${i === 0 ? 'first' : `worker_${i}`}`, `RSS at idle after start, ${i === 0 ? (fc.processes.length === 1 ? 'the one process' : 'primary') : `worker ${i}`}`, 'MiB', false, undefined, i === 0 ? '[nginx: master]' : undefined);
    if (n) r.ref.push(n.rssMiB);
    if (f) r.fileCloud.push(f.rssMiB);
    rows.push(r);
  }
  const tree = row('idle_rss', 'RSS at idle after start, whole process tree', 'MiB', false, { kind: 'fc_at_most', value: IDLE_TREE_MIB }, '[nginx: master + workers]');
  tree.ref.push(ng.processes.reduce((a, p) => a + p.rssMiB, 0));
  tree.fileCloud.push(fc.processes.reduce((a, p) => a + p.rssMiB, 0));
  rows.push(tree);
  c.rows.push(...rows);
  const text = (m: PeakMemory) => m.processes.map((p) => `${p.role} ${p.rssMiB.toFixed(0)}`).join(' + ');
  c.log(`RSS at idle, ${IDLE_AFTER_MS / 1000} s after start: File Cloud ${text(fc)} MiB; nginx ${text(ng)} MiB`);
  return fc;
}
