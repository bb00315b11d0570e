/**
 * The V8 flags a serving process (a worker, or the one process of
 * `--workers 1`) runs with, on top of its own command line. V8 reads them
 * only when the process starts. An operator's own choice of either on the
 * command line, or of the semi-space in NODE_OPTIONS (which refuses the
 * other), wins.
 *
 * - A young generation of half Node 20's size. Node 22 doubled V8's largest
 *   semi-space, and a busy server grows into it for no throughput we could
 *   measure (docs/performance.md "Node 24", "Figures behind the code"); half
 *   of Node 20's took a small box's peak down by as much as the index
 *   writer's thread adds to it, with the 4 KiB GET's CPU inside its spread
 *   (docs/performance.md "The upload's transaction in a thread").
 * - A young collection once a few MiB of buffers are waiting for one. Every
 *   chunk of a request body is a buffer of its own; V8 frees dead buffers
 *   only at a collection, and by default starts one for them only when they
 *   pass twice its largest semi-space, so a large upload held its dead
 *   chunks long (docs/performance.md "Memory", "Figures behind the code").
 * - The old generation collected once it has grown by half over what the
 *   last full collection left alive. V8 otherwise lets it grow by up to four
 *   times when garbage is promoted fast, and a rescan of a large tree
 *   promotes its per-batch garbage steadily: the heap's high-water mark, not
 *   its live data, set the process's peak (docs/performance.md "Memory with
 *   the default settings").
 */
export const SEMI_SPACE_MIB = 8;
export const BUFFER_TRIGGER_MIB = 2;
export const OLD_GROWTH_PERCENT = 50;

const BOUNDS: readonly { readonly flag: RegExp; readonly value: string }[] = [
  { flag: /^--max[-_]semi[-_]space[-_]size\b/, value: `--max-semi-space-size=${SEMI_SPACE_MIB}` },
  { flag: /^--scavenger[-_]max[-_]new[-_]space[-_]capacity[-_]mb\b/, value: `--scavenger-max-new-space-capacity-mb=${BUFFER_TRIGGER_MIB}` },
  { flag: /^--heap[-_]growing[-_]percent\b/, value: `--heap-growing-percent=${OLD_GROWTH_PERCENT}` },
];

export function serverExecArgv(execArgv: readonly string[], nodeOptions: string | undefined): string[] {
  const given = [...execArgv, ...(nodeOptions ?? '').split(/\s+/)];
  return [...execArgv, ...BOUNDS.filter((b) => !given.some((a) => b.flag.test(a))).map((b) => b.value)];
}
