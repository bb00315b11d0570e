/**
 * s3smallput (issue 30): the smallput load (2,000 × 4 KiB over 8 keep-alive
 * connections, wrk) against File Cloud on S3 (radosgw) + PostgreSQL + Redis,
 * the services started as for --nodes, default workers, beside the same
 * number of 4 KiB PutObjects done directly with the AWS SDK, 8 at a time, from
 * this process on the same radosgw (target: each of File Cloud's API raw PUT,
 * multipart PUT of 100 files per request and WebDAV PUT ≥ 0.8× the direct
 * PUTs of the same repetition). The direct side's client CPU is this
 * process's, on the same 2 cores, as in the other S3 rows.
 *
 * File Cloud writes each file as one PutObject (after staging it: see
 * src/storage/s3/upload.ts) and commits its metadata in PostgreSQL; the direct
 * side writes only the object. After each run the objects under the run's
 * prefix are counted (at least the files asked for).
 *
 * Issue 53: then the same rows with 20 ms added to every store request, as a
 * provider across a network adds (File Cloud restarted on the same data with
 * its store traffic through a delaying proxy, the SDK's through another:
 * lib/store-proxy.ts), and the store requests each operation makes, counted
 * by File Cloud's proxy before the delay is turned on (s3-store-requests.ts).
 * Each run also logs the CPU µs a file of the uploader (File Cloud's processes, or this process
 * for the SDK) and of the services, steadier than the rates on a shared machine.
 *
 * Beside File Cloud, with and without the delay, the S3 ceiling (bench/s3-ceiling-server.ts: a bare
 * node:http server doing only what the contract asks of a small upload on S3 + PostgreSQL: the name
 * looked up in the index, one conditional PutObject, the entry inserted) on the same bucket, under a
 * prefix of its own (behind a delaying proxy of its own for the delayed rows): what Node, the SDK
 * and PostgreSQL allow here, against the direct PUTs.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { join } from 'node:path';
import { logIn, startFileCloud, stopFileCloud } from '../lib/file-cloud.js';
import type { Options } from '../lib/options.js';
import { BenchError, USER } from '../lib/paths.js';
import { createBucket, emptyBucket, listFolder, putMany, s3Client } from '../lib/s3-direct.js';
import { memstoreBytes } from '../lib/s3-service.js';
import { startS3Ceiling } from '../lib/node-ceiling.js';
import { cpuSeconds, stopChild } from '../lib/processes.js';
import type { Server } from '../lib/server.js';
import { cell, row, type Row } from '../lib/stats.js';
import { startStoreProxy, type StoreProxy } from '../lib/store-proxy.js';
import { countStoreRequests, requestTable, type RequestCount } from './s3-store-requests.js';
import { wrkPut } from '../lib/wrk-put.js';
import { startDistributed, type Distributed } from './nodes.js';
import { apiMkdir, CONNECTIONS, davMkdir, davOf, FILE_SIZE, PER_MULTIPART } from './small-uploads.js';
import { FC_PREFIX } from './s3/context.js';

export type S3SmallUploadsRun = { rows: Row[]; details: Record<string, unknown> };

/** Issue 30: File Cloud's small PUTs on S3 + PostgreSQL at 0.8× the SDK's direct PUTs or better. */
const TARGET = { kind: 'ratio_at_least', value: 0.8 } as const;
/** Issue 53: what a provider's network adds to every store request, in the rows that say so. */
const DELAY_MS = 20;

