/**
 * encryption (issue 51): File Cloud with `--encryption-key-file` beside the
 * very same configuration without it, both running at once, each on a data
 * dir of its own seeded with the same files through its HTTP API (the
 * dataset's 4 KiB files into small/ and its big file as big.bin: on the
 * encrypted side they are stored encrypted, which is checked on disk), the
 * loads alternating between them:
 *
 * - the big file's GET (1 stream) and raw PUT (Node's http), with the server
 *   CPU time per GiB moved (user + system of every process, /proc/<pid>/stat);
 * - 4 KiB GETs (wrk, 64 connections over the 1,000 files) and 4 KiB uploads
 *   (wrk, 8 connections), with CPU per request (pair.ts);
 * - 4 KiB Range GETs at random byte offsets of the big file (wrk, 64
 *   connections; some cross a 64 KiB chunk edge), with CPU per request.
 *
 * Before any of it, every answer is checked: the big file's GET hashes to the
 * dataset's, Range answers (first bytes, last bytes, across a chunk edge,
 * random) are the dataset's bytes, small files come back whole. Targets:
 * encrypted ÷ plain at least 0.8 (GET, PUT, 4 KiB GET, Range) and 0.9 (4 KiB
 * uploads). `--quick` runs the same with the 64 MiB file, 200 uploads and one
 * repetition: it proves the paths answer correctly, the figures mean little.
 */
import { spawnSync } from 'node:child_process';
import { createHash, randomInt } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, readFile, rm, stat, writeFile } from 'node:fs/promises';
import http from 'node:http';
import { join } from 'node:path';
import { hasMagic, storedSize } from '../../src/lib/encryption/format.js';
import { logIn, startFileCloud, stopFileCloud } from '../lib/file-cloud.js';
import { expectStatus, request } from '../lib/http.js';
import type { Options } from '../lib/options.js';
import { BenchError, MiB, USER } from '../lib/paths.js';
import { cpuSeconds } from '../lib/processes.js';
import type { Server } from '../lib/server.js';
import { cell, row, type Row } from '../lib/stats.js';
import { checkWritten, download, settleDisk } from '../lib/transfers.js';
import { runWrk } from '../lib/wrk.js';
import type { Dataset } from './context.js';
import { pairGet4k, pairSanity, pairSmallPuts, type Pair } from './pair.js';
import { apiMkdir } from './small-uploads.js';

export type EncryptionRun = { rows: Row[]; details: Record<string, unknown> };

const GiB = 1024 * MiB;
const RANGE = 4096;
const CONNECTIONS = 64;

type Side = { s: Server; dir: string; encrypted: boolean };

/** Total CPU seconds of every process of `s`. */
const cpuNow = async (s: Server): Promise<number> => [...(await cpuSeconds(await s.pids())).values()].reduce((a, b) => a + b, 0);

/** `n` tasks, `limit` at a time. */
async function inParallel(n: number, limit: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(limit, n) }, async () => {
    while (next < n) await fn(next++);
  }));
}

/** A file as stored: the plaintext's size without the key, the format's with it (and its magic first). */
async function checkStored(side: Side, rel: string, size: number): Promise<void> {
  const path = join(side.dir, 'storage', USER, rel);
  const got = (await stat(path)).size;
  const want = side.encrypted ? storedSize(size) : size;
  if (got !== want) throw new BenchError(`${side.s.name}: ${rel} is stored in ${got} bytes, expected ${want}`);
  if (!side.encrypted) return;
  const fh = await open(path, 'r');
  try {
    const head = Buffer.alloc(8);
    await fh.read(head, 0, head.length, 0);
    if (!hasMagic(head)) throw new BenchError(`${side.s.name}: ${rel} is not stored encrypted`);
  } finally {
    await fh.close();
  }
}

