// SFTP test kit (issue 52): where a test app's SFTP front end listens, a key pair made with
// ssh-keygen and added through POST /api/me/ssh-keys, and OpenSSH's own clients run against it.
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ssh2 from 'ssh2';
import type { TestApp } from './app.js';
import { bearer, postJson } from './client.js';
import { run, type Exec } from './tool.js';

/** Why an OpenSSH tool cannot run here (scripts/test-services.sh installs them), or undefined; CI never skips. */
export function toolSkip(tool: string): string | undefined {
  if (existsSync(`/usr/bin/${tool}`) || process.env.CI) return undefined;
  return `${tool} is not installed (scripts/test-services.sh installs it); this test runs in CI`;
}

/** Why an sshfs mount cannot be made here (it needs sshfs, rsync, /dev/fuse and root), or undefined. */
export function fuseSkip(): string | undefined {
  const tool = toolSkip('sshfs') ?? toolSkip('rsync');
  if (tool) return tool;
  if (!existsSync('/dev/fuse')) return 'no /dev/fuse in this container: FUSE mounts cannot be made here';
  if (process.getuid?.() !== 0) return 'mounting with FUSE here needs root';
  return undefined;
}

/** A port free right now on 127.0.0.1, for a cluster app's --sftp-port (its workers share it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => resolve(typeof a === 'object' && a ? a.port : 0));
    });
  });
}

/** The flags that turn SFTP on for startApp: port 0 in-process (read back from the app), a chosen free port for a cluster. */
export async function sftpFlags(storage: string): Promise<{ sftpPort: string }> {
  return { sftpPort: storage === 'cluster' ? String(await freePort()) : '0' };
}

/** Where the app's SFTP listens. */
export function sftpPort(t: TestApp): number {
  if (t.storage === 'cluster') return Number(t.config.sftpPort);
  const a = t.app.sftpAddress();
  if (!a) throw new Error('SFTP is off in this app');
  return a.port;
}

export { run, type Exec } from './tool.js';

/** A user's SSH identity for the tests: a fresh Ed25519 key pair, its public half added through the API. */
export type SshIdentity = { readonly dir: string; readonly key: string; readonly publicKey: string; readonly knownHosts: string; dispose(): Promise<void> };

export async function sshIdentity(t: TestApp, user: string, opts: { add?: boolean } = {}): Promise<SshIdentity> {
  const dir = await mkdtemp(join(tmpdir(), 'fc-ssh-'));
  const key = join(dir, 'id_ed25519');
  const made = await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', `${user}@test`, '-f', key]);
  if (made.code !== 0) throw new Error(`ssh-keygen: ${made.out}`);
  const publicKey = (await readFile(`${key}.pub`, 'utf8')).trim();
  if (opts.add !== false) {
    const token = (await t.login(user)).access_token;
    const res = await postJson(`${t.url}/api/me/ssh-keys`, { name: 'test key', key: publicKey }, bearer(token));
    if (res.status !== 201) throw new Error(`adding the key: ${res.status} ${await res.text()}`);
  }
  return { dir, key, publicKey, knownHosts: join(dir, 'known_hosts'), dispose: () => rm(dir, { recursive: true, force: true }) };
}

/** OpenSSH options for a non-interactive client: this identity only, the host key learnt on first use into its own file. */
export function sshOptions(id: SshIdentity, port: number): string[] {
  return ['-P', String(port), '-i', id.key, '-o', 'IdentitiesOnly=yes', '-o', 'BatchMode=yes', '-o', 'StrictHostKeyChecking=accept-new', '-o', `UserKnownHostsFile=${id.knownHosts}`, '-o', 'ConnectTimeout=20'];
}

/** `sftp -b -` with a batch script; cwd is where local paths resolve. */
export function sftpBatch(id: SshIdentity, port: number, user: string, script: string, cwd: string): Promise<Exec> {
  return run('sftp', [...sshOptions(id, port), '-b', '-', `${user}@127.0.0.1`], { input: script, cwd, timeoutMs: 120_000 });
}

/**
 * `sftp -b -` signing in by password (the account's or an app password), typed by an SSH_ASKPASS
 * helper: the way a script without a key signs in. One prompt, so one wrong password is one attempt.
 */
