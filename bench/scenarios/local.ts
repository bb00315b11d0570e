/**
 * The local-disk scenarios: File Cloud (on `file:` storage) beside nginx on
 * the very same files, every metric alternating the two servers.
 */
import { logIn, startFileCloud, stopFileCloud } from '../lib/file-cloud.js';
import { startNginx } from '../lib/nginx.js';
import { wants, type Options } from '../lib/options.js';
import { stopChild } from '../lib/processes.js';
import type { Server } from '../lib/server.js';
import type { Row } from '../lib/stats.js';
import type { Context, Dataset } from './context.js';
import { downloads } from './downloads.js';
import { requestRates } from './request-rates.js';
import { listingScale, type ListingScale } from './listing-scale.js';
import { idleMemory, peakMemory, type PeakMemory } from './memory.js';
import { checkSanity } from './sanity.js';
import { uploads } from './uploads.js';

/** Runs the chosen local metric groups; returns their rows and File Cloud's peak RSS per process and in total (MiB). */
export async function localScenarios(o: Options, tmp: string, dataDir: string, data: Dataset, log: (msg: string) => void): Promise<{ rows: Row[]; fcPeak: PeakMemory; scale: ListingScale | undefined }> {
  let fc: Server | undefined;
  let ng: Server | undefined;
  try {
    const fcStart = await startFileCloud(o, tmp, dataDir);
    fc = fcStart.server;
    ng = await startNginx(tmp, data.dir);
    const c: Context = { o, tmp, data, fc, ng, servers: [ng, fc], rows: [], log };
    await idleMemory(c);
    await logIn(fc, fcStart.password);
    await checkSanity(c);
    await downloads(c);
    await requestRates(c);
    const scale = wants(o, 'listscale') ? await listingScale(c) : undefined;
    await uploads(c);
    const fcPeak = await peakMemory(c);
    return { rows: c.rows, fcPeak, scale };
  } finally {
    // Stop what we started, by pid; File Cloud gracefully (SIGTERM writes its CPU profile).
    if (ng) await stopChild(ng.proc, 'SIGQUIT');
    if (fc) await stopFileCloud(fc);
  }
}
