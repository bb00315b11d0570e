/**
 * listscale: does a listing's cost grow linearly with the folder, and its
 * memory not at all? One GET of the 10,000-entry folder (many/) beside one
 * GET of the big one (huge/: 100,000 empty files; 20,000 with --quick),
 * alternating, a few repetitions, on the File Cloud of the nginx
 * comparison: the time to the last byte, that time per 1,000 entries (equal
 * when linear), and the growth of the server's resident memory (the whole
 * process tree, sampled every 20 ms from /proc) during each listing. Only
 * HTTP GETs and the entry count: it works with a listing built whole as
 * with a streamed one.
 */
import { expectStatus, request, type HttpResult } from '../lib/http.js';
import { BenchError, MiB } from '../lib/paths.js';
import { rssSampler, sleep } from '../lib/processes.js';
import { memTotal, type Server } from '../lib/server.js';
import { cell, row, type Row } from '../lib/stats.js';
import type { Context } from './context.js';

/**
 * Issue 18's "memory flat" for a 100,000-entry listing: the folder's entries
 * built whole and serialized at once take far more (~100,000 objects and an
 * ~8 MB JSON string: well over 32 MiB), while a streamed listing holds a
 * batch at a time; 32 MiB is the allowance the uploads' RSS growth has too
 * (socket buffers and V8's collection timing move RSS by tens of MiB on
 * their own).
 */
export const LISTING_RSS_GROWTH_MIB = 32;
/**
 * What one listing's answer may take in the bench: the 100,000-entry one is
 * 23.5 MB once the index holds every entry's sync fields (id, SHA-256, ETag),
 * over the 16 MiB a request keeps by default.
 */
const LISTING_KEEP_BYTES = 256 * MiB;
/** Linear time: the big folder's time per entry at most 1.5 × the small one's (room for noise and a sort's log factor). */
export const LISTING_PER_ENTRY_RATIO = 1.5;

export type ListingScale = { rows: Row[]; manyCount: number; hugeCount: number };

/** One listing: ms to the last byte and the RSS growth meanwhile (MiB); checks the entry count. */
async function listOnce(fc: Server, rel: string, expected: number): Promise<{ ms: number; growthMiB: number }> {
  await sleep(200); // let the previous listing's garbage go before the baseline
  const before = (await memTotal(fc)).rss;
  const sampler = rssSampler(() => fc.pids(), before);
  const t0 = performance.now();
  const r: HttpResult = await request(fc, 'GET', fc.path(rel), { timeoutMs: 120_000, keepBytes: LISTING_KEEP_BYTES }).catch(async (e: unknown) => {
    await sampler.stop();
    throw e;
  });
  const ms = performance.now() - t0;
  const peak = await sampler.stop();
  expectStatus(fc, `listing ${rel}`, r, [200]);
  if (!r.kept) throw new BenchError(`File Cloud: listing ${rel} is ${r.bytes} bytes, more than the bench keeps to check (${LISTING_KEEP_BYTES / MiB} MiB)`);
  let n: number;
  try {
    const parsed = JSON.parse(r.body) as unknown;
    n = Array.isArray(parsed) ? parsed.length : (parsed as { entries: unknown[] }).entries.length;
  } catch (e) {
    throw new BenchError(`File Cloud: listing ${rel} (${r.bytes} bytes) is not a JSON listing: ${(e as Error).message}`);
  }
  if (n !== expected) throw new BenchError(`File Cloud: listing ${rel} has ${n} entries, expected ${expected}`);
  return { ms, growthMiB: (peak - before) / MiB };
}

export async function listingScale(c: Context): Promise<ListingScale> {
  const { manyCount, hugeCount } = c.data;
  const k = (n: number) => n.toLocaleString('en-US');
  const time = row('listscale_ms', 'one listing, time to the last byte', 'ms', false);
  const perK = row('listscale_ms_per_1k', 'one listing, time per 1,000 entries', 'ms', false, { kind: 'ratio_at_most', value: LISTING_PER_ENTRY_RATIO });
  const growth = row('listscale_rss_growth', 'RSS growth during one listing, process tree', 'MiB', false, { kind: 'fc_at_most', value: LISTING_RSS_GROWTH_MIB });
  const rows = [time, perK, growth];
  // Warm-up: the directories' entries in the kernel's cache, the code paths compiled.
  await listOnce(c.fc, 'many/', manyCount);
  await listOnce(c.fc, 'huge/', hugeCount);
  for (let i = 0; i < c.o.reps; i++) {
    // Alternate which folder goes first, so neither always follows the other's garbage.
    const order = i % 2 === 0 ? (['ref', 'fileCloud'] as const) : (['fileCloud', 'ref'] as const);
    for (const sideKey of order) {
      const [rel, count] = sideKey === 'ref' ? ['many/', manyCount] : ['huge/', hugeCount];
      const m = await listOnce(c.fc, rel, count);
      time[sideKey].push(m.ms);
      perK[sideKey].push((m.ms / count) * 1000);
      growth[sideKey].push(m.growthMiB);
    }
  }
  c.log(`listing ${k(manyCount)} vs ${k(hugeCount)} entries: ${cell(time.ref, 'ms')} / ${cell(time.fileCloud, 'ms')} ms (${cell(perK.ref, 'ms')} / ${cell(perK.fileCloud, 'ms')} ms per 1,000); RSS growth ${cell(growth.ref, 'MiB')} / ${cell(growth.fileCloud, 'MiB')} MiB`);
  return { rows, manyCount, hugeCount };
}
