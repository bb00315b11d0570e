/**
 * The services the scenarios need. The S3 store for `--storage s3`: the one
 * named by FC_TEST_S3_ENDPOINT, FC_TEST_S3_ACCESS_KEY and
 * FC_TEST_S3_SECRET_KEY (FC_TEST_S3_REGION) when they are set, else a
 * radosgw of our own from scripts/test-services.sh (S3 only), stopped by its
 * recorded pids at the end, also on error and Ctrl-C. For `--nodes`: S3,
 * PostgreSQL and Redis (startBacking).
 */
import { spawn, spawnSync } from 'node:child_process';
import { BenchError, MiB, SERVICES } from './paths.js';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { atExit, children, processTree } from './processes.js';

export type S3Service = {
  endpoint: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Set when we started it: the cluster's config (for radosgw-admin). */
  cephConf?: string;
  /** Stops it if we started it (once; a no-op for a store from the environment). */
  stop(): void;
};

export async function startS3(dir: string, memBytes: number): Promise<S3Service> {
  const e = process.env;
  if (e.FC_TEST_S3_ENDPOINT && e.FC_TEST_S3_ACCESS_KEY && e.FC_TEST_S3_SECRET_KEY) return s3FromEnv();
  const { kv, stop } = await startServices(dir, { S3_MEM_BYTES: String(memBytes), SKIP_PG: '1', SKIP_REDIS: '1' });
  return s3FromKv(kv, stop);
}

function s3FromEnv(): S3Service {
  const e = process.env;
  return { endpoint: e.FC_TEST_S3_ENDPOINT as string, region: e.FC_TEST_S3_REGION || 'us-east-1', accessKeyId: e.FC_TEST_S3_ACCESS_KEY as string, secretAccessKey: e.FC_TEST_S3_SECRET_KEY as string, stop: () => undefined };
}

function s3FromKv(kv: Record<string, string>, stop: () => void): S3Service {
  const { S3_ENDPOINT, S3_ACCESS_KEY, S3_SECRET_KEY } = kv;
  if (!S3_ENDPOINT || !S3_ACCESS_KEY || !S3_SECRET_KEY) {
    stop();
    throw new BenchError(`scripts/test-services.sh printed no S3_ENDPOINT/S3_ACCESS_KEY/S3_SECRET_KEY:\n${JSON.stringify(Object.keys(kv))}`);
  }
  return { endpoint: S3_ENDPOINT, region: kv.S3_REGION || 'us-east-1', accessKeyId: S3_ACCESS_KEY, secretAccessKey: S3_SECRET_KEY, cephConf: kv.CEPH_CONF, stop };
}

/**
 * What several File Cloud nodes share (`--nodes`): an S3 store, PostgreSQL
 * and Redis. Each comes from the environment when it names one
 * (FC_TEST_S3_*, FC_TEST_DATABASE_URL, FC_TEST_REDIS_URL); the others are
 * started in DIR by scripts/test-services.sh (SKIP_* for the ones given) and
 * stopped by their recorded pids by stop(), also on an error or Ctrl-C.
 */
export type Backing = {
  s3: S3Service;
  databaseUrl: string;
  redisUrl: string;
  startedHere: string[];
  /** The processes of the services we started (from DIR/pids/, with their children: PostgreSQL's backends). */
  pids(): Promise<number[]>;
  stop(): void;
};

