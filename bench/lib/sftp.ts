/**
 * The SFTP group's servers and its one client (issue 52): Debian's `rclone serve sftp` (the
 * target's reference), OpenSSH's own sftp-server behind an `sshd` of our own on a spare
 * 127.0.0.1 port (the physical limit), and OpenSSH's `sftp -b` as the client of all three.
 * Every server signs the same key pair in and serves the same folder.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BenchError } from './paths.js';
import { children, freePort, processTree, waitFor } from './processes.js';

/** An SFTP server under test: where it listens, whom to sign in as, and its processes. */
export type SftpServer = { id: string; name: string; port: number; user: string; pids(): Promise<number[]>; proc?: ChildProcess };

/** The one cipher every side negotiates, so the comparison is of servers and not of ciphers. */
export const SFTP_CIPHER = 'aes128-gcm@openssh.com';

export const SSHD = '/usr/sbin/sshd';
export const SFTP_SERVER = '/usr/lib/openssh/sftp-server';

/** A client key pair made with ssh-keygen, and an authorized_keys file holding its public half. */
export type ClientKey = { key: string; publicKey: string; authorizedKeys: string };

export async function clientKey(dir: string): Promise<ClientKey> {
  await mkdir(dir, { recursive: true });
  const key = join(dir, 'id_ed25519');
  const made = spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'bench', '-f', key], { encoding: 'utf8', timeout: 30_000 });
  if (made.status !== 0) throw new BenchError(`ssh-keygen failed: ${made.stderr}`);
  const publicKey = (await readFile(`${key}.pub`, 'utf8')).trim();
  const authorizedKeys = join(dir, 'authorized_keys');
  await writeFile(authorizedKeys, `${publicKey}\n`, { mode: 0o600 });
  return { key, publicKey, authorizedKeys };
}

/** Resolves once something accepts TCP connections on 127.0.0.1:port. */
const listening = (port: number) =>
  new Promise<true | undefined>((res) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => (s.destroy(), res(true)));
    s.once('error', () => res(undefined));
  });

function watched(what: string, proc: ChildProcess, log: string, port: number) {
  return waitFor(`${what} listening`, 20_000, async () => {
    if (proc.exitCode !== null) throw new BenchError(`${what} exited with ${proc.exitCode}; see ${log}`);
    return listening(port);
  }).catch((e: unknown) => {
    if (proc.exitCode !== null) throw new BenchError(`${what} exited with ${proc.exitCode}; see ${log}`);
    throw e;
  });
}

/** `rclone serve sftp ROOT`, signing in `user` with the client key only. */
export async function startRcloneSftp(dir: string, root: string, user: string, key: ClientKey): Promise<SftpServer> {
  await mkdir(dir, { recursive: true });
  const config = join(dir, 'rclone.conf');
  // An empty config of its own: never the caller's remotes or settings.
  await writeFile(config, '');
  spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(dir, 'host_key')]);
  const port = await freePort();
  const log = join(dir, 'rclone-sftp.log');
  const proc = spawn('rclone', ['serve', 'sftp', root, '--addr', `127.0.0.1:${port}`, '--user', user, '--authorized-keys', key.authorizedKeys, '--key', join(dir, 'host_key'), '--config', config, '--log-file', log], { stdio: 'ignore' });
  children.add(proc);
  await watched('rclone serve sftp', proc, log, port);
  return { id: 'rclone', name: 'rclone serve sftp', port, user, pids: async () => (proc.pid ? processTree(proc.pid) : []), proc };
}

/** bench/sftp-ceiling-server.ts, compiled beside this file's folder. */
const CEILING_SCRIPT = fileURLToPath(new URL('../sftp-ceiling-server.js', import.meta.url));

/** How the ssh2 ceiling writes, by kind: its id in the rows, what its name adds, and its own arguments (`dir`: its folder). */
const CEILING_KINDS = {
  in_place: { id: 'ssh2', label: '', args: (_dir: string): string[] => [] },
  durable: { id: 'ssh2_durable', label: ' (durable)', args: (_dir: string): string[] => ['--durable'] },
  index: { id: 'ssh2_index', label: ' (durable, index)', args: (dir: string): string[] => ['--durable', `--index=${join(dir, 'index.db')}`] },
  pool: { id: 'ssh2_pool', label: ' (durable, index in a thread, disk in the pool)', args: (dir: string): string[] => ['--durable', `--index=${join(dir, 'index.db')}`, '--pool'] },
  pool_loop: { id: 'ssh2_pool_loop', label: ' (durable, index on the loop, disk in the pool)', args: (dir: string): string[] => ['--durable', `--index=${join(dir, 'index.db')}`, '--pool', '--index-on-loop'] },
} as const;
/** In place without fsync, durable (staged, fsynced, renamed), durable with an index, and that with the disk's work in the thread pool (the index in a thread, or on the loop). */
export type SftpCeilingKind = keyof typeof CEILING_KINDS;
/** A ceiling's id in the rows (its SftpServer id) and its name in the bench's lines, by kind. */
export const sftpCeilingId = (kind: SftpCeilingKind): string => CEILING_KINDS[kind].id;
export const sftpCeilingName = (kind: SftpCeilingKind): string => `ssh2 ceiling${CEILING_KINDS[kind].label}`;

/**
 * The ssh2 ceiling (bench/sftp-ceiling-server.ts): a bare SFTP server on File Cloud's ssh2, its
 * algorithms and this Node, serving ROOT to `user` with the client key. `durable`: each file staged,
 * fsynced and renamed at CLOSE (the contract's upload without metadata); `index`: the same, and the
 * file committed to an index of its own before CLOSE's answer (its `--index`); `pool` and
 * `pool_loop`: that with nothing waiting for the disk on the event loop (its `--pool`), the index in a
 * thread or on the loop; `in_place`: written at its name, no fsync. Its files are on `dir`'s disk, its index in `dir`.
 */
