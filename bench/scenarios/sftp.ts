/**
 * sftp (issue 52): File Cloud's SFTP front end beside Debian's `rclone serve sftp` (the target's
 * reference) and OpenSSH's own sftp-server behind an sshd of our own (the physical limit), all
 * three serving the same folder — File Cloud's storage of the admin, the dataset of the nginx
 * comparison — and all three driven by one client, OpenSSH's `sftp -b` (its defaults: 32 KiB
 * requests, 64 in flight; one cipher, aes128-gcm, for all). Each metric is one sftp session, its
 * wall time sign-in included:
 *   - the big file's get (to /dev/null) and put (into a new name, checked on disk, removed after),
 *   - 2,000 × 4 KiB puts (200 with --quick) in one session into a new folder, counted on disk, and
 *     the same files with a client that keeps several in flight (`rclone copy --transfers 8`),
 *   - `ls -l` of the 10,000-entry folder, 5 times in one session (2 with --quick), every entry seen.
 * The servers take turns (the order reversed every other repetition) after a first round that is
 * not counted; medians. Targets: File Cloud ≥ 1.0× rclone on each; OpenSSH rows have none. Then
 * the small puts again in rounds of their own beside the ssh2 ceiling (bench/sftp-ceiling-server.ts:
 * a bare SFTP server on File Cloud's ssh2 and algorithms, once durable as the contract's upload
 * without metadata, once durable with the least an index adds (the file's entry, change-feed row
 * and folder stamp committed to SQLite before CLOSE's answer), once writing in place without fsync
 * as rclone does): what a server built on
 * ssh2 reaches here, against rclone, and File Cloud against it. Then the small puts with File Cloud
 * and rclone both on a tmpfs data dir, where fsync costs nothing: what the disk imposes, beside
 * what the servers cost (their CPU time per file, from /proc, is in the details).
 */
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { logIn, startFileCloud, stopFileCloud } from '../lib/file-cloud.js';
import type { Options } from '../lib/options.js';
import { BenchError, MiB, USER } from '../lib/paths.js';
import { cpuSeconds, freePort, stopChild } from '../lib/processes.js';
import type { Server } from '../lib/server.js';
import { clientKey, rcloneCopy, SFTP_CIPHER, sftpBatch, sftpCeilingId, sftpCeilingName, sshdMissing, startRcloneSftp, startSftpCeiling, startSshd, type ClientKey, type SftpCeilingKind, type SftpServer } from '../lib/sftp.js';
import { cell, row, type Row } from '../lib/stats.js';
import { settleDisk } from '../lib/transfers.js';
import type { Dataset } from './context.js';

export type SftpRun = { rows: Row[]; details: Record<string, unknown> };

const SMALL_SIZE = 4096;
/** Files in flight with `rclone copy` (its --transfers). */
const TRANSFERS = 8;
/** Where the fsync-free pair keeps its data: a tmpfs on Linux. */
const TMPFS = '/dev/shm';

/**
 * A server under test, the folder it serves (where its uploads are checked), and how a round's
 * folder goes: through File Cloud's HTTP API (one request, so its metadata follows; over SFTP a file
 * at a time took minutes per round), from the disk for the others, which keep nothing else.
 */
type Served = SftpServer & { root: string; remove(folder: string): Promise<void> };
const fromDisk = (root: string) => (folder: string) => rm(join(root, folder), { recursive: true });
/** One sample: the metric's value, and the server's CPU seconds per file where a metric counts files. */
type Sample = { value: number; cpuPerFile?: number };
/**
 * One metric: its row's label and unit, and one sample of it on a server (`tag` names the round's
 * files). `shown`: a row that shows more than the issue asks, with no target.
 */
type Metric = { id: string; label: string; unit: Row['unit']; shown?: true; run(s: Served, tag: string): Promise<Sample> };

