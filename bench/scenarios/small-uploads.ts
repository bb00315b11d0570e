/**
 * smallput (issue 30): 4 KiB uploads, 2,000 files over 8 keep-alive
 * connections (wrk, bench/lib/wrk-put.ts), File Cloud beside Debian's
 * `rclone serve webdav` (--user/--pass) on its own temporary folder:
 *   - File Cloud's API raw PUT (/storage/admin/<folder>/<name>, Bearer token),
 *   - its multipart PUT of 100 files per request into the folder,
 *   - its WebDAV PUT (/dav/admin/<folder>/<name>, HTTP Basic),
 * each against rclone's WebDAV PUTs of the same files in the same repetition
 * (target ≥ 0.75×, issue 53's for this round; issue 30's 1.0× is the goal
 * after it; with fsync kept: File Cloud fsyncs every file before its
 * 201, rclone does not). Without targets, for the analysis: the Node
 * ceiling (bench/node-ceiling-server.ts: a bare node:http server with File
 * Cloud's count of serving processes doing only the durable write, no
 * metadata) against rclone, and File Cloud's API raw PUT against it; the
 * same ceiling with one process per core where that is more; the same
 * ceiling with an index (its `--index`: the file's entry, change-feed row and
 * folder stamp committed to SQLite before the 201), and the API raw PUT
 * against that too; the API raw PUT
 * with `--workers 1`, and with the data dir on tmpfs (/dev/shm), where fsync
 * costs nothing and nothing is durable — File Cloud has no switch to turn
 * fsync off, and this is the one way to see what durability costs without
 * changing the product or preloading a library.
 *
 * Every File Cloud set-up has its own fresh data dir; all run at once and
 * the runs alternate (each repetition in turn, the order reversed every
 * other one), after a first run of each that is not counted (500 files;
 * 200 with --quick). Each run goes into a new empty folder; afterwards the files
 * on disk are counted and their sizes checked. Per run, the CPU time of
 * each set-up's processes is read from /proc, as µs of CPU per file.
 */
import { mkdir, readdir, rm, stat, statfs } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { logIn, startFileCloud, stopFileCloud } from '../lib/file-cloud.js';
import { request, expectStatus } from '../lib/http.js';
import type { Options } from '../lib/options.js';
import { BenchError, USER } from '../lib/paths.js';
import { servingProcesses, startNodeCeiling } from '../lib/node-ceiling.js';
import { cpuSeconds, sleep, stopChild } from '../lib/processes.js';
import { startRclone } from '../lib/rclone.js';
import type { Server } from '../lib/server.js';
import { cell, row, type Row } from '../lib/stats.js';
import { settleDisk } from '../lib/transfers.js';
import { wrkPut } from '../lib/wrk-put.js';

/** "1 process", "2 processes". */
const processes = (n: number) => `${n} process${n === 1 ? '' : 'es'}`;

export type SmallUploadsRun = { rows: Row[]; details: Record<string, unknown> };

export const FILE_SIZE = 4096;
export const CONNECTIONS = 8;
export const PER_MULTIPART = 100;
/** statfs(2)'s f_type of a tmpfs. */
const TMPFS_MAGIC = 0x01021994;

/** A folder made with File Cloud's API (CreateFolder). */
export const apiMkdir = (s: Server) => async (folder: string) => {
  const r = await request(s, 'POST', s.path(`${folder}/`), { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ action: 'CreateFolder' }) });
  expectStatus(s, `CreateFolder ${folder}`, r, [201]);
};
/** A folder made with WebDAV's MKCOL. */
export const davMkdir = (s: Server) => async (folder: string) => {
  const r = await request(s, 'MKCOL', s.path(`${folder}/`));
  expectStatus(s, `MKCOL ${folder}`, r, [201]);
};
/** File Cloud's WebDAV door, with HTTP Basic as WebDAV clients send it. */
export const davOf = (s: Server, password: string): Server => ({ ...s, name: `${s.name} WebDAV`, headers: { authorization: `Basic ${Buffer.from(`${USER}:${password}`).toString('base64')}` }, path: (rel) => `/dav/${USER}/${rel}` });

