import { availableParallelism, totalmem } from 'node:os';

/** What `--workers auto` looks at. */
export type Machine = { readonly cores: number; readonly memoryBytes: number };

/** Below either bound a machine is a small box (CONTRACT "Backends and nodes"). */
export const SMALL_BOX = Object.freeze({ cores: 4, memoryBytes: 4 * 1024 ** 3 });

/**
 * How many processes serve the port. `auto`: one on a small box, one per core
 * otherwise. On a small box a second process costs a whole Node process's
 * memory (and the cluster primary's besides) for little more throughput; the
 * measurement behind the bounds is in docs/performance.md ("The default
 * worker count"). A count of 1 is served by this process itself, with no
 * cluster primary.
 */
export function workerCount(setting: number | 'auto', machine: Machine): number {
  if (setting !== 'auto') return setting;
  const small = machine.cores < SMALL_BOX.cores || machine.memoryBytes < SMALL_BOX.memoryBytes;
  return small ? 1 : machine.cores;
}

/**
 * This machine as the server may use it: the cores this process may run on,
 * and the memory of the machine or of the container's memory limit, whichever
 * is less (a container on a big host is as small as its limit).
 */
export function thisMachine(): Machine {
  const limit = process.constrainedMemory();
  const total = totalmem();
  return { cores: availableParallelism(), memoryBytes: limit > 0 ? Math.min(total, limit) : total };
}
