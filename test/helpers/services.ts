// The backing services of a test run: S3 (Ceph radosgw), PostgreSQL 15 and Redis 7, started once
// per run by scripts/run-tests.mjs (scripts/test-services.sh) and passed in FC_TEST_* variables.
// Tests needing one use `test('…', { skip: skipReason('S3') }, …)`: without the service the test
// skips with the reason printed, and in CI (CI set) it fails instead.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { radosgwCompatible } from '../../src/storage/s3/client.js';

const execFileP = promisify(execFile);

export type S3Service = { endpoint: string; region: string; accessKeyId: string; secretAccessKey: string };

/** The test S3 endpoint and credentials, or undefined when the run has none. */
export function s3Service(): S3Service | undefined {
  const e = process.env;
  const endpoint = e.FC_TEST_S3_ENDPOINT;
  const accessKeyId = e.FC_TEST_S3_ACCESS_KEY;
  const secretAccessKey = e.FC_TEST_S3_SECRET_KEY;
  if (!endpoint || !accessKeyId || !secretAccessKey) return undefined;
  return { endpoint, region: e.FC_TEST_S3_REGION || 'us-east-1', accessKeyId, secretAccessKey };
}

/** postgres://user:password@127.0.0.1:PORT/app, or undefined. */
export function pgService(): string | undefined {
  return process.env.FC_TEST_DATABASE_URL || undefined;
}

/** redis://127.0.0.1:PORT/0, or undefined. */
export function redisService(): string | undefined {
  return process.env.FC_TEST_REDIS_URL || undefined;
}

/** The temp dir the services run in (for rgw-start/rgw-stop), or undefined. */
export function servicesDir(): string | undefined {
  return process.env.FC_TEST_SERVICES_DIR || undefined;
}

/**
 * Why a test needing `what` ('S3', 'PostgreSQL' or 'Redis') should skip, or undefined to run it.
 * In CI (the CI variable set) a missing service throws: nothing may skip there.
 */
export function skipReason(what: string): string | undefined {
  const w = what.toLowerCase();
  let available: boolean;
  let variable: string;
  if (w === 's3') [available, variable] = [s3Service() !== undefined, 'FC_TEST_S3_ENDPOINT'];
  else if (w === 'postgresql' || w === 'postgres' || w === 'pg') [available, variable] = [pgService() !== undefined, 'FC_TEST_DATABASE_URL'];
  else if (w === 'redis') [available, variable] = [redisService() !== undefined, 'FC_TEST_REDIS_URL'];
  else throw new Error(`skipReason: unknown service '${what}' (S3, PostgreSQL or Redis)`);
  if (available) return undefined;
  const why = process.env.FC_TEST_SERVICES === '0' ? 'FC_TEST_SERVICES=0' : `${variable} is not set`;
  if (process.env.CI) throw new Error(`the ${what} test service is required in CI but unavailable (${why}); scripts/run-tests.mjs starts it with scripts/test-services.sh`);
  return `no ${what} test service (${why}; scripts/run-tests.mjs starts one with scripts/test-services.sh); this test runs in CI`;
}

function requireS3(): S3Service {
  const s = s3Service();
  if (!s) throw new Error('no test S3 service (FC_TEST_S3_ENDPOINT is not set); guard the test with skipReason("S3")');
  return s;
}

/**
 * An S3 client for the test S3 (or another gateway of it, `endpoint`). Path-style, and checksums
 * only when required: radosgw Pacific supports no flexible checksums or aws-chunked trailers.
 */
export function s3Client(endpoint?: string): S3Client {
  const s = requireS3();
  return new S3Client({
    endpoint: endpoint ?? s.endpoint,
    region: s.region,
    credentials: { accessKeyId: s.accessKeyId, secretAccessKey: s.secretAccessKey },
    ...radosgwCompatible(),
  });
}

/** Creates a new empty bucket with a unique name (`prefix-<hex>`) and returns its name. */
export async function newBucket(prefix = 'fc'): Promise<string> {
  const p = prefix.toLowerCase().replace(/[^a-z0-9-]/g, '-').replace(/^-+|-+$/g, '').slice(0, 40) || 'fc';
  const name = `${p}-${randomBytes(8).toString('hex')}`;
  const client = s3Client();
  try {
    await client.send(new CreateBucketCommand({ Bucket: name }));
  } finally {
    client.destroy();
  }
  return name;
}

/** The repository root (this file runs as dist/test/helpers/services.js). */
export const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const SCRIPT = join(repoRoot, 'scripts', 'test-services.sh');

function requireDir(): string {
  const d = servicesDir();
  if (!d) throw new Error('no test services dir (FC_TEST_SERVICES_DIR is not set); guard the test with skipReason("S3")');
  if (!existsSync(SCRIPT)) throw new Error(`${SCRIPT} not found`);
  return d;
}

/**
 * Starts an extra radosgw gateway `name` on the test cluster (same users and buckets), on `port`
 * or a free 127.0.0.1 port, and waits until it answers. Restarting a killed one on its old port works.
 */
export async function rgwStart(name: string, port?: number): Promise<{ endpoint: string; port: number }> {
  const args = [SCRIPT, 'rgw-start', requireDir(), name, ...(port === undefined ? [] : [String(port)])];
  const { stdout } = await execFileP('bash', args, { timeout: 60_000 });
  const endpoint = /^S3_ENDPOINT=(\S+)$/m.exec(stdout)?.[1];
  if (!endpoint) throw new Error(`test-services.sh rgw-start printed no S3_ENDPOINT: ${stdout}`);
  return { endpoint, port: Number(new URL(endpoint).port) };
}

/** Stops the extra gateway `name` by its recorded pid: TERM (waits until it has exited) or KILL. */
export async function rgwStop(name: string, signal: 'TERM' | 'KILL' = 'TERM'): Promise<void> {
  await execFileP('bash', [SCRIPT, 'rgw-stop', requireDir(), name, signal], { timeout: 60_000 });
}

/**
 * Creates a fresh, empty database on the test PostgreSQL and returns its URL
 * (same server and credentials as FC_TEST_DATABASE_URL, a new database name).
 */
export async function newDatabase(prefix = 'fc'): Promise<string> {
  const base = pgService();
  if (!base) throw new Error('no test PostgreSQL (FC_TEST_DATABASE_URL is not set); guard the test with skipReason("PostgreSQL")');
  const name = `${prefix.toLowerCase().replace(/[^a-z0-9_]/g, '_').slice(0, 30)}_${randomBytes(6).toString('hex')}`;
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: base });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(base);
  url.pathname = `/${name}`;
  return url.toString();
}