export async function sftpWithPassword(port: number, user: string, password: string, script: string, cwd: string): Promise<Exec> {
  const dir = await mkdtemp(join(tmpdir(), 'fc-askpass-'));
  try {
    const askpass = join(dir, 'askpass.sh');
    await writeFile(askpass, '#!/bin/sh\nprintf "%s\\n" "$FC_TEST_PASSWORD"\n', { mode: 0o700 });
    const env = { ...process.env, SSH_ASKPASS: askpass, SSH_ASKPASS_REQUIRE: 'force', FC_TEST_PASSWORD: password, DISPLAY: ':0' };
    // BatchMode=no ahead of -b, which would turn password prompts off (the first value given wins).
    const opts = ['-o', 'BatchMode=no', '-P', String(port), '-o', 'PubkeyAuthentication=no', '-o', 'PreferredAuthentications=password', '-o', 'NumberOfPasswordPrompts=1', '-o', 'StrictHostKeyChecking=no', '-o', `UserKnownHostsFile=${join(dir, 'known_hosts')}`, '-o', 'ConnectTimeout=20'];
    return await run('setsid', ['-w', 'sftp', ...opts, '-b', '-', `${user}@127.0.0.1`], { input: script, cwd, env, timeoutMs: 60_000 });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The environment of an rclone run with the remote `fc:` on this SFTP port as `user`, no config file read; `extra` signs in (KEY_FILE or PASS). */
export function rcloneSftpEnv(port: number, user: string, extra: Record<string, string>): NodeJS.ProcessEnv {
  return {
    ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('RCLONE_'))),
    RCLONE_CONFIG: '/dev/null',
    RCLONE_CONFIG_FC_TYPE: 'sftp',
    RCLONE_CONFIG_FC_HOST: '127.0.0.1',
    RCLONE_CONFIG_FC_PORT: String(port),
    RCLONE_CONFIG_FC_USER: user,
    // No shell: rclone would otherwise try commands (md5sum, df) over exec, which is refused.
    RCLONE_CONFIG_FC_SHELL_TYPE: 'none',
    ...extra,
  };
}

/** Runs `use` on an SFTP session of ssh2's client, signed in with `auth`; the connection ends after. */
export async function withSftp<R>(port: number, auth: { username: string; password?: string; privateKey?: string }, use: (s: ssh2.SFTPWrapper) => Promise<R>): Promise<R> {
  const client = new ssh2.Client();
  try {
    await new Promise<void>((resolve, reject) => {
      client.once('ready', () => resolve()).once('error', reject);
      client.connect({ host: '127.0.0.1', port, ...auth });
    });
    const sftp = await new Promise<ssh2.SFTPWrapper>((resolve, reject) => client.sftp((err, s) => (err ? reject(err) : resolve(s))));
    return await use(sftp);
  } finally {
    client.end();
  }
}

const done =
  <T = void>(resolve: (v: T) => void, reject: (e: Error) => void) =>
  (err: Error | null | undefined, v?: T) =>
    err ? reject(err) : resolve(v as T);

/** ssh2's SFTP requests as promises: each is one request, refused with the server's status text (`forbidden: …`). */
export function sftpRequests(s: ssh2.SFTPWrapper) {
  return {
    stat: (path: string) => new Promise<ssh2.Stats>((resolve, reject) => s.stat(path, done(resolve, reject))),
    readdir: (path: string) => new Promise<ssh2.FileEntryWithStats[]>((resolve, reject) => s.readdir(path, done(resolve, reject))),
    /** The whole file, read through a handle (OPEN, READs, CLOSE). */
    readFile: (path: string) => new Promise<Buffer>((resolve, reject) => s.readFile(path, done(resolve, reject))),
    /** A new or replaced file written through a handle (OPEN, WRITEs, CLOSE). */
    writeFile: (path: string, data: string | Buffer) => new Promise<void>((resolve, reject) => s.writeFile(path, data, done(resolve, reject))),
    mkdir: (path: string) => new Promise<void>((resolve, reject) => s.mkdir(path, done(resolve, reject))),
    rmdir: (path: string) => new Promise<void>((resolve, reject) => s.rmdir(path, done(resolve, reject))),
    unlink: (path: string) => new Promise<void>((resolve, reject) => s.unlink(path, done(resolve, reject))),
    rename: (from: string, to: string) => new Promise<void>((resolve, reject) => s.rename(from, to, done(resolve, reject))),
    /** SETSTAT of a path with its times, as `touch -d` through a mount sends it. */
    utimes: (path: string, when: Date) => new Promise<void>((resolve, reject) => s.utimes(path, when, when, done(resolve, reject))),
  };
}
