/**
 * zip: a folder downloaded as a zip beside a plain GET of one file of the
 * same total size, on one server (local disk): 1024 × 1 MiB files (64 × 1
 * MiB with --quick) zipped on the fly (stored, CRC-32 computed while
 * streaming) against the dataset's big.bin (1 GiB; 64 MiB with --quick),
 * alternating; and the server's RSS growth and peak while the zip streams.
 * Targets (issue 15): at least 0.8 of the plain GET's speed, and memory flat
 * (growth at most 64 MiB, whatever the folder's size).
 *
 * Two zip rows: the first download of a tree (the folder is renamed before
 * each repetition, so no CRC is in the cache and every byte is hashed while
 * it streams), and the same zip again right after (CRCs from the cache, as
 * for every later download of an unchanged folder).
 */
import { randomBytes } from 'node:crypto';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { logIn, startFileCloud, stopFileCloud } from '../lib/file-cloud.js';
import { expectStatus, request } from '../lib/http.js';
import type { Options } from '../lib/options.js';
import { BenchError, MiB } from '../lib/paths.js';
import { rssSampler } from '../lib/processes.js';
import { memTotal, type Server } from '../lib/server.js';
import { cell, row, type Row } from '../lib/stats.js';
import type { Dataset } from './context.js';

export type ZipRun = { rows: Row[]; files: number; peakRssMiB: number };

/** One timed GET of `path`; MiB/s, the server's RSS growth and peak (MiB). */
async function timedGet(s: Server, path: string, what: string): Promise<{ mibs: number; bytes: number; rssGrowth: number; peak: number }> {
  const before = await memTotal(s);
  const sampler = rssSampler(() => s.pids(), before.rss);
  const t0 = performance.now();
  let peak: number;
  let r;
  try {
    r = await request(s, 'GET', path, { timeoutMs: 600_000 });
  } finally {
    peak = await sampler.stop();
  }
  const seconds = (performance.now() - t0) / 1000;
  expectStatus(s, what, r, [200]);
  return { mibs: r.bytes / MiB / seconds, bytes: r.bytes, rssGrowth: (peak - before.rss) / MiB, peak: peak / MiB };
}

export async function zipScenario(o: Options, tmp: string, dataDir: string, data: Dataset, log: (msg: string) => void): Promise<ZipRun> {
  const files = o.quick ? 64 : 1024;
  const folder = join(data.dir, 'zipsrc-0');
  await rm(folder, { recursive: true, force: true });
  await mkdir(folder, { recursive: true });
  // Random bytes (nothing along the way can compress them), 1 MiB each, written once.
  const block = randomBytes(MiB);
  for (let i = 0; i < files; i++) {
    block.writeUInt32LE(i, 0);
    await writeFile(join(folder, `file-${String(i).padStart(4, '0')}.bin`), block);
  }
  let fc: Server | undefined;
  let current = folder;
  try {
    const started = await startFileCloud(o, tmp, dataDir, { name: 'File Cloud', logName: 'file-cloud-zip.log' });
    fc = started.server;
    await logIn(fc, started.password);
    const s: Server = fc;
    const reps = o.quick ? 1 : o.reps;
    const bigMiB = Math.round(data.bigSize / MiB);
    const cold = row('zip_first', `zip of ${files} × 1 MiB files, first download [ref: plain GET of ${bigMiB} MiB]`, 'MiB/s', true, { kind: 'ratio_at_least', value: 0.8 });
    const warm = row('zip_again', `zip of ${files} × 1 MiB files, again (CRCs cached) [ref: plain GET of ${bigMiB} MiB]`, 'MiB/s', true, { kind: 'ratio_at_least', value: 0.8 });
    const rss = row('zip_rss', `RSS growth during the zip of ${files} MiB [ref: plain GET]`, 'MiB', false, { kind: 'fc_at_most', value: 64 });
    let peakRssMiB = 0;
    const zipOnce = async (name: string) => {
      const zip = await timedGet(s, `${s.path(`${name}/`)}?zip=1`, `GET ${name}/?zip=1`);
      if (zip.bytes < files * MiB) throw new BenchError(`the zip of ${name} has ${zip.bytes} bytes, fewer than its files`);
      peakRssMiB = Math.max(peakRssMiB, zip.peak);
      rss.fileCloud.push(zip.rssGrowth);
      return zip.mibs;
    };
    for (let i = 0; i < reps; i++) {
      const name = `zipsrc-${i}`;
      if (join(data.dir, name) !== current) {
        await rename(current, join(data.dir, name));
        current = join(data.dir, name);
      }
      const plain = await timedGet(s, s.path('big.bin'), 'GET big.bin');
      if (plain.bytes !== data.bigSize) throw new BenchError(`GET big.bin gave ${plain.bytes} bytes, expected ${data.bigSize}`);
      cold.ref.push(plain.mibs);
      warm.ref.push(plain.mibs);
      rss.ref.push(plain.rssGrowth);
      cold.fileCloud.push(await zipOnce(name));
      warm.fileCloud.push(await zipOnce(name));
    }
    for (const r of [cold, warm]) log(`zip ${r.label}: plain GET ${cell(r.ref, 'MiB/s')}, zip ${cell(r.fileCloud, 'MiB/s')}`);
    log(`zip ${rss.label}: plain GET ${cell(rss.ref, 'MiB')}, zip ${cell(rss.fileCloud, 'MiB')}; peak RSS ${peakRssMiB.toFixed(0)} MiB`);
    return { rows: [cold, warm, rss], files, peakRssMiB };
  } finally {
    if (fc) await stopFileCloud(fc);
    await rm(current, { recursive: true, force: true });
  }
}
