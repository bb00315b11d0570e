/**
 * Processes by pid under /proc: a File Cloud primary and its workers, so
 * whoever started a server (tests, the benchmark, the soak) can measure the
 * whole tree and stop every process of it by its own pid.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';

/** Start time of a process (field 22 of /proc/<pid>/stat, in clock ticks), or undefined when it is gone. */
export async function startTime(pid: number): Promise<string | undefined> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  return stat?.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
}

/** True while the process exists and is not a zombie. */
export async function alive(pid: number): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  return stat !== '' && stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
}

/** `pid` and its descendants (children of every thread, recursively; bounded): a File Cloud primary and its workers. */
export async function processTree(pid: number): Promise<number[]> {
  const out: number[] = [];
  const queue = [pid];
  while (queue.length > 0 && out.length < 256) {
    const p = queue.shift() as number;
    out.push(p);
    const tasks = await readdir(`/proc/${p}/task`).catch(() => [] as string[]);
    for (const t of tasks) {
      const kids = await readFile(`/proc/${p}/task/${t}/children`, 'utf8').catch(() => '');
      for (const k of kids.split(/\s+/).filter(Boolean)) queue.push(Number(k));
    }
  }
  return out;
}

export type ProcessId = { readonly pid: number; readonly start: string };

/**
 * The descendants of a process we started (e.g. File Cloud's workers), as
 * pid + start time so that a pid reused meanwhile is never signalled.
 */
export async function descendantsOf(pid: number): Promise<ProcessId[]> {
  const tree = (await processTree(pid)).slice(1);
  const out: ProcessId[] = [];
  for (const p of tree) {
    const start = await startTime(p);
    if (start !== undefined) out.push({ pid: p, start });
  }
  return out;
}

/** SIGKILL to each of `procs` still alive with the same start time (workers left behind by a primary that was killed). */
export async function killLeftovers(procs: readonly ProcessId[]): Promise<number> {
  let n = 0;
  for (const { pid, start } of procs) {
    if ((await startTime(pid)) !== start) continue;
    try {
      process.kill(pid, 'SIGKILL');
      n++;
    } catch {
      // gone meanwhile
    }
  }
  return n;
}

/**
 * descendantsOf, read synchronously: for the moment just before a signal,
 * so that what the children are is known while they are still ours and the
 * signal is not delayed (a test that kills mid-upload must kill at once).
 */
export function descendantsOfSync(pid: number): ProcessId[] {
  const read = (path: string): string => {
    try {
      return readFileSync(path, 'utf8');
    } catch {
      return '';
    }
  };
  const out: ProcessId[] = [];
  const queue = [pid];
  for (let seen = 0; queue.length > 0 && seen < 256; seen++) {
    const p = queue.shift() as number;
    if (p !== pid) {
      const stat = read(`/proc/${p}/stat`);
      const start = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
      if (start !== undefined && stat !== '') out.push({ pid: p, start });
    }
    let tasks: string[] = [];
    try {
      tasks = readdirSync(`/proc/${p}/task`);
    } catch {
      // gone
    }
    for (const t of tasks) for (const k of read(`/proc/${p}/task/${t}/children`).split(/\s+/).filter(Boolean)) queue.push(Number(k));
  }
  return out;
}
