import { performance } from 'node:perf_hooks';
import v8 from 'node:v8';
import vm from 'node:vm';

/**
 * Gives memory back once a serving process falls idle: one collection that
 * reduces V8's footprint (its young generation back to its smallest size,
 * the pages it pooled released) when the young generation has grown since
 * the last one (start-up, a burst of requests, a rescan).
 *
 * V8 has a memory reducer of its own for this, but it acts only when the
 * allocation rate is low against the collector's measured speed, and on a
 * busy machine it judged an idle server's rate high at every check for as
 * long as we watched: the young generation that start-up or a rescan had
 * grown stayed committed while nothing ran (docs/performance.md "Memory
 * with the default settings").
 *
 * The collection is not free for the work that follows it: the next burst
 * starts on the smallest young generation and a low old-generation limit,
 * and pays for growing them again in CPU and in long full collections
 * (docs/performance.md "The 4 KiB GET's stalls"). So only start-up's growth
 * is given back at the first quiet sample; after that, only a process that
 * has stayed quiet for a while (QUIET_SAMPLES in a row) collects, and one
 * whose requests come in bursts a few seconds apart keeps what the next
 * burst would grow again.
 */

/** How often the event loop's utilization is sampled; an idle sample finds whether there is memory to give back. */
export const IDLE_SAMPLE_MS = 2000;
/** Below this share of a sample's time spent running, the process counts as idle (timers only). */
export const IDLE_UTILIZATION = 0.02;

/**
 * Quiet samples in a row (this one included) before a collection that is not
 * start-up's: 20 s without work, longer than the gaps between the bursts of a
 * server in use, so the collection does not land between two of them.
 */
export const QUIET_SAMPLES = 10;

/**
 * The rule, pure: collect at an idle sample when V8's young generation is
 * bigger than the last collection left it (start-up's, a burst's, a rescan's
 * growth); start-up's at once (`youngAfterLast` 0: none yet), any later
 * growth once the process has been quiet for `QUIET_SAMPLES` samples
 * (`quietSamples`: idle samples in a row, this one included). Only growth
 * owes one: the work right after a full collection (recompiling what it
 * flushed) can look busy, and counted as work it would start the next, one
 * after the other.
 */
export function shouldCollect(utilization: number, quietSamples: number, youngBytes: number, youngAfterLast: number): boolean {
  if (utilization >= IDLE_UTILIZATION || youngBytes <= youngAfterLast) return false;
  return youngAfterLast === 0 || quietSamples >= QUIET_SAMPLES;
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

const youngBytes = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0;

/** Samples the event loop on a timer that keeps no process alive; `stop` ends it. */
export function startIdleReducer(): { stop(): void } {
  const collect = footprintCollection();
  if (!collect) return { stop: () => undefined };
  let youngAfterLast = 0; // none yet: start-up's growth is the first to give back
  let quietSamples = 0;
  let last = performance.eventLoopUtilization();
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    const young = youngBytes();
    const utilization = performance.eventLoopUtilization(now, last).utilization;
    quietSamples = utilization < IDLE_UTILIZATION ? quietSamples + 1 : 0;
    if (shouldCollect(utilization, quietSamples, young, youngAfterLast)) {
      collect();
      // At least 1 byte, so that 0 keeps meaning "none yet".
      youngAfterLast = Math.max(1, youngBytes());
    }
    last = performance.eventLoopUtilization();
  }, IDLE_SAMPLE_MS);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
