import { performance } from 'node:perf_hooks';
import v8 from 'node:v8';
import vm from 'node:vm';

/**
 * Gives memory back once a serving process falls idle: one collection that
 * reduces V8's footprint (its young generation back to its smallest size,
 * the pages it pooled released) after start-up and after each busy spell.
 *
 * V8 has a memory reducer of its own for this, but it acts only when the
 * allocation rate is low against the collector's measured speed, and a
 * server's timers (lease renewals, webhook rounds) on a busy machine kept it
 * judging "high alloc" every 8 s for as long as we watched: the young
 * generation that start-up or a rescan had grown stayed committed while
 * nothing ran (docs/performance.md "Memory with the default settings").
 */

/** How often the event loop's utilization is sampled; one idle sample after a busy one triggers the collection. */
export const IDLE_SAMPLE_MS = 2000;
/** Below this share of a sample's time spent running, the process counts as idle (timers only). */
export const IDLE_UTILIZATION = 0.02;

/**
 * The rule, pure: `owed` (start-up, or a busy sample since the last
 * collection) turns into one collection at the first idle sample, never two
 * in a row without work between them.
 */
export function idleStep(owed: boolean, utilization: number): { collect: boolean; owed: boolean } {
  if (utilization >= IDLE_UTILIZATION) return { collect: false, owed: true };
  return { collect: owed, owed: false };
}

/**
 * V8's full collection that reduces memory (what its memory reducer and a
 * low-memory notification run), or undefined where it cannot be had. Taken
 * from a context of its own with `--expose-gc` set only for that moment, so
 * no `gc` appears on the process's own global object.
 */
function footprintCollection(): (() => void) | undefined {
  try {
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as unknown;
    if (typeof gc !== 'function') return undefined;
    return () => (gc as (o: object) => void)({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  } catch {
    return undefined;
  } finally {
    v8.setFlagsFromString('--no-expose-gc');
  }
}

/** Samples the event loop on a timer that keeps no process alive; `stop` ends it. */
export function startIdleReducer(): { stop(): void } {
  const collect = footprintCollection();
  if (!collect) return { stop: () => undefined };
  let owed = true;
  let last = performance.eventLoopUtilization();
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    const step = idleStep(owed, performance.eventLoopUtilization(now, last).utilization);
    last = now;
    owed = step.owed;
    if (step.collect) collect();
  }, IDLE_SAMPLE_MS);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
