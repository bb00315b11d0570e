/**
 * sync (issue 55): the sync client (`file-cloud-sync`, packages/sync) beside rclone on one File
 * Cloud server (local disk):
 *   - a first sync of 10,000 × 4 KiB files up (1,000 with --quick), beside `rclone copy` of the same
 *     folder to File Cloud's WebDAV (target ≥ 1.0×, files/s);
 *   - a run with nothing changed over 100,000 files (10,000 with --quick), beside `rclone bisync`
 *     of the same tree after its --resync (target ≤ 0.10× its time), with the listing requests the
 *     server logged during the client's run (target 0) and the client's peak RSS (target ≤ 200 MiB).
 * The no-change tree is put into the server's storage folder directly and indexed by `file-cloud
 * index` (its first sync is set-up, not measured). Each run is its own process, timed from spawn to
 * exit; every process started here is stopped by its own pid.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cp, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { logIn, startFileCloud, stopFileCloud } from '../lib/file-cloud.js';
import type { Options } from '../lib/options.js';
import { BenchError, REPO, USER } from '../lib/paths.js';
import { children, memOf, sleep } from '../lib/processes.js';
import { rcloneVersion } from '../lib/rclone.js';
import type { Server } from '../lib/server.js';
import { cell, row, type Row } from '../lib/stats.js';

export type SyncRun = { rows: Row[]; details: Record<string, unknown> };

const FILE_SIZE = 4096;
const PER_FOLDER = 1000;
const RUN_LIMIT_MS = 30 * 60_000;

/** Runs a command to its end; its wall time and the peak RSS of its own process. */
async function timed(cmd: string, args: string[], env: Record<string, string> = {}): Promise<{ seconds: number; peakMiB: number; out: string }> {
  const t0 = process.hrtime.bigint();
  const p = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(p);
  let out = '';
  p.stdout.on('data', (c: Buffer) => (out = (out + c.toString()).slice(-4000)));
  p.stderr.on('data', (c: Buffer) => (out = (out + c.toString()).slice(-4000)));
  let peak = 0;
  let done = false;
  const sampler = (async () => {
    while (!done) {
      if (p.pid) peak = Math.max(peak, (await memOf(p.pid)).hwm);
      await sleep(50);
    }
  })();
  const timer = setTimeout(() => p.kill('SIGKILL'), RUN_LIMIT_MS);
  const code = await new Promise<number | null>((r) => p.on('close', r));
  clearTimeout(timer);
  done = true;
  await sampler;
  children.delete(p);
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  if (code !== 0) throw new BenchError(`${cmd} ${args.slice(0, 3).join(' ')}… exited ${code}:\n${out}`);
  return { seconds, peakMiB: peak / 2 ** 20, out };
}

/** `files` files of 4 KiB (random bytes) in folders of PER_FOLDER under `dir`. */
async function makeTree(dir: string, files: number): Promise<void> {
  for (let i = 0; i < files; i++) {
    const folder = join(dir, `d${String(Math.floor(i / PER_FOLDER)).padStart(3, '0')}`);
    if (i % PER_FOLDER === 0) await mkdir(folder, { recursive: true });
    await writeFile(join(folder, `f${String(i).padStart(6, '0')}.bin`), randomBytes(FILE_SIZE));
  }
}

/** Listing requests (GET of a folder URL, PROPFIND) in the server's access log lines after `from`. */
function listingsIn(log: string): number {
  let n = 0;
  for (const line of log.split('\n')) {
    if (!line.includes('request completed')) continue;
    const req = (JSON.parse(line) as { req?: { method?: string; url?: string } }).req;
    const path = req?.url?.split('?')[0] ?? '';
    if (req?.method === 'PROPFIND' || (req?.method === 'GET' && path.startsWith('/storage/') && path.endsWith('/'))) n++;
  }
  return n;
}

