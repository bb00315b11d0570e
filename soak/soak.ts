import { spawnSync, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { mkdtemp, rm } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, spawnFileCloud, type FileCloudProcess } from '../test/kit/file-cloud-process.js';
import { processTree } from '../test/kit/process-tree.js';
import { memoryTrend, ruleWarmupSeconds, RULE_TEXT, type Sample, type Trend } from './memory-trend.js';

/**
 * The soak: the real binary on loopback, driven by a mixed workload (small
 * GETs, ranged GETs, listings, uploads, token checks, refreshes) over
 * `concurrency` keep-alive connections for a bounded time. Reports requests/s,
 * p50/p99, errors and the server's RSS over time, then checks that every
 * uploaded file is intact. Passes with zero 5xx, zero socket errors, no
 * unexpected status, no corrupt file, and no memory growth after warm-up:
 * the resident memory of the whole process tree (the server runs with its
 * default --workers auto: one process on a small box, else a primary and its workers) and of each process,
 * sampled every second, judged by the rule in memory-trend.ts (the tree
 * always, each process over a window of 5 minutes or more; last-third
 * median against first-third median; when the window after warm-up lasts
 * 5 minutes or more — a run of about 7 minutes — also the slope in MiB per
 * minute).
 */
export type SoakOptions = {
  readonly durationMs: number;
  readonly concurrency?: number;
  /**
   * Warm-up lasts until the server has answered this many requests as well as for the rule's
   * time (memory-trend.ts), and the run goes on for the judged window's full length after it
   * (at most 3 × durationMs in all). Under this load each worker's RSS steps up once by ~50 MiB
   * when V8 enlarges its old generation, after some 35-52 thousand requests whatever the machine's
   * speed (20-48 s into a run here, later on a busy machine), and is flat from there.
   */
  readonly warmupRequests?: number;
  readonly reportEveryMs?: number;
  readonly log?: (line: string) => void;
};

export type Interval = { t: number; requests: number; rps: number; p50: number; p99: number; errors: number; rssMiB: number };
export type SoakReport = {
  ok: boolean;
  failures: string[];
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  status5xx: number;
  socketErrors: number;
  unexpected: number;
  intervals: Interval[];
  /** First-third and last-third medians (after warm-up) of the process tree's RSS. */
  rssAfterWarmupMiB: number;
  rssEndMiB: number;
  /** RSS sampled every second: its trend for the process tree and for each process, and the rule applied. */
  memory: { sampleEveryMs: number; rule: string; total: Trend; processes: ({ role: string; pid: number } & Trend)[]; anonymous: AnonTrends };
  filesUploaded: number;
  filesChecked: number;
  filesCorrupt: number;
};

const USERS = ['soak0', 'soak1', 'soak2', 'soak3'];
const PASSWORD = 'soak-password-long';

type Res = { status: number; body: Buffer };
type User = { name: string; access: string; refresh: string; files: string[] };

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const pct = (sorted: number[], p: number) => (sorted.length === 0 ? 0 : (sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number));
const round = (n: number) => Math.round(n * 10) / 10;

/**
 * The anonymous part of the resident memory (RssAnon: heaps, buffers),
 * beside VmRSS, which also counts mapped file pages (RssFile: the binary,
 * libraries, and database pages SQLite maps, which grow with the database
 * and are the kernel's to drop): reported to tell a leak from a growing
 * data set, not judged.
 */
export type AnonTrends = { total: Omit<Trend, 'failures'>; processes: ({ role: string; pid: number } & Omit<Trend, 'failures'>)[] };

