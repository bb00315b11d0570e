/** Starts File Cloud from the build (or --fc-bin) and logs the admin in. */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { spawnFileCloud, type FileCloudProcess } from '../../test/kit/file-cloud-process.js';
import type { Options } from './options.js';
import { BenchError, RESULTS, USER } from './paths.js';
import { children, processTree, stopChild } from './processes.js';
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
  // The benchmark runs File Cloud as shipped: its own FILE_CLOUD_* settings
  // from the caller's environment are not passed on (default log level: info).
  const fc = await spawnFileCloud({
    bin: o.fcBin,
    dataDir,
    args: [...(extra.args ?? []), ...o.fcArgs],
    env: { ...extra.env, FILE_CLOUD_ADMIN_PASSWORD: password },
    inheritFileCloudEnv: false,
    logFile,
    nodeArgs: o.profile ? ['--cpu-prof', '--cpu-prof-dir', join(RESULTS, 'profiles')] : [],
    // A start on S3 + PostgreSQL (migrations, the store's checks) took over 30 s on this machine while other
    // benches and test suites kept the load average near 40: a run then measured nothing.
    startTimeoutMs: 120_000,
    onSpawn: (p) => children.add(p),
  }).catch((e: unknown) => {
    throw new BenchError(`File Cloud did not start; see ${logFile}: ${e instanceof Error ? e.message : String(e)}`);
  });
  const { proc, url: base } = fc;
  processes.set(proc, fc);
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
    logFile,
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

/** File Cloud processes started here, for stopFileCloud. */
const processes = new WeakMap<ChildProcess, FileCloudProcess>();

/**
 * Stops a File Cloud we started, by its pid: SIGTERM (the primary drains and
 * stops its workers; SIGKILL after the grace period), then SIGKILL to any
 * worker still alive (by pid and start time: a primary that had to be killed
 * cannot stop its workers).
 */
export async function stopFileCloud(s: Server, graceMs = 15_000): Promise<void> {
  const fc = processes.get(s.proc);
  if (!fc) return stopChild(s.proc, 'SIGTERM', graceMs);
  const { leftovers } = await fc.stop('SIGTERM', graceMs);
  children.delete(s.proc);
  if (leftovers > 0) console.error(`bench: ${s.name}: ${leftovers} worker process(es) outlived the primary; killed by pid`);
}
