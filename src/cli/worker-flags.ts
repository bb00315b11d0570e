/**
 * The V8 flags a worker starts with, on top of the primary's own.
 *
 * Node 22 doubled V8's largest young generation (a semi-space of 32 MiB instead of Node 20's 16 on
 * a 64-bit machine with 4 GiB of heap or more), and a busy worker grows into it: on the same code
 * and load each worker held ~70 MiB more than on Node 20 and the one-minute soak's memory check
 * failed (docs/performance.md "Node 24"). Capping it at Node 20's size gives that memory back; the
 * extra scavenges cost nothing we could measure. An operator's own choice, on the command line or
 * in NODE_OPTIONS, wins.
 */
export const SEMI_SPACE_MIB = 16;

export function workerExecArgv(execArgv: readonly string[], nodeOptions: string | undefined): string[] {
  const chosen = [...execArgv, ...(nodeOptions ?? '').split(/\s+/)].some((a) => /^--max[-_]semi[-_]space[-_]size\b/.test(a));
  return chosen ? [...execArgv] : [...execArgv, `--max-semi-space-size=${SEMI_SPACE_MIB}`];
}
