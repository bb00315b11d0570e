/** Child processes started by the benchmark (stopped by their own pid), waiting, ports and memory. */
import { spawnSync, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import net from 'node:net';
import { BenchError } from './paths.js';

export { descendantsOf, killLeftovers, processTree } from '../../test/kit/process-tree.js';

/** Every process started here that may still run; stopped at the end, on error and on Ctrl-C. */
export const children = new Set<ChildProcess>();

export function sleep(ms: number) {
  return new Promise((r) => setTimeout(r, ms));
}

/** Stops one process we started, by its pid: `signal`, then SIGKILL after `graceMs`. */
export async function stopChild(p: ChildProcess, signal: NodeJS.Signals = 'SIGTERM', graceMs = 15_000): Promise<void> {
  if (p.exitCode !== null || p.signalCode !== null) return void children.delete(p);
  const exited = new Promise<void>((r) => p.once('exit', () => r()));
  if (p.pid !== undefined) process.kill(p.pid, signal);
  const timer = setTimeout(() => p.pid !== undefined && p.exitCode === null && process.kill(p.pid, 'SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
  children.delete(p);
}

/** SIGTERM to every child still running, without waiting (error and signal paths). */
export function killChildren(): void {
  for (const p of children) if (p.pid !== undefined && p.exitCode === null) process.kill(p.pid, 'SIGTERM');
}

export async function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = net.createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => res(port));
    });
  });
}

export async function waitFor<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (let i = 0; i < 1000 && Date.now() < deadline; i++) {
    const v = await probe().catch(() => undefined);
    if (v !== undefined) return v;
    await sleep(100);
  }
  throw new BenchError(`${what} did not happen within ${timeoutMs / 1000} s`);
}

/** VmRSS and VmHWM of one process, in bytes (0 when it is gone). */
export async function memOf(pid: number): Promise<{ rss: number; hwm: number }> {
  try {
    const text = await readFile(`/proc/${pid}/status`, 'utf8');
    const kib = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+) kB`).exec(text)?.[1] ?? 0) * 1024;
    return { rss: kib('VmRSS'), hwm: kib('VmHWM') };
  } catch {
    return { rss: 0, hwm: 0 };
  }
}

/** Samples the resident memory of `pids()` every 20 ms until stop() (bounded count), keeping the peak. */
export function rssSampler(pids: () => Promise<number[]>, start: number): { stop(): Promise<number> } {
  let peak = start;
  let sampling = true;
  const total = async () => (await Promise.all((await pids()).map(memOf))).reduce((a, m) => a + m.rss, 0);
  const loop = (async () => {
    for (let i = 0; sampling && i < 100_000; i++) {
      peak = Math.max(peak, await total());
      await sleep(20);
    }
  })();
  return {
    async stop() {
      sampling = false;
      await loop;
      return peak;
    },
  };
}

const exitHooks = new Set<() => void>();

/**
 * A synchronous clean-up that must run even when the run ends on an error
 * or a signal (e.g. stopping daemons that are not our children). Returns
 * the clean-up itself: call it to run it now (once) and unregister it.
 */
export function atExit(fn: () => void): () => void {
  let done = false;
  const run = () => {
    if (done) return;
    done = true;
    exitHooks.delete(run);
    fn();
  };
  exitHooks.add(run);
  return run;
}

/** Runs every clean-up still registered (error and signal paths). */
export function runExitHooks(): void {
  for (const h of [...exitHooks]) h();
}

/** Clock ticks per second of /proc/<pid>/stat's times. */
export const CLK_TCK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/** CPU time (user + system) of each pid in seconds, from /proc/<pid>/stat (0 when it is gone). */
export async function cpuSeconds(pids: number[]): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  for (const pid of pids) {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    out.set(pid, stat ? (Number(f[11]) + Number(f[12])) / CLK_TCK : 0);
  }
  return out;
}
