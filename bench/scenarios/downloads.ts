/** download1, download4: big.bin with 1 and 4 parallel streams (MiB/s). */
import { wants } from '../lib/options.js';
import { MiB } from '../lib/paths.js';
import { cell, row, type Target } from '../lib/stats.js';
import { download, sampled } from '../lib/transfers.js';
import { side, type Context } from './context.js';

/**
 * Issue 18: large-file GET and PUT at least as fast as nginx (with File
 * Cloud's default --workers auto). It replaces the earlier 0.8 (1 stream)
 * and 0.7 (4 streams); uploads.ts uses the same.
 */
export const LARGE_FILE_TARGET: Target = { kind: 'ratio_at_least', value: 1.0 };

/** Issue 53: the server's memory flat while it takes or sends one 1 GiB file: RSS growth ≤ 8 MiB (it was 32 since issue 18). uploads.ts uses the same. */
export const FLAT_MIB = 8;

export async function downloads(c: Context): Promise<void> {
  const { bigSize } = c.data;
  const bigMiB = Math.round(bigSize / MiB);
  for (const streams of [1, 4] as const) {
    if (!wants(c.o, streams === 1 ? 'download1' : 'download4')) continue;
    const r = row(`download_${streams}`, `${bigMiB} MiB download, ${streams} stream${streams > 1 ? 's' : ''}`, 'MiB/s', true, LARGE_FILE_TARGET);
    c.rows.push(r);
    for (const s of c.servers) await download(s, 'big.bin', bigSize, 1); // warm the page cache and the code paths
    const reps = streams === 1 ? c.o.reps + 2 : c.o.reps;
    // The server's memory while it sends one big file: issue 53 wants it flat, as for an upload.
    const growth = streams === 1 ? row('download_1_rss_growth', `RSS growth during ${r.label}`, 'MiB', false, { kind: 'fc_at_most', value: FLAT_MIB }) : undefined;
    for (let i = 0; i < reps; i++) {
      for (const s of c.servers) {
        const got = await sampled(s, growth !== undefined, () => download(s, 'big.bin', bigSize, streams));
        r[side(c, s)].push(got.value);
        growth?.[side(c, s)].push(got.rssGrowth);
      }
    }
    if (growth) c.rows.push(growth);
    c.log(`${r.label}: nginx ${cell(r.ref, 'MiB/s')}, File Cloud ${cell(r.fileCloud, 'MiB/s')}${growth ? `; RSS growth ${cell(growth.fileCloud, 'MiB')} MiB` : ''}`);
  }
}
