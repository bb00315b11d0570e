/**
 * thumbs: 256 px thumbnails of 12 MP JPEGs (4000 × 3000, made by the bench
 * with sharp: 20 files, 4 with --quick), drawn by File Cloud over HTTP
 * (`GET …?thumbnail=256`, as many requests at once as there are CPUs)
 * beside Debian's `vipsthumbnail` (libvips-tools) on the very same files,
 * one process per CPU, each given its share of the files, writing WebP
 * without metadata with File Cloud's encoder settings (quality 80, effort 2),
 * so both do the same work. Both draw every file once per repetition: File Cloud's
 * cache is keyed by path, so the folder is renamed before each repetition
 * (a cold cache). Target (issue 16): at least 0.7 of vipsthumbnail's
 * throughput. The same thumbnails again, from the cache, are logged too.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { logIn, startFileCloud, stopFileCloud } from '../lib/file-cloud.js';
import { expectStatus, request } from '../lib/http.js';
import type { Options } from '../lib/options.js';
import { BenchError } from '../lib/paths.js';
import type { Server } from '../lib/server.js';
import { cell, row, type Row } from '../lib/stats.js';
import type { Dataset } from './context.js';

export type ThumbsRun = { rows: Row[]; files: number; parallel: number; vips: string };

/** A 12 MP photo-like JPEG: smooth gradients with noise, so it compresses like a photo, not like a flat colour. */
async function photo(i: number): Promise<Buffer> {
  const w = 4000;
  const h = 3000;
  const base = await sharp({ create: { width: 400, height: 300, channels: 3, background: { r: (i * 53) % 256, g: (i * 97) % 256, b: (i * 31) % 256 } } })
    .composite([{ input: { create: { width: 200, height: 150, channels: 3, background: { r: 240, g: 220, b: 40 } } }, left: (i * 17) % 200, top: (i * 11) % 150 }])
    .png()
    .toBuffer();
  const noise = await sharp({ create: { width: w, height: h, channels: 3, background: { r: 0, g: 0, b: 0 }, noise: { type: 'gaussian', mean: 128, sigma: 18 } } }).raw().toBuffer();
  return sharp(base)
    .resize(w, h, { kernel: 'cubic' })
    .composite([{ input: noise, raw: { width: w, height: h, channels: 3 }, blend: 'soft-light' }])
    .jpeg({ quality: 88 })
    .toBuffer();
}

function runVips(dir: string, names: string[], out: string, parallel: number): Promise<void> {
  const groups: string[][] = Array.from({ length: parallel }, () => []);
  names.forEach((n, i) => groups[i % parallel]?.push(join(dir, n)));
  return Promise.all(
    groups
      .filter((g) => g.length > 0)
      .map(
        (files) =>
          new Promise<void>((resolve, reject) => {
            const p = spawn('vipsthumbnail', ['-s', '256', '-o', `${out}/%s.webp[Q=80,effort=2,strip]`, ...files], { stdio: ['ignore', 'ignore', 'pipe'] });
            let err = '';
            p.stderr.on('data', (c: Buffer) => (err += c.toString()));
            p.on('error', reject);
            p.on('close', (code) => (code === 0 ? resolve() : reject(new BenchError(`vipsthumbnail exited with ${code}: ${err.trim()}`))));
          }),
      ),
  ).then(() => undefined);
}

/** GETs every thumbnail, `parallel` at a time; images per second. */
async function drawAll(s: Server, folder: string, names: string[], parallel: number): Promise<number> {
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < names.length) {
        const name = names[next++] as string;
        const r = await request(s, 'GET', `${s.path(`${folder}/${name}`)}?thumbnail=256`, { timeoutMs: 120_000 });
        expectStatus(s, `GET ${name}?thumbnail=256`, r, [200]);
        if (r.bytes < 100) throw new BenchError(`the thumbnail of ${name} has only ${r.bytes} bytes`);
      }
    }),
  );
  return names.length / ((performance.now() - t0) / 1000);
}

export async function thumbsScenario(o: Options, tmp: string, dataDir: string, data: Dataset, log: (msg: string) => void): Promise<ThumbsRun> {
  if (spawnSync('sh', ['-c', 'command -v vipsthumbnail'], { encoding: 'utf8' }).status !== 0) {
    throw new BenchError('vipsthumbnail is missing: bench/setup installs libvips-tools (apt-get install libvips-tools)');
  }
  const vips = spawnSync('vipsthumbnail', ['--vips-version'], { encoding: 'utf8' }).stdout.trim();
  const count = o.quick ? 4 : 20;
  const parallel = os.availableParallelism();
  let current = join(data.dir, 'thumbsrc-0');
  await rm(current, { recursive: true, force: true });
  await mkdir(current, { recursive: true });
  const names: string[] = [];
  for (let i = 0; i < count; i++) {
    const name = `photo-${String(i).padStart(3, '0')}.jpg`;
    await writeFile(join(current, name), await photo(i));
    names.push(name);
  }
  log(`thumbs: ${count} JPEGs of 4000 × 3000 made`);
  const out = join(tmp, 'vipsthumbnail-out');
  let fc: Server | undefined;
  try {
    const started = await startFileCloud(o, tmp, dataDir, { name: 'File Cloud', logName: 'file-cloud-thumbs.log' });
    fc = started.server;
    await logIn(fc, started.password);
    const s: Server = fc;
    const reps = o.quick ? 1 : o.reps;
    const draw = row('thumbs_256', `256 px thumbnails of ${count} × 12 MP JPEGs, ${parallel} at a time (images/s) [ref: vipsthumbnail, ${parallel} processes]`, 'req/s', true, { kind: 'ratio_at_least', value: 0.7 });
    const cached: number[] = [];
    for (let i = 0; i < reps; i++) {
      const folder = `thumbsrc-${i}`;
      if (join(data.dir, folder) !== current) {
        await rename(current, join(data.dir, folder));
        current = join(data.dir, folder);
      }
      await rm(out, { recursive: true, force: true });
      await mkdir(out, { recursive: true });
      const v0 = performance.now();
      await runVips(current, names, out, parallel);
      draw.ref.push(count / ((performance.now() - v0) / 1000));
      draw.fileCloud.push(await drawAll(s, folder, names, parallel));
      cached.push(await drawAll(s, folder, names, parallel));
    }
    log(`thumbs ${draw.label}: vipsthumbnail ${cell(draw.ref, 'req/s')}, File Cloud ${cell(draw.fileCloud, 'req/s')}; again from the cache ${cell(cached, 'req/s')}`);
    return { rows: [draw], files: count, parallel, vips };
  } finally {
    if (fc) await stopFileCloud(fc);
    await rm(current, { recursive: true, force: true });
    await rm(out, { recursive: true, force: true });
  }
}
