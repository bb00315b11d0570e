import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { BIN, REPO_ROOT, spawnFileCloud } from '../kit/file-cloud-process.js';
import { newBucket, s3Service } from './services.js';

export { BIN, REPO_ROOT };
export const ADMIN_PASSWORD = 'admin-password-for-tests';

export type ServerProcess = {
  readonly url: string;
  readonly dataDir: string;
  readonly adminPassword: string;
  readonly proc: ChildProcess;
  /** Everything the process printed so far. */
  output(): { stdout: string; stderr: string };
  /** Sends a signal (default SIGTERM) and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  /** stop, also reporting how many workers outlived the primary and had to be killed by pid. */
  stopTree(signal?: NodeJS.Signals): Promise<{ code: number | null; leftovers: number }>;
  /** Stops the server and removes its data dir unless kept. */
  dispose(): Promise<void>;
};

/**
 * The data dirs startServer made and no dispose has removed, removed as the test file's process exits.
 * Not at a stop: a test may restart on the dir after stop() or a SIGKILL. Tests that end their server
 * only by stop (service-outages, s3-faults) left their fc-proc- dirs in /tmp on every run.
 */
const undisposed = new Set<string>();
process.on('exit', () => {
  for (const dir of undisposed) {
    try {
      rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
    } catch {
      // A throw here would fail a test file whose tests passed: the dir is left, as before.
    }
  }
});

/**
 * Spawns the real binary (`node bin/file-cloud.js serve`) on a free port
 * with a temporary data dir (or the one given), and resolves once it
 * prints its listening line.
 */
export async function startServer(opts: { args?: string[]; env?: Record<string, string>; dataDir?: string; keepDataDir?: boolean; storage?: 'file' | 's3'; startTimeoutMs?: number } = {}): Promise<ServerProcess> {
  const dataDir = opts.dataDir ?? (await mkdtemp(join(tmpdir(), 'fc-proc-')));
  const made = opts.dataDir === undefined;
  const owned = made && !opts.keepDataDir;
  let fc: Awaited<ReturnType<typeof spawnFileCloud>>;
  try {
    const s3 = opts.storage === 's3' ? await s3ServerOptions() : { args: [], env: {} };
    fc = await spawnFileCloud({
      dataDir,
      args: [...s3.args, ...(opts.args ?? [])],
      env: { FILE_CLOUD_ADMIN_PASSWORD: ADMIN_PASSWORD, FILE_CLOUD_LOG_LEVEL: 'warn', ...s3.env, ...opts.env },
      startTimeoutMs: opts.startTimeoutMs,
    });
  } catch (e) {
    // A data dir made here for a server that does not start (a test that expects it to fail) goes with it,
    // keepDataDir or not: the caller never learns its name.
    if (made) await rm(dataDir, { recursive: true, force: true });
    throw e;
  }
  if (owned) undisposed.add(dataDir);
  const stopTree = (signal: NodeJS.Signals = 'SIGTERM') => fc.stop(signal);
  const stop = async (signal: NodeJS.Signals = 'SIGTERM') => (await stopTree(signal)).code;
  return {
    url: fc.url,
    dataDir,
    adminPassword: opts.env?.FILE_CLOUD_ADMIN_PASSWORD ?? ADMIN_PASSWORD,
    proc: fc.proc,
    output: fc.output,
    stop,
    stopTree,
    async dispose() {
      await stop();
      if (!owned) return;
      await rm(dataDir, { recursive: true, force: true });
      undisposed.delete(dataDir);
    },
  };
}

let sharedBucket: Promise<string> | undefined;

/**
 * What a server process needs to run on the test S3: `--storage` with the
 * file's shared bucket and a fresh prefix, and the credentials in the
 * standard AWS variables (where a real deployment has them too). Pass the
 * same `storage` again (e.g. to restart on the same files) via `args`.
 */
export async function s3ServerOptions(prefix = randomUUID()): Promise<{ args: string[]; env: Record<string, string>; bucket: string; prefix: string; storage: string }> {
  const s = s3Service();
  if (!s) throw new Error('no test S3 service; guard the test with skipReason("S3")');
  sharedBucket ??= newBucket('fc-proc');
  const bucket = await sharedBucket;
  const storage = `s3://${bucket}/${prefix}?endpoint=${encodeURIComponent(s.endpoint)}&region=${s.region}&path_style=true`;
  return { args: ['--storage', storage], env: { AWS_ACCESS_KEY_ID: s.accessKeyId, AWS_SECRET_ACCESS_KEY: s.secretAccessKey, AWS_REGION: s.region }, bucket, prefix, storage };
}

/** Runs the CLI to completion and returns its exit code and output. */
export function runCli(args: string[], opts: { env?: Record<string, string>; input?: string } = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((res) => {
    const proc = spawn(process.execPath, [BIN, ...args], { cwd: REPO_ROOT, env: { ...process.env, ...opts.env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    proc.stdin.end(opts.input ?? '');
    proc.once('exit', (code) => res({ code, stdout, stderr }));
  });
}

/**
 * Runs `fn` against a fresh server process with the admin logged in, and
 * always disposes of the server (and its data dir) afterwards.
 */
export async function withServer<T>(fn: (server: ServerProcess, adminToken: string) => Promise<T>, opts: Parameters<typeof startServer>[0] = {}): Promise<T> {
  const server = await startServer(opts);
  try {
    const res = await fetch(`${server.url}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: server.adminPassword }) });
    const { access_token } = (await res.json()) as { access_token: string };
    return await fn(server, access_token);
  } finally {
    await server.dispose();
  }
}
