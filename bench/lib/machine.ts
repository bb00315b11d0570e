/** What the run ran on: CPUs, memory, kernel, tool versions, disk, load average. */
import { spawnSync } from 'node:child_process';
import os from 'node:os';

export function machine() {
  const cmd = (c: string) => spawnSync('sh', ['-c', c], { encoding: 'utf8' }).stdout.trim();
  return {
    nproc: os.cpus().length,
    cpu: os.cpus()[0]?.model ?? '',
    memoryGiB: Number((os.totalmem() / 1024 ** 3).toFixed(1)),
    kernel: os.release(),
    node: process.version,
    nginx: cmd('"$(command -v nginx || echo /usr/sbin/nginx)" -v 2>&1').replace(/^nginx version: /, ''),
    wrk: cmd('wrk --version 2>&1 | head -1').split(' ').slice(0, 2).join(' '),
    disk: cmd(`df -hT ${JSON.stringify(os.tmpdir())} | tail -1`),
    loadavg: os.loadavg().map((x) => Number(x.toFixed(2))),
  };
}

export type Machine = ReturnType<typeof machine>;
