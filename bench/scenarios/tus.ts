/**
 * tus: a big file uploaded through /tus/ (creation, then PATCHes of a fixed
 * chunk size, each a slice of the file streamed from disk) beside the same
 * file as one raw PUT, on one File Cloud server (local disk), alternating.
 * The client is a plain tus 1.0 client on Node's http (no library: the
 * figure is the server's, not a client's buffering). Targets (issue 14): each
 * chunk size ≥ 0.8 of the raw PUT, and memory flat (RSS growth sampled over
 * the server's processes during the 64 MiB-chunk upload, the same bound as a PUT).
 */
import { createReadStream } from 'node:fs';
import { rm, stat } from 'node:fs/promises';
import http from 'node:http';
import { join } from 'node:path';
import { logIn, startFileCloud, stopFileCloud } from '../lib/file-cloud.js';
import type { Options } from '../lib/options.js';
import { BenchError, MiB, USER } from '../lib/paths.js';
import { rssSampler } from '../lib/processes.js';
import { memTotal, type Server } from '../lib/server.js';
import { cell, row, type Row } from '../lib/stats.js';
import { settleDisk, upload } from '../lib/transfers.js';
import type { Dataset } from './context.js';

export type TusRun = { rows: Row[] };

type Answer = { status: number; headers: http.IncomingHttpHeaders; body: string };

function send(s: Server, method: string, path: string, headers: Record<string, string>, body?: { file: string; start: number; end: number }): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${s.base}${path}`, { method, headers: { ...s.headers, 'tus-resumable': '1.0.0', ...headers }, agent: false }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    if (!body) return void req.end();
    const src = createReadStream(body.file, { start: body.start, end: body.end - 1, highWaterMark: 256 * 1024 });
    src.on('error', (e) => req.destroy(e));
    src.pipe(req);
  });
}

/** One tus upload of `file` into up/ as `name`, `chunk` bytes per PATCH; MiB/s. */
async function tusUpload(s: Server, file: string, size: number, name: string, chunk: number): Promise<number> {
  const t0 = performance.now();
  const meta = `filename ${Buffer.from(name).toString('base64')},folder ${Buffer.from(`/${USER}/up`).toString('base64')}`;
  const created = await send(s, 'POST', '/tus/', { 'upload-length': String(size), 'upload-metadata': meta });
  if (created.status !== 201 || !created.headers.location) throw new BenchError(`${s.name}: tus creation answered ${created.status}: ${created.body.slice(0, 300)}`);
  const url = new URL(created.headers.location, s.base).pathname;
  let last: Answer | undefined;
  for (let offset = 0; offset < size; offset += chunk) {
    const end = Math.min(size, offset + chunk);
    last = await send(s, 'PATCH', url, { 'upload-offset': String(offset), 'content-type': 'application/offset+octet-stream', 'content-length': String(end - offset) }, { file, start: offset, end });
    if (last.status !== 204 || last.headers['upload-offset'] !== String(end)) throw new BenchError(`${s.name}: tus PATCH at ${offset} answered ${last.status} (offset ${String(last.headers['upload-offset'])}): ${last.body.slice(0, 300)}`);
  }
  const seconds = (performance.now() - t0) / 1000;
  if (last?.headers['file-cloud-path'] !== `/${USER}/up/${name}`) throw new BenchError(`${s.name}: tus upload stored ${String(last?.headers['file-cloud-path'])}, expected /${USER}/up/${name}`);
  return size / MiB / seconds;
}

export async function tusScenario(o: Options, tmp: string, dataDir: string, data: Dataset, log: (msg: string) => void): Promise<TusRun> {
  let fc: Server | undefined;
  try {
    const started = await startFileCloud(o, tmp, dataDir, { name: 'File Cloud', logName: 'file-cloud-tus.log' });
    fc = started.server;
    await logIn(fc, started.password);
    const s: Server = fc;
    const reps = o.quick ? 1 : o.reps;
    const bigMiB = Math.round(data.bigSize / MiB);
    const file = `${data.dir}/big.bin`;
    const stored = join(data.dir, 'up');
    const rows: Row[] = [];
    const chunks = [8 * MiB, 64 * MiB];
    const byChunk = chunks.map((c) => row(`tus_${c / MiB}m`, `${bigMiB} MiB: tus in ${c / MiB} MiB chunks [ref: raw PUT]`, 'MiB/s', true, { kind: 'ratio_at_least', value: 0.8 }));
    const growth = row('tus_rss', `RSS growth during a ${bigMiB} MiB tus upload, 64 MiB chunks`, 'MiB', false, { kind: 'fc_at_most', value: 32 });
    rows.push(...byChunk, growth);
    for (let i = 0; i < reps; i++) {
      const ref = (await upload(s, data.dir, file, data.bigSize, 1, 'raw', `tus-ref-${i}`, false)).mibs;
      for (const [k, c] of chunks.entries()) {
        const name = `tus-${c / MiB}m-${i}.bin`;
        settleDisk();
        const sample = c === 64 * MiB;
        const before = sample ? (await memTotal(s)).rss : 0;
        const sampler = sample ? rssSampler(() => s.pids(), before) : undefined;
        let mibs: number;
        try {
          mibs = await tusUpload(s, file, data.bigSize, name, c);
        } finally {
          if (sampler) growth.fileCloud.push(((await sampler.stop()) - before) / MiB);
        }
        const size = (await stat(join(stored, name))).size;
        if (size !== data.bigSize) throw new BenchError(`File Cloud: tus upload ${name} has ${size} bytes, expected ${data.bigSize}`);
        await rm(join(stored, name), { force: true });
        const r = byChunk[k] as Row;
        r.ref.push(ref);
        r.fileCloud.push(mibs);
      }
    }
    for (const r of byChunk) log(`tus ${r.label}: PUT ${cell(r.ref, 'MiB/s')}, tus ${cell(r.fileCloud, 'MiB/s')}`);
    log(`tus ${growth.label}: ${cell(growth.fileCloud, 'MiB')}`);
    return { rows };
  } finally {
    if (fc) await stopFileCloud(fc);
  }
}