export async function startBacking(dir: string, memBytes: number): Promise<Backing> {
  const e = process.env;
  const s3Env = Boolean(e.FC_TEST_S3_ENDPOINT && e.FC_TEST_S3_ACCESS_KEY && e.FC_TEST_S3_SECRET_KEY);
  const pgEnv = Boolean(e.FC_TEST_DATABASE_URL);
  const redisEnv = Boolean(e.FC_TEST_REDIS_URL);
  const startedHere = [...(s3Env ? [] : ['S3 (radosgw)']), ...(pgEnv ? [] : ['PostgreSQL']), ...(redisEnv ? [] : ['Redis'])];
  let kv: Record<string, string> = {};
  let stop = () => undefined as void;
  if (startedHere.length > 0) {
    ({ kv, stop } = await startServices(dir, {
      S3_MEM_BYTES: String(memBytes),
      ...(s3Env ? { SKIP_S3: '1' } : {}),
      ...(pgEnv ? { SKIP_PG: '1' } : {}),
      ...(redisEnv ? { SKIP_REDIS: '1' } : {}),
    }));
  }
  const s3 = s3Env ? s3FromEnv() : s3FromKv(kv, stop);
  const databaseUrl = e.FC_TEST_DATABASE_URL || kv.DATABASE_URL;
  const redisUrl = e.FC_TEST_REDIS_URL || kv.REDIS_URL;
  if (!databaseUrl || !redisUrl) {
    stop();
    throw new BenchError('scripts/test-services.sh printed no DATABASE_URL or REDIS_URL');
  }
  const pids = async () => {
    const files = await readdir(join(dir, 'pids')).catch(() => [] as string[]);
    const roots = await Promise.all(files.filter((f) => f.endsWith('.pid')).map(async (f) => Number((await readFile(join(dir, 'pids', f), 'utf8')).trim())));
    return (await Promise.all(roots.filter((n) => n > 0).map(processTree))).flat();
  };
  return { s3, databaseUrl, redisUrl, startedHere, pids, stop };
}

/**
 * PostgreSQL alone (the search bench): the one FC_TEST_DATABASE_URL names,
 * else one started in DIR by scripts/test-services.sh, stopped by stop().
 */
export async function startPostgres(dir: string): Promise<{ databaseUrl: string; startedHere: boolean; stop(): void }> {
  if (process.env.FC_TEST_DATABASE_URL) return { databaseUrl: process.env.FC_TEST_DATABASE_URL, startedHere: false, stop: () => undefined };
  const { kv, stop } = await startServices(dir, { SKIP_S3: '1', SKIP_REDIS: '1' });
  if (!kv.DATABASE_URL) {
    stop();
    throw new BenchError('scripts/test-services.sh printed no DATABASE_URL');
  }
  return { databaseUrl: kv.DATABASE_URL, startedHere: true, stop };
}

/** `scripts/test-services.sh start DIR` with `env`; its KEY=VALUE lines, and the clean-up that stops what it started. */
async function startServices(dir: string, extraEnv: Record<string, string>): Promise<{ kv: Record<string, string>; stop: () => void }> {
  // From here on the services may be (partly) running: stop them whatever happens next.
  const stop = atExit(() => stopS3Dir(dir));
  const env = { ...process.env, ...extraEnv };
  const out = await new Promise<string>((res, rej) => {
    const p = spawn('bash', [SERVICES, 'start', dir], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(p);
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => p.pid && process.kill(p.pid, 'SIGTERM'), 300_000);
    p.on('error', rej);
    p.on('exit', (code) => {
      clearTimeout(timer);
      children.delete(p);
      if (code === 0) res(stdout);
      else rej(new BenchError(`scripts/test-services.sh start failed (${code}):\n${stderr.slice(-2000)}`));
    });
  }).catch((err: unknown) => {
    stop();
    throw err;
  });
  const kv = Object.fromEntries(out.split('\n').filter((l) => l.includes('=')).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
  return { kv, stop };
}

function stopS3Dir(dir: string): void {
  const r = spawnSync('bash', [SERVICES, 'stop', dir], { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8', timeout: 120_000 });
  if (r.status !== 0) console.error(`bench: stopping the S3 services in ${dir} failed: ${r.error?.message ?? r.stderr}`);
}

/**
 * On our own cluster, frees the RAM of deleted objects now (memstore keeps
 * every byte in the OSD's memory and radosgw collects deleted data only
 * after its GC wait): `radosgw-admin gc process --include-all`.
 */
export function collectGarbage(s: S3Service): void {
  if (!s.cephConf) return;
  spawnSync('radosgw-admin', ['gc', 'process', '--include-all'], { env: { ...process.env, CEPH_CONF: s.cephConf }, stdio: 'ignore', timeout: 120_000 });
}

/** memstore device size to ask for: room for the dataset, the uploads and garbage not yet collected. */
export const memstoreBytes = (bigSize: number): number => Math.max(8 * 1024 * MiB, 12 * bigSize);