export async function sftpScenario(o: Options, tmp: string, dataDir: string, data: Dataset, log: (msg: string) => void): Promise<SftpRun> {
  const reps = o.quick ? 1 : o.reps;
  const smallCount = o.quick ? 200 : 2000;
  const listings = o.quick ? 2 : 5;
  const dir = join(tmp, 'sftp');
  const client = join(dir, 'client');
  const smallSrc = join(client, 'small-src');
  const rcloneConfig = join(dir, 'rclone-client.conf');
  await mkdir(smallSrc, { recursive: true });
  // An empty config of rclone's own for the client: never the caller's remotes or settings.
  await writeFile(rcloneConfig, '');
  for (let i = 0; i < smallCount; i++) await writeFile(join(smallSrc, `f${String(i).padStart(5, '0')}.bin`), Buffer.alloc(SMALL_SIZE, i % 251));
  const fcs: Server[] = [];
  const others: SftpServer[] = [];
  let onTmpfs: string | undefined;
  try {
    const key = await clientKey(join(dir, 'key'));
    const startPair = async (where: string, logName: string): Promise<[Served, Served]> => {
      const sftpPort = await freePort();
      const started = await startFileCloud(o, tmp, where, { name: 'File Cloud SFTP', logName, args: ['--sftp-port', String(sftpPort)] });
      const fc = started.server;
      fcs.push(fc);
      await logIn(fc, started.password);
      const added = await fetch(`${fc.base}/api/me/ssh-keys`, { method: 'POST', headers: { ...fc.headers, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'bench', key: key.publicKey }) });
      if (added.status !== 201) throw new BenchError(`adding the bench's SSH key answered ${added.status}: ${await added.text()}`);
      const root = join(where, 'storage', USER);
      await mkdir(root, { recursive: true });
      const rclone = await startRcloneSftp(join(dir, `rclone-${logName}`), root, USER, key);
      others.push(rclone);
      const remove = async (folder: string) => {
        const r = await fetch(`${fc.base}${fc.path(folder)}`, { method: 'DELETE', headers: fc.headers });
        if (r.status !== 204) throw new BenchError(`File Cloud: DELETE of ${folder} answered ${r.status}`);
      };
      return [{ id: 'fileCloud', name: 'File Cloud', port: sftpPort, user: USER, pids: () => fc.pids(), root, remove }, { ...rclone, root, remove: fromDisk(root) }];
    };
    const [fileCloud, rclone] = await startPair(dataDir, 'file-cloud-sftp.log');
    const noSshd = sshdMissing();
    const openssh = noSshd ? undefined : await startSshd(join(dir, 'sshd'), data.dir, key);
    if (openssh) others.push(openssh);
    else log(`sftp: no OpenSSH reference: ${noSshd}`);
    const servers: Served[] = [fileCloud, rclone, ...(openssh ? [{ ...openssh, root: data.dir, remove: fromDisk(data.dir) }] : [])];
    log(`sftp: client ${spawnVersion()}, cipher ${SFTP_CIPHER}; servers ${servers.map((s) => `${s.name} :${s.port}`).join(', ')}`);

    const bigMiB = data.bigSize / MiB;
    const n = smallCount.toLocaleString('en-US');
    const bigName = (s: Served, tag: string) => `sftp-put-${s.id}-${tag}.bin`;
    /** Every file of the round's folder is there, 4 KiB each. */
    const checkSmall = async (s: Served, folder: string) => {
      const names = await readdir(join(s.root, folder));
      if (names.length !== smallCount) throw new BenchError(`${s.name}: ${names.length} files in ${folder}, expected ${smallCount}`);
      for (const n of names) if ((await stat(join(s.root, folder, n))).size !== SMALL_SIZE) throw new BenchError(`${s.name}: ${folder}/${n} is not ${SMALL_SIZE} bytes`);
    };
    /** Files per second of `upload`, and the server's CPU seconds per file (its own processes; OpenSSH's sftp-server lives only as long as its session, so none). */
    const perFile = async (s: Served, upload: () => Promise<{ seconds: number }>): Promise<Sample> => {
      settleDisk();
      const cpu = async () => (s.id === 'openssh' ? NaN : [...(await cpuSeconds(await s.pids())).values()].reduce((a, b) => a + b, 0));
      const c0 = await cpu();
      const r = await upload();
      return { value: smallCount / r.seconds, cpuPerFile: ((await cpu()) - c0) / smallCount };
    };
    const smallPut: Metric = {
      id: 'small_put',
      label: `${n} × 4 KiB puts, one session`,
      unit: 'files/s',
      run: async (s, tag) => {
        const [folder] = smallFolders(s, tag) as [string];
        await session(s, key, `mkdir ${folder}`, client);
        const got = await perFile(s, () => session(s, key, `put small-src/* ${folder}/`, client));
        await checkSmall(s, folder);
        return got;
      },
    };
    const smallPutInFlight: Metric = {
      id: 'small_put_transfers',
      label: `${n} × 4 KiB puts, rclone copy --transfers ${TRANSFERS}`,
      unit: 'files/s',
      shown: true,
      run: async (s, tag) => {
        const [, folder] = smallFolders(s, tag) as [string, string];
        const got = await perFile(s, () => rcloneCopy(s, key, smallSrc, folder, TRANSFERS, rcloneConfig, 1_200_000));
        await checkSmall(s, folder);
        return got;
      },
    };
    const metrics: Metric[] = [
      {
        id: 'get',
        label: `${Math.round(bigMiB)} MiB get, one session`,
        unit: 'MiB/s',
        run: async (s) => ({ value: bigMiB / (await session(s, key, 'get big.bin /dev/null', client)).seconds }),
      },
      {
        id: 'put',
        label: `${Math.round(bigMiB)} MiB put, one session`,
        unit: 'MiB/s',
        run: async (s, tag) => {
          settleDisk();
          const r = await session(s, key, `put ${data.dir}/big.bin ${bigName(s, tag)}`, client);
          const size = (await stat(join(s.root, bigName(s, tag)))).size;
          if (size !== data.bigSize) throw new BenchError(`${s.name}: ${bigName(s, tag)} has ${size} bytes, expected ${data.bigSize}`);
          await session(s, key, `rm ${bigName(s, tag)}`, client);
          return { value: bigMiB / r.seconds };
        },
      },
      smallPut,
      smallPutInFlight,
      {
        id: 'ls',
        label: `ls -l of ${data.manyCount.toLocaleString('en-US')} entries, ${listings} per session`,
        unit: 'req/s',
        run: async (s) => {
          const r = await session(s, key, Array.from({ length: listings }, () => 'ls -l many').join('\n'), client);
          const entries = r.out.split('\n').filter((l) => /e\d{5}\.txt$/.test(l)).length;
          if (entries !== listings * data.manyCount) throw new BenchError(`${s.name}: ls -l listed ${entries} entries, expected ${listings} × ${data.manyCount}`);
          return { value: listings / r.seconds };
        },
      },
    ];
    const target = { kind: 'ratio_at_least', value: 1.0 } as const;
    const runs: Record<string, unknown>[] = [];
    const rows: Row[] = [];
    /**
     * Round 0 warms every server (page cache, JIT) and is not counted; then `reps` rounds, the
     * servers taking turns, the order reversed every other round. Rows: a subject (File Cloud
     * unless named) beside a reference, one row per comparison and metric (`suffix` and `note`
     * its id's end and note; `target` on File Cloud's against rclone).
     */
    type Comparison = { ref: string; subject?: string; suffix: string; note?: string; target?: typeof target };
    const measure = async (group: string, list: Served[], ms: Metric[], vs: Comparison[]) => {
      const byRef = new Map(vs.map((v) => [v, new Map(ms.map((m) => [m.id, row(`sftp_${m.id}${v.suffix}`, m.label, m.unit, true, m.shown ? undefined : v.target, v.note)]))]));
      for (let rep = 0; rep <= reps; rep++) {
        const order = rep % 2 === 0 ? list : [...list].reverse();
        for (const m of ms) {
          const got = new Map<string, number>();
          for (const s of order) {
            const sample = await m.run(s, `${group}${rep}`);
            got.set(s.id, sample.value);
            runs.push({ group, metric: m.id, server: s.id, rep, ...sample, counted: rep > 0 });
            const cpu = sample.cpuPerFile !== undefined && Number.isFinite(sample.cpuPerFile) ? `, ${(sample.cpuPerFile * 1000).toFixed(2)} ms CPU per file` : '';
            log(`sftp${group ? ` (${group})` : ''} ${m.id} ${s.name}${rep === 0 ? ' (warm-up)' : ` #${rep}`}: ${sample.value.toFixed(1)}${cpu}`);
          }
          if (rep === 0) continue;
          for (const [v, perMetric] of byRef) {
            if (!got.has(v.ref)) continue;
            const r = perMetric.get(m.id) as Row;
            r.ref.push(got.get(v.ref) as number);
            r.fileCloud.push(got.get(v.subject ?? 'fileCloud') ?? NaN);
          }
        }
        // The folders of the round's small-file metrics (smallFolders: the one-session put's, then rclone copy's).
        const made = [ms.includes(smallPut), ms.includes(smallPutInFlight)];
        for (const s of list) for (const f of smallFolders(s, `${group}${rep}`).filter((_, i) => made[i])) await s.remove(f);
      }
      rows.push(...[...byRef.values()].flatMap((m) => [...m.values()]));
    };
    await measure('', servers, metrics, [
      { ref: 'rclone', suffix: '', target },
      { ref: 'openssh', suffix: '_vs_openssh', note: '[reference: OpenSSH sftp-server]' },
    ]);
    // What ssh2 itself allows: the small puts beside a bare server on it, durable and not, durable with
    // the least an index adds (stop 78), and that with no wait for the disk on its event loop (stop 79);
    // the same disk as File Cloud's.
    const ceilings = await Promise.all(
      CEILINGS.map(async ({ kind }) => {
        const root = join(dir, `ssh2-ceiling-${kind}-root`);
        await mkdir(root, { recursive: true });
        const s = await startSftpCeiling(join(dir, `ssh2-ceiling-${kind}`), root, USER, key, kind);
        others.push(s);
        return { ...s, root, remove: fromDisk(root) };
      }),
    );
    await measure('ceiling', [fileCloud, rclone, ...ceilings], [smallPut], [
      ...CEILINGS.map(({ kind, what }) => ({ ref: 'rclone', subject: sftpCeilingId(kind), suffix: `_${sftpCeilingId(kind)}_vs_rclone`, note: `[File Cloud column: the ssh2 ceiling, ${what}]` })),
      ...CEILINGS.filter((c) => c.reference).map(({ kind }) => ({ ref: sftpCeilingId(kind), suffix: `_vs_${sftpCeilingId(kind)}`, note: `[reference: the ${sftpCeilingName(kind)}]` })),
    ]);
    // fsync costs nothing on tmpfs: the same small puts there show what the disk imposes on File Cloud's durable uploads.
    onTmpfs = await mkdtemp(join(TMPFS, 'file-cloud-bench-sftp-'));
    await measure('tmpfs', await startPair(onTmpfs, 'file-cloud-sftp-tmpfs.log'), [smallPut, smallPutInFlight], [{ ref: 'rclone', suffix: '_tmpfs', note: '[both on tmpfs: no fsync cost]' }]);
    // The ceiling a row's id names by its suffix (as the rows above make them), by name.
    const ceilingIn = (r: Row, suffix: (id: string) => string) => CEILINGS.map((c) => c.kind).find((kind) => r.id.endsWith(suffix(sftpCeilingId(kind))));
    const named = (kind: SftpCeilingKind | undefined, otherwise: string) => (kind ? sftpCeilingName(kind) : otherwise);
    const refName = (r: Row) => (r.id.endsWith('_vs_openssh') ? 'OpenSSH' : named(ceilingIn(r, (id) => `_vs_${id}`), 'rclone'));
    const subjectName = (r: Row) => named(ceilingIn(r, (id) => `_${id}_vs_rclone`), 'File Cloud');
    for (const r of rows) log(`sftp ${r.label}${r.note ? ` ${r.note}` : ''}: ${refName(r)} ${cell(r.ref, r.unit)}, ${subjectName(r)} ${cell(r.fileCloud, r.unit)}`);
    return { rows: rows.filter((r) => r.fileCloud.length > 0), details: { client: spawnVersion(), cipher: SFTP_CIPHER, smallCount, transfers: TRANSFERS, listings, openssh: openssh ? 'sshd + sftp-server' : noSshd, runs } };
  } finally {
    for (const s of others) if (s.proc) await stopChild(s.proc, 'SIGTERM', 5_000);
    for (const fc of fcs) await stopFileCloud(fc);
    if (onTmpfs) await rm(onTmpfs, { recursive: true, force: true });
  }
}

