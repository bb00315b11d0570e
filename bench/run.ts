/**
 * `npm run bench [-- --quick] [-- options]`: File Cloud side by side with nginx,
 * then File Cloud with `--workers 1` beside `--workers N` (N the cores, at least 2), then its
 * WebDAV door beside its HTTP API, the change feed beside the same
 * operations without the journal (scenarios/changes.ts), its SFTP front end beside
 * rclone serve sftp and OpenSSH's sftp-server (scenarios/sftp.ts), File Cloud with
 * `--encryption-key-file` beside the same without it (scenarios/encryption.ts), the sync client
 * beside rclone copy and bisync (scenarios/sync.ts; and with
 * `--storage s3`, File Cloud on S3 side by side with the AWS SDK; with
 * `--nodes N`, N nodes on S3 + PostgreSQL + Redis behind nginx beside 1).
 *
 * Starts File Cloud from the build (dist/) on a temporary data dir and nginx
 * (sendfile, autoindex json, dav PUT) as the reference, both on 127.0.0.1 and
 * on the very same dataset (created by bench/setup in the File Cloud data
 * dir's storage/admin/, which is nginx's root). Measures every metric a few
 * times, alternating the servers, and prints
 * `metric | nginx | File Cloud | ratio | target` (PASS/FAIL), then every
 * target of the run with its measured value and PASS/FAIL; writes the JSON to
 * bench/results/. Load: wrk for request rates (C, fixed connections, latency
 * histogram); Node's own http for transfers (a 1 GiB download or upload is
 * one request, which wrk cannot time) and /proc/<pid>/status for memory.
 *
 * Layout: bench/lib/ holds the tools (options, processes, File Cloud, nginx,
 * the S3 store and the SDK, http, wrk, statistics), bench/scenarios/ one
 * module per group of metrics (bench/scenarios/s3/ for --storage s3;
 * workers.ts and nodes.ts on the side-by-side runner pair.ts).
 *
 * Exit codes: 0 done (whatever the ratios), 1 a request failed or a tool is
 * missing, 2 usage error. Every loop is bounded in count and time; every
 * process started here is stopped by its own pid.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { machine } from './lib/machine.js';
import { METRICS, parseOptions, wants } from './lib/options.js';
import type { PairPart } from './lib/results.js';
import { BenchError, RESULTS, SETUP, USER } from './lib/paths.js';
import { children, killChildren, runExitHooks, stopChild } from './lib/processes.js';
import { writeResults } from './lib/results.js';
import { table, targetResults, targetSummary, type Row, type TargetResult } from './lib/stats.js';
import { readDataset } from './scenarios/context.js';
import { localScenarios } from './scenarios/local.js';
import type { PeakMemory } from './scenarios/memory.js';
import { DIRECT } from './scenarios/s3/context.js';
import { s3Scenarios, type S3Run } from './scenarios/s3/index.js';
import { nodesScenario } from './scenarios/nodes.js';
import { workersScenario } from './scenarios/workers.js';
import { davScenario } from './scenarios/dav.js';
import { tusScenario } from './scenarios/tus.js';
import { shareScenario } from './scenarios/share.js';
import { zipScenario } from './scenarios/zip.js';
import { thumbsScenario } from './scenarios/thumbs.js';
import { searchScenario } from './scenarios/search.js';
import { smallUploadsScenario } from './scenarios/small-uploads.js';
import { s3SmallUploadsScenario } from './scenarios/s3-small-uploads.js';
import { changesScenario } from './scenarios/changes.js';
import { sftpScenario } from './scenarios/sftp.js';
import { encryptionScenario } from './scenarios/encryption.js';
import { syncScenario } from './scenarios/sync.js';

async function main(): Promise<number> {
  const o = parseOptions(process.argv.slice(2));
  const tmp = await mkdtemp(join(o.dir, 'file-cloud-bench-'));
  const dataDir = join(tmp, 'data');
  const dataset = join(dataDir, 'storage', USER);
  const started = Date.now();
  const m0 = machine();
  console.log(`bench: ${o.quick ? 'quick' : 'full'} run in ${tmp}; Node ${m0.node} (${process.execPath}); ${m0.nproc} CPUs, load ${m0.loadavg.join(' ')}`);
  const log = (msg: string) => console.log(`  ${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s  ${msg}`);
  let rows: Row[] = [];
  let fcPeak: PeakMemory | undefined;
  let s3: S3Run | undefined;
  let listScale: PairPart | undefined;
  let workers: PairPart | undefined;
  let nodes: PairPart | undefined;
  let dav: PairPart | undefined;
  let tus: PairPart | undefined;
  let share: PairPart | undefined;
  let zip: PairPart | undefined;
  let thumbs: PairPart | undefined;
  let search: PairPart | undefined;
  let smallUploads: PairPart | undefined;
  let s3SmallUploads: PairPart | undefined;
  let changes: PairPart | undefined;
  let sftp: PairPart | undefined;
  let encryption: PairPart | undefined;
  let sync: PairPart | undefined;
  try {
    const setup = spawnSync('bash', [SETUP, ...(o.quick ? ['--quick'] : []), dataset], { stdio: 'inherit', timeout: 600_000 });
    if (setup.status !== 0) throw new BenchError(`bench/setup failed (${setup.status ?? setup.signal})`);
    const data = await readDataset(dataset);
    if (METRICS.some((g) => wants(o, g))) {
      const local = await localScenarios(o, tmp, dataDir, data, log);
      ({ rows, fcPeak } = local);
      if (local.scale) {
        const { rows: sRows, manyCount, hugeCount } = local.scale;
        listScale = { rows: sRows, table: table(sRows, `${manyCount.toLocaleString('en-US')} entries`, `${hugeCount.toLocaleString('en-US')} entries`), refKey: 'many', subjectKey: 'huge', details: { manyCount, hugeCount } };
      }
    }
    if (wants(o, 'workers')) {
      const w = await workersScenario(o, tmp, dataDir, data, log);
      const { rows: wRows, ...details } = w;
      workers = { rows: wRows, table: table(wRows, '--workers 1', `--workers ${w.workers}`), refKey: 'workers1', subjectKey: 'workersN', details };
    }
    if (wants(o, 'dav')) {
      const d = await davScenario(o, tmp, dataDir, data, log);
      dav = { rows: d.rows, table: table(d.rows, 'HTTP API', 'WebDAV'), refKey: 'api', subjectKey: 'webdav', details: {} };
    }
    if (wants(o, 'tus')) {
      const u = await tusScenario(o, tmp, dataDir, data, log);
      tus = { rows: u.rows, table: table(u.rows, 'raw PUT', 'tus'), refKey: 'rawPut', subjectKey: 'tus', details: {} };
    }
    if (wants(o, 'share')) {
      const sh = await shareScenario(o, tmp, dataDir, data, log);
      share = { rows: sh.rows, table: table(sh.rows, 'authenticated GET', 'share link GET'), refKey: 'authenticated', subjectKey: 'shareLink', details: {} };
    }
    if (wants(o, 'zip')) {
      const z = await zipScenario(o, tmp, dataDir, data, log);
      zip = { rows: z.rows, table: table(z.rows, 'plain GET', 'zip'), refKey: 'plainGet', subjectKey: 'zip', details: { files: z.files, peakRssMiB: z.peakRssMiB } };
    }
    if (wants(o, 'thumbs')) {
      const th = await thumbsScenario(o, tmp, dataDir, data, log);
      thumbs = { rows: th.rows, table: table(th.rows, 'vipsthumbnail', 'File Cloud'), refKey: 'vipsthumbnail', subjectKey: 'fileCloud', details: { files: th.files, parallel: th.parallel, vips: th.vips } };
    }
    if (wants(o, 'search')) {
      const se = await searchScenario(o, tmp, log);
      search = { rows: se.rows, table: table(se.rows, 'PostgreSQL', 'SQLite'), refKey: 'postgres', subjectKey: 'sqlite', details: se.details };
    }
    if (wants(o, 'smallput')) {
      const su = await smallUploadsScenario(o, tmp, log);
      smallUploads = { rows: su.rows, table: table(su.rows, 'rclone serve webdav', 'File Cloud'), refKey: 'rclone', subjectKey: 'fileCloud', details: su.details };
    }
    if (wants(o, 's3smallput')) {
      const su = await s3SmallUploadsScenario(o, tmp, log);
      s3SmallUploads = { rows: su.rows, table: table(su.rows, 'AWS SDK direct', 'File Cloud'), refKey: 'direct', subjectKey: 'fileCloud', details: su.details };
    }
    if (wants(o, 'changes')) {
      const ch = await changesScenario(o, tmp, log);
      changes = { rows: ch.rows, table: table(ch.rows, 'reference', 'with the journal'), refKey: 'reference', subjectKey: 'withJournal', details: ch.details };
    }
    if (wants(o, 'sftp')) {
      const sf = await sftpScenario(o, tmp, dataDir, data, log);
      sftp = { rows: sf.rows, table: table(sf.rows, 'rclone serve sftp', 'File Cloud'), refKey: 'reference', subjectKey: 'fileCloud', details: sf.details };
    }
    if (wants(o, 'encryption')) {
      const en = await encryptionScenario(o, tmp, data, log);
      encryption = { rows: en.rows, table: table(en.rows, 'plain', 'encrypted'), refKey: 'plain', subjectKey: 'encrypted', details: en.details };
    }
    if (wants(o, 'sync')) {
      const sy = await syncScenario(o, tmp, log);
      sync = { rows: sy.rows, table: table(sy.rows, 'rclone', 'file-cloud-sync'), refKey: 'rclone', subjectKey: 'fileCloudSync', details: sy.details };
    }
    if (o.storage === 's3') s3 = await s3Scenarios(o, tmp, data, log);
    if (wants(o, 'nodes')) {
      const n = await nodesScenario(o, tmp, data, log);
      const { rows: nRows, ...details } = n;
      nodes = { rows: nRows, table: table(nRows, '1 node', `${n.nodes} nodes`), refKey: 'oneNode', subjectKey: 'nodes', details };
    }
  } finally {
    for (const p of [...children]) await stopChild(p, 'SIGTERM', 5_000);
    runExitHooks();
    if (!o.keep) await rm(tmp, { recursive: true, force: true });
  }

  const text = table(rows);
  const s3Text = s3 && table(s3.rows, DIRECT.title);
  if (rows.length > 0) console.log(`\n${text}\n`);
  if (listScale) console.log(`${rows.length > 0 ? '' : '\n'}Listing scaling (File Cloud, one GET of each folder; ratio = right ÷ left):\n${listScale.table}\n`);
  if (workers) console.log(`${rows.length > 0 ? '' : '\n'}Workers (local disk, one data dir):\n${workers.table}\n`);
  if (dav) console.log(`${rows.length > 0 || workers ? '' : '\n'}WebDAV beside the HTTP API (local disk, one server):\n${dav.table}\n`);
  if (tus) console.log(`${rows.length > 0 || workers || dav ? '' : '\n'}tus resumable uploads beside one raw PUT (local disk, one server):\n${tus.table}\n`);
  if (share) console.log(`${rows.length > 0 || workers || dav || tus ? '' : '\n'}Share links beside the authenticated API (local disk, one server):\n${share.table}\n`);
  if (zip) console.log(`${rows.length > 0 || workers || dav || tus ? '' : '\n'}Folder zip beside a plain GET (local disk, one server):\n${zip.table}\npeak RSS during the zip: ${String(zip.details.peakRssMiB ? Math.round(zip.details.peakRssMiB as number) : '?')} MiB\n`);
  if (thumbs) console.log(`${rows.length > 0 || workers || dav || tus || zip ? '' : '\n'}Thumbnails beside vipsthumbnail (${String(thumbs.details.vips)}; local disk, one server):\n${thumbs.table}\n`);
  if (search) console.log(`\nSearch (the index in the metadata store; target on SQLite):\n${search.table}\n`);
  if (smallUploads) console.log(`\nSmall uploads beside rclone serve webdav (local disk; ratio = File Cloud ÷ rclone):\n${smallUploads.table}\n`);
  if (s3SmallUploads) console.log(`\nSmall uploads on S3 + PostgreSQL beside the AWS SDK's PutObject (ratio = File Cloud ÷ direct):\n${s3SmallUploads.table}\n\nStore requests per operation (File Cloud on S3, counted by a proxy in front of the store):\n${String(s3SmallUploads.details.storeRequestTable)}\n`);
  if (changes) console.log(`\nChange feed (issue 31; each beside the same operation without the journal):\n${changes.table}\n`);
  if (sftp) console.log(`\nSFTP beside rclone serve sftp (and OpenSSH's sftp-server where noted; one client, OpenSSH sftp -b; ratio = File Cloud ÷ reference):\n${sftp.table}\n`);
  if (encryption) console.log(`\nEncryption at rest (issue 51; File Cloud with --encryption-key-file beside the same without it, local disk; ratio = encrypted ÷ plain):\n${encryption.table}\n`);
  if (sync) console.log(`\nThe sync client beside rclone (one File Cloud server on local disk; ratio = file-cloud-sync ÷ rclone):\n${sync.table}\n`);
  if (s3Text) console.log(`${rows.length > 0 || workers ? '' : '\n'}S3 (${s3?.store.endpoint}):\n${s3Text}\n`);
  if (nodes) console.log(`${rows.length > 0 || workers || s3Text ? '' : '\n'}Nodes (S3 + PostgreSQL + Redis, behind nginx):\n${nodes.table}\n`);
  // Every target of the run, checked against its reference measured in this same run.
  const targets: TargetResult[] = [
    ...targetResults('nginx', rows),
    ...(s3 ? targetResults('S3', s3.rows) : []),
    ...([['listing scaling', listScale, `${Number(listScale?.details.hugeCount).toLocaleString('en-US')} entries`], ['workers', workers, `--workers N`], ['WebDAV', dav, 'WebDAV'], ['tus', tus, 'tus'], ['share links', share, 'share link GET'], ['zip', zip, 'zip'], ['thumbnails', thumbs, 'File Cloud'], ['search', search, 'SQLite'], ['small uploads', smallUploads, 'File Cloud'], ['small uploads on S3', s3SmallUploads, 'File Cloud'], ['changes', changes, 'with the journal'], ['SFTP', sftp, 'File Cloud'], ['encryption', encryption, 'encrypted'], ['sync', sync, 'file-cloud-sync'], ['nodes', nodes, 'nodes']] as const).flatMap(([section, part, subject]) => (part ? targetResults(section, part.rows, subject) : [])),
  ];
  if (targets.length > 0) console.log(`${targetSummary(targets)}\n`);
  const { file, durationSeconds, m1 } = await writeResults({ o, started, m0, rows, text, fcPeak, targets, s3: s3 && { ...s3, table: s3Text as string }, listScale, workers, dav, tus, share, zip, thumbs, search, smallUploads, s3SmallUploads, changes, sftp, encryption, sync, nodes });
  console.log(`bench: ${durationSeconds} s; load ${m1.loadavg.join(' ')} at the end; results in ${file}${o.keep ? `; data kept in ${tmp}` : ''}`);
  if (o.profile) console.log(`bench: CPU profile in ${join(RESULTS, 'profiles')} (node dist/bench/profile-summary.js FILE)`);
  return 0;
}

// Ctrl-C: stop our own processes by pid, then exit.
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => {
    killChildren();
    runExitHooks();
    process.exit(130);
  });
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(`bench: ${e instanceof BenchError ? e.message : (e as Error).stack}`);
    killChildren();
    runExitHooks();
    process.exit(1);
  },
);
