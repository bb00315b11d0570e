/**
 * The local-disk scenarios: File Cloud (on `file:` storage) beside nginx on
 * the very same files, every metric alternating the two servers.
 */
import { logIn, startFileCloud, stopFileCloud } from '../lib/file-cloud.js';
import { startNginx } from '../lib/nginx.js';
import { wants, type Options } from '../lib/options.js';
import { stopChild } from '../lib/processes.js';
import { memEach, type Server } from '../lib/server.js';
import { MiB } from '../lib/paths.js';
import type { Row } from '../lib/stats.js';
import type { Context, Dataset } from './context.js';
import { downloads } from './downloads.js';
import { requestRates } from './request-rates.js';
import { listingScale, type ListingScale } from './listing-scale.js';
import { largeCeiling } from './large-ceiling.js';
import { idleMemory, peakMemory, type PeakMemory } from './memory.js';
import { checkSanity } from './sanity.js';
import { uploads } from './uploads.js';

/**
 * Logs File Cloud's VmHWM after each step, and by how much the step raised
 * it: VmHWM only grows, so the step whose line shows the rise is the one
 * that set the whole run's peak.
 */
function stepPeaks(c: Context): (name: string) => Promise<void> {
  let last = 0;
  return async (name) => {
    const each = await memEach(c.fc);
    const hwm = each.reduce((a, m) => a + m.hwm, 0) / MiB;
    const rss = each.reduce((a, m) => a + m.rss, 0) / MiB;
    c.log(`File Cloud after ${name}: peak RSS (VmHWM) ${hwm.toFixed(1)} MiB (+${(hwm - last).toFixed(1)}), RSS now ${rss.toFixed(1)} MiB`);
    last = hwm;
  };
}

/** Runs the chosen local metric groups; returns their rows and File Cloud's peak RSS per process and in total (MiB). */
export async function localScenarios(o: Options, tmp: string, dataDir: string, data: Dataset, log: (msg: string) => void): Promise<{ rows: Row[]; fcPeak: PeakMemory; scale: ListingScale | undefined }> {
  let fc: Server | undefined;
  let ng: Server | undefined;
  try {
    const fcStart = await startFileCloud(o, tmp, dataDir);
    fc = fcStart.server;
    ng = await startNginx(tmp, data.dir);
    const c: Context = { o, tmp, data, fc, ng, servers: [ng, fc], rows: [], log };
    const step = stepPeaks(c);
    await idleMemory(c);
    await logIn(fc, fcStart.password);
    await checkSanity(c);
    await step('start, sign-in and sanity checks');
    await downloads(c);
    await step('downloads');
    await requestRates(c);
    await step('request rates (get4k, head, pathtoken, listing)');
    const scale = wants(o, 'listscale') ? await listingScale(c) : undefined;
    await step('listing scale');
    await uploads(c);
    await step('uploads');
    await largeCeiling(c);
    await step('large files against the Node ceiling');
    const fcPeak = await peakMemory(c);
    return { rows: c.rows, fcPeak, scale };
  } finally {
    // Stop what we started, by pid; File Cloud gracefully (SIGTERM writes its CPU profile).
    if (ng) await stopChild(ng.proc, 'SIGQUIT');
    if (fc) await stopFileCloud(fc);
  }
}
