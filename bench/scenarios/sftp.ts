/**
 * sftp (issue 52): File Cloud's SFTP front end beside Debian's `rclone serve sftp` (the target's
 * reference) and OpenSSH's own sftp-server behind an sshd of our own (the physical limit), all
 * three serving the same folder — File Cloud's storage of the admin, the dataset of the nginx
 * comparison — and all three driven by one client, OpenSSH's `sftp -b` (its defaults: 32 KiB
 * requests, 64 in flight; one cipher, aes128-gcm, for all). Each metric is one sftp session, its
 * wall time sign-in included:
 *   - the big file's get (to /dev/null) and put (into a new name, checked on disk, removed after),
 *   - 2,000 × 4 KiB puts (200 with --quick) in one session into a new folder, counted on disk,
 *   - `ls -l` of the 10,000-entry folder, 5 times in one session (2 with --quick), every entry seen.
 * The servers take turns (the order reversed every other repetition) after a first round that is
 * not counted; medians. Targets: File Cloud ≥ 1.0× rclone on each; OpenSSH rows have none.
 */
import { spawnSync } from 'node:child_process';
import { mkdir, readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { logIn, startFileCloud, stopFileCloud } from '../lib/file-cloud.js';
import type { Options } from '../lib/options.js';
import { BenchError, MiB, USER } from '../lib/paths.js';
import { freePort, stopChild } from '../lib/processes.js';
import type { Server } from '../lib/server.js';
import { clientKey, SFTP_CIPHER, sftpBatch, sshdMissing, startRcloneSftp, startSshd, type ClientKey, type SftpServer } from '../lib/sftp.js';
import { cell, row, type Row } from '../lib/stats.js';
import { settleDisk } from '../lib/transfers.js';
import type { Dataset } from './context.js';

export type SftpRun = { rows: Row[]; details: Record<string, unknown> };

const SMALL_SIZE = 4096;

/** One metric: its row's label and unit, and one sample of it on a server (`tag` names the round's files). */
type Metric = { id: string; label: string; unit: Row['unit']; run(s: SftpServer, tag: string): Promise<number> };

export async function sftpScenario(o: Options, tmp: string, dataDir: string, data: Dataset, log: (msg: string) => void): Promise<SftpRun> {
  const reps = o.quick ? 1 : o.reps;
  const smallCount = o.quick ? 200 : 2000;
  const listings = o.quick ? 2 : 5;
  const dir = join(tmp, 'sftp');
  const client = join(dir, 'client');
  const smallSrc = join(client, 'small-src');
  await mkdir(smallSrc, { recursive: true });
  for (let i = 0; i < smallCount; i++) await writeFile(join(smallSrc, `f${String(i).padStart(5, '0')}.bin`), Buffer.alloc(SMALL_SIZE, i % 251));
  let fc: Server | undefined;
  const others: SftpServer[] = [];
  try {
    const key = await clientKey(join(dir, 'key'));
    const sftpPort = await freePort();
    const started = await startFileCloud(o, tmp, dataDir, { name: 'File Cloud SFTP', logName: 'file-cloud-sftp.log', args: ['--sftp-port', String(sftpPort)] });
    fc = started.server;
    await logIn(fc, started.password);
    const added = await fetch(`${fc.base}/api/me/ssh-keys`, { method: 'POST', headers: { ...fc.headers, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'bench', key: key.publicKey }) });
    if (added.status !== 201) throw new BenchError(`adding the bench's SSH key answered ${added.status}: ${await added.text()}`);
    const fcServer = fc;
    const fileCloud: SftpServer = { id: 'fileCloud', name: 'File Cloud', port: sftpPort, user: USER, pids: () => fcServer.pids() };
    const rclone = await startRcloneSftp(join(dir, 'rclone'), data.dir, USER, key);
    others.push(rclone);
    const noSshd = sshdMissing();
    const openssh = noSshd ? undefined : await startSshd(join(dir, 'sshd'), data.dir, key);
    if (openssh) others.push(openssh);
    else log(`sftp: no OpenSSH reference: ${noSshd}`);
    const servers = [fileCloud, rclone, ...(openssh ? [openssh] : [])];
    log(`sftp: client ${spawnVersion()}, cipher ${SFTP_CIPHER}; servers ${servers.map((s) => `${s.name} :${s.port}`).join(', ')}`);

    const bigMiB = data.bigSize / MiB;
    const n = smallCount.toLocaleString('en-US');
    const bigName = (s: SftpServer, tag: string) => `sftp-put-${s.id}-${tag}.bin`;
    const metrics: Metric[] = [
      {
        id: 'get',
        label: `${Math.round(bigMiB)} MiB get, one session`,
        unit: 'MiB/s',
        run: async (s) => bigMiB / (await session(s, key, 'get big.bin /dev/null', client)).seconds,
      },
      {
        id: 'put',
        label: `${Math.round(bigMiB)} MiB put, one session`,
        unit: 'MiB/s',
        run: async (s, tag) => {
          settleDisk();
          const r = await session(s, key, `put ${data.dir}/big.bin ${bigName(s, tag)}`, client);
          const size = (await stat(join(data.dir, bigName(s, tag)))).size;
          if (size !== data.bigSize) throw new BenchError(`${s.name}: ${bigName(s, tag)} has ${size} bytes, expected ${data.bigSize}`);
          await session(s, key, `rm ${bigName(s, tag)}`, client);
          return bigMiB / r.seconds;
        },
      },
      {
        id: 'small_put',
        label: `${n} × 4 KiB puts, one session`,
        unit: 'files/s',
        run: async (s, tag) => {
          const folder = `sftp-small-${s.id}-${tag}`;
          await session(s, key, `mkdir ${folder}`, client);
          settleDisk();
          const r = await session(s, key, `put small-src/* ${folder}/`, client);
          const names = await readdir(join(data.dir, folder));
          if (names.length !== smallCount) throw new BenchError(`${s.name}: ${names.length} files in ${folder}, expected ${smallCount}`);
          for (const n of names) if ((await stat(join(data.dir, folder, n))).size !== SMALL_SIZE) throw new BenchError(`${s.name}: ${folder}/${n} is not ${SMALL_SIZE} bytes`);
          return smallCount / r.seconds;
        },
      },
      {
        id: 'ls',
        label: `ls -l of ${data.manyCount.toLocaleString('en-US')} entries, ${listings} per session`,
        unit: 'req/s',
        run: async (s) => {
          const r = await session(s, key, Array.from({ length: listings }, () => 'ls -l many').join('\n'), client);
          const entries = r.out.split('\n').filter((l) => /e\d{5}\.txt$/.test(l)).length;
          if (entries !== listings * data.manyCount) throw new BenchError(`${s.name}: ls -l listed ${entries} entries, expected ${listings} × ${data.manyCount}`);
          return listings / r.seconds;
        },
      },
    ];
    const target = { kind: 'ratio_at_least', value: 1.0 } as const;
    const vsRclone = new Map(metrics.map((m) => [m.id, row(`sftp_${m.id}`, m.label, m.unit, true, target)]));
    const vsOpenssh = new Map(metrics.map((m) => [m.id, row(`sftp_${m.id}_vs_openssh`, m.label, m.unit, true, undefined, '[reference: OpenSSH sftp-server]')]));
    const runs: Record<string, unknown>[] = [];
    // Round 0 warms every server (page cache, JIT) and is not counted.
    for (let rep = 0; rep <= reps; rep++) {
      const order = rep % 2 === 0 ? servers : [...servers].reverse();
      for (const m of metrics) {
        const got = new Map<string, number>();
        for (const s of order) {
          const value = await m.run(s, String(rep));
          got.set(s.id, value);
          runs.push({ metric: m.id, server: s.id, rep, value, counted: rep > 0 });
          log(`sftp ${m.id} ${s.name}${rep === 0 ? ' (warm-up)' : ` #${rep}`}: ${value.toFixed(1)}`);
        }
        if (rep === 0) continue;
        const a = vsRclone.get(m.id) as Row;
        a.ref.push(got.get('rclone') ?? NaN);
        a.fileCloud.push(got.get('fileCloud') ?? NaN);
        if (openssh) {
          const b = vsOpenssh.get(m.id) as Row;
          b.ref.push(got.get('openssh') ?? NaN);
          b.fileCloud.push(got.get('fileCloud') ?? NaN);
        }
      }
      await cleanSmallFolders(servers, key, client, String(rep));
    }
    const rows = [...vsRclone.values(), ...vsOpenssh.values()].filter((r) => r.fileCloud.length > 0);
    for (const r of rows) log(`sftp ${r.label}: ${r.note ? 'OpenSSH' : 'rclone'} ${cell(r.ref, r.unit)}, File Cloud ${cell(r.fileCloud, r.unit)}`);
    return { rows, details: { client: spawnVersion(), cipher: SFTP_CIPHER, smallCount, listings, openssh: openssh ? 'sshd + sftp-server' : noSshd, runs } };
  } finally {
    for (const s of others) if (s.proc) await stopChild(s.proc, 'SIGTERM', 5_000);
    if (fc) await stopFileCloud(fc);
  }
}

/** One sftp session; a session that takes over 20 minutes is a failure of the run. */
const session = (s: SftpServer, key: ClientKey, script: string, cwd: string) => sftpBatch(s, key, script, cwd, 1_200_000);

/** The round's 4 KiB folders go (through each server, so File Cloud's metadata follows); the next round starts from the same tree. */
async function cleanSmallFolders(servers: SftpServer[], key: ClientKey, cwd: string, tag: string): Promise<void> {
  for (const s of servers) await session(s, key, [`rm sftp-small-${s.id}-${tag}/*`, `rmdir sftp-small-${s.id}-${tag}`].join('\n'), cwd);
}

/** OpenSSH's version line (`ssh -V` prints it on stderr). */
function spawnVersion(): string {
  const r = spawnSync('ssh', ['-V'], { encoding: 'utf8' });
  return `${r.stdout}${r.stderr}`.trim();
}
