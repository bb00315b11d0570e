/**
 * share: a public share link's 4 KiB GET beside the authenticated 4 KiB GET,
 * on one server (local disk, the dataset's 1,000 small files), the two
 * alternating under wrk with 64 connections: `/storage/<user>/small/<name>`
 * with a Bearer token against `/share/<id>/<name>` of a link to the small/
 * folder, no token (the link resolves, its target is checked, the download
 * counted). The visitor rate limit is off (wrk is one address). Target
 * (issue 15): the share GET at least 0.9 of the authenticated GET's rate.
 */
import { logIn, startFileCloud, stopFileCloud } from '../lib/file-cloud.js';
import type { Options } from '../lib/options.js';
import { BenchError, USER } from '../lib/paths.js';
import type { Server } from '../lib/server.js';
import { cell, row, type Row } from '../lib/stats.js';
import { wrk } from '../lib/wrk.js';
import type { Dataset } from './context.js';

export type ShareRun = { rows: Row[] };

export async function shareScenario(o: Options, tmp: string, dataDir: string, data: Dataset, log: (msg: string) => void): Promise<ShareRun> {
  let fc: Server | undefined;
  try {
    const started = await startFileCloud(o, tmp, dataDir, { name: 'File Cloud API', logName: 'file-cloud-share.log', args: ['--share-rate-limit', '0'] });
    fc = started.server;
    await logIn(fc, started.password);
    const api: Server = fc;
    const created = await fetch(`${api.base}/api/shares`, { method: 'POST', headers: { ...api.headers, 'content-type': 'application/json' }, body: JSON.stringify({ path: `/${USER}/small`, expires_in: null }) });
    if (created.status !== 201) throw new BenchError(`creating the share answered ${created.status}: ${await created.text()}`);
    const { id } = (await created.json()) as { id: string };
    const link: Server = { ...api, name: 'File Cloud share link', headers: {}, path: (rel) => `/share/${id}/${rel.replace(/^small\//, '')}` };
    const probe = await fetch(`${link.base}${link.path(`small/${data.smallNames[0]}`)}`);
    if (probe.status !== 200 || (await probe.arrayBuffer()).byteLength !== 4096) throw new BenchError(`the share link's 4 KiB GET answered ${probe.status}`);

    const servers = [api, link];
    const inTurn = (i: number) => (i % 2 === 0 ? servers : [...servers].reverse());
    const side = (s: Server) => (s === api ? 'ref' : 'fileCloud');
    const reps = o.quick ? 1 : o.reps;
    const seconds = o.quick ? 3 : o.seconds;
    const label = `4 KiB GET (${data.smallNames.length} files), 64 connections`;
    const rps = row('share_get4k_rps', `${label} [ref: authenticated /storage/; File Cloud: public /share/<id>/]`, 'req/s', true, { kind: 'ratio_at_least', value: 0.9 });
    const p99 = row('share_get4k_p99', `${label}, p99 latency`, 'ms', false);
    const run = (s: Server, secs: number, warmup: boolean) => wrk(s, tmp, { name: 'share-get4k', method: 'GET', paths: data.smallNames.map((n) => s.path(`small/${n}`)), connections: 64, seconds: secs, warmup });
    for (const s of servers) await run(s, 1, true);
    for (let i = 0; i < reps; i++) {
      for (const s of inTurn(i)) {
        const r = await run(s, seconds, false);
        rps[side(s)].push(r.rps);
        p99[side(s)].push(r.p99);
      }
    }
    log(`share ${rps.label}: API ${cell(rps.ref, 'req/s')}, share ${cell(rps.fileCloud, 'req/s')}; p99 ${cell(p99.ref, 'ms')} / ${cell(p99.fileCloud, 'ms')} ms`);
    return { rows: [rps, p99] };
  } finally {
    if (fc) await stopFileCloud(fc);
  }
}
