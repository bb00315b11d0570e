/**
 * `node dist/bench/small-uploads-probe.js [options]`: where a 4 KiB upload's
 * time goes (issue 30, docs/performance.md "Small-file uploads"). Starts one
 * File Cloud on a fresh data dir, warms it up with 200 uploads, then runs
 * the smallput load (wrk, 8 keep-alive connections, bench/lib/wrk-put.ts)
 * and prints files/s and the server's CPU µs per file; optionally under
 * `strace -c -w -f` attached to every File Cloud process (wall time per
 * system call, /file), or with `--cpu-prof` (summarise with
 * `npm run bench:profile -- FILE`).
 *
 *   --workers N|auto   File Cloud's --workers (default auto)
 *   --kind raw|multipart|dav   API raw PUT, multipart PUT of 100 files, WebDAV PUT (default raw)
 *   --files N          files per measured run (default 2000)   --reps N   measured runs (default 3)
 *   --strace           the measured runs under strace -c -w -f (slower: compare only within strace runs)
 *   --strace-only L    only these system calls (e.g. clock_nanosleep,fsync), stopped by seccomp-bpf: little slowdown
 *   --warm-up N        files uploaded before the measured runs (default 200)
 *   --profile          File Cloud with --cpu-prof (bench/results/profiles/)
 *   --tmpfs            the data dir on /dev/shm (fsync is a no-op there: nothing durable)
 *   --fc-arg A         more `serve` arguments (e.g. --log-level=warn)
 *   --fc-bin F         another build's bin/file-cloud.js
 *   --before F         also this build's bin/file-cloud.js (before a change), on a data dir of its own,
 *                      the runs alternating with the build under test (ABBA) in the same invocation
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { logIn, startFileCloud, stopFileCloud } from './lib/file-cloud.js';
import { expectStatus, request } from './lib/http.js';
import { parseOptions } from './lib/options.js';
import { BenchError, USER } from './lib/paths.js';
import { children, cpuSeconds, killChildren, sleep, stopChild } from './lib/processes.js';
import type { Server } from './lib/server.js';
import { median } from './lib/stats.js';
import { settleDisk } from './lib/transfers.js';
import { wrkPut } from './lib/wrk-put.js';

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  let workers = 'auto';
  let kind = 'raw';
  let files = 2000;
  let reps = 3;
  let straced = false;
  let tmpfs = false;
  let before: string | undefined;
  let only: string | undefined;
  let warmUp = 200;
  const fcArgs: string[] = [];
  const passOn: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    const v = () => {
      const x = argv[++i];
      if (x === undefined) throw new BenchError(`${a} needs a value`);
      return x;
    };
    if (a === '--workers') workers = v();
    else if (a === '--kind') kind = v();
    else if (a === '--files') files = Number(v());
    else if (a === '--reps') reps = Number(v());
    else if (a === '--strace') straced = true;
    else if (a === '--strace-only') {
      straced = true;
      only = v();
    }
    else if (a === '--warm-up') warmUp = Number(v());
    else if (a === '--tmpfs') tmpfs = true;
    else if (a === '--profile') passOn.push('--profile');
    else if (a === '--fc-arg') fcArgs.push(v());
    else if (a.startsWith('--fc-arg=')) fcArgs.push(a.slice('--fc-arg='.length));
    else if (a === '--fc-bin') passOn.push('--fc-bin', resolve(v()));
    else if (a === '--before') before = resolve(v());
    else throw new BenchError(`unknown option ${a}`);
  }
  if (!['raw', 'multipart', 'dav'].includes(kind)) throw new BenchError('--kind must be raw, multipart or dav');
  const o = { ...parseOptions(passOn), fcArgs };
  const tmp = await mkdtemp(join(os.tmpdir(), 'file-cloud-probe-'));
  const shm = tmpfs ? await mkdtemp('/dev/shm/file-cloud-probe-') : undefined;
  const started: Server[] = [];
  try {
    type Subject = { label: string; fc: Server; target: Server; pids: number[] };
    const subjects: Subject[] = [];
    for (const [label, bin] of [...(before ? [['before', before]] : []), ['build', o.fcBin]] as [string, string][]) {
      const dataDir = join(shm ?? tmp, `data-${label}`);
      const s = await startFileCloud({ ...o, fcBin: bin }, tmp, dataDir, { name: `File Cloud (${label})`, logName: `file-cloud-${label}.log`, args: ['--workers', workers] });
      started.push(s.server);
      await logIn(s.server, s.password);
      const target: Server = kind === 'dav' ? { ...s.server, headers: { authorization: `Basic ${Buffer.from(`${USER}:${s.password}`).toString('base64')}` }, path: (rel) => `/dav/${USER}/${rel}` } : s.server;
      subjects.push({ label, fc: s.server, target, pids: await s.server.pids() });
    }
    const perRequest = kind === 'multipart' ? 100 : 1;
    console.log(`probe: ${subjects.map((x) => `${x.label}: pids ${x.pids.join(' ')}`).join('; ')} (--workers ${workers}), ${kind}, ${files} files × ${reps}, load ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}${tmpfs ? ', data dirs on tmpfs' : ''}`);
    const run = async (x: Subject, folder: string, n: number) => {
      const mk = await request(x.fc, 'POST', x.fc.path(`${folder}/`), { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ action: 'CreateFolder' }) });
      expectStatus(x.fc, 'CreateFolder', mk, [201]);
      return wrkPut(x.target, tmp, { name: `${x.label}-${folder}`, folder: x.target.path(`${folder}/`), files: n, fileSize: 4096, connections: 8, perRequest, maxSeconds: 600 });
    };
    for (const x of subjects) await run(x, 'warm-up', warmUp);
    const rates = new Map<string, number[]>(subjects.map((x) => [x.label, []]));
    for (let rep = 0; rep < reps; rep++) {
      for (const x of rep % 2 === 0 ? subjects : [...subjects].reverse()) {
        const { pids } = x;
        let strace: ReturnType<typeof spawn> | undefined;
        const out = join(tmp, `strace-${x.label}-${rep}.txt`);
        if (straced) {
          strace = spawn('strace', ['-c', '-w', '-f', ...(only ? ['--seccomp-bpf', '-e', `trace=${only}`] : []), '-o', out, ...pids.flatMap((p) => ['-p', String(p)])], { stdio: 'ignore' });
          children.add(strace);
          await sleep(1500);
        }
        settleDisk();
        const cpu0 = await cpuSeconds(pids);
        const r = await run(x, `run-${rep}`, files);
        const cpu1 = await cpuSeconds(pids);
        if (strace) await stopChild(strace, 'SIGINT', 10_000);
        const per = (p: number) => (((cpu1.get(p) ?? 0) - (cpu0.get(p) ?? 0)) / (r.requests * perRequest)) * 1e6;
        rates.get(x.label)?.push(r.filesPerSecond);
        console.log(`${x.label} run ${rep}: ${Math.round(r.filesPerSecond)} files/s (${r.seconds.toFixed(2)} s; p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms); server CPU µs/file ${pids.map((p) => `${p}: ${Math.round(per(p))}`).join(', ')}; total ${Math.round(pids.reduce((a, p) => a + per(p), 0))}; load ${os.loadavg()[0]?.toFixed(2)}`);
        if (strace) console.log(`strace -c -w -f (seconds summed over every thread; ${r.requests * perRequest} files):\n${await readFile(out, 'utf8')}`);
      }
    }
    for (const [label, xs] of rates) console.log(`${label}: median ${Math.round(median(xs))} files/s (${xs.map((x) => Math.round(x)).join(', ')})`);
  } finally {
    for (const s of started) await stopFileCloud(s);
    await rm(tmp, { recursive: true, force: true });
    if (shm) await rm(shm, { recursive: true, force: true });
  }
}

for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => {
    killChildren();
    process.exit(130);
  });
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(`probe: ${e instanceof BenchError ? e.message : (e as Error).stack}`);
    killChildren();
    process.exit(1);
  },
);