/**
 * The ssh2 ceilings the small puts run beside (bench/sftp-ceiling-server.ts), what each does a file,
 * and whether File Cloud's row is also shown against it.
 */
const CEILINGS: readonly { kind: SftpCeilingKind; what: string; reference?: true }[] = [
  { kind: 'durable', what: 'durable: staged, fsynced, renamed; no metadata', reference: true },
  { kind: 'in_place', what: 'written in place without fsync, as rclone' },
  { kind: 'index', what: "durable, with an index: the entry, its change-feed row and its folder's stamp committed to SQLite before CLOSE's answer", reference: true },
  { kind: 'pool', what: 'durable, with the index in a thread and the disk in the thread pool: nothing waits for the disk on its event loop', reference: true },
  { kind: 'pool_loop', what: 'as the last, with the index committed on its event loop' },
];

/** One sftp session; a session that takes over 20 minutes is a failure of the run. */
const session = (s: SftpServer, key: ClientKey, script: string, cwd: string) => sftpBatch(s, key, script, cwd, 1_200_000);

/** The round's 4 KiB folders on a server (the next round starts from the same tree). */
const smallFolders = (s: SftpServer, tag: string) => [`sftp-small-${s.id}-${tag}`, `sftp-small${TRANSFERS}-${s.id}-${tag}`];

/** OpenSSH's version line (`ssh -V` prints it on stderr). */
function spawnVersion(): string {
  const r = spawnSync('ssh', ['-V'], { encoding: 'utf8' });
  return `${r.stdout}${r.stderr}`.trim();
}
