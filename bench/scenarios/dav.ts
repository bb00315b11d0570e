/**
 * dav: File Cloud's WebDAV door beside its own HTTP API, on one server
 * (local disk, the dataset of the nginx comparison), the two alternating:
 * the big file's GET and raw PUT (Node's http), and a Depth-1 PROPFIND of
 * the 10,000-entry folder beside the JSON listing of the same folder
 * (sequential requests for a fixed time). WebDAV requests authenticate as
 * WebDAV clients do, with HTTP Basic on every request (the credential cache
 * makes that cheap); the API with its Bearer token. Targets (issue 13):
 * GET and PUT within 0.9 of the API, PROPFIND at least as fast as the listing.
 */
import { logIn, startFileCloud, stopFileCloud } from '../lib/file-cloud.js';
import { expectStatus, request } from '../lib/http.js';
import type { Options } from '../lib/options.js';
import { BenchError, MiB, USER } from '../lib/paths.js';
import type { Server } from '../lib/server.js';
import { cell, row, type Row } from '../lib/stats.js';
import { download, upload } from '../lib/transfers.js';
import type { Dataset } from './context.js';

export type DavRun = { rows: Row[] };

/** The PROPFIND body macOS Finder sends when it opens a folder. */
const FINDER_PROPFIND = '<?xml version="1.0" encoding="utf-8"?><D:propfind xmlns:D="DAV:"><D:prop><D:getlastmodified/><D:getcontentlength/><D:creationdate/><D:resourcetype/></D:prop></D:propfind>';

/** Requests per second of one request repeated for `seconds`, one at a time. */
async function rate(s: Server, method: string, path: string, headers: Record<string, string>, body: string | undefined, seconds: number, check: (body: string) => void): Promise<number> {
  const t0 = performance.now();
  let n = 0;
  while (performance.now() - t0 < seconds * 1000) {
    const r = await request(s, method, path, body === undefined ? { headers } : { headers, body });
    expectStatus(s, `${method} ${path}`, r, [200, 207]);
    if (n === 0) check(r.body);
    n++;
  }
  return n / ((performance.now() - t0) / 1000);
}

export async function davScenario(o: Options, tmp: string, dataDir: string, data: Dataset, log: (msg: string) => void): Promise<DavRun> {
  let fc: Server | undefined;
  try {
    const started = await startFileCloud(o, tmp, dataDir, { name: 'File Cloud HTTP API', logName: 'file-cloud-dav.log' });
    fc = started.server;
    await logIn(fc, started.password);
    const api: Server = fc;
    const dav: Server = {
      ...fc,
      name: 'File Cloud WebDAV',
      headers: { authorization: `Basic ${Buffer.from(`${USER}:${started.password}`).toString('base64')}` },
      path: (rel) => `/dav/${USER}/${rel}`,
    };
    const servers = [api, dav];
    // ABBA: the two sides take turns going first, so neither always runs on the warmer (or busier) machine.
    const inTurn = (i: number) => (i % 2 === 0 ? servers : [...servers].reverse());
    const reps = o.quick ? 1 : o.reps;
    const side = (s: Server) => (s === api ? 'ref' : 'fileCloud');
    const rows: Row[] = [];
    const bigMiB = Math.round(data.bigSize / MiB);

    const get = row('dav_get', `${bigMiB} MiB GET, 1 stream`, 'MiB/s', true, { kind: 'ratio_at_least', value: 0.9 });
    rows.push(get);
    for (const s of servers) await download(s, 'big.bin', data.bigSize, 1);
    for (let i = 0; i < reps + 1; i++) for (const s of inTurn(i)) get[side(s)].push(await download(s, 'big.bin', data.bigSize, 1));
    log(`dav ${get.label}: API ${cell(get.ref, 'MiB/s')}, WebDAV ${cell(get.fileCloud, 'MiB/s')}`);

    const put = row('dav_put', `${bigMiB} MiB raw PUT`, 'MiB/s', true, { kind: 'ratio_at_least', value: 0.9 });
    rows.push(put);
    for (let i = 0; i < reps; i++) {
      for (const s of inTurn(i)) put[side(s)].push((await upload(s, data.dir, `${data.dir}/big.bin`, data.bigSize, 1, 'raw', `dav-${s === api ? 'api' : 'dav'}-${i}`, false)).mibs);
    }
    log(`dav ${put.label}: API ${cell(put.ref, 'MiB/s')}, WebDAV ${cell(put.fileCloud, 'MiB/s')}`);

    const count = data.manyCount.toLocaleString('en-US');
    const seconds = o.quick ? 2 : Math.max(5, o.seconds);
    const checkCount = (what: string, n: number) => {
      if (n !== data.manyCount) throw new BenchError(`${what} listed ${n} entries, expected ${data.manyCount}`);
    };
    // Two PROPFINDs: no body (allprop: every live property, supportedlock included — cadaver, litmus)
    // and the property list Finder sends (rclone's and gvfs's are alike): what a mounted folder costs.
    const bodies: { id: string; label: string; body: string | undefined }[] = [
      { id: 'dav_propfind', label: 'allprop', body: undefined },
      { id: 'dav_propfind_finder', label: "Finder's properties", body: FINDER_PROPFIND },
    ];
    for (const b of bodies) {
      const list = row(b.id, `${count}-entry folder: Depth-1 PROPFIND, ${b.label} [API: JSON listing]`, 'req/s', true, { kind: 'ratio_at_least', value: 1.0 });
      rows.push(list);
      const headers: Record<string, string> = b.body ? { depth: '1', 'content-type': 'application/xml; charset=utf-8' } : { depth: '1' };
      for (let i = 0; i < reps; i++) {
        for (const s of inTurn(i)) {
          if (s === api) list.ref.push(await rate(api, 'GET', api.path('many/'), {}, undefined, seconds, (r) => checkCount('GET many/', (JSON.parse(r) as { entries: unknown[] }).entries.length)));
          else list.fileCloud.push(await rate(dav, 'PROPFIND', dav.path('many/'), headers, b.body, seconds, (r) => checkCount('PROPFIND many/', r.split('<D:response>').length - 2)));
        }
      }
      log(`dav ${list.label}: API ${cell(list.ref, 'req/s')}, WebDAV ${cell(list.fileCloud, 'req/s')}`);
    }
    return { rows };
  } finally {
    if (fc) await stopFileCloud(fc);
  }
}
