/** Starts File Cloud from the build (or --fc-bin) and logs the admin in. */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, openSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Options } from './options.js';
import { BenchError, REPO, RESULTS, USER } from './paths.js';
import { children, waitFor } from './processes.js';
import type { Server } from './server.js';

/** `extra`: more `serve` arguments and environment (e.g. --storage s3://… and the S3 credentials). */
export type FileCloudExtra = { logName?: string; args?: string[]; env?: Record<string, string> };

export async function startFileCloud(o: Options, tmp: string, dataDir: string, extra: FileCloudExtra = {}): Promise<{ server: Server; password: string }> {
  const password = randomBytes(18).toString('base64url');
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
    name: 'File Cloud',
    base,
    headers: {},
    path: (rel) => `/storage/${USER}/${rel}`,
    statsPath: '/api/stats',
    pids: async () => (proc.pid ? [proc.pid] : []),
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
