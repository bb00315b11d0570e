/**
 * tus: resumable uploads beside File Cloud's own single-request raw PUT, on
 * one server (local disk, the dataset's big file, 1 GiB in a full run): the
 * file sent over /tus/ in 8 MiB and in 64 MiB PATCHes (a creation, then one
 * PATCH per chunk, each streamed from the file), alternating with the raw
 * PUT, and the server's RSS growth while each upload runs. Targets (issue
 * 14): at least 0.8 of the raw PUT's speed at either chunk size, and memory
 * flat (growth at most 64 MiB, whatever the file's size).
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

/** One tus request; `range` streams those bytes of `file` as the body. */
function tusRequest(s: Server, method: string, path: string, headers: Record<string, string>, body?: { file: string; start: number; end: number }): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const all: Record<string, string> = { ...s.headers, 'tus-resumable': '1.0.0', ...headers };
    if (body) {
      all['content-type'] = 'application/offset+octet-stream';
      all['content-length'] = String(body.end - body.start + 1);
    }
    const req = http.request(`${s.base}${path}`, { method, headers: all, agent: false }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    if (!body) return void req.end();
    const src = createReadStream(body.file, { start: body.start, end: body.end, highWaterMark: 256 * 1024 });
    src.on('error', (e) => req.destroy(e));
    src.pipe(req);
  });
}

/** Uploads `file` over /tus/ into up/<name> in `chunk`-byte PATCHes; MiB/s and the server's RSS growth. */
async function tusUpload(s: Server, datasetDir: string, file: string, size: number, chunk: number, name: string): Promise<{ mibs: number; rssGrowth: number }> {
  settleDisk();
  const before = await memTotal(s);
  const sampler = rssSampler(() => s.pids(), before.rss);
  const t0 = performance.now();
  let peak: number;
  let finalPath: string | undefined;
  try {
    const meta = `filename ${Buffer.from(name).toString('base64')},folder ${Buffer.from(`/${USER}/up`).toString('base64')}`;
    const created = await tusRequest(s, 'POST', '/tus/', { 'upload-length': String(size), 'upload-metadata': meta });
    if (created.status !== 201) throw new BenchError(`${s.name}: tus creation answered ${created.status}: ${created.body.slice(0, 300)}`);
    const location = created.headers.location as string;
    for (let offset = 0; offset < size; offset += chunk) {
      const end = Math.min(offset + chunk, size) - 1;
      const r = await tusRequest(s, 'PATCH', location, { 'upload-offset': String(offset) }, { file, start: offset, end });
      if (r.status !== 204 || Number(r.headers['upload-offset']) !== end + 1) throw new BenchError(`${s.name}: tus PATCH at ${offset} answered ${r.status} (${String(r.headers['upload-offset'])}): ${r.body.slice(0, 300)}`);
      finalPath = r.headers['file-cloud-path'] as string | undefined;
    }
  } finally {
    peak = await sampler.stop();
  }
  const seconds = (performance.now() - t0) / 1000;
  if (finalPath !== `/${USER}/up/${name}`) throw new BenchError(`${s.name}: tus stored ${String(finalPath)}, expected /${USER}/up/${name}`);
  const stored = await stat(join(datasetDir, 'up', name));
  if (stored.size !== size) throw new BenchError(`${s.name}: tus upload ${name} has ${stored.size} bytes, expected ${size}`);
  await rm(join(datasetDir, 'up', name), { force: true });
  return { mibs: size / MiB / seconds, rssGrowth: (peak - before.rss) / MiB };
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
    const big = `${data.dir}/big.bin`;
    const rows: Row[] = [];
    const rss = row('tus_rss', `RSS growth during a ${bigMiB} MiB upload [ref: raw PUT; File Cloud: tus, 64 MiB chunks]`, 'MiB', false, { kind: 'fc_at_most', value: 64 });
    for (const chunkMiB of [8, 64]) {
      const speed = row(`tus_${chunkMiB}m`, `${bigMiB} MiB upload: tus in ${chunkMiB} MiB PATCHes [ref: one raw PUT]`, 'MiB/s', true, { kind: 'ratio_at_least', value: 0.8 });
      rows.push(speed);
      for (let i = 0; i < reps; i++) {
        const put = await upload(s, data.dir, big, data.bigSize, 1, 'raw', `tus-ref-${chunkMiB}-${i}`, true);
        speed.ref.push(put.mibs);
        const t = await tusUpload(s, data.dir, big, data.bigSize, chunkMiB * MiB, `tus-${chunkMiB}-${i}.bin`);
        speed.fileCloud.push(t.mibs);
        if (chunkMiB === 64) {
          rss.ref.push(put.rssGrowth);
          rss.fileCloud.push(t.rssGrowth);
        }
      }
      log(`tus ${speed.label}: raw PUT ${cell(speed.ref, 'MiB/s')}, tus ${cell(speed.fileCloud, 'MiB/s')}`);
    }
    rows.push(rss);
    log(`tus ${rss.label}: raw PUT ${cell(rss.ref, 'MiB')}, tus ${cell(rss.fileCloud, 'MiB')}`);
    return { rows };
  } finally {
    if (fc) await stopFileCloud(fc);
  }
}
