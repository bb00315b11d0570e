/** The results JSON: bench/results/<time>[-quick].json and bench/results/latest.json. */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { machine, type Machine } from './machine.js';
import type { Options } from './options.js';
import { RESULTS } from './paths.js';
import type { PeakMemory } from '../scenarios/memory.js';
import { rowJson, type Row, type TargetResult } from './stats.js';

type S3Part = { rows: Row[]; table: string; store: { endpoint: string; startedHere: boolean; bucket: string } };
/** A side-by-side section (workers, nodes): its rows (reference column under `refKey`, subject under `subjectKey`), table and details. */
export type PairPart = { rows: Row[]; table: string; refKey: string; subjectKey: string; details: Record<string, unknown> };

function pairJson(p: PairPart) {
  return {
    ...p.details,
    rows: p.rows.map((row) => {
      const { fileCloud, fileCloudMedian, ...rest } = rowJson(row, p.refKey) as Record<string, unknown>;
      return { ...rest, [p.subjectKey]: fileCloud, [`${p.subjectKey}Median`]: fileCloudMedian };
    }),
    table: p.table,
  };
}

export async function writeResults(r: { o: Options; started: number; m0: Machine; rows: Row[]; text: string; fcPeak: PeakMemory | undefined; targets: TargetResult[]; s3: S3Part | undefined; listScale?: PairPart; workers?: PairPart; dav?: PairPart; tus?: PairPart; share?: PairPart; zip?: PairPart; thumbs?: PairPart; search?: PairPart; smallUploads?: PairPart; s3SmallUploads?: PairPart; changes?: PairPart; sftp?: PairPart; encryption?: PairPart; sync?: PairPart; nodes?: PairPart }) {
  const { o, started, m0 } = r;
  const m1 = machine();
  const result = {
    when: new Date(started).toISOString(),
    durationSeconds: Math.round((Date.now() - started) / 1000),
    mode: o.quick ? 'quick' : 'full',
    options: { reps: o.reps, seconds: o.seconds, only: o.only ? [...o.only] : 'all', profile: o.profile, fcArgs: o.fcArgs, fcBin: o.fcBin, ...(o.storage === 's3' ? { storage: o.storage } : {}), ...(o.nodes ? { nodes: o.nodes } : {}) },
    machine: { ...m0, loadavgStart: m0.loadavg, loadavgEnd: m1.loadavg },
    /** VmHWM summed over File Cloud's processes (primary + workers), as before; per process below. */
    fileCloudPeakRssMiB: r.fcPeak?.totalMiB,
    fileCloudPeakRss: r.fcPeak,
    /** Every target of the run (all sections), checked: PASS or FAIL against the reference of the same run. */
    targets: r.targets.map(({ measuredText: _text, ...t }) => ({ ...t, measured: Number.isFinite(t.measured) ? t.measured : null })),
    rows: r.rows.map((row) => rowJson(row, 'nginx')),
    table: r.text,
    ...(r.s3 ? { s3: { store: r.s3.store, rows: r.s3.rows.map((row) => rowJson(row, 'direct')), table: r.s3.table } } : {}),
    ...(r.listScale ? { listingScale: pairJson(r.listScale) } : {}),
    ...(r.workers ? { workers: pairJson(r.workers) } : {}),
    ...(r.dav ? { dav: pairJson(r.dav) } : {}),
    ...(r.tus ? { tus: pairJson(r.tus) } : {}),
    ...(r.share ? { share: pairJson(r.share) } : {}),
    ...(r.zip ? { zip: pairJson(r.zip) } : {}),
    ...(r.thumbs ? { thumbs: pairJson(r.thumbs) } : {}),
    ...(r.search ? { search: pairJson(r.search) } : {}),
    ...(r.smallUploads ? { smallUploads: pairJson(r.smallUploads) } : {}),
    ...(r.s3SmallUploads ? { s3SmallUploads: pairJson(r.s3SmallUploads) } : {}),
    ...(r.changes ? { changes: pairJson(r.changes) } : {}),
    ...(r.sftp ? { sftp: pairJson(r.sftp) } : {}),
    ...(r.encryption ? { encryption: pairJson(r.encryption) } : {}),
    ...(r.sync ? { sync: pairJson(r.sync) } : {}),
    ...(r.nodes ? { nodes: pairJson(r.nodes) } : {}),
  };
  await mkdir(RESULTS, { recursive: true });
  const file = join(RESULTS, `${new Date(started).toISOString().replace(/[:.]/g, '-')}${o.quick ? '-quick' : ''}.json`);
  await writeFile(file, `${JSON.stringify(result, null, 2)}\n`);
  await writeFile(join(RESULTS, 'latest.json'), `${JSON.stringify(result, null, 2)}\n`);
  return { file, durationSeconds: result.durationSeconds, m1 };
}