export async function s3SmallUploadsScenario(o: Options, tmp: string, log: (msg: string) => void): Promise<S3SmallUploadsRun> {
  const files = o.quick ? 200 : 2000;
  const reps = o.quick ? 1 : o.reps;
  let services: Distributed | undefined;
  let s3: S3Client | undefined;
  let bucket: string | undefined;
  let fc: Server | undefined;
  let ceiling: Server | undefined;
  const proxies: StoreProxy[] = [];
  const clients: S3Client[] = [];
  try {
    services = await startDistributed(tmp, 'services-s3-small', memstoreBytes(0), 's3smallput', log);
    const { backing, db, redisUrl } = services;
    const client = s3Client(backing.s3);
    s3 = client;
    const bucketName = `fc-bench-${randomBytes(6).toString('hex')}`;
    await createBucket(client, bucketName);
    bucket = bucketName;
    const dataDir = join(tmp, 's3-small-data');
    /** File Cloud on the bucket, its store requests sent to `endpoint`. */
    const start = async (name: string, endpoint: string) => {
      const storage = `s3://${bucketName}/${FC_PREFIX}?endpoint=${encodeURIComponent(endpoint)}&region=${backing.s3.region}&path_style=true`;
      const started = await startFileCloud(o, tmp, dataDir, {
        name,
        logName: `file-cloud-${name.replace(/[^A-Za-z0-9]+/g, '-')}.log`,
        // The leader's rescan 30 s after start lists the whole bucket (the thousands of files of the runs before): it
        // fell inside the store-request count (0.80 listings per WebDAV PUT) and would fall inside a timed run.
        args: ['--storage', storage, '--index-interval', '0'],
        env: { FILE_CLOUD_DATABASE: db.url, FILE_CLOUD_REDIS: redisUrl, AWS_ACCESS_KEY_ID: backing.s3.accessKeyId, AWS_SECRET_ACCESS_KEY: backing.s3.secretAccessKey, AWS_REGION: backing.s3.region },
      });
      fc = started.server;
      await logIn(fc, started.password);
      return { api: fc, dav: davOf(fc, started.password) };
    };

    /** CPU seconds so far of `pids` (0 for a process gone meanwhile). */
    const cpuOf = async (pids: number[]) => [...(await cpuSeconds(pids)).values()].reduce((a, b) => a + b, 0);
    /**
     * `run`'s files/s, with the CPU µs a file of the uploader (File Cloud's processes, or this process for the SDK's
     * side) and of the services (radosgw, PostgreSQL, Redis) while it ran: on 2 shared cores steadier than a rate.
     */
    const timed = async (uploader: () => Promise<number>, run: () => Promise<{ rate: number; files: number }>) => {
      const pids = await backing.pids();
      const [u0, s0] = [await uploader(), await cpuOf(pids)];
      const { rate, files: done } = await run();
      const [u1, s1] = [await uploader(), await cpuOf(pids)];
      return { rate, uploaderUs: ((u1 - u0) / done) * 1e6, servicesUs: ((s1 - s0) / done) * 1e6 };
    };
    const ownCpu = async () => {
      const u = process.cpuUsage();
      return (u.user + u.system) / 1e6;
    };
    const payload = randomBytes(FILE_SIZE);
    /** The direct side: `files` PutObjects of 4 KiB under a prefix of their own, 8 at a time. */
    const direct = (via: S3Client, prefix: string, n: number) =>
      timed(ownCpu, async () => {
        const keys = Array.from({ length: n }, (_, i) => `direct-small/${prefix}/${i}.bin`);
        const t0 = performance.now();
        await putMany(via, bucketName, keys, () => payload, CONNECTIONS);
        return { rate: n / ((performance.now() - t0) / 1000), files: n };
      });
    const cpuText = (m: { uploaderUs: number; servicesUs: number }, who: string) => `CPU µs a file: ${who} ${Math.round(m.uploaderUs)}, services (S3, PostgreSQL, Redis) ${Math.round(m.servicesUs)}; load ${os.loadavg()[0]?.toFixed(1)}`;
    /** A door under load; `stored`: the key prefix its files land under (File Cloud's, unless a ceiling's). */
    type Kind = { id: string; server: Server; mkdir: (folder: string) => Promise<void>; perRequest: number; stored?: string };
    const kindsOf = (api: Server, dav: Server): Kind[] => [
      { id: 'api_raw', server: api, mkdir: apiMkdir(api), perRequest: 1 },
      { id: 'api_multipart', server: api, mkdir: apiMkdir(api), perRequest: PER_MULTIPART },
      { id: 'dav', server: dav, mkdir: davMkdir(dav), perRequest: 1 },
    ];
    const viaFc = async (k: Kind, folder: string, n: number) => {
      await k.mkdir(folder);
      const pids = await k.server.pids();
      const m = await timed(
        () => cpuOf(pids),
        async () => {
          const r = await wrkPut(k.server, tmp, { name: `s3-${k.id}-${folder}`, folder: k.server.path(`${folder}/`), files: n, fileSize: FILE_SIZE, connections: CONNECTIONS, perRequest: k.perRequest, maxSeconds: o.quick ? 60 : 300 });
          return { rate: r.filesPerSecond, files: r.requests * k.perRequest };
        },
      );
      const stored = await listFolder(client, bucketName, `${k.stored ?? FC_PREFIX}/${USER}/${folder}/`);
      if (stored < n) throw new BenchError(`${k.server.name} on S3: ${stored} objects in ${folder}, expected at least ${n}`);
      return m;
    };

    const n = files.toLocaleString('en-US');
    const runs: Record<string, unknown>[] = [];
    /** The three rows, `direct` the SDK's client, File Cloud's doors in `kinds`; `tag` names the set-up in ids, labels and logs. */
    const measure = async (via: S3Client, kinds: Kind[], tag: { id: string; label: string }): Promise<Record<string, Row>> => {
      const rows: Record<string, Row> = {
        api_raw: row(`s3_small_put_api_raw${tag.id}`, `${n} × 4 KiB, ${CONNECTIONS} connections${tag.label}: API raw PUT`, 'files/s', true, TARGET),
        api_multipart: row(`s3_small_put_api_multipart${tag.id}`, `${n} × 4 KiB, ${CONNECTIONS} connections${tag.label}: API multipart PUT, ${PER_MULTIPART} files per request`, 'files/s', true, TARGET),
        dav: row(`s3_small_put_dav${tag.id}`, `${n} × 4 KiB, ${CONNECTIONS} connections${tag.label}: WebDAV PUT`, 'files/s', true, TARGET),
        s3_ceiling: row(`s3_small_put_ceiling${tag.id}`, `${n} × 4 KiB, ${CONNECTIONS} connections${tag.label}: the S3 ceiling (a bare node:http server: the name looked up in PostgreSQL, one conditional PutObject, the entry inserted)`, 'files/s', true, undefined, '[File Cloud column: that server]'),
        api_raw_vs_ceiling: row(`s3_small_put_api_raw_vs_ceiling${tag.id}`, `${n} × 4 KiB, ${CONNECTIONS} connections${tag.label}: API raw PUT against the S3 ceiling`, 'files/s', true, undefined, '[reference: the S3 ceiling]'),
      };
      // A first run of each, not counted (connections to radosgw and PostgreSQL, JIT).
      await direct(via, `warm-up${tag.id}`, Math.min(files, 200));
      for (const k of kinds) await viaFc(k, `s3-small-${k.id}${tag.id}-warm-up`, Math.min(files, 200));
      for (let rep = 0; rep < reps; rep++) {
        const d = await direct(via, `run${tag.id}-${rep}`, files);
        const ref = d.rate;
        runs.push({ subject: 'direct', setUp: tag.id, rep, filesPerSecond: ref, cpuUsPerFile: d.uploaderUs, servicesCpuUsPerFile: d.servicesUs });
        log(`s3smallput${tag.id} direct #${rep}: ${Math.round(ref)} files/s; ${cpuText(d, 'the SDK (bench process)')}`);
        const rateOf = new Map<string, number>();
        for (const k of rep % 2 === 0 ? kinds : [...kinds].reverse()) {
          const m = await viaFc(k, `s3-small-${k.id}${tag.id}-${rep}`, files);
          const rate = m.rate;
          runs.push({ subject: k.id, setUp: tag.id, rep, filesPerSecond: rate, cpuUsPerFile: m.uploaderUs, servicesCpuUsPerFile: m.servicesUs });
          log(`s3smallput${tag.id} ${k.id} #${rep}: ${Math.round(rate)} files/s; ${cpuText(m, 'File Cloud')}`);
          const r = rows[k.id] as Row;
          r.fileCloud.push(rate);
          r.ref.push(ref);
          rateOf.set(k.id, rate);
        }
        const [raw, top] = [rateOf.get('api_raw'), rateOf.get('s3_ceiling')];
        if (raw !== undefined && top !== undefined) {
          rows.api_raw_vs_ceiling?.fileCloud.push(raw);
          rows.api_raw_vs_ceiling?.ref.push(top);
        }
      }
      return rows;
    };

    const direct0 = await start('File Cloud (S3 + PostgreSQL)', backing.s3.endpoint);
    /** The S3 ceiling with its store requests sent to `endpoint`, its objects under `prefix`; stopped by the caller (`ceiling`). */
    const startCeiling = async (prefix: string, endpoint: string): Promise<Kind> => {
      ceiling = await startS3Ceiling({ bucket: bucketName, prefix, endpoint, region: backing.s3.region, accessKeyId: backing.s3.accessKeyId, secretAccessKey: backing.s3.secretAccessKey, databaseUrl: db.url });
      return { id: 's3_ceiling', server: ceiling, mkdir: () => Promise.resolve(), perRequest: 1, stored: prefix };
    };
    const stopCeiling = async () => {
      if (ceiling?.proc) await stopChild(ceiling.proc, 'SIGTERM', 5_000);
      ceiling = undefined;
    };
    const near = await measure(client, [...kindsOf(direct0.api, direct0.dav), await startCeiling('ceiling', backing.s3.endpoint)], { id: '', label: '' });
    await stopCeiling();
    // The same data and services, File Cloud's store traffic through a proxy: first counted, then delayed.
    await stopFileCloud(direct0.api);
    fc = undefined;
    const fcProxy = await startStoreProxy(backing.s3.endpoint);
    const sdkProxy = await startStoreProxy(backing.s3.endpoint, DELAY_MS);
    proxies.push(fcProxy, sdkProxy);
    const proxied = await start('File Cloud (S3 + PostgreSQL, through a proxy)', fcProxy.endpoint);
    const requests: RequestCount[] = await countStoreRequests(proxied.api, proxied.dav, fcProxy);
    log(`s3smallput store requests per operation:\n${requestTable(requests)}`);
    fcProxy.delayMs = DELAY_MS;
    const slowClient = s3Client({ ...backing.s3, endpoint: sdkProxy.endpoint });
    clients.push(slowClient);
    // The ceiling behind a delaying proxy of its own too (stop 80): what the least server reaches when every store request waits.
    const ceilingProxy = await startStoreProxy(backing.s3.endpoint, DELAY_MS);
    proxies.push(ceilingProxy);
    const slowCeiling = await startCeiling('ceiling-delayed', ceilingProxy.endpoint);
    const far = await measure(slowClient, [...kindsOf(proxied.api, proxied.dav), slowCeiling], { id: `_${DELAY_MS}ms`, label: `, ${DELAY_MS} ms added to every store request` });
    await stopCeiling();
    // Beside the rates: the store requests each file of the row costs.
    const perFile = { api_raw: 'raw_put', api_multipart: 'multipart_part', dav: 'dav_put' } as const;
    for (const rows of [near, far]) {
      for (const [k, r] of Object.entries(rows)) {
        const c = requests.find((q) => q.id === perFile[k as keyof typeof perFile]);
        if (c) r.note = `[${Number.isInteger(c.perOperation) ? c.perOperation : c.perOperation.toFixed(2)} store request${c.perOperation === 1 ? '' : 's'} a file]`;
      }
    }
    const used = [...Object.values(near), ...Object.values(far)].filter((r) => r.fileCloud.length > 0);
    for (const r of used) log(`s3smallput ${r.label}: ${r.id.startsWith('s3_small_put_api_raw_vs_ceiling') ? 'the S3 ceiling' : 'direct'} ${cell(r.ref, r.unit)}, ${r.id.startsWith('s3_small_put_ceiling') ? 'the S3 ceiling' : 'File Cloud'} ${cell(r.fileCloud, r.unit)}`);
    return { rows: used, details: { files, fileSize: FILE_SIZE, connections: CONNECTIONS, perMultipart: PER_MULTIPART, delayMs: DELAY_MS, runs, storeRequests: requests, storeRequestTable: requestTable(requests) } };
  } finally {
    if (ceiling?.proc) await stopChild(ceiling.proc, 'SIGTERM', 5_000);
    if (fc) await stopFileCloud(fc);
    for (const c of clients) c.destroy();
    for (const p of proxies) await p.close();
    if (s3 && bucket) await emptyBucket(s3, bucket).catch((e: unknown) => console.error(`bench: emptying S3 bucket ${bucket} failed: ${(e as Error).message}`));
    s3?.destroy();
    await services?.stop();
  }
}
