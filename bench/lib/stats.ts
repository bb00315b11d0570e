/** Rows of samples, their medians and ratios, and the Markdown table they print as. */

export type Unit = 'MiB/s' | 'req/s' | 'files/s' | 'ms' | 'MiB' | 'µs' | 's' | 'requests';
/**
 * A row's target: the ratio of the medians (subject ÷ reference) at least or
 * at most a value, or the subject's median at most a value (latency, memory).
 */
export type Target = { kind: 'ratio_at_least'; value: number } | { kind: 'ratio_at_most'; value: number } | { kind: 'fc_at_most'; value: number };
export type Row = {
  id: string;
  label: string;
  unit: Unit;
  higherIsBetter: boolean;
  /** The reference's samples (nginx, or the AWS SDK directly on S3). */
  ref: number[];
  fileCloud: number[];
  target?: Target;
  note?: string;
};

/** A new row with no samples yet. */
export const row = (id: string, label: string, unit: Unit, higherIsBetter: boolean, target?: Target, note?: string): Row => ({ id, label, unit, higherIsBetter, ref: [], fileCloud: [], target, note });

export const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length === 0 ? NaN : s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};

export function summarize(r: Row) {
  const n = median(r.ref);
  const f = median(r.fileCloud);
  const ratio = f / n;
  let met: boolean | undefined;
  // A target with no sample (NaN) is not met: FAIL, never a silent PASS.
  if (r.target?.kind === 'ratio_at_least') met = ratio >= r.target.value;
  if (r.target?.kind === 'ratio_at_most') met = ratio <= r.target.value;
  if (r.target?.kind === 'fc_at_most') met = f <= r.target.value;
  return { refMedian: n, fileCloudMedian: f, ratio, met, verdict: met === undefined ? undefined : met ? ('PASS' as const) : ('FAIL' as const) };
}

/** What a target is checked on: the ratio, or the subject's median. */
export const measured = (r: Row): number => {
  const s = summarize(r);
  return r.target?.kind === 'fc_at_most' ? s.fileCloudMedian : s.ratio;
};

const fmt = (x: number, unit: Unit): string => {
  if (!Number.isFinite(x)) return '–';
  if (unit === 'ms') return x < 10 ? x.toFixed(2) : x.toFixed(1);
  return x >= 100 ? Math.round(x).toLocaleString('en-US') : x.toFixed(1);
};

/** Median and (range) of the samples, or '–'. */
export const cell = (xs: number[], unit: Unit): string => {
  if (xs.length === 0) return '–';
  const lo = Math.min(...xs);
  const hi = Math.max(...xs);
  return xs.length > 1 ? `${fmt(median(xs), unit)} (${fmt(lo, unit)}–${fmt(hi, unit)})` : fmt(xs[0] as number, unit);
};

export const targetText = (t: Target | undefined, subject = 'File Cloud'): string =>
  !t ? '' : t.kind === 'ratio_at_least' ? `ratio ≥ ${t.value}` : t.kind === 'ratio_at_most' ? `ratio ≤ ${t.value}` : `${subject} ≤ ${t.value}`;

/**
 * `| metric | <reference> | <subject> | ratio | target |`, one line per row
 * (the target column only when a row has a target).
 */
export function table(rows: Row[], reference = 'nginx', subject = 'File Cloud'): string {
  const targets = rows.some((r) => r.target);
  const lines = [
    `| metric | ${reference} | ${subject} | ratio |${targets ? ' target |' : ''}`,
    `|---|---:|---:|---:|${targets ? '---|' : ''}`,
  ];
  for (const r of rows) {
    const s = summarize(r);
    const verdict = s.verdict === undefined ? '' : ` ${s.verdict}`;
    lines.push(`| ${r.label} (${r.unit})${r.note ? ` ${r.note}` : ''} | ${cell(r.ref, r.unit)} | ${cell(r.fileCloud, r.unit)} | ${Number.isFinite(s.ratio) ? s.ratio.toFixed(2) : '–'} |${targets ? ` ${targetText(r.target, subject)}${verdict} |` : ''}`);
  }
  return lines.join('\n');
}

/** One target of a run, checked: what the summary block prints and the JSON's `targets` holds. */
export type TargetResult = { section: string; id: string; label: string; unit: Unit; target: string; measured: number; measuredText: string; verdict: 'PASS' | 'FAIL' };

/** Every row of `rows` with a target, checked; `section` names the table it is in ('nginx', 'Listing scaling'…). */
export function targetResults(section: string, rows: Row[], subject = 'File Cloud'): TargetResult[] {
  return rows
    .filter((r) => r.target)
    .map((r) => {
      const s = summarize(r);
      const value = measured(r);
      const isRatio = r.target?.kind !== 'fc_at_most';
      const text = !Number.isFinite(value) ? 'no sample' : isRatio ? `${value.toFixed(2)}× (${fmt(s.fileCloudMedian, r.unit)} vs ${fmt(s.refMedian, r.unit)} ${r.unit})` : `${fmt(value, r.unit)} ${r.unit}`;
      return { section, id: r.id, label: `${r.label} (${r.unit})`, unit: r.unit, target: targetText(r.target, subject), measured: value, measuredText: text, verdict: s.verdict as 'PASS' | 'FAIL' };
    });
}

/** The target summary block: one line per target with its measured value and PASS/FAIL, then the count. */
export function targetSummary(results: TargetResult[]): string {
  if (results.length === 0) return '';
  const lines = results.map((t) => `  ${t.verdict}  ${t.section === 'nginx' ? '' : `[${t.section}] `}${t.label}: ${t.target}; measured ${t.measuredText}`);
  const failed = results.filter((t) => t.verdict === 'FAIL').length;
  return [`Targets (${results.length - failed} PASS, ${failed} FAIL):`, ...lines].join('\n');
}

/** A row as it is stored in the results JSON, the reference's samples under `refKey` ('nginx' or 'direct'). */
export function rowJson(r: Row, refKey: string) {
  const { refMedian, ...s } = summarize(r);
  return { id: r.id, label: r.label, unit: r.unit, target: r.target, [refKey]: r.ref, fileCloud: r.fileCloud, [`${refKey}Median`]: refMedian, ...s };
}
