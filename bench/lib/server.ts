/** A server under test, as the load generators see it. */
import type { ChildProcess } from 'node:child_process';
import { memOf } from './processes.js';

export type Server = {
  /** 'nginx', 'File Cloud', or a File Cloud set-up ('File Cloud --workers 1', '2 nodes via nginx'…). */
  name: string;
  base: string;
  headers: Record<string, string>;
  /** URL path of a file or folder of the dataset (rel has no leading slash). */
  path(rel: string): string;
  /** URL path of the stats endpoint (HEAD). */
  statsPath: string;
  /** pids whose memory counts (File Cloud: the process and its workers; nginx: master and workers). */
  pids(): Promise<number[]>;
  proc: ChildProcess;
  /** File Cloud's log file (its own servers only). */
  logFile?: string;
};

export async function memTotal(s: Server): Promise<{ rss: number; hwm: number }> {
  const all = await Promise.all((await s.pids()).map(memOf));
  return { rss: all.reduce((a, m) => a + m.rss, 0), hwm: all.reduce((a, m) => a + m.hwm, 0) };
}

/** Memory of each process of `s`, in the order of pids() (File Cloud: the primary first). */
export async function memEach(s: Server): Promise<{ pid: number; rss: number; hwm: number }[]> {
  const pids = await s.pids();
  return Promise.all(pids.map(async (pid) => ({ pid, ...(await memOf(pid)) })));
}