/** One set-up under load: how its folders are made and where its files land on disk. */
type Subject = { id: string; server: Server; diskRoot: string; mkdir: (folder: string) => Promise<void>; perRequest: number };

export async function smallUploadsScenario(o: Options, tmp: string, log: (msg: string) => void): Promise<SmallUploadsRun> {
  const files = o.quick ? 200 : 2000;
  const reps = o.quick ? 1 : o.reps;
  const fcs: Server[] = [];
  let rcloneServer: Server | undefined;
  const ceilingServers: Server[] = [];
  try {
    const start = async (name: string, dataDir: string, args: string[]) => {
      const s = await startFileCloud(o, tmp, dataDir, { name, logName: `file-cloud-${name.replace(/[^A-Za-z0-9]+/g, '-')}.log`, args });
      fcs.push(s.server);
      await logIn(s.server, s.password);
      return { ...s, dataDir };
    };
    const auto = await start('small-auto', join(tmp, 'small-data-auto'), []);
    const one = o.quick ? undefined : await start('small-workers-1', join(tmp, 'small-data-1'), ['--workers', '1']);
    // /dev/shm is tmpfs on Linux: fsync returns at once there (no durability, by construction).
    const onTmpfs = !o.quick && (await statfs('/dev/shm').then((f) => f.type === TMPFS_MAGIC, () => false));
    if (!o.quick && !onTmpfs) log('smallput: /dev/shm is not a tmpfs here; the row without durability is left out');
    const shm = !onTmpfs ? undefined : await start('small-tmpfs', join('/dev/shm', `${tmp.split('/').pop() ?? 'fc'}-small-data`), []);
    const rc = await startRclone(tmp, USER, auto.password);
    rcloneServer = rc.server;
    log(`smallput: ${rc.version}; File Cloud --workers auto: ${(await auto.server.pids()).length} process(es)`);
    // File Cloud's own count of serving processes, as the GET ceiling's (one on this 2-core box since issue 53); and,
    // where that is fewer, one per core as this row was measured from issue 30 to stop 76: what Node reaches with every core.
    const ceilingProcesses = servingProcesses(o.fcArgs);
    const perCore = o.quick || availableParallelism() <= ceilingProcesses ? undefined : availableParallelism();
    const startCeiling = async (id: string, processes: number, index: boolean | 'group' = false): Promise<Subject> => {
      const root = join(tmp, `${id}-root`);
      const server = await startNodeCeiling(tmp, 'put', root, processes, { index });
      ceilingServers.push(server);
      const disk = join(root, USER);
      return { id, server, diskRoot: disk, mkdir: (folder) => mkdir(join(disk, folder)).then(() => undefined), perRequest: 1 };
    };
    const ceiling = await startCeiling('node_ceiling', ceilingProcesses);
    const ceilingPerCore = perCore === undefined ? undefined : await startCeiling('node_ceiling_per_core', perCore);
    // The same with the least an index adds before each answer (stop 78): what a server that keeps the contract's change feed can reach.
    const ceilingIndex = await startCeiling('node_ceiling_index', ceilingProcesses, true);
    // And with the files that finish in one turn committed together (stop 80): what a group commit moves.
    const ceilingIndexGroup = await startCeiling('node_ceiling_index_group', ceilingProcesses, 'group');

    const fcDisk = (dataDir: string) => join(dataDir, 'storage', USER);

    const rclone: Subject = { id: 'rclone', server: rc.server, diskRoot: rc.root, mkdir: davMkdir(rc.server), perRequest: 1 };
    const apiRaw: Subject = { id: 'api_raw', server: auto.server, diskRoot: fcDisk(auto.dataDir), mkdir: apiMkdir(auto.server), perRequest: 1 };
    const apiMultipart: Subject = { ...apiRaw, id: 'api_multipart', perRequest: PER_MULTIPART };
    const davServer = davOf(auto.server, auto.password);
    const davPut: Subject = { id: 'dav', server: davServer, diskRoot: fcDisk(auto.dataDir), mkdir: davMkdir(davServer), perRequest: 1 };
    const extra: Subject[] = [ceilingIndex, ceilingIndexGroup, ...(ceilingPerCore ? [ceilingPerCore] : [])];
    if (one) extra.push({ id: 'api_raw_workers1', server: one.server, diskRoot: fcDisk(one.dataDir), mkdir: apiMkdir(one.server), perRequest: 1 });
    if (shm) extra.push({ id: 'api_raw_tmpfs', server: shm.server, diskRoot: fcDisk(shm.dataDir), mkdir: apiMkdir(shm.server), perRequest: 1 });

    const n = files.toLocaleString('en-US');
    const target = { kind: 'ratio_at_least', value: 0.75 } as const;
    const rows: Record<string, Row> = {
      api_raw: row('small_put_api_raw', `${n} × 4 KiB, ${CONNECTIONS} connections: API raw PUT`, 'files/s', true, target),
      api_multipart: row('small_put_api_multipart', `${n} × 4 KiB, ${CONNECTIONS} connections: API multipart PUT, ${PER_MULTIPART} files per request`, 'files/s', true, target),
      dav: row('small_put_dav', `${n} × 4 KiB, ${CONNECTIONS} connections: WebDAV PUT`, 'files/s', true, target),
      api_raw_workers1: row('small_put_api_raw_workers1', `${n} × 4 KiB: API raw PUT, --workers 1`, 'files/s', true),
      api_raw_tmpfs: row('small_put_api_raw_tmpfs', `${n} × 4 KiB: API raw PUT, data dir on tmpfs (fsync a no-op, nothing durable)`, 'files/s', true),
      node_ceiling: row('small_put_node_ceiling', `${n} × 4 KiB: the Node ceiling (${processes(ceilingProcesses)}, File Cloud's default here), a bare node:http server doing only the durable write (token check, walk, stage, fsync, link, log line; no metadata)`, 'files/s', true, undefined, '[File Cloud column: that server]'),
      node_ceiling_per_core: row('small_put_node_ceiling_per_core', `${n} × 4 KiB: the same Node ceiling with ${processes(perCore ?? 0)}, one per core`, 'files/s', true, undefined, '[File Cloud column: that server]'),
      node_ceiling_index: row('small_put_node_ceiling_index', `${n} × 4 KiB: the Node ceiling with an index (${processes(ceilingProcesses)}): the same, plus the entry, its change-feed row and its folder's stamp committed to SQLite on the event loop before the 201`, 'files/s', true, undefined, '[File Cloud column: that server]'),
      node_ceiling_index_group: row('small_put_node_ceiling_index_group', `${n} × 4 KiB: the Node ceiling with an index, group commit (${processes(ceilingProcesses)}): the same index, the files that finish in one turn of the event loop committed in one transaction at its end`, 'files/s', true, undefined, '[File Cloud column: that server]'),
      api_raw_vs_ceiling: row('small_put_api_raw_vs_ceiling', `${n} × 4 KiB: API raw PUT against the Node ceiling`, 'files/s', true, undefined, '[reference: the Node ceiling]'),
      api_raw_vs_ceiling_index: row('small_put_api_raw_vs_ceiling_index', `${n} × 4 KiB: API raw PUT against the Node ceiling with an index`, 'files/s', true, undefined, '[reference: the Node ceiling with an index]'),
    };
    const subjects = [rclone, apiRaw, apiMultipart, davPut, ceiling, ...extra];
    const runs: Record<string, unknown>[] = [];
    // A first run of each, not counted: rclone's and File Cloud's first files were 2–3× slower (page cache, JIT).
    for (const s of subjects) {
      await s.mkdir(`small-${s.id}-warm-up`);
      await wrkPut(s.server, tmp, { name: `${s.id}-warm-up`, folder: s.server.path(`small-${s.id}-warm-up/`), files: Math.min(files, 500), fileSize: FILE_SIZE, connections: CONNECTIONS, perRequest: s.perRequest, maxSeconds: 120 });
    }
    for (let rep = 0; rep < reps; rep++) {
      const order = rep % 2 === 0 ? subjects : [...subjects].reverse();
      let rcloneRate = NaN;
      const fcRates: [string, number][] = [];
      for (const s of order) {
        const folder = `small-${s.id}-${rep}`;
        await s.mkdir(folder);
        settleDisk();
        const pids = await s.server.pids();
        const cpu0 = await cpuSeconds(pids);
        const res = await wrkPut(s.server, tmp, { name: `${s.id}-${rep}`, folder: s.server.path(`${folder}/`), files, fileSize: FILE_SIZE, connections: CONNECTIONS, perRequest: s.perRequest, maxSeconds: o.quick ? 60 : 300 });
        const cpu1 = await cpuSeconds(pids);
        const cpuUs = (pids.reduce((a, p) => a + (cpu1.get(p) ?? 0) - (cpu0.get(p) ?? 0), 0) / (res.requests * s.perRequest)) * 1e6;
        await checkFiles(s, folder, files);
        runs.push({ subject: s.id, rep, ...res, cpuMicrosPerFile: Math.round(cpuUs) });
        log(`smallput ${s.id} #${rep}: ${Math.round(res.filesPerSecond)} files/s (${res.requests} requests in ${res.seconds.toFixed(2)} s, p50 ${res.p50.toFixed(1)} ms, p99 ${res.p99.toFixed(1)} ms), server CPU ${Math.round(cpuUs)} µs/file`);
        if (s === rclone) rcloneRate = res.filesPerSecond;
        else fcRates.push([s.id, res.filesPerSecond]);
      }
      for (const [id, rate] of fcRates) {
        const r = rows[id] as Row;
        r.fileCloud.push(rate);
        r.ref.push(rcloneRate);
      }
      const rateOf = new Map(fcRates);
      rows.api_raw_vs_ceiling?.fileCloud.push(rateOf.get('api_raw') ?? NaN);
      rows.api_raw_vs_ceiling?.ref.push(rateOf.get('node_ceiling') ?? NaN);
      rows.api_raw_vs_ceiling_index?.fileCloud.push(rateOf.get('api_raw') ?? NaN);
      rows.api_raw_vs_ceiling_index?.ref.push(rateOf.get('node_ceiling_index') ?? NaN);
    }
    const used = Object.values(rows).filter((r) => r.fileCloud.length > 0);
    const ceilings = [rows.node_ceiling, rows.node_ceiling_per_core, rows.node_ceiling_index, rows.node_ceiling_index_group];
    const againstCeiling = [rows.api_raw_vs_ceiling, rows.api_raw_vs_ceiling_index];
    for (const r of used) log(`smallput ${r.label}: ${againstCeiling.includes(r) ? 'Node ceiling' : 'rclone'} ${cell(r.ref, r.unit)}, ${ceilings.includes(r) ? 'Node ceiling' : 'File Cloud'} ${cell(r.fileCloud, r.unit)}`);
    return { rows: used, details: { files, fileSize: FILE_SIZE, connections: CONNECTIONS, perMultipart: PER_MULTIPART, rclone: rc.version, runs } };
  } finally {
    if (rcloneServer) await stopChild(rcloneServer.proc, 'SIGTERM', 5_000);
    for (const c of ceilingServers) await stopChild(c.proc, 'SIGTERM', 5_000);
    for (const s of fcs) await stopFileCloud(s);
    if (!o.keep) {
      await rm(join('/dev/shm', `${tmp.split('/').pop() ?? 'fc'}-small-data`), { recursive: true, force: true });
    }
  }
}

/** At least `files` files in the folder on disk (a stopped wrk thread may leave a few more on the way), each of 4 KiB. */
async function checkFiles(s: Subject, folder: string, files: number): Promise<void> {
  await sleep(200);
  const dir = join(s.diskRoot, folder);
  const names = await readdir(dir);
  if (names.length < files) throw new BenchError(`${s.server.name}: ${names.length} files in ${folder}, expected at least ${files}`);
  for (const name of names) {
    const size = (await stat(join(dir, name))).size;
    if (size !== FILE_SIZE) throw new BenchError(`${s.server.name}: ${folder}/${name} has ${size} bytes, expected ${FILE_SIZE}`);
  }
}
