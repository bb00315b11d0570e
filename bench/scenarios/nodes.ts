/**
 * --nodes N: N File Cloud nodes (`--workers 1` each) sharing PostgreSQL
 * (`--database`), Redis (`--redis`) and one S3 prefix (`--storage
 * s3://BUCKET/fc`), behind nginx as a round-robin upstream, beside node 1
 * alone behind the same nginx (a second listener with a one-server
 * upstream): the same balancer hop, the same services, the same objects,
 * only the number of nodes differs. All N nodes run during the whole
 * scenario (the others idle while node 1 serves alone); the loads alternate
 * between the two fronts.
 *
 * The services come from the environment (FC_TEST_S3_*, FC_TEST_DATABASE_URL,
 * FC_TEST_REDIS_URL) or from scripts/test-services.sh, started in the run's
 * temp dir. Nothing is left behind: a fresh PostgreSQL database
 * (fc_bench_<random>, dropped at the end), a fresh bucket (emptied and
 * deleted), and, with a Redis from the environment, its database 13 (the
 * nodes' keys are fc:login:* and fc:lease:*, which expire by themselves).
 * Every process is stopped by its pid: nginx, the nodes, the services we
 * started.
 */
import { randomBytes } from 'node:crypto';
import { chmod } from 'node:fs/promises';
import { join } from 'node:path';
import type { S3Client } from '@aws-sdk/client-s3';
import pg from 'pg';
import { logIn, startFileCloud, stopFileCloud } from '../lib/file-cloud.js';
import { startBalancer, type Balancer } from '../lib/nginx.js';
import type { Options } from '../lib/options.js';
import { BenchError, USER } from '../lib/paths.js';
import { processTree, stopChild } from '../lib/processes.js';
import { emptyBucket, s3Client } from '../lib/s3-direct.js';
import { memstoreBytes, startBacking, type Backing } from '../lib/s3-service.js';
import type { Server } from '../lib/server.js';
import { row, type Row } from '../lib/stats.js';
import type { Dataset } from './context.js';
import { memDetail, memText, pairDownloads, pairGet4k, pairSanity, type CpuDetail, type MemDetail, type Pair } from './pair.js';
import { FC_PREFIX } from './s3/context.js';
import { seed } from './s3/seed.js';

export type NodesRun = {
  rows: Row[];
  nodes: number;
  services: { s3: string; startedHere: string[] };
  cpu: CpuDetail[];
  memory: MemDetail[];
};

