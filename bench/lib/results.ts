/** The results JSON: bench/results/<time>[-quick].json and bench/results/latest.json. */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { machine, type Machine } from './machine.js';
import type { Options } from './options.js';
import { RESULTS } from './paths.js';
import { rowJson, type Row } from './stats.js';

type S3Part = { rows: Row[]; table: string; store: { endpoint: string; startedHere: boolean; bucket: string } };

export async function writeResults(r: { o: Options; started: number; m0: Machine; rows: Row[]; text: string; fcPeak: number | undefined; s3: S3Part | undefined }) {
  const { o, started, m0 } = r;
  const m1 = machine();
  const result = {
    when: new Date(started).toISOString(),
    durationSeconds: Math.round((Date.now() - started) / 1000),
    mode: o.quick ? 'quick' : 'full',
    options: { reps: o.reps, seconds: o.seconds, only: o.only ? [...o.only] : 'all', profile: o.profile, fcArgs: o.fcArgs, fcBin: o.fcBin, ...(o.storage === 's3' ? { storage: o.storage } : {}) },
    machine: { ...m0, loadavgStart: m0.loadavg, loadavgEnd: m1.loadavg },
    fileCloudPeakRssMiB: r.fcPeak,
    rows: r.rows.map((row) => rowJson(row, 'nginx')),
    table: r.text,
    ...(r.s3 ? { s3: { store: r.s3.store, rows: r.s3.rows.map((row) => rowJson(row, 'direct')), table: r.s3.table } } : {}),
  };
  await mkdir(RESULTS, { recursive: true });
  const file = join(RESULTS, `${new Date(started).toISOString().replace(/[:.]/g, '-')}${o.quick ? '-quick' : ''}.json`);
  await writeFile(file, `${JSON.stringify(result, null, 2)}\n`);
  await writeFile(join(RESULTS, 'latest.json'), `${JSON.stringify(result, null, 2)}\n`);
  return { file, durationSeconds: result.durationSeconds, m1 };
}
