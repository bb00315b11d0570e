/** Starts File Cloud from the build (or --fc-bin) and logs the admin in. */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, openSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Options } from './options.js';
import { BenchError, REPO, RESULTS, USER } from './paths.js';
import { children, descendantsOf, killLeftovers, processTree, sleep, stopChild, waitFor } from './processes.js';
import type { Server } from './server.js';

/**
 * `extra`: more `serve` arguments and environment (e.g. --storage s3://… and
 * the S3 credentials, --workers 1), the server's name in messages and tables,
 * and the first admin's password (shared by nodes on one database).
 */
export type FileCloudExtra = { name?: string; logName?: string; args?: string[]; env?: Record<string, string>; password?: string };

/**
 * One admin password per data dir: File Cloud creates the admin only on its
 * first start, so every later start on the same data dir (the workers
 * scenario after the nginx comparison) must log in with the same one.
 */
const passwords = new Map<string, string>();

export async function startFileCloud(o: Options, tmp: string, dataDir: string, extra: FileCloudExtra = {}): Promise<{ server: Server; password: string }> {
  const password = extra.password ?? passwords.get(dataDir) ?? randomBytes(18).toString('base64url');
  passwords.set(dataDir, password);
  const logFile = join(tmp, extra.logName ?? 'file-cloud.log');
  const out = openSync(logFile, 'a');
  // The benchmark runs File Cloud as shipped: its own FILE_CLOUD_* settings
  // from the caller's environment are not passed on (default log level: info).
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('FILE_CLOUD_')) env[k] = v;
  Object.assign(env, extra.env);
  env.FILE_CLOUD_ADMIN_PASSWORD = password;
  const nodeArgs = o.profile ? ['--cpu-prof', '--cpu-prof-dir', join(RESULTS, 'profiles')] : [];
  const proc = spawn(process.execPath, [...nodeArgs, o.fcBin, 'serve', '--port', '0', '--data-dir', dataDir, ...(extra.args ?? []), ...o.fcArgs], {
    cwd: REPO,
    env,
    stdio: ['ignore', out, out],
  });
  closeSync(out);
  children.add(proc);
  const base = await waitFor('File Cloud listening', 30_000, async () => {
    if (proc.exitCode !== null) throw new BenchError(`File Cloud exited with ${proc.exitCode}; see ${logFile}`);
    return /File Cloud listening on (http:\/\/\S+)/.exec(await readFile(logFile, 'utf8'))?.[1];
  }).catch(async (e: unknown) => {
    if (proc.exitCode !== null) throw new BenchError(`File Cloud exited with ${proc.exitCode}: ${(await readFile(logFile, 'utf8')).slice(-2000)}`);
    throw e;
  });
  const server: Server = {
    name: extra.name ?? 'File Cloud',
    base,
    headers: {},
    path: (rel) => `/storage/${USER}/${rel}`,
    statsPath: '/api/stats',
    // With --workers N > 1 (the default, auto, on a machine with more than one core) File Cloud is a
    // node:cluster primary and its workers: memory counts over the whole process tree.
    pids: async () => (proc.pid ? processTree(proc.pid) : []),
    proc,
  };
  return { server, password };
}

/** Logs in as the admin and makes every later request of `server` carry the access token. */
export async function logIn(server: Server, password: string): Promise<void> {
  const login = await fetch(`${server.base}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: USER, password }) });
  if (login.status !== 200) throw new BenchError(`File Cloud login answered ${login.status}`);
  const token = ((await login.json()) as { access_token: string }).access_token;
  server.headers = { authorization: `Bearer ${token}` };
}

/**
 * Stops a File Cloud we started, by its pid: SIGTERM (the primary drains and
 * stops its workers; SIGKILL after the grace period), then SIGKILL to any
 * worker still alive (by pid and start time: a primary that had to be killed
 * cannot stop its workers).
 */
export async function stopFileCloud(s: Server, graceMs = 15_000): Promise<void> {
  const workers = s.proc.pid !== undefined && s.proc.exitCode === null ? await descendantsOf(s.proc.pid) : [];
  await stopChild(s.proc, 'SIGTERM', graceMs);
  if (workers.length === 0) return;
  // Workers exit on their own once the primary is gone (their IPC channel closes): give them a moment.
  for (let i = 0; i < 50 && (await Promise.all(workers.map((w) => alive(w.pid)))).some(Boolean); i++) await sleep(100);
  const killed = await killLeftovers(workers);
  if (killed > 0) console.error(`bench: ${s.name}: ${killed} worker process(es) outlived the primary; killed by pid`);
}

async function alive(pid: number): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  // alive and not a zombie
  return stat !== '' && stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
}