export async function syncScenario(o: Options, tmp: string, log: (msg: string) => void): Promise<SyncRun> {
  const version = rcloneVersion();
  if (!version) throw new BenchError('rclone is missing (the sync reference): bench/setup installs it (apt-get install rclone)');
  const firstFiles = o.quick ? 1000 : 10_000;
  const quietFiles = o.quick ? 10_000 : 100_000;
  const reps = o.quick ? 1 : o.reps;
  const dataDir = join(tmp, 'sync-data');
  const logName = 'file-cloud-sync-bench.log';
  const fc = await startFileCloud(o, tmp, dataDir, { name: 'File Cloud (sync)', logName });
  const s: Server = fc.server;
  try {
    await logIn(s, fc.password);
    const keyRes = await fetch(`${s.base}/api/keys`, { method: 'POST', headers: { ...s.headers, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'sync bench' }) });
    if (keyRes.status !== 201) throw new BenchError(`POST /api/keys answered ${keyRes.status}`);
    const key = ((await keyRes.json()) as { key: string }).key;
    const rcloneConf = join(tmp, 'sync-rclone.conf');
    await writeFile(rcloneConf, '');
    // The random password (and what obscure makes of it) starts with '-' one time in 32: `--` and
    // `--name=value` keep rclone from reading either as an option (a quick bench in CI died on it).
    const obscured = (await timed('rclone', ['obscure', '--', fc.password])).out.trim();
    const webdav = ['--config', rcloneConf, '--webdav-url', `${s.base}/dav/${USER}`, '--webdav-user', USER, `--webdav-pass=${obscured}`];
    const copyTo = [...webdav, '--webdav-vendor', 'other'];
    const syncBin = join(REPO, 'packages/sync/bin/file-cloud-sync.js');
    const syncOnce = (dir: string, remote: string, state: string) => timed(process.execPath, [syncBin, dir, `/${USER}/${remote}`, '--server', s.base, '--once', '--device', 'bench', '--state-dir', state], { FILE_CLOUD_SYNC_KEY: key });

    const src = join(tmp, 'sync-src');
    await makeTree(src, firstFiles);
    const n = firstFiles.toLocaleString('en-US');
    const first = row('sync_first_up', `first sync of ${n} × 4 KiB up: file-cloud-sync beside rclone copy to the WebDAV door`, 'files/s', true, { kind: 'ratio_at_least', value: 1.0 });
    for (let rep = 0; rep < reps; rep++) {
      // Each its own copy of the folder (the client writes its marker there) and its own server folder.
      const mine = join(tmp, `sync-up-${rep}`);
      await cp(src, mine, { recursive: true });
      const order = rep % 2 === 0 ? ['rclone', 'sync'] : ['sync', 'rclone'];
      for (const who of order) {
        if (who === 'rclone') {
          const r = await timed('rclone', ['copy', src, `:webdav:rclone-up-${rep}`, ...copyTo]);
          first.ref.push(firstFiles / r.seconds);
          log(`sync: rclone copy #${rep}: ${(firstFiles / r.seconds).toFixed(0)} files/s (${r.seconds.toFixed(1)} s)`);
        } else {
          const r = await syncOnce(mine, `sync-up-${rep}`, join(tmp, `sync-up-state-${rep}`));
          first.fileCloud.push(firstFiles / r.seconds);
          log(`sync: file-cloud-sync first sync #${rep}: ${(firstFiles / r.seconds).toFixed(0)} files/s (${r.seconds.toFixed(1)} s, peak RSS ${r.peakMiB.toFixed(0)} MiB)`);
        }
      }
    }

    // The no-change tree: on the server (straight into its storage folder, then indexed) and here.
    const quiet = join(tmp, 'sync-quiet');
    await makeTree(quiet, quietFiles);
    await cp(quiet, join(dataDir, 'storage', USER, 'quiet'), { recursive: true });
    await timed(process.execPath, [o.fcBin, 'index', '--data-dir', dataDir]);
    // rclone's copy first: the client's marker file is not part of the tree.
    const bisyncDir = join(tmp, 'sync-bisync');
    await cp(quiet, bisyncDir, { recursive: true });
    const quietState = join(tmp, 'sync-quiet-state');
    const setUp = await syncOnce(quiet, 'quiet', quietState);
    log(`sync: first sync of the ${quietFiles.toLocaleString('en-US')}-file tree (set-up, nothing to send): ${setUp.seconds.toFixed(1)} s`);
    // bisync refuses a remote without modification times: the owncloud dialect reads them from PROPFIND.
    const bisync = [bisyncDir, ':webdav:quiet', ...webdav, '--webdav-vendor', 'owncloud', '--workdir', join(tmp, 'sync-bisync-work')];
    // Sizes only: both sides hold the same bytes already, with other times (the resync would send them all again).
    await timed('rclone', ['bisync', ...bisync, '--resync', '--size-only']);
    const q = quietFiles.toLocaleString('en-US');
    const still = row('sync_no_change', `a run with nothing changed over ${q} files: file-cloud-sync beside rclone bisync`, 'ms', false, { kind: 'ratio_at_most', value: 0.1 });
    const listings = row('sync_no_change_listings', `listing requests the server logged during that run (${q} files)`, 'requests', false, { kind: 'fc_at_most', value: 0 });
    const rss = row('sync_no_change_rss', `file-cloud-sync peak RSS over that run (${q} files)`, 'MiB', false, { kind: 'fc_at_most', value: 200 });
    const logFile = join(tmp, logName);
    for (let rep = 0; rep < reps; rep++) {
      const b = await timed('rclone', ['bisync', ...bisync]);
      still.ref.push(b.seconds * 1000);
      const before = (await readFile(logFile, 'utf8')).length;
      const r = await syncOnce(quiet, 'quiet', quietState);
      await sleep(200); // the access log's last lines
      const counted = listingsIn((await readFile(logFile, 'utf8')).slice(before));
      still.fileCloud.push(r.seconds * 1000);
      listings.fileCloud.push(counted);
      rss.fileCloud.push(r.peakMiB);
      log(`sync: no-change run #${rep}: file-cloud-sync ${(r.seconds * 1000).toFixed(0)} ms (${counted} listings, peak RSS ${r.peakMiB.toFixed(0)} MiB), rclone bisync ${(b.seconds * 1000).toFixed(0)} ms`);
    }
    const rows = [first, still, listings, rss];
    for (const r of rows) log(`sync ${r.label}: ${r.ref.length > 0 ? `rclone ${cell(r.ref, r.unit)}, ` : ''}File Cloud ${cell(r.fileCloud, r.unit)}`);
    return { rows, details: { firstFiles, quietFiles, fileSize: FILE_SIZE, rclone: version, setUpSeconds: setUp.seconds } };
  } finally {
    await stopFileCloud(s);
  }
}
