/**
 * Is the server's memory growing? The soak samples the resident memory of
 * each process (and their sum) every second; this judges one such series.
 *
 * The rule ("no growth"), over the samples after warm-up (the first quarter
 * of the run, but at least 50 s or, in a run shorter than 100 s, half of it:
 * under the soak's load each worker's RSS steps up once by ~50 MiB when V8
 * enlarges its old generation, after a number of requests rather than of
 * seconds, 20-48 s into a run here, and stays flat after it):
 * - the median of the last third is at most the median of the first third
 *   plus an allowance: a median ignores a collection's sawtooth and a single
 *   spike, and a real leak moves the whole last third. Over a window of 5
 *   minutes or more the allowance is max(16 MiB, 10 % of it); over a shorter
 *   one (the CI soak's 50 s) it is max(32 MiB, 15 %); and
 * - when that window lasts at least 5 minutes, the least-squares slope of
 *   the 30-second medians is at most 0.5 MiB per minute (5 MiB over a
 *   10-minute soak): over minutes it averages the sawtooth away and catches
 *   a leak too slow for the medians' allowance, and the medians keep one
 *   spike from tilting it (a plain least-squares fit over the raw samples is
 *   pulled by a single spike near an end). Over a shorter window (the
 *   20-second CI soak) a slope in MiB per minute is mostly noise: it is
 *   reported, not judged. Both slopes are reported: over the raw samples
 *   and over the 30-second medians (the one judged).
 */
import { median } from '../bench/lib/stats.js';

export type Sample = { readonly t: number; readonly mib: number };

export type Trend = {
  /** Samples after warm-up. */
  samples: number;
  /** Seconds the judged window lasts. */
  windowSeconds: number;
  /** Least-squares slope over the window's samples, MiB per minute (NaN with fewer than 2). */
  slopeMiBPerMin: number;
  /** Least-squares slope of the window's 30-second medians, MiB per minute (NaN with fewer than 2 full slices): the one judged. */
  slopeOfMediansMiBPerMin: number;
  firstThirdMedianMiB: number;
  lastThirdMedianMiB: number;
  /** Last-third median minus first-third median. */
  growthMiB: number;
  /** What it may grow by: max(16 MiB, 10 %) of the first-third median over a long window, max(32 MiB, 15 %) over a short one. */
  allowanceMiB: number;
  /** Whether the slope was judged (window of 5 minutes or more). */
  slopeJudged: boolean;
  /** Why it fails the rule; empty when it passes. */
  failures: string[];
};

export const RULE = {
  warmupFraction: 0.25,
  minWarmupSeconds: 50,
  maxSlopeMiBPerMin: 0.5,
  minSlopeWindowSeconds: 300,
  slopeBinSeconds: 30,
  minAllowanceMiB: 16,
  allowanceFraction: 0.1,
  shortMinAllowanceMiB: 32,
  shortAllowanceFraction: 0.15,
} as const;

export const RULE_TEXT = `after warm-up (the first ${RULE.warmupFraction * 100} % of the run, at least ${RULE.minWarmupSeconds} s or half a shorter run): last-third median ≤ first-third median + max(${RULE.minAllowanceMiB} MiB, ${RULE.allowanceFraction * 100} %) (a window under ${RULE.minSlopeWindowSeconds / 60} minutes: max(${RULE.shortMinAllowanceMiB} MiB, ${RULE.shortAllowanceFraction * 100} %)), and, over a window of ${RULE.minSlopeWindowSeconds / 60} minutes or more, least-squares slope of the ${RULE.slopeBinSeconds}-second medians ≤ ${RULE.maxSlopeMiBPerMin} MiB/min`;

/** The rule's warm-up for a run of this length, in seconds. */
export function ruleWarmupSeconds(runSeconds: number): number {
  return Math.max(runSeconds * RULE.warmupFraction, Math.min(RULE.minWarmupSeconds, runSeconds / 2));
}

/** Least-squares slope of mib over t (seconds), in MiB per minute. */
export function slopePerMinute(samples: readonly Sample[]): number {
  const n = samples.length;
  if (n < 2) return NaN;
  const mt = samples.reduce((a, s) => a + s.t, 0) / n;
  const mm = samples.reduce((a, s) => a + s.mib, 0) / n;
  let num = 0;
  let den = 0;
  for (const s of samples) {
    num += (s.t - mt) * (s.mib - mm);
    den += (s.t - mt) ** 2;
  }
  return den === 0 ? NaN : (num / den) * 60;
}

/**
 * The median of each `bin`-second slice of the samples (slices from the
 * first sample on), at the slice's middle; a slice with fewer than half the
 * samples of the fullest (the last, cut short) is left out.
 */
export function binMedians(samples: readonly Sample[], bin: number): Sample[] {
  if (samples.length === 0) return [];
  const t0 = (samples[0] as Sample).t;
  const bins = new Map<number, number[]>();
  for (const s of samples) {
    const k = Math.floor((s.t - t0) / bin);
    const xs = bins.get(k) ?? [];
    xs.push(s.mib);
    bins.set(k, xs);
  }
  const fullest = Math.max(...[...bins.values()].map((xs) => xs.length));
  return [...bins]
    .filter(([, xs]) => xs.length * 2 >= fullest)
    .sort((a, b) => a[0] - b[0])
    .map(([k, xs]) => ({ t: t0 + (k + 0.5) * bin, mib: median(xs) }));
}

const r1 = (x: number) => Math.round(x * 100) / 100;

/**
 * The trend of one series (samples in time order, t in seconds from the start of the run) and its
 * verdict; a caller that knows warm-up lasted longer (soak.ts's warm-up by requests) says so.
 */
export function memoryTrend(all: readonly Sample[], runSeconds: number, name = 'RSS', warmupSeconds = ruleWarmupSeconds(runSeconds)): Trend {
  const window = all.filter((s) => s.t >= warmupSeconds);
  const third = Math.max(1, Math.floor(window.length / 3));
  const first = median(window.slice(0, third).map((s) => s.mib));
  const last = median(window.slice(-third).map((s) => s.mib));
  const windowSeconds = window.length > 1 ? (window.at(-1) as Sample).t - (window[0] as Sample).t : 0;
  const slopeJudged = windowSeconds >= RULE.minSlopeWindowSeconds;
  const rawSlope = slopePerMinute(window);
  const slope = slopePerMinute(binMedians(window, RULE.slopeBinSeconds));
  const allowance = slopeJudged ? Math.max(RULE.minAllowanceMiB, first * RULE.allowanceFraction) : Math.max(RULE.shortMinAllowanceMiB, first * RULE.shortAllowanceFraction);
  const failures: string[] = [];
  if (window.length < 3) failures.push(`${name}: only ${window.length} memory sample(s) after warm-up`);
  else if (last - first > allowance) failures.push(`${name} grew from ${r1(first)} MiB (first-third median) to ${r1(last)} MiB (last third), more than the ${r1(allowance)} MiB allowed`);
  if (slopeJudged && slope > RULE.maxSlopeMiBPerMin) failures.push(`${name} grows ${r1(slope)} MiB/min over ${Math.round(windowSeconds)} s (at most ${RULE.maxSlopeMiBPerMin} allowed)`);
  return {
    samples: window.length,
    windowSeconds: Math.round(windowSeconds),
    slopeMiBPerMin: r1(rawSlope),
    slopeOfMediansMiBPerMin: r1(slope),
    firstThirdMedianMiB: r1(first),
    lastThirdMedianMiB: r1(last),
    growthMiB: r1(last - first),
    allowanceMiB: r1(allowance),
    slopeJudged,
    failures,
  };
}