/** A fresh database on the server of `url`; returns its URL and the clean-up that drops it. */
export async function freshDatabase(url: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `fc_bench_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const u = new URL(url);
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}

/** A Redis shared with others (from the environment): its database 13, so the nodes' login counts and leases stay apart. */
export function ownRedisDb(url: string): string {
  const u = new URL(url);
  u.pathname = '/13';
  return u.toString();
}

/** What File Cloud nodes on S3 + PostgreSQL + Redis run on: the services, a fresh database, and Redis as the nodes reach it. */
export type Distributed = { backing: Backing; db: { url: string; drop(): Promise<void> }; redisUrl: string; stop(): Promise<void> };

/**
 * The services of a distributed scenario (started in `tmp/dir` unless the environment names them),
 * logged under `label`; stop() drops the database and stops what was started here.
 */
export async function startDistributed(tmp: string, dir: string, memBytes: number, label: string, log: (msg: string) => void): Promise<Distributed> {
  // As root, test-services.sh runs PostgreSQL as the user postgres, which must traverse the run's
  // temp dir (mkdtemp makes it 0700) to reach its own data dir: o+x only, no listing.
  if (process.getuid?.() === 0) await chmod(tmp, 0o711);
  const backing = await startBacking(join(tmp, dir), memBytes);
  try {
    log(`${label}: services S3 ${backing.s3.endpoint}${backing.startedHere.length ? `; started here: ${backing.startedHere.join(', ')}` : ''}`);
    const db = await freshDatabase(backing.databaseUrl);
    const redisUrl = process.env.FC_TEST_REDIS_URL ? ownRedisDb(backing.redisUrl) : backing.redisUrl;
    return {
      backing,
      db,
      redisUrl,
      async stop() {
        await db.drop().catch((e: unknown) => console.error(`bench: dropping the bench database failed: ${(e as Error).message}`));
        backing.stop();
      },
    };
  } catch (e) {
    backing.stop();
    throw e;
  }
}

export async function nodesScenario(o: Options, tmp: string, data: Dataset, log: (msg: string) => void): Promise<NodesRun> {
  const count = o.nodes;
  let services: Distributed | undefined;
  let s3: S3Client | undefined;
  let bucket: string | undefined;
  let balancer: Balancer | undefined;
  const nodes: Server[] = [];
  try {
    services = await startDistributed(tmp, 'services', memstoreBytes(data.bigSize), 'nodes', log);
    const { backing, db, redisUrl } = services;
    s3 = s3Client(backing.s3);
    bucket = await seed(s3, data, 0);
    log(`S3 bucket ${bucket} seeded (big.bin and small/ under ${FC_PREFIX}/${USER}/)`);
    const storage = `s3://${bucket}/${FC_PREFIX}?endpoint=${encodeURIComponent(backing.s3.endpoint)}&region=${backing.s3.region}&path_style=true`;
    const password = randomBytes(18).toString('base64url');
    // Node 1 first: it migrates the database and creates the admin; the others find both.
    for (let i = 1; i <= count; i++) {
      const started = await startFileCloud(o, tmp, join(tmp, `node-${i}`), {
        name: `node ${i}`,
        logName: `file-cloud-node-${i}.log`,
        args: ['--workers', '1', '--storage', storage, '--trust-proxy'],
        // The database and Redis URLs carry passwords: environment, not the command line.
        env: { FILE_CLOUD_DATABASE: db.url, FILE_CLOUD_REDIS: redisUrl, AWS_ACCESS_KEY_ID: backing.s3.accessKeyId, AWS_SECRET_ACCESS_KEY: backing.s3.secretAccessKey, AWS_REGION: backing.s3.region },
        password,
      });
      nodes.push(started.server);
    }
    const hostPort = (s: Server) => new URL(s.base).host;
    balancer = await startBalancer(tmp, 'balancer', [
      { name: '1 node', backends: [hostPort(nodes[0] as Server)] },
      { name: `${count} nodes`, backends: nodes.map(hostPort) },
    ]);
    // One login (on node 1): the token is in PostgreSQL, so every node accepts it.
    await logIn(nodes[0] as Server, password);
    const headers = (nodes[0] as Server).headers;
    const treeOf = async (group: Server[]) => (await Promise.all(group.map((n) => (n.proc.pid ? processTree(n.proc.pid) : [])))).flat();
    const front = (i: number, group: Server[]): Server => ({
      name: `${group.length} node${group.length > 1 ? 's' : ''} via nginx`,
      base: (balancer as Balancer).fronts[i]?.base as string,
      headers,
      path: (rel) => `/storage/${USER}/${rel}`,
      statsPath: '/api/stats',
      pids: () => treeOf(group),
      proc: (balancer as Balancer).proc,
    });
    const one = front(0, [nodes[0] as Server]);
    const many = front(1, nodes);
    log(`nginx (pid ${balancer.proc.pid}) at ${one.base} → node 1, at ${many.base} → ${count} nodes (${nodes.map((n) => `pid ${n.proc.pid}`).join(', ')})`);
    const rows: Row[] = [];
    const p: Pair = { id: 'nodes', tmp, data, a: one, b: many, reps: o.reps, seconds: o.seconds, rows, log, asides: [
      { id: 'nginx', label: 'nginx (balancer)', pids: () => (balancer as Balancer).pids() },
      ...(backing.startedHere.length > 0 ? [{ id: 'services', label: `the services (${backing.startedHere.join(', ')})`, pids: () => (backing as Backing).pids() }] : []),
    ] };
    await pairSanity(p);
    const cpu = await pairGet4k(p);
    checkSpread(cpu, many, log);
    await pairDownloads(p);

    const memory = [await memDetail(`${count} nodes`, await Promise.all(nodes.map(async (n) => ({ role: n.name, pids: await n.pids() })))), await memDetail('nginx (balancer)', [{ role: 'nginx', pids: await balancer.pids() }])];
    for (const m of memory) log(`${m.setup}: ${memText(m)}`);
    const [mNodes] = memory as [MemDetail];
    const each = row('nodes_rss_node', 'RSS after the loads, each node', 'MiB', false);
    each.ref.push(mNodes.processes[0]?.rssMiB ?? NaN);
    each.fileCloud.push(...mNodes.processes.map((x) => x.rssMiB));
    const total = row('nodes_rss_total', 'RSS after the loads, total over the nodes serving', 'MiB', false);
    total.ref.push(mNodes.processes[0]?.rssMiB ?? NaN);
    total.fileCloud.push(mNodes.totalRssMiB);
    rows.push(each, total);
    return { rows, nodes: count, services: { s3: backing.s3.endpoint, startedHere: backing.startedHere }, cpu, memory };
  } finally {
    if (balancer) await stopChild(balancer.proc, 'SIGQUIT');
    for (const n of nodes) await stopFileCloud(n);
    if (s3 && bucket) await emptyBucket(s3, bucket).catch((e: unknown) => console.error(`bench: emptying S3 bucket ${bucket} failed: ${(e as Error).message}`));
    s3?.destroy();
    await services?.stop();
  }
}

/** Round robin really spread the 4 KiB GETs: in the N-node runs every node used a fair part of the CPU. */
function checkSpread(cpu: CpuDetail[], many: Server, log: (msg: string) => void): void {
  for (const d of cpu.filter((x) => x.setup === many.name)) {
    const total = d.perProcess.reduce((a, x) => a + x.cpuSeconds, 0);
    const shares = d.perProcess.map((x) => x.cpuSeconds / total);
    if (shares.some((x) => x < 0.4 / shares.length)) throw new BenchError(`nginx did not spread the load over the nodes: CPU shares ${shares.map((x) => x.toFixed(2)).join(' / ')}`);
    if (d.rep === 0) log(`round robin: CPU shares of the nodes ${shares.map((x) => x.toFixed(2)).join(' / ')}`);
  }
}
