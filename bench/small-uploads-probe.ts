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
 *   --profile          File Cloud with --cpu-prof (bench/results/profiles/)
 *   --tmpfs            the data dir on /dev/shm (fsync is a no-op there: nothing durable)
 *   --fc-arg A         more `serve` arguments (e.g. --log-level=warn)
 *   --fc-bin F         another build's bin/file-cloud.js (before/after a change)
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
import { wrkPut } from './lib/wrk-put.js';

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  let workers = 'auto';
  let kind = 'raw';
  let files = 2000;
  let reps = 3;
  let straced = false;
  let tmpfs = false;
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
    else if (a === '--tmpfs') tmpfs = true;
    else if (a === '--profile') passOn.push('--profile');
    else if (a === '--fc-arg') fcArgs.push(v());
    else if (a.startsWith('--fc-arg=')) fcArgs.push(a.slice('--fc-arg='.length));
    else if (a === '--fc-bin') passOn.push('--fc-bin', resolve(v()));
    else throw new BenchError(`unknown option ${a}`);
  }
  if (!['raw', 'multipart', 'dav'].includes(kind)) throw new BenchError('--kind must be raw, multipart or dav');
  const o = { ...parseOptions(passOn), fcArgs };
  const tmp = await mkdtemp(join(os.tmpdir(), 'file-cloud-probe-'));
  const dataDir = tmpfs ? await mkdtemp('/dev/shm/file-cloud-probe-') : join(tmp, 'data');
  let fc: Server | undefined;
  try {
    const started = await startFileCloud(o, tmp, dataDir, { name: 'File Cloud', args: ['--workers', workers] });
    fc = started.server;
    await logIn(fc, started.password);
    const target: Server = kind === 'dav' ? { ...fc, headers: { authorization: `Basic ${Buffer.from(`${USER}:${started.password}`).toString('base64')}` }, path: (rel) => `/dav/${USER}/${rel}` } : fc;
    const perRequest = kind === 'multipart' ? 100 : 1;
    const pids = await fc.pids();
    console.log(`probe: File Cloud pids ${pids.join(' ')} (--workers ${workers}), ${kind}, ${files} files × ${reps}, load ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}${tmpfs ? ', data dir on tmpfs' : ''}`);
    const run = async (folder: string, n: number) => {
      const mk = await request(fc as Server, 'POST', (fc as Server).path(`${folder}/`), { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ action: 'CreateFolder' }) });
      expectStatus(fc as Server, 'CreateFolder', mk, [201]);
      return wrkPut(target, tmp, { name: folder, folder: target.path(`${folder}/`), files: n, fileSize: 4096, connections: 8, perRequest, maxSeconds: 600 });
    };
    await run('warm-up', 200);
    for (let rep = 0; rep < reps; rep++) {
      let strace: ReturnType<typeof spawn> | undefined;
      const out = join(tmp, `strace-${rep}.txt`);
      if (straced) {
        strace = spawn('strace', ['-c', '-w', '-f', '-o', out, ...pids.flatMap((p) => ['-p', String(p)])], { stdio: 'ignore' });
        children.add(strace);
        await sleep(1500);
      }
      const cpu0 = await cpuSeconds(pids);
      const r = await run(`run-${rep}`, files);
      const cpu1 = await cpuSeconds(pids);
      if (strace) await stopChild(strace, 'SIGINT', 10_000);
      const per = (p: number) => (((cpu1.get(p) ?? 0) - (cpu0.get(p) ?? 0)) / (r.requests * perRequest)) * 1e6;
      console.log(`run ${rep}: ${Math.round(r.filesPerSecond)} files/s (${r.seconds.toFixed(2)} s; p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms); server CPU µs/file ${pids.map((p) => `${p}: ${Math.round(per(p))}`).join(', ')}; total ${Math.round(pids.reduce((a, p) => a + per(p), 0))}; load ${os.loadavg()[0]?.toFixed(2)}`);
      if (strace) console.log(`strace -c -w -f (seconds summed over every thread; ${r.requests * perRequest} files):\n${await readFile(out, 'utf8')}`);
    }
  } finally {
    if (fc) await stopFileCloud(fc);
    await rm(tmp, { recursive: true, force: true });
    if (tmpfs) await rm(dataDir, { recursive: true, force: true });
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