export async function startSftpCeiling(dir: string, root: string, user: string, key: ClientKey, kind: SftpCeilingKind): Promise<SftpServer> {
  await mkdir(dir, { recursive: true });
  const hostKey = join(dir, 'host_key');
  spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', hostKey]);
  const port = await freePort();
  const k = CEILING_KINDS[kind];
  const args = [CEILING_SCRIPT, `--port=${port}`, `--root=${root}`, `--user=${user}`, `--authorized-key=${key.publicKey}`, `--host-key=${hostKey}`, ...k.args(dir)];
  const proc = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'inherit'] });
  children.add(proc);
  const name = sftpCeilingName(kind);
  await watched(`the ${name}`, proc, "the bench's stderr", port);
  return { id: k.id, name, port, user, pids: async () => (proc.pid ? processTree(proc.pid) : []), proc };
}

/** Why OpenSSH's sshd cannot be the reference here, or undefined. */
export function sshdMissing(): string | undefined {
  if (!existsSync(SSHD) || !existsSync(SFTP_SERVER)) return `${SSHD} or ${SFTP_SERVER} is missing (bench/setup installs openssh-server)`;
  return undefined;
}

/**
 * An sshd of our own (its config, host key and pid file in `dir`, in the foreground) whose only
 * subsystem is OpenSSH's sftp-server starting in ROOT; it signs in the user running the bench
 * with the client key and nothing else.
 */
export async function startSshd(dir: string, root: string, key: ClientKey): Promise<SftpServer> {
  await mkdir(dir, { recursive: true });
  const hostKey = join(dir, 'ssh_host_ed25519_key');
  spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', hostKey]);
  // sshd refuses to start as root without its privilege-separation directory.
  if (process.getuid?.() === 0) await mkdir('/run/sshd', { recursive: true, mode: 0o755 });
  const port = await freePort();
  const config = join(dir, 'sshd_config');
  await writeFile(
    config,
    [
      `Port ${port}`,
      'ListenAddress 127.0.0.1',
      `HostKey ${hostKey}`,
      `PidFile ${join(dir, 'sshd.pid')}`,
      `AuthorizedKeysFile ${key.authorizedKeys}`,
      'StrictModes no',
      'PermitRootLogin prohibit-password',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'UsePAM no',
      'AllowTcpForwarding no',
      'X11Forwarding no',
      `Subsystem sftp ${SFTP_SERVER} -d ${root}`,
      '',
    ].join('\n'),
  );
  const log = join(dir, 'sshd.log');
  const proc = spawn(SSHD, ['-D', '-f', config, '-E', log], { stdio: 'ignore' });
  children.add(proc);
  await watched('sshd', proc, log, port);
  const user = spawnSync('id', ['-un'], { encoding: 'utf8' }).stdout.trim();
  return { id: 'openssh', name: 'OpenSSH sftp-server', port, user, pids: async () => (proc.pid ? processTree(proc.pid) : []), proc };
}

/** One `sftp -b -` session: its wall time and its output. */
export type BatchRun = { seconds: number; out: string };

/** Runs a batch script against `s` with OpenSSH's sftp (default buffer and 64 requests in flight), from `cwd`. */
export function sftpBatch(s: SftpServer, key: ClientKey, script: string, cwd: string, timeoutMs: number): Promise<BatchRun> {
  const args = ['-P', String(s.port), '-i', key.key, '-c', SFTP_CIPHER, '-o', 'IdentitiesOnly=yes', '-o', 'BatchMode=yes', '-o', 'StrictHostKeyChecking=no', '-o', 'UserKnownHostsFile=/dev/null', '-o', 'LogLevel=ERROR', '-b', '-', `${s.user}@127.0.0.1`];
  return timed(`sftp against ${s.name}`, 'sftp', args, script, timeoutMs, cwd);
}

/**
 * `rclone copy SRC :sftp:DEST` against `s` with `transfers` files in flight (rclone's own SFTP
 * client: 32 KiB requests, 64 in flight per file; the server runs no commands, so no remote hashes).
 */
export function rcloneCopy(s: SftpServer, key: ClientKey, src: string, dest: string, transfers: number, config: string, timeoutMs: number): Promise<BatchRun> {
  const args = ['copy', src, `:sftp:${dest}`, '--config', config, '--transfers', String(transfers), '--sftp-host', '127.0.0.1', '--sftp-port', String(s.port), '--sftp-user', s.user, '--sftp-key-file', key.key, '--sftp-shell-type', 'none', '--sftp-disable-hashcheck'];
  return timed(`rclone copy against ${s.name}`, 'rclone', args, undefined, timeoutMs);
}

/** Runs a client to its end: its wall time and its output; a non-zero exit is an error. */
function timed(what: string, cmd: string, args: string[], input: string | undefined, timeoutMs: number, cwd?: string): Promise<BatchRun> {
  return new Promise((res, rej) => {
    const t0 = performance.now();
    const p = spawn(cmd, args, { cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    p.stdout.on('data', (c: Buffer) => chunks.push(c));
    p.stderr.on('data', (c: Buffer) => chunks.push(c));
    const timer = setTimeout(() => p.kill('SIGKILL'), timeoutMs);
    p.once('error', (e) => (clearTimeout(timer), rej(e)));
    p.once('close', (code) => {
      clearTimeout(timer);
      const seconds = (performance.now() - t0) / 1000;
      const out = Buffer.concat(chunks).toString('utf8');
      if (code !== 0) rej(new BenchError(`${what} exited with ${code ?? 'a signal'}: ${out.slice(-2000)}`));
      else res({ seconds, out });
    });
    p.stdin.end(input);
  });
}
