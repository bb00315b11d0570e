/** Large transfers with Node's http: downloads (MiB/s) and uploads (MiB/s and RSS growth). */
import { spawnSync } from 'node:child_process';
import { rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { expectStatus, request, type HttpResult } from './http.js';
import { BenchError, MiB } from './paths.js';
import { rssSampler } from './processes.js';
import { memTotal, type Server } from './server.js';

/** `streams` parallel GETs of one file; aggregate MiB/s from the first start to the last end. */
export async function download(server: Server, rel: string, size: number, streams: number): Promise<number> {
  const t0 = performance.now();
  const results = await Promise.all(Array.from({ length: streams }, () => request(server, 'GET', server.path(rel))));
  const seconds = (performance.now() - t0) / 1000;
  for (const r of results) {
    expectStatus(server, `GET ${rel}`, r, [200]);
    if (r.bytes !== size) throw new BenchError(`${server.name}: GET ${rel} gave ${r.bytes} bytes, expected ${size}`);
  }
  return (streams * size) / MiB / seconds;
}

/** Flushes dirty pages left by the previous upload so that it does not slow down the next one. */
export function settleDisk(): void {
  spawnSync('sync', [], { timeout: 120_000 });
}

export type UploadKind = 'raw' | 'multipart';

/**
 * Uploads `file` `count` times in parallel to up/ (raw PUT to a file path;
 * multipart PUT into the folder for File Cloud) and checks the stored sizes.
 * Returns aggregate MiB/s and, when sampling, File Cloud's/nginx's RSS growth.
 */
export async function upload(server: Server, datasetDir: string, file: string, size: number, count: number, kind: UploadKind, tag: string, sample: boolean): Promise<{ mibs: number; rssGrowth: number; peakRss: number }> {
  const names = Array.from({ length: count }, (_, i) => `${tag}-${i}.bin`);
  settleDisk();
  const t0 = performance.now();
  const { value: results, rssGrowth, peakRss } = await sampled(server, sample, () =>
    Promise.all(
      names.map((name) =>
        kind === 'multipart'
          ? request(server, 'PUT', server.path('up/'), { upload: { file, size, multipart: { filename: name } } })
          : request(server, 'PUT', server.path(`up/${name}`), { upload: { file, size } }),
      ),
    ),
  );
  const seconds = (performance.now() - t0) / 1000;
  for (const [i, r] of results.entries()) {
    expectStatus(server, `PUT ${kind} ${names[i]}`, r, [201, 204]);
    if (server.name === 'File Cloud') checkWritten(r, names[i] as string);
    const stored = await stat(join(datasetDir, 'up', names[i] as string));
    if (stored.size !== size) throw new BenchError(`${server.name}: uploaded ${names[i]} has ${stored.size} bytes, expected ${size}`);
  }
  await Promise.all(names.map((n) => rm(join(datasetDir, 'up', n), { force: true })));
  return { mibs: (count * size) / MiB / seconds, rssGrowth, peakRss };
}

/**
 * Runs `fn`, sampling the server's resident memory (every process) meanwhile
 * when `sample`: the growth from just before to the peak, and the peak (MiB).
 */
export async function sampled<T>(server: Server, sample: boolean, fn: () => Promise<T>): Promise<{ value: T; rssGrowth: number; peakRss: number }> {
  const before = await memTotal(server);
  const sampler = sample ? rssSampler(() => server.pids(), before.rss) : undefined;
  let peak = before.rss;
  let value: T;
  try {
    value = await fn();
  } finally {
    if (sampler) peak = await sampler.stop();
  }
  return { value, rssGrowth: (peak - before.rss) / MiB, peakRss: peak / MiB };
}

/** File Cloud's PUT answer names the file it wrote: it must be the name asked for. */
export function checkWritten(r: HttpResult, name: string): void {
  const written = (JSON.parse(r.body) as { files_written?: string[] }).files_written;
  if (written?.[0] !== name) throw new BenchError(`File Cloud: PUT stored ${JSON.stringify(written)}, expected ${name}`);
}