/** VmRSS and RssAnon of one process in MiB (0 when it is gone). */
async function rssOf(pid: number): Promise<{ rss: number; anon: number }> {
  const text = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const kib = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+) kB`).exec(text)?.[1] ?? 0) / 1024;
  return { rss: kib('VmRSS'), anon: kib('RssAnon') };
}

/**
 * Samples the RSS of the server's process tree every `everyMs` until stop():
 * one series per process (the primary first, then each worker as it is first
 * seen) and one for their sum.
 */
function memorySampler(pid: number, started: number, everyMs: number) {
  const roles = new Map<number, string>();
  const perPid = new Map<number, Sample[]>();
  const anonPerPid = new Map<number, Sample[]>();
  const total: Sample[] = [];
  const anonTotal: Sample[] = [];
  let last = 0;
  let stopped = false;
  const sample = async () => {
    const t = (performance.now() - started) / 1000;
    const pids = await processTree(pid);
    const mibs = await Promise.all(pids.map(rssOf));
    // A sample finished after stop() belongs to no series (the load has ended).
    if (stopped) return;
    let sum = 0;
    let anonSum = 0;
    for (const [i, p] of pids.entries()) {
      const { rss: mib, anon } = mibs[i] as { rss: number; anon: number };
      if (mib === 0) continue;
      if (!roles.has(p)) roles.set(p, p !== pid ? `worker ${[...roles.values()].filter((r) => r.startsWith('worker')).length + 1}` : pids.length > 1 ? 'primary' : 'process');
      const own = perPid.get(p) ?? [];
      own.push({ t, mib });
      perPid.set(p, own);
      const ownAnon = anonPerPid.get(p) ?? [];
      ownAnon.push({ t, mib: anon });
      anonPerPid.set(p, ownAnon);
      sum += mib;
      anonSum += anon;
    }
    if (sum > 0) total.push({ t, mib: sum });
    if (sum > 0) anonTotal.push({ t, mib: anonSum });
    last = sum;
  };
  let running = Promise.resolve();
  const timer = setInterval(() => {
    // One sample at a time: a slow /proc read never piles samples up.
    running = running.then(sample).catch(() => undefined);
  }, everyMs);
  return {
    latest: () => Math.round(last * 10) / 10,
    async stop() {
      clearInterval(timer);
      stopped = true;
      await running;
      return { roles, perPid, total, anonPerPid, anonTotal };
    },
  };
}

async function startServer(dataDir: string): Promise<FileCloudProcess> {
  const env = { ...process.env, FILE_CLOUD_ADMIN_PASSWORD: PASSWORD, FILE_CLOUD_LOG_LEVEL: 'warn' };
  for (const u of USERS) {
    const r = spawnSync(process.execPath, [BIN, 'user', 'add', u, '--password', PASSWORD, '--data-dir', dataDir], { env });
    if (r.status !== 0) throw new Error(`user add ${u}: ${r.stderr}`);
  }
  // Loopback only, whatever the environment says.
  return spawnFileCloud({ dataDir, args: ['--host', '127.0.0.1'], env: { FILE_CLOUD_ADMIN_PASSWORD: PASSWORD, FILE_CLOUD_LOG_LEVEL: 'warn' } });
}

export async function runSoak(opts: SoakOptions): Promise<SoakReport> {
  const dataDir = await mkdtemp(join(tmpdir(), 'fc-soak-'));
  let server: FileCloudProcess;
  try {
    server = await startServer(dataDir);
  } catch (e) {
    await rm(dataDir, { recursive: true, force: true });
    throw e;
  }
  try {
    return await drive(server.proc, server.url, dataDir, opts);
  } finally {
    await server.stop('SIGKILL');
    await rm(dataDir, { recursive: true, force: true });
  }
}

async function drive(proc: ChildProcess, url: string, dataDir: string, opts: SoakOptions): Promise<SoakReport> {
  const concurrency = opts.concurrency ?? 64;
  const reportEvery = opts.reportEveryMs ?? Math.max(2000, Math.min(10_000, opts.durationMs / 10));
  const log = opts.log ?? ((l: string) => console.log(l));
  const { hostname, port } = new URL(url);
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const failures: string[] = [];
  let status5xx = 0;
  let socketErrors = 0;
  let unexpected = 0;
  const expectedSha = new Map<string, string>();

  const send = (method: string, path: string, headers: Record<string, string> = {}, body?: Buffer): Promise<Res> =>
    new Promise((ok, fail) => {
      const req = request({ host: hostname, port, method, path, agent, headers: body ? { ...headers, 'content-length': String(body.length) } : headers, timeout: 30_000 }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => ok({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
        res.on('error', fail);
      });
      req.on('timeout', () => req.destroy(new Error('request timed out')));
      req.on('error', fail);
      req.end(body);
    });

  const users: User[] = [];
  for (const name of USERS) {
    const r = await send('POST', '/auth/login', { 'content-type': 'application/json' }, Buffer.from(JSON.stringify({ username: name, password: PASSWORD })));
    if (r.status !== 200) throw new Error(`login ${name}: ${r.status} ${r.body}`);
    const t = JSON.parse(r.body.toString()) as { access_token: string; refresh_token: string };
    users.push({ name, access: t.access_token, refresh: t.refresh_token, files: [] });
  }
  const upload = async (u: User, folder: string, size: number): Promise<Res> => {
    const data = randomBytes(size);
    const path = `${folder}/f-${randomBytes(6).toString('hex')}.bin`;
    const res = await send('PUT', `/storage/${u.name}/${path}`, { authorization: `Bearer ${u.access}`, 'content-type': 'application/octet-stream' }, data);
    if (res.status === 201) {
      expectedSha.set(`${u.name}/${path}`, sha(data));
      u.files.push(path);
    }
    return res;
  };
  for (const u of users) for (let i = 0; i < 20; i++) await upload(u, `seed/d${i % 4}`, 1024 + Math.floor(Math.random() * 63 * 1024));

  let latencies: number[] = [];
  let all: number[] = [];
  let intervalErrors = 0;
  let total = 0;
  let stop = false;
  const pick = <T>(xs: T[]) => xs[Math.floor(Math.random() * xs.length)] as T;

  async function one(): Promise<void> {
    const u = pick(users);
    const auth = { authorization: `Bearer ${u.access}` };
    const r = Math.random();
    let res: Res;
    let want = 200;
    let file: string | undefined;
    const started = performance.now();
    if (r < 0.35) {
      file = pick(u.files);
      res = await send('GET', `/storage/${u.name}/${file}`, auth);
    } else if (r < 0.42) {
      res = await send('GET', `/storage/${u.name}/${pick(u.files)}`, { ...auth, range: 'bytes=0-99' });
      want = 206;
    } else if (r < 0.57) {
      res = await send('GET', `/storage/${u.name}/seed/d${Math.floor(Math.random() * 4)}/`, auth);
    } else if (r < 0.72) {
      res = await upload(u, `up/${Math.floor(Math.random() * 8)}`, 1 + Math.floor(Math.random() ** 3 * 256 * 1024));
      want = 201;
    } else if (r < 0.95) {
      res = await send('HEAD', '/api/stats', auth);
    } else {
      res = await send('POST', '/auth/refresh', { 'content-type': 'application/json' }, Buffer.from(JSON.stringify({ username: u.name, refresh_token: u.refresh })));
      if (res.status === 200) u.access = (JSON.parse(res.body.toString()) as { access_token: string }).access_token;
    }
    latencies.push(performance.now() - started);
    total++;
    if (res.status >= 500) status5xx++;
    if (res.status !== want) {
      unexpected++;
      intervalErrors++;
      if (failures.length < 20) failures.push(`unexpected ${res.status} (wanted ${want}): ${res.body.toString().slice(0, 200)}`);
    } else if (file && sha(res.body) !== expectedSha.get(`${u.name}/${file}`)) {
      failures.push(`download of ${u.name}/${file} differs from its upload`);
    }
  }

  async function worker(): Promise<void> {
    while (!stop) {
      try {
        await one();
      } catch (e) {
        socketErrors++;
        intervalErrors++;
        if (failures.length < 20) failures.push(`socket error: ${(e as Error).message}`);
      }
    }
  }

  const started = performance.now();
  const intervals: Interval[] = [];
  const sampleEveryMs = 1000;
  const memory = memorySampler(proc.pid as number, started, sampleEveryMs);
  log(`soak: ${Math.round(opts.durationMs / 1000)} s, ${concurrency} connections, server pid ${proc.pid} at ${url}`);
  const ticker = setInterval(() => {
    const sorted = latencies.sort((a, b) => a - b);
    all = all.concat(sorted);
    const iv: Interval = { t: Math.round((performance.now() - started) / 1000), requests: sorted.length, rps: Math.round(sorted.length / (reportEvery / 1000)), p50: round(pct(sorted, 50)), p99: round(pct(sorted, 99)), errors: intervalErrors, rssMiB: memory.latest() };
    intervals.push(iv);
    log(`t=${iv.t}s rps=${iv.rps} p50=${iv.p50}ms p99=${iv.p99}ms errors=${iv.errors} rss=${iv.rssMiB}MiB`);
    latencies = [];
    intervalErrors = 0;
  }, reportEvery);
  const workers = Array.from({ length: concurrency }, worker);
  const ruleWarmupMs = ruleWarmupSeconds(opts.durationMs / 1000) * 1000;
  const judgedMs = opts.durationMs - ruleWarmupMs;
  let warmedAtMs = opts.warmupRequests ? undefined : 0; // when the warm-up's requests were answered
  let plannedMs = opts.durationMs;
  for (;;) {
    await new Promise((r) => setTimeout(r, 200));
    const now = performance.now() - started;
    if (warmedAtMs === undefined && total >= (opts.warmupRequests ?? 0)) {
      warmedAtMs = now;
      plannedMs = Math.min(3 * opts.durationMs, Math.max(opts.durationMs, Math.max(ruleWarmupMs, now) + judgedMs));
      if (plannedMs > opts.durationMs) log(`soak: ${opts.warmupRequests} requests of warm-up took ${Math.round(now / 1000)} s; running to ${Math.round(plannedMs / 1000)} s`);
    }
    if (now >= (warmedAtMs === undefined ? 3 * opts.durationMs : plannedMs)) break;
  }
  if (warmedAtMs === undefined) failures.push(`only ${total} of the ${opts.warmupRequests} warm-up requests were answered in ${Math.round((3 * opts.durationMs) / 1000)} s`);
  stop = true;
  await Promise.all(workers);
  clearInterval(ticker);
  const elapsed = (performance.now() - started) / 1000;
  const series = await memory.stop();
  all = all.concat(latencies).sort((a, b) => a - b);

  // Every file the server acknowledged, read back whole.
  let filesChecked = 0;
  let filesCorrupt = 0;
  const queue = [...expectedSha.entries()];
  const byName = new Map(users.map((u) => [u.name, u]));
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let next = queue.pop(); next; next = queue.pop()) {
        const [path, digest] = next;
        const u = byName.get(path.split('/')[0] as string) as User;
        const res = await send('GET', `/storage/${path}`, { authorization: `Bearer ${u.access}` }).catch(() => ({ status: 0, body: Buffer.alloc(0) }));
        filesChecked++;
        if (res.status !== 200 || sha(res.body) !== digest) {
          filesCorrupt++;
          if (failures.length < 40) failures.push(`file ${path} is not intact (${res.status})`);
        }
      }
    }),
  );
  agent.destroy();
  proc.kill('SIGTERM');
  const code = await new Promise<number | null>((r) => proc.once('exit', r));
  void dataDir;

  // Memory: the trend of the whole tree and of each process after warm-up (soak/memory-trend.ts).
  const runSeconds = plannedMs / 1000;
  const warmupSeconds = Math.max(ruleWarmupMs, warmedAtMs ?? plannedMs) / 1000;
  const totalTrend = memoryTrend(series.total, runSeconds, 'RSS of the process tree', warmupSeconds);
  const processes = [...series.roles].map(([pid, role]) => ({ role, pid, ...memoryTrend(series.perPid.get(pid) ?? [], runSeconds, `RSS of the ${role} (pid ${pid})`, warmupSeconds) }));
  // Each process is judged over a long window only: in a short run the workers' heaps are still settling
  // (+20 MiB in 10 s seen), and the tree's total keeps the earlier short-run rule.
  failures.push(...totalTrend.failures, ...processes.flatMap((p) => (p.slopeJudged ? p.failures : [])));
  const info = (samples: Sample[]) => {
    const { failures: _notJudged, ...t } = memoryTrend(samples, runSeconds, 'RSS', warmupSeconds);
    return t;
  };
  const anonymous: AnonTrends = { total: info(series.anonTotal), processes: [...series.roles].map(([pid, role]) => ({ role, pid, ...info(series.anonPerPid.get(pid) ?? []) })) };
  const rssAfterWarmupMiB = totalTrend.firstThirdMedianMiB;
  const rssEndMiB = totalTrend.lastThirdMedianMiB;
  if (code !== 0) failures.push(`the server exited with ${code} on SIGTERM`);
  if (status5xx > 0) failures.push(`${status5xx} answers were 5xx`);
  if (socketErrors > 0) failures.push(`${socketErrors} socket errors`);
  if (total === 0) failures.push('no request completed');

  const report: SoakReport = {
    ok: failures.length === 0,
    failures,
    requests: total,
    rps: Math.round(total / elapsed),
    p50: round(pct(all, 50)),
    p99: round(pct(all, 99)),
    status5xx,
    socketErrors,
    unexpected,
    intervals,
    rssAfterWarmupMiB,
    rssEndMiB,
    memory: { sampleEveryMs, rule: RULE_TEXT, total: totalTrend, processes, anonymous },
    filesUploaded: expectedSha.size,
    filesChecked,
    filesCorrupt,
  };
  log(`soak: ${report.requests} requests, ${report.rps}/s, p50 ${report.p50} ms, p99 ${report.p99} ms, 5xx ${status5xx}, socket errors ${socketErrors}, unexpected ${unexpected}; RSS ${rssAfterWarmupMiB} → ${rssEndMiB} MiB; ${filesChecked} files checked, ${filesCorrupt} not intact: ${report.ok ? 'PASS' : 'FAIL'}`);
  const trendText = (t: Trend) => `slope ${t.slopeMiBPerMin} MiB/min (of the 30 s medians ${t.slopeOfMediansMiBPerMin}${t.slopeJudged ? '' : ', not judged: window under 5 min'}), median ${t.firstThirdMedianMiB} → ${t.lastThirdMedianMiB} MiB (first → last third, allowance ${t.allowanceMiB})`;
  log(`soak memory (after warm-up, ${totalTrend.windowSeconds} s, ${totalTrend.samples} samples): process tree ${trendText(totalTrend)}`);
  for (const p of processes) log(`  ${p.role} (pid ${p.pid}): ${trendText(p)}`);
  const anonText = (t: Omit<Trend, 'failures'>) => `${t.slopeMiBPerMin} MiB/min, median ${t.firstThirdMedianMiB} → ${t.lastThirdMedianMiB} MiB`;
  log(`  anonymous memory (RssAnon; not judged): process tree ${anonText(anonymous.total)}; ${anonymous.processes.map((p) => `${p.role} ${anonText(p)}`).join('; ')}`);
  log(`  rule: ${RULE_TEXT}`);
  for (const f of failures) log(`  ${f}`);
  return report;
}