/** The sha256 of one GET's body (it must be 200 and `size` bytes). */
function getHash(s: Server, rel: string, size: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${s.base}${s.path(rel)}`, { headers: s.headers, agent: false }, (res) => {
      const h = createHash('sha256');
      let bytes = 0;
      res.on('data', (c: Buffer) => {
        bytes += c.length;
        h.update(c);
      });
      res.on('end', () => (res.statusCode === 200 && bytes === size ? resolve(h.digest('hex')) : reject(new BenchError(`${s.name}: GET ${rel} answered ${res.statusCode} with ${bytes} bytes, expected 200 with ${size}`))));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

async function fileHash(path: string): Promise<string> {
  const h = createHash('sha256');
  for await (const c of createReadStream(path, { highWaterMark: MiB })) h.update(c as Buffer);
  return h.digest('hex');
}

/** One raw PUT of `file` as `rel`, its answer and what it stored checked; MiB/s and server CPU seconds per GiB. */
async function putBig(side: Side, rel: string, file: string, size: number): Promise<{ mibs: number; cpuPerGiB: number }> {
  settleDisk();
  const cpu0 = await cpuNow(side.s);
  const t0 = performance.now();
  const r = await request(side.s, 'PUT', side.s.path(rel), { upload: { file, size } });
  const seconds = (performance.now() - t0) / 1000;
  const cpu = (await cpuNow(side.s)) - cpu0;
  expectStatus(side.s, `PUT ${rel}`, r, [201, 204]);
  checkWritten(r, rel.slice(rel.lastIndexOf('/') + 1));
  await checkStored(side, rel, size);
  return { mibs: size / MiB / seconds, cpuPerGiB: cpu / (size / GiB) };
}

/** The wrk script of Range GETs: `length` bytes at a random byte offset of a file of `size` bytes, per thread its own sequence. */
function rangeScript(path: string, size: number, length: number): string {
  return `-- generated by bench/scenarios/encryption.ts
local threads = 0
function setup(thread)
  thread:set("tid", threads)
  threads = threads + 1
end
function init(args)
  math.randomseed(4321 + tid)
end
-- wrk.format uses the headers it is given instead of wrk.headers (-H): merge them.
local h = {}
request = function()
  for k, v in pairs(wrk.headers) do h[k] = v end
  local start = math.random(0, ${size - length})
  h["Range"] = string.format("bytes=%d-%d", start, start + ${length - 1})
  return wrk.format("GET", ${JSON.stringify(path)}, h)
end
`;
}

/** One GET's status and body (small answers only: the body is kept). */
function getBytes(s: Server, rel: string, headers: Record<string, string> = {}): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${s.base}${s.path(rel)}`, { headers: { ...s.headers, ...headers }, agent: false }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(parts) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

async function readSpan(path: string, start: number, end: number): Promise<Buffer> {
  const fh = await open(path, 'r');
  try {
    const b = Buffer.alloc(end - start + 1);
    await fh.read(b, 0, b.length, start);
    return b;
  } finally {
    await fh.close();
  }
}

/** Before measuring: each side's answers are the dataset's bytes (whole, ranges, small files). */
async function checkAnswers(sides: Side[], data: Dataset): Promise<void> {
  const big = join(data.dir, 'big.bin');
  const want = await fileHash(big);
  const ranges: [number, number][] = [
    [0, RANGE - 1],
    [data.bigSize - RANGE, data.bigSize - 1],
    // Across the first 64 KiB chunk edge of the encrypted format.
    [64 * 1024 - 100, 64 * 1024 - 101 + RANGE],
    ...Array.from({ length: 16 }, () => {
      const start = randomInt(0, data.bigSize - RANGE);
      return [start, start + RANGE - 1] as [number, number];
    }),
  ];
  for (const { s } of sides) {
    const got = await getHash(s, 'big.bin', data.bigSize);
    if (got !== want) throw new BenchError(`${s.name}: GET big.bin is not the dataset's big.bin (sha256 ${got}, expected ${want})`);
    for (const [start, end] of ranges) {
      const r = await getBytes(s, 'big.bin', { range: `bytes=${start}-${end}` });
      if (r.status !== 206 || !r.body.equals(await readSpan(big, start, end))) throw new BenchError(`${s.name}: Range bytes=${start}-${end} of big.bin answered ${r.status}, not the dataset's bytes`);
    }
    for (const name of data.smallNames.slice(0, 8)) {
      const r = await getBytes(s, `small/${name}`);
      if (r.status !== 200 || !r.body.equals(await readFile(join(data.dir, 'small', name)))) throw new BenchError(`${s.name}: GET small/${name} answered ${r.status}, not the dataset's bytes`);
    }
  }
}

export async function encryptionScenario(o: Options, tmp: string, data: Dataset, log: (msg: string) => void): Promise<EncryptionRun> {
  const keyFile = join(tmp, 'encryption.key');
  const made = spawnSync(process.execPath, [o.fcBin, 'encryption', 'keygen', keyFile], { encoding: 'utf8', timeout: 60_000 });
  if (made.status !== 0) throw new BenchError(`file-cloud encryption keygen failed (${made.status ?? made.signal}): ${made.stderr}`);
  const plainDir = join(tmp, 'data-plain');
  const encDir = join(tmp, 'data-encrypted');
  const sides: Side[] = [];
  try {
    for (const [dir, encrypted] of [[plainDir, false], [encDir, true]] as const) {
      const name = encrypted ? 'encrypted' : 'plain';
      const started = await startFileCloud(o, tmp, dir, { name, logName: `file-cloud-${name}.log`, args: encrypted ? ['--encryption-key-file', keyFile] : [] });
      sides.push({ s: started.server, dir, encrypted });
      await logIn(started.server, started.password);
    }
    const [plain, enc] = sides as [Side, Side];
    log(`encryption: plain pid ${plain.s.proc.pid}, encrypted pid ${enc.s.proc.pid}; seeding each with small/ and big.bin through the API`);
    const big = join(data.dir, 'big.bin');
    for (const side of sides) {
      for (const folder of ['small', 'put']) await apiMkdir(side.s)(folder);
      await inParallel(data.smallNames.length, 8, async (i) => {
        const name = data.smallNames[i] as string;
        const r = await request(side.s, 'PUT', side.s.path(`small/${name}`), { upload: { file: join(data.dir, 'small', name), size: 4096 } });
        expectStatus(side.s, `PUT small/${name}`, r, [201, 204]);
      });
      await checkStored(side, `small/${data.smallNames[0] as string}`, 4096);
      await putBig(side, 'big.bin', big, data.bigSize);
    }
    await checkAnswers(sides, data);
    log('encryption: both answer the dataset\'s bytes (whole GET, Range, small files); the encrypted side stores them encrypted');

    const reps = o.quick ? 1 : o.reps;
    const bigMiB = Math.round(data.bigSize / MiB);
    const rows: Row[] = [];
    const servers = sides.map((x) => x.s);
    // ABBA: the two sides take turns going first, so neither always runs on the warmer (or busier) machine.
    const inTurn = (i: number) => (i % 2 === 0 ? sides : [...sides].reverse());
    const col = (side: Side) => (side.encrypted ? 'fileCloud' : 'ref');

    const get = row('crypt_get', `${bigMiB} MiB GET, 1 stream`, 'MiB/s', true, { kind: 'ratio_at_least', value: 0.8 });
    const getCpu = row('crypt_get_cpu', `${bigMiB} MiB GET: server CPU per GiB`, 's', false);
    rows.push(get, getCpu);
    for (const s of servers) await download(s, 'big.bin', data.bigSize, 1);
    for (let i = 0; i < reps; i++) {
      for (const side of inTurn(i)) {
        const cpu0 = await cpuNow(side.s);
        get[col(side)].push(await download(side.s, 'big.bin', data.bigSize, 1));
        getCpu[col(side)].push(((await cpuNow(side.s)) - cpu0) / (data.bigSize / GiB));
      }
    }
    log(`encryption ${get.label}: plain ${cell(get.ref, 'MiB/s')}, encrypted ${cell(get.fileCloud, 'MiB/s')}; CPU s/GiB ${cell(getCpu.ref, 's')} / ${cell(getCpu.fileCloud, 's')}`);

    const put = row('crypt_put', `${bigMiB} MiB raw PUT`, 'MiB/s', true, { kind: 'ratio_at_least', value: 0.8 });
    const putCpu = row('crypt_put_cpu', `${bigMiB} MiB raw PUT: server CPU per GiB`, 's', false);
    rows.push(put, putCpu);
    for (let i = 0; i < reps; i++) {
      for (const side of inTurn(i)) {
        const rel = `put/big-${i}.bin`;
        const r = await putBig(side, rel, big, data.bigSize);
        put[col(side)].push(r.mibs);
        putCpu[col(side)].push(r.cpuPerGiB);
        await rm(join(side.dir, 'storage', USER, rel), { force: true });
      }
    }
    log(`encryption ${put.label}: plain ${cell(put.ref, 'MiB/s')}, encrypted ${cell(put.fileCloud, 'MiB/s')}; CPU s/GiB ${cell(putCpu.ref, 's')} / ${cell(putCpu.fileCloud, 's')}`);

    const p: Pair = { id: 'crypt', tmp, data, a: plain.s, b: enc.s, reps, seconds: o.seconds, rows, log };
    await pairSanity(p);
    const get4k = await pairGet4k(p, { kind: 'ratio_at_least', value: 0.8 });
    await pairSmallPuts(p, o.quick ? 200 : 2000, { kind: 'ratio_at_least', value: 0.9 });

    const label = `4 KiB Range GET at random offsets of the ${bigMiB} MiB file`;
    const rangeRps = row('crypt_range_rps', `${label}, ${CONNECTIONS} connections`, 'req/s', true, { kind: 'ratio_at_least', value: 0.8 });
    const rangeP99 = row('crypt_range_p99', `${label}, p99 latency`, 'ms', false);
    const rangeCpu = row('crypt_range_cpu', `${label}, server CPU per request`, 'µs', false);
    rows.push(rangeRps, rangeP99, rangeCpu);
    const script = join(tmp, 'wrk-crypt-range.lua');
    await writeFile(script, rangeScript(plain.s.path('big.bin'), data.bigSize, RANGE));
    for (const s of servers) await runWrk(s, script, { name: 'crypt-range', connections: CONNECTIONS, seconds: 1, warmup: true });
    for (let i = 0; i < reps; i++) {
      for (const side of inTurn(i)) {
        const cpu0 = await cpuNow(side.s);
        const r = await runWrk(side.s, script, { name: 'crypt-range', connections: CONNECTIONS, seconds: o.seconds });
        rangeCpu[col(side)].push((((await cpuNow(side.s)) - cpu0) / r.requests) * 1e6);
        rangeRps[col(side)].push(r.rps);
        rangeP99[col(side)].push(r.p99);
      }
    }
    log(`encryption ${rangeRps.label}: plain ${cell(rangeRps.ref, 'req/s')}, encrypted ${cell(rangeRps.fileCloud, 'req/s')}; CPU per request ${cell(rangeCpu.ref, 'µs')} / ${cell(rangeCpu.fileCloud, 'µs')} µs`);
    return { rows, details: { bigSize: data.bigSize, rangeBytes: RANGE, connections: CONNECTIONS, get4kCpu: get4k } };
  } finally {
    for (const side of sides.reverse()) await stopFileCloud(side.s);
    // Two more copies of the big file: gone before the next group needs the room.
    await Promise.all([plainDir, encDir].map((d) => rm(d, { recursive: true, force: true })));
  }
}
