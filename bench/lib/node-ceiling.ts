/** Starts the Node ceilings (bench/node-ceiling-server.ts, bench/s3-ceiling-server.ts): bare node:http servers doing the contract's least work. */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { thisMachine, workerCount } from '../../src/cli/worker-count.js';
import { BenchError, USER } from './paths.js';
import { children, freePort, processTree, waitFor } from './processes.js';
import type { Server } from './server.js';

const SCRIPT = fileURLToPath(new URL('../node-ceiling-server.js', import.meta.url));
const S3_SCRIPT = fileURLToPath(new URL('../s3-ceiling-server.js', import.meta.url));

/**
 * How many processes File Cloud serves with, given its arguments: `--workers`
 * as they set it, else `auto` (src/cli/worker-count.ts; one on a small box).
 * A ceiling compared with File Cloud runs as many (issue 53: "the Node ceiling
 * in the same configuration").
 */
export function servingProcesses(fcArgs: readonly string[]): number {
  const at = fcArgs.lastIndexOf('--workers');
  const given = at === -1 ? (process.env.FILE_CLOUD_WORKERS ?? 'auto') : (fcArgs[at + 1] ?? 'auto');
  return workerCount(given === 'auto' ? 'auto' : Number(given), thisMachine());
}

/**
 * `root` holds `<user>/<path>` (the GET mode serves the files there, the PUT
 * mode writes there). `workers`: the processes it serves with (a
 * `node:cluster` primary and its workers above one). `index`: the PUT mode
 * commits each file to an index of its own before its answer (the server's
 * `--index`; `'group'`: with `--index-group`). `token`: a random one unless a
 * test names it.
 */
export async function startNodeCeiling(tmp: string, mode: 'get' | 'put', root: string, workers: number, opts: { index?: boolean | 'group'; token?: string } = {}): Promise<Server> {
  const token = opts.token ?? randomBytes(24).toString('base64url');
  const variant = opts.index === 'group' ? { dir: '-index-group', label: ', index, group commit' } : opts.index ? { dir: '-index', label: ', index' } : { dir: '', label: '' };
  const dir = join(tmp, `node-ceiling-${mode}${variant.dir}`);
  await mkdir(join(root, USER), { recursive: true });
  await mkdir(dir, { recursive: true });
  const port = await freePort();
  // `--name=value`: a base64url token starts with '-' one time in 32, which
  // parseArgs would take for an option (a quick bench in CI died on it).
  const args = [SCRIPT, `--mode=${mode}`, `--port=${port}`, `--root=${root}`, `--workers=${workers}`, `--token=${token}`, `--db=${join(dir, 'stamp.db')}`, `--log=${join(dir, 'access.log')}`];
  if (opts.index) args.push(`--index=${join(dir, 'index.db')}`);
  if (opts.index === 'group') args.push('--index-group');
  return ceilingServer(`Node ceiling (${mode}${variant.label})`, port, args, token);
}

/** Where the S3 ceiling writes: the bucket and key prefix, the store, its credentials and the index's database. */
export type S3CeilingTarget = { bucket: string; prefix: string; endpoint: string; region: string; accessKeyId: string; secretAccessKey: string; databaseUrl: string };

/** The S3 ceiling (bench/s3-ceiling-server.ts): one process; URLs are `/storage/<user>/<path>`, stored under `<prefix>/<user>/<path>`. */
export async function startS3Ceiling(target: S3CeilingTarget, token = randomBytes(24).toString('base64url')): Promise<Server> {
  const port = await freePort();
  const t = target;
  const args = [S3_SCRIPT, `--port=${port}`, `--token=${token}`, `--bucket=${t.bucket}`, `--prefix=${t.prefix}`, `--endpoint=${t.endpoint}`, `--region=${t.region}`, `--database=${t.databaseUrl}`];
  return ceilingServer('S3 ceiling', port, args, token, { AWS_ACCESS_KEY_ID: t.accessKeyId, AWS_SECRET_ACCESS_KEY: t.secretAccessKey });
}

/**
 * A ceiling's process (`args` for this Node, `env` added to the bench's) listening on `port`, signing
 * `/storage/<user>/…` requests in with `token`; ready once it refuses a request without it (401).
 */
async function ceilingServer(name: string, port: number, args: string[], token: string, env: Record<string, string> = {}): Promise<Server> {
  const proc = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, ...env } });
  children.add(proc);
  const server: Server = {
    name,
    base: `http://127.0.0.1:${port}`,
    headers: { authorization: `Bearer ${token}` },
    path: (rel) => `/storage/${USER}/${rel}`,
    statsPath: '/',
    pids: async () => (proc.pid ? processTree(proc.pid) : []),
    proc,
  };
  await waitFor(`the ${name} listening`, 20_000, async () => {
    if (proc.exitCode !== null) throw new BenchError(`the ${name} exited with ${proc.exitCode}`);
    const r = await fetch(`${server.base}/`).catch(() => undefined);
    await r?.arrayBuffer();
    return r?.status === 401 ? true : undefined;
  });
  return server;
}
