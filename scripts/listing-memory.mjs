#!/usr/bin/env node
/* global fetch, performance, setInterval, clearInterval -- Node 20 globals */
// Server memory and time while listing big folders (issue 18: "a 100,000-entry folder lists with
// memory flat and time linear"). For each size: a fresh data dir with a folder of that many empty
// files (named as bench/setup names many/), File Cloud from the build (or --fc-bin) with
// --workers 1 (one process to watch), then sequential listings and 8 concurrent ones, each read
// to the end; VmRSS / VmHWM from /proc/<pid>/status, sampled every 10 ms.
//   npm run build && node scripts/listing-memory.mjs [--fc-bin PATH] [--sizes 10000,100000] [--reps 3]
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { spawnFileCloud } from '../dist/test/kit/file-cloud-process.js';

const { values } = parseArgs({ options: { 'fc-bin': { type: 'string' }, sizes: { type: 'string', default: '10000,100000' }, reps: { type: 'string', default: '3' } } });
const sizes = values.sizes.split(',').map(Number);
const reps = Number(values.reps);
const PASSWORD = 'listing-memory-password';

const memory = async (pid) => {
  const s = await readFile(`/proc/${pid}/status`, 'utf8');
  const kib = (k) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(s)?.[1] ?? NaN);
  return { rss: kib('VmRSS') / 1024, hwm: kib('VmHWM') / 1024 };
};

async function list(url, headers) {
  const t0 = performance.now();
  const res = await fetch(url, { headers });
  if (res.status !== 200) throw new Error(`listing answered ${res.status}`);
  let bytes = 0;
  for await (const c of res.body) bytes += c.length;
  return { ms: performance.now() - t0, bytes };
}

/** The process's CPU time so far (user + system), in ms. */
const cpuMs = async (pid) => {
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
};

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

for (const size of sizes) {
  const dataDir = await mkdtemp(join(tmpdir(), 'fc-listing-mem-'));
  const folder = join(dataDir, 'storage', 'admin', 'many');
  await mkdir(folder, { recursive: true });
  for (let i = 0; i < size; i += 1000) {
    await Promise.all(Array.from({ length: Math.min(1000, size - i) }, (_, j) => writeFile(join(folder, `e${String(i + j).padStart(String(size).length, '0')}.txt`), '')));
  }
  const fc = await spawnFileCloud({ bin: values['fc-bin'], dataDir, args: ['--workers', '1'], env: { FILE_CLOUD_ADMIN_PASSWORD: PASSWORD }, inheritFileCloudEnv: false, logFile: join(dataDir, 'server.log'), startTimeoutMs: 30_000 });
  try {
    const pid = fc.proc.pid;
    const login = await fetch(`${fc.url}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: PASSWORD }) });
    const headers = { authorization: `Bearer ${(await login.json()).access_token}` };
    const url = `${fc.url}/storage/admin/many/`;
    const idle = await memory(pid);
    let peak = idle.rss;
    const sampler = setInterval(() => memory(pid).then((m) => (peak = Math.max(peak, m.rss)), () => undefined), 10);
    const warm = await list(url, headers);
    const times = [];
    const cpu0 = await cpuMs(pid);
    for (let r = 0; r < reps; r++) times.push((await list(url, headers)).ms);
    const cpuPerListing = ((await cpuMs(pid)) - cpu0) / reps;
    const sequentialPeak = peak;
    const t0 = performance.now();
    await Promise.all(Array.from({ length: 8 }, () => list(url, headers)));
    const concurrentMs = performance.now() - t0;
    clearInterval(sampler);
    const end = await memory(pid);
    console.log(
      JSON.stringify({
        entries: size,
        answer_bytes: warm.bytes,
        listing_ms_median: Math.round(median(times)),
        us_per_entry: Number(((median(times) * 1000) / size).toFixed(2)),
        server_cpu_ms_per_listing: Math.round(cpuPerListing),
        rss_idle_mib: Math.round(idle.rss),
        rss_peak_sequential_mib: Math.round(sequentialPeak),
        rss_peak_8_concurrent_mib: Math.round(Math.max(peak, end.rss)),
        vmhwm_mib: Math.round(end.hwm),
        eight_concurrent_ms: Math.round(concurrentMs),
      }),
    );
  } finally {
    await fc.stop('SIGTERM', 5000);
    await rm(dataDir, { recursive: true, force: true });
  }
}
