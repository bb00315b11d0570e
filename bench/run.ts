/**
 * `npm run bench [-- --quick] [-- options]`: File Cloud side by side with nginx.
 *
 * Starts File Cloud from the build (dist/) on a temporary data dir and nginx
 * (sendfile, autoindex json, dav PUT) as the reference, both on 127.0.0.1 and
 * on the very same dataset (created by bench/setup in the File Cloud data
 * dir's storage/admin/, which is nginx's root). Measures every metric a few
 * times, alternating the servers, and prints
 * `metric | nginx | File Cloud | ratio | target`; writes the JSON to
 * bench/results/. Load: wrk for request rates (C, fixed connections, latency
 * histogram); Node's own http for transfers (a 1 GiB download or upload is
 * one request, which wrk cannot time) and /proc/<pid>/status for memory.
 *
 * Exit codes: 0 done (whatever the ratios), 1 a request failed or a tool is
 * missing, 2 usage error. Every loop is bounded in count and time; every
 * process started here is stopped by its own pid.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createReadStream, openSync, closeSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const MiB = 1024 * 1024;
const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const BIN = join(REPO, 'bin', 'file-cloud.js');
const SETUP = join(REPO, 'bench', 'setup');
const RESULTS = join(REPO, 'bench', 'results');
const USER = 'admin';

// ---------------------------------------------------------------- options

type Options = {
  quick: boolean;
  keep: boolean;
  profile: boolean;
  only: Set<string> | undefined;
  reps: number;
  seconds: number;
  dir: string;
  fcArgs: string[];
  fcBin: string;
};

const METRICS = ['download1', 'download4', 'get4k', 'listing', 'head', 'putraw', 'putmultipart', 'put4'] as const;
type MetricGroup = (typeof METRICS)[number];

const USAGE = `usage: npm run bench -- [--quick] [--reps N] [--seconds S] [--only ${METRICS.join(',')}]
                        [--profile] [--keep] [--dir DIR] [--fc-arg ARG ...]
  --quick     a few seconds per metric, 64 MiB / 16 MiB files (the CI smoke test)
  --reps N    repetitions of each metric (default 3; quick 2)
  --seconds S duration of each wrk run (default 10; quick 2)
  --only L    run only these metric groups (comma-separated)
  --profile   run File Cloud with --cpu-prof; profiles go to bench/results/profiles/
  --keep      keep the temporary data dir and dataset
  --dir DIR   where to create the temporary dir (default: the OS temp dir)
  --fc-arg A  extra argument for \`file-cloud serve\` (experiments only, e.g. --log-level=silent)
  --fc-bin F  another build's bin/file-cloud.js (to compare builds, e.g. before/after a change)`;

function parseOptions(argv: string[]): Options {
  const o: Options = { quick: false, keep: false, profile: false, only: undefined, reps: 0, seconds: 0, dir: os.tmpdir(), fcArgs: [], fcBin: BIN };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    const [flag, inline] = a.includes('=') ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a, undefined];
    const value = () => {
      const v = inline ?? argv[++i];
      if (v === undefined) usage(`${flag} needs a value`);
      return v as string;
    };
    switch (flag) {
      case '--quick': o.quick = true; break;
      case '--keep': o.keep = true; break;
      case '--profile': o.profile = true; break;
      case '--reps': o.reps = positive(flag, value()); break;
      case '--seconds': o.seconds = positive(flag, value()); break;
      case '--dir': o.dir = resolve(value()); break;
      case '--fc-arg': o.fcArgs.push(value()); break;
      case '--fc-bin': o.fcBin = resolve(value()); break;
      case '--only': {
        const names = value().split(',').filter(Boolean);
        for (const n of names) if (!(METRICS as readonly string[]).includes(n)) usage(`unknown metric group ${n}`);
        o.only = new Set(names);
        break;
      }
      case '-h': case '--help': console.log(USAGE); process.exit(0); break;
      default: usage(`unknown option ${a}`);
    }
  }
  o.reps ||= o.quick ? 2 : 3;
  o.seconds ||= o.quick ? 2 : 10;
  return o;
}

function positive(flag: string, v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 1000) usage(`${flag} must be a whole number from 1 to 1000`);
  return n;
}

function usage(message: string): never {
  console.error(`bench: ${message}\n${USAGE}`);
  process.exit(2);
}

class BenchError extends Error {}

// ---------------------------------------------------------------- statistics and results

type Unit = 'MiB/s' | 'req/s' | 'ms' | 'MiB';
type Target = { kind: 'ratio_at_least'; value: number } | { kind: 'fc_at_most'; value: number };
type Row = {
  id: string;
  label: string;
  unit: Unit;
  higherIsBetter: boolean;
  nginx: number[];
  fileCloud: number[];
  target?: Target;
  note?: string;
};

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length === 0 ? NaN : s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};

function summarize(r: Row) {
  const n = median(r.nginx);
  const f = median(r.fileCloud);
  const ratio = f / n;
  let met: boolean | undefined;
  if (r.target?.kind === 'ratio_at_least') met = ratio >= r.target.value;
  if (r.target?.kind === 'fc_at_most') met = f <= r.target.value;
  return { nginxMedian: n, fileCloudMedian: f, ratio, met };
}

const fmt = (x: number, unit: Unit): string => {
  if (!Number.isFinite(x)) return '–';
  if (unit === 'ms') return x < 10 ? x.toFixed(2) : x.toFixed(1);
  return x >= 100 ? Math.round(x).toLocaleString('en-US') : x.toFixed(1);
};
const cell = (xs: number[], unit: Unit): string => {
  if (xs.length === 0) return '–';
  const lo = Math.min(...xs);
  const hi = Math.max(...xs);
  return xs.length > 1 ? `${fmt(median(xs), unit)} (${fmt(lo, unit)}–${fmt(hi, unit)})` : fmt(xs[0] as number, unit);
};
const targetText = (t: Target | undefined): string =>
  !t ? '' : t.kind === 'ratio_at_least' ? `ratio ≥ ${t.value}` : `File Cloud ≤ ${t.value}`;

function table(rows: Row[]): string {
  const lines = [
    '| metric | nginx | File Cloud | ratio | target |',
    '|---|---:|---:|---:|---|',
  ];
  for (const r of rows) {
    const s = summarize(r);
    const verdict = s.met === undefined ? '' : s.met ? ' ✔ met' : ' ✘ missed';
    lines.push(`| ${r.label} (${r.unit})${r.note ? ` ${r.note}` : ''} | ${cell(r.nginx, r.unit)} | ${cell(r.fileCloud, r.unit)} | ${Number.isFinite(s.ratio) ? s.ratio.toFixed(2) : '–'} | ${targetText(r.target)}${verdict} |`);
  }
  return lines.join('\n');
}

// ---------------------------------------------------------------- processes

const children = new Set<ChildProcess>();

function sleep(ms: number) {
  return new Promise((r) => setTimeout(r, ms));
}

/** Stops one process we started, by its pid: `signal`, then SIGKILL after `graceMs`. */
async function stopChild(p: ChildProcess, signal: NodeJS.Signals = 'SIGTERM', graceMs = 15_000): Promise<void> {
  if (p.exitCode !== null || p.signalCode !== null) return void children.delete(p);
  const exited = new Promise<void>((r) => p.once('exit', () => r()));
  if (p.pid !== undefined) process.kill(p.pid, signal);
  const timer = setTimeout(() => p.pid !== undefined && p.exitCode === null && process.kill(p.pid, 'SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
  children.delete(p);
}

async function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = net.createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => res(port));
    });
  });
}

async function waitFor<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (let i = 0; i < 1000 && Date.now() < deadline; i++) {
    const v = await probe().catch(() => undefined);
    if (v !== undefined) return v;
    await sleep(100);
  }
  throw new BenchError(`${what} did not happen within ${timeoutMs / 1000} s`);
}

/** VmRSS and VmHWM of one process, in bytes (0 when it is gone). */
async function memOf(pid: number): Promise<{ rss: number; hwm: number }> {
  try {
    const text = await readFile(`/proc/${pid}/status`, 'utf8');
    const kib = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+) kB`).exec(text)?.[1] ?? 0) * 1024;
    return { rss: kib('VmRSS'), hwm: kib('VmHWM') };
  } catch {
    return { rss: 0, hwm: 0 };
  }
}

type Server = {
  name: 'nginx' | 'File Cloud';
  base: string;
  headers: Record<string, string>;
  /** URL path of a file or folder of the dataset (rel has no leading slash). */
  path(rel: string): string;
  /** URL path of the stats endpoint (HEAD). */
  statsPath: string;
  /** pids whose memory counts (File Cloud: the process; nginx: master and workers). */
  pids(): Promise<number[]>;
  proc: ChildProcess;
};

async function memTotal(s: Server): Promise<{ rss: number; hwm: number }> {
  const all = await Promise.all((await s.pids()).map(memOf));
  return { rss: all.reduce((a, m) => a + m.rss, 0), hwm: all.reduce((a, m) => a + m.hwm, 0) };
}

async function startFileCloud(o: Options, tmp: string, dataDir: string): Promise<{ server: Server; password: string }> {
  const password = randomBytes(18).toString('base64url');
  const logFile = join(tmp, 'file-cloud.log');
  const out = openSync(logFile, 'a');
  // The benchmark runs File Cloud as shipped: its own FILE_CLOUD_* settings
  // from the caller's environment are not passed on (default log level: info).
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('FILE_CLOUD_')) env[k] = v;
  env.FILE_CLOUD_ADMIN_PASSWORD = password;
  const nodeArgs = o.profile ? ['--cpu-prof', '--cpu-prof-dir', join(RESULTS, 'profiles')] : [];
  const proc = spawn(process.execPath, [...nodeArgs, o.fcBin, 'serve', '--port', '0', '--data-dir', dataDir, ...o.fcArgs], {
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

async function startNginx(tmp: string, root: string): Promise<Server> {
  const dir = join(tmp, 'nginx');
  await mkdir(join(dir, 'body'), { recursive: true });
  const port = await freePort();
  const asRoot = process.getuid?.() === 0;
  // Workers run as the current user so they can read and write the dataset in our temp dir.
  const conf = `# generated by bench/run.ts
${asRoot ? 'user root root;' : ''}
worker_processes auto;
daemon off;
master_process on;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 4096; }
http {
  default_type application/octet-stream;
  types { text/plain txt; }
  # Access logging on, as in nginx's default configuration (File Cloud logs every request at info).
  access_log ${dir}/access.log;
  sendfile on;
  tcp_nopush on;
  keepalive_timeout 72s;
  keepalive_requests 1000000;
  client_max_body_size 0;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  server {
    listen 127.0.0.1:${port};
    root ${root};
    location = /api/stats { return 200; }
    location / {
      autoindex on;
      autoindex_format json;
      dav_methods PUT;
      create_full_put_path on;
    }
  }
}
`;
  await writeFile(join(dir, 'nginx.conf'), conf);
  const bin = spawnSync('sh', ['-c', 'command -v nginx || echo /usr/sbin/nginx'], { encoding: 'utf8' }).stdout.trim();
  const proc = spawn(bin, ['-p', dir, '-c', join(dir, 'nginx.conf'), '-e', join(dir, 'startup-error.log')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  proc.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  children.add(proc);
  const base = `http://127.0.0.1:${port}`;
  await waitFor('nginx listening', 15_000, async () => {
    if (proc.exitCode !== null) throw new BenchError(`nginx exited with ${proc.exitCode}: ${stderr}`);
    return (await fetch(`${base}/tiny.txt`)).status === 200 ? true : undefined;
  }).catch((e: unknown) => {
    if (proc.exitCode !== null) throw new BenchError(`nginx exited with ${proc.exitCode}: ${stderr}`);
    throw e;
  });
  return {
    name: 'nginx',
    base,
    headers: {},
    path: (rel) => `/${rel}`,
    statsPath: '/api/stats',
    pids: async () => {
      if (!proc.pid) return [];
      const kids = await readFile(`/proc/${proc.pid}/task/${proc.pid}/children`, 'utf8').catch(() => '');
      return [proc.pid, ...kids.split(/\s+/).filter(Boolean).map(Number)];
    },
    proc,
  };
}

// ---------------------------------------------------------------- load: transfers (Node http)

type HttpResult = { status: number; bytes: number; body: string };

/**
 * One request; the response body is counted (and kept only if small).
 * `upload` streams a file as the body, optionally wrapped in multipart framing.
 */
function request(server: Server, method: string, path: string, opts: { headers?: Record<string, string>; upload?: { file: string; size: number; multipart?: { filename: string } }; timeoutMs?: number } = {}): Promise<HttpResult> {
  return new Promise((res, rej) => {
    const headers: Record<string, string> = { ...server.headers, ...opts.headers };
    let pre = Buffer.alloc(0);
    let post = Buffer.alloc(0);
    if (opts.upload) {
      if (opts.upload.multipart) {
        const boundary = `----bench${randomBytes(12).toString('hex')}`;
        pre = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${opts.upload.multipart.filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`);
        post = Buffer.from(`\r\n--${boundary}--\r\n`);
        headers['content-type'] = `multipart/form-data; boundary=${boundary}`;
      } else {
        headers['content-type'] = 'application/octet-stream';
      }
      headers['content-length'] = String(pre.length + opts.upload.size + post.length);
    }
    const req = http.request(`${server.base}${path}`, { method, headers, agent: false }, (resp) => {
      let bytes = 0;
      const kept: Buffer[] = [];
      resp.on('data', (c: Buffer) => {
        bytes += c.length;
        if (bytes <= 4 * MiB) kept.push(c);
      });
      resp.on('end', () => res({ status: resp.statusCode ?? 0, bytes, body: bytes <= 4 * MiB ? Buffer.concat(kept).toString('utf8') : '' }));
      resp.on('error', rej);
    });
    const timer = setTimeout(() => req.destroy(new BenchError(`${method} ${path} on ${server.name} took over ${(opts.timeoutMs ?? 600_000) / 1000} s`)), opts.timeoutMs ?? 600_000);
    req.on('close', () => clearTimeout(timer));
    req.on('error', rej);
    if (!opts.upload) return void req.end();
    req.write(pre);
    const src = createReadStream(opts.upload.file, { highWaterMark: 256 * 1024 });
    src.on('error', (e) => req.destroy(e));
    src.on('end', () => req.end(post));
    src.pipe(req, { end: false });
  });
}

function expectStatus(server: Server, what: string, r: HttpResult, ok: number[]): void {
  if (!ok.includes(r.status)) throw new BenchError(`${server.name}: ${what} answered ${r.status}: ${r.body.slice(0, 300)}`);
}

/** `streams` parallel GETs of one file; aggregate MiB/s from the first start to the last end. */
async function download(server: Server, rel: string, size: number, streams: number): Promise<number> {
  const t0 = performance.now();
  const results = await Promise.all(Array.from({ length: streams }, () => request(server, 'GET', server.path(rel))));
  const seconds = (performance.now() - t0) / 1000;
  for (const r of results) {
    expectStatus(server, `GET ${rel}`, r, [200]);
    if (r.bytes !== size) throw new BenchError(`${server.name}: GET ${rel} gave ${r.bytes} bytes, expected ${size}`);
  }
  return (streams * size) / MiB / seconds;
}

/** Flushes dirty pages left by the previous upload so that it does not slow down the next one. */
function settleDisk(): void {
  spawnSync('sync', [], { timeout: 120_000 });
}

type UploadKind = 'raw' | 'multipart';

/**
 * Uploads `file` `count` times in parallel to up/ (raw PUT to a file path;
 * multipart PUT into the folder for File Cloud) and checks the stored sizes.
 * Returns aggregate MiB/s and, when sampling, File Cloud's/nginx's RSS growth.
 */
async function upload(server: Server, datasetDir: string, file: string, size: number, count: number, kind: UploadKind, tag: string, sample: boolean): Promise<{ mibs: number; rssGrowth: number; peakRss: number }> {
  const names = Array.from({ length: count }, (_, i) => `${tag}-${i}.bin`);
  settleDisk();
  const before = await memTotal(server);
  let peak = before.rss;
  let sampling = sample;
  const sampler = (async () => {
    for (let i = 0; sampling && i < 100_000; i++) {
      peak = Math.max(peak, (await memTotal(server)).rss);
      await sleep(20);
    }
  })();
  const t0 = performance.now();
  let results: HttpResult[];
  try {
    results = await Promise.all(
      names.map((name) =>
        kind === 'multipart'
          ? request(server, 'PUT', server.path('up/'), { upload: { file, size, multipart: { filename: name } } })
          : request(server, 'PUT', server.path(`up/${name}`), { upload: { file, size } }),
      ),
    );
  } finally {
    sampling = false;
    await sampler;
  }
  const seconds = (performance.now() - t0) / 1000;
  for (const [i, r] of results.entries()) {
    expectStatus(server, `PUT ${kind} ${names[i]}`, r, [201, 204]);
    if (server.name === 'File Cloud') {
      const written = (JSON.parse(r.body) as { files_written?: string[] }).files_written;
      if (written?.[0] !== names[i]) throw new BenchError(`File Cloud: PUT stored ${JSON.stringify(written)}, expected ${names[i]}`);
    }
    const stored = await stat(join(datasetDir, 'up', names[i] as string));
    if (stored.size !== size) throw new BenchError(`${server.name}: uploaded ${names[i]} has ${stored.size} bytes, expected ${size}`);
  }
  await Promise.all(names.map((n) => rm(join(datasetDir, 'up', n), { force: true })));
  return { mibs: (count * size) / MiB / seconds, rssGrowth: (peak - before.rss) / MiB, peakRss: peak / MiB };
}

// ---------------------------------------------------------------- load: request rates (wrk)

type WrkResult = { rps: number; p50: number; p99: number; requests: number };

async function wrk(server: Server, tmp: string, o: { name: string; method: 'GET' | 'HEAD'; paths: string[]; connections: number; seconds: number; warmup?: boolean }): Promise<WrkResult> {
  const script = join(tmp, `wrk-${o.name}-${server.name === 'nginx' ? 'nginx' : 'fc'}.lua`);
  const lua = [
    `local paths = { ${o.paths.map((p) => JSON.stringify(p)).join(', ')} }`,
    'local i = 0',
    `wrk.method = "${o.method}"`,
    'request = function()',
    '  i = i % #paths + 1',
    '  return wrk.format(nil, paths[i])',
    'end',
  ].join('\n');
  await writeFile(script, lua);
  const args = ['-t', '2', '-c', String(o.connections), '-d', `${o.seconds}s`, '--timeout', '10s', '--latency', '-s', script];
  for (const [k, v] of Object.entries(server.headers)) args.push('-H', `${k}: ${v}`);
  args.push(`${server.base}/`);
  const out = await new Promise<string>((res, rej) => {
    const p = spawn('wrk', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(p);
    let text = '';
    p.stdout.on('data', (d: Buffer) => (text += d.toString()));
    p.stderr.on('data', (d: Buffer) => (text += d.toString()));
    const timer = setTimeout(() => p.pid && process.kill(p.pid, 'SIGKILL'), (o.seconds + 30) * 1000);
    p.on('error', rej);
    p.on('exit', (code) => {
      clearTimeout(timer);
      children.delete(p);
      if (code === 0) res(text);
      else rej(new BenchError(`wrk exited with ${code}: ${text}`));
    });
  });
  const num = (re: RegExp) => Number(re.exec(out)?.[1] ?? NaN);
  const latency = (pct: string) => {
    const m = new RegExp(`\\s${pct}%\\s+([\\d.]+)(us|ms|s)\\b`).exec(out);
    if (!m) return NaN;
    return Number(m[1]) * ({ us: 0.001, ms: 1, s: 1000 }[m[2] as 'us' | 'ms' | 's']);
  };
  const requests = num(/(\d+) requests in/);
  const non2xx = num(/Non-2xx or 3xx responses: (\d+)/);
  const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  const sockErrors = sock ? sock.slice(1).reduce((a, x) => a + Number(x), 0) : 0;
  if (!(requests > 0) && !o.warmup) throw new BenchError(`${server.name}: wrk ${o.name} made no requests:\n${out}`);
  if (non2xx > 0 || sockErrors > 0) throw new BenchError(`${server.name}: wrk ${o.name}: ${Number.isNaN(non2xx) ? 0 : non2xx} non-2xx answers, ${sockErrors} socket errors:\n${out}`);
  return { rps: num(/Requests\/sec:\s+([\d.]+)/), p50: latency('50'), p99: latency('99'), requests };
}

/**
 * HEAD load from Node: wrk cannot time HEAD answers that carry a
 * Content-Length (its parser then waits for a body that never comes), so
 * this keeps `connections` keep-alive sockets busy, one request at a time
 * each, and ends a response at its blank line (a HEAD answer has no body).
 */
async function headLoad(server: Server, path: string, connections: number, seconds: number): Promise<WrkResult> {
  const url = new URL(server.base);
  const headerLines = Object.entries(server.headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
  const req = Buffer.from(`HEAD ${path} HTTP/1.1\r\nHost: ${url.host}\r\n${headerLines}\r\n`);
  const latencies: number[] = [];
  let bad = 0;
  let errors = 0;
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  const sockets: net.Socket[] = [];
  const hardStop = setTimeout(() => sockets.forEach((s) => s.destroy()), (seconds + 15) * 1000);
  await Promise.all(
    Array.from({ length: connections }, () =>
      new Promise<void>((res) => {
        const sock = net.connect(Number(url.port), url.hostname);
        sockets.push(sock);
        let buf = '';
        let sentAt = 0;
        const send = () => {
          if (performance.now() >= end) return void sock.end();
          sentAt = performance.now();
          sock.write(req);
        };
        sock.on('connect', send);
        sock.on('data', (d: Buffer) => {
          buf += d.toString('latin1');
          for (let i = buf.indexOf('\r\n\r\n'); i >= 0; i = buf.indexOf('\r\n\r\n')) {
            const status = Number(buf.slice(9, 12));
            if (!(status >= 200 && status < 400)) bad++;
            buf = buf.slice(i + 4);
            if (latencies.length < 10_000_000) latencies.push(performance.now() - sentAt);
            send();
          }
        });
        sock.on('error', () => errors++);
        sock.on('close', () => res());
      }),
    ),
  );
  clearTimeout(hardStop);
  const elapsed = (performance.now() - t0) / 1000;
  if (bad > 0 || errors > 0) throw new BenchError(`${server.name}: HEAD ${path}: ${bad} non-2xx answers, ${errors} socket errors`);
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
  return { rps: latencies.length / elapsed, p50: at(0.5), p99: at(0.99), requests: latencies.length };
}

// ---------------------------------------------------------------- the run

function machine() {
  const cmd = (c: string) => spawnSync('sh', ['-c', c], { encoding: 'utf8' }).stdout.trim();
  return {
    nproc: os.cpus().length,
    cpu: os.cpus()[0]?.model ?? '',
    memoryGiB: Number((os.totalmem() / 1024 ** 3).toFixed(1)),
    kernel: os.release(),
    node: process.version,
    nginx: cmd('"$(command -v nginx || echo /usr/sbin/nginx)" -v 2>&1').replace(/^nginx version: /, ''),
    wrk: cmd('wrk --version 2>&1 | head -1').split(' ').slice(0, 2).join(' '),
    disk: cmd(`df -hT ${JSON.stringify(os.tmpdir())} | tail -1`),
    loadavg: os.loadavg().map((x) => Number(x.toFixed(2))),
  };
}

async function main(): Promise<number> {
  const o = parseOptions(process.argv.slice(2));
  const want = (g: MetricGroup) => !o.only || o.only.has(g);
  const tmp = await mkdtemp(join(o.dir, 'file-cloud-bench-'));
  const dataDir = join(tmp, 'data');
  const dataset = join(dataDir, 'storage', USER);
  const started = Date.now();
  const m0 = machine();
  console.log(`bench: ${o.quick ? 'quick' : 'full'} run in ${tmp}; ${m0.nproc} CPUs, load ${m0.loadavg.join(' ')}`);
  const rows: Row[] = [];
  let fc: Server | undefined;
  let ng: Server | undefined;
  let fcPeak: number | undefined;
  try {
    const setup = spawnSync('bash', [SETUP, ...(o.quick ? ['--quick'] : []), dataset], { stdio: 'inherit', timeout: 600_000 });
    if (setup.status !== 0) throw new BenchError(`bench/setup failed (${setup.status ?? setup.signal})`);
    const bigSize = (await stat(join(dataset, 'big.bin'))).size;
    const midSize = (await stat(join(dataset, 'mid.bin'))).size;
    const smallNames = (await readdir(join(dataset, 'small'))).sort();
    const manyCount = (await readdir(join(dataset, 'many'))).length;

    const fcStart = await startFileCloud(o, tmp, dataDir);
    fc = fcStart.server;
    ng = await startNginx(tmp, dataset);
    const login = await fetch(`${fc.base}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: USER, password: fcStart.password }) });
    if (login.status !== 200) throw new BenchError(`File Cloud login answered ${login.status}`);
    const token = ((await login.json()) as { access_token: string }).access_token;
    fc.headers = { authorization: `Bearer ${token}` };
    const servers = [ng, fc];
    const bigMiB = Math.round(bigSize / MiB);
    const midMiB = Math.round(midSize / MiB);

    // Sanity: both serve the same dataset, and the listings are complete.
    for (const s of servers) {
      const l = await request(s, 'GET', s.path('many/'));
      expectStatus(s, 'listing', l, [200]);
      const parsed = JSON.parse(l.body) as unknown;
      const n = Array.isArray(parsed) ? parsed.length : (parsed as { entries: unknown[] }).entries.length;
      if (n !== manyCount) throw new BenchError(`${s.name}: listing has ${n} entries, expected ${manyCount}`);
      expectStatus(s, 'HEAD stats', await request(s, 'HEAD', s.statsPath), [200]);
      const f = await request(s, 'GET', s.path(`small/${smallNames[0]}`));
      expectStatus(s, 'GET small', f, [200]);
      if (f.bytes !== 4096) throw new BenchError(`${s.name}: small file has ${f.bytes} bytes`);
    }
    const noAuth = await request({ ...fc, headers: {} }, 'HEAD', fc.statsPath);
    if (noAuth.status !== 401) throw new BenchError(`File Cloud answered HEAD /api/stats without a token with ${noAuth.status}`);

    const log = (msg: string) => console.log(`  ${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s  ${msg}`);

    // -- downloads
    for (const streams of [1, 4] as const) {
      if (!want(streams === 1 ? 'download1' : 'download4')) continue;
      const row: Row = { id: `download_${streams}`, label: `${bigMiB} MiB download, ${streams} stream${streams > 1 ? 's' : ''}`, unit: 'MiB/s', higherIsBetter: true, nginx: [], fileCloud: [], target: { kind: 'ratio_at_least', value: streams === 1 ? 0.8 : 0.7 } };
      rows.push(row);
      for (const s of servers) await download(s, 'big.bin', bigSize, 1); // warm the page cache and the code paths
      const reps = streams === 1 ? o.reps + 2 : o.reps;
      for (let i = 0; i < reps; i++) {
        for (const s of servers) (s === fc ? row.fileCloud : row.nginx).push(await download(s, 'big.bin', bigSize, streams));
      }
      log(`${row.label}: nginx ${cell(row.nginx, 'MiB/s')}, File Cloud ${cell(row.fileCloud, 'MiB/s')}`);
    }

    // -- request rates
    const rate = async (group: MetricGroup, id: string, label: string, method: 'GET' | 'HEAD', paths: (s: Server) => string[], connections: number, targets: { rps?: Target; p99?: Target }) => {
      if (!want(group)) return;
      const rps: Row = { id: `${id}_rps`, label: `${label}, ${connections} connections`, unit: 'req/s', higherIsBetter: true, nginx: [], fileCloud: [], target: targets.rps };
      const p50: Row = { id: `${id}_p50`, label: `${label}, p50 latency`, unit: 'ms', higherIsBetter: false, nginx: [], fileCloud: [] };
      const p99: Row = { id: `${id}_p99`, label: `${label}, p99 latency`, unit: 'ms', higherIsBetter: false, nginx: [], fileCloud: [], target: targets.p99 };
      rows.push(rps, p50, p99);
      const load = (s: Server, seconds: number, warmup: boolean) =>
        method === 'HEAD' ? headLoad(s, paths(s)[0] as string, connections, seconds) : wrk(s, tmp, { name: id, method, paths: paths(s), connections, seconds, warmup });
      for (const s of servers) await load(s, 1, true); // warm-up
      for (let i = 0; i < o.reps; i++) {
        for (const s of servers) {
          const r = await load(s, o.seconds, false);
          const side = s === fc ? 'fileCloud' : 'nginx';
          rps[side].push(r.rps);
          p50[side].push(r.p50);
          p99[side].push(r.p99);
        }
      }
      log(`${rps.label}: nginx ${cell(rps.nginx, 'req/s')}, File Cloud ${cell(rps.fileCloud, 'req/s')}; p99 ${cell(p99.nginx, 'ms')} / ${cell(p99.fileCloud, 'ms')} ms`);
    };
    await rate('get4k', 'get4k', `4 KiB GET (${smallNames.length} files)`, 'GET', (s) => smallNames.map((n) => s.path(`small/${n}`)), 64, { rps: { kind: 'ratio_at_least', value: 0.3 }, p99: { kind: 'fc_at_most', value: 10 } });
    await rate('listing', 'listing', `${manyCount.toLocaleString('en-US')}-entry listing`, 'GET', (s) => [s.path('many/')], 8, { rps: { kind: 'ratio_at_least', value: 1.0 } });
    await rate('head', 'head_stats', 'HEAD /api/stats [Node client; nginx: return 200]', 'HEAD', (s) => [s.statsPath], 64, {});

    // -- uploads
    const rssRows: Row[] = [];
    const up = async (group: MetricGroup, id: string, label: string, file: string, size: number, count: number, kind: UploadKind, target: Target, note?: string) => {
      if (!want(group)) return;
      const row: Row = { id, label, unit: 'MiB/s', higherIsBetter: true, nginx: [], fileCloud: [], target, note };
      const sample = count === 1;
      const growth: Row = { id: `${id}_rss_growth`, label: `RSS growth during ${label}`, unit: 'MiB', higherIsBetter: false, nginx: [], fileCloud: [], target: { kind: 'fc_at_most', value: 32 } };
      rows.push(row);
      if (sample) rssRows.push(growth);
      for (let i = 0; i < o.reps; i++) {
        for (const s of servers) {
          // nginx cannot store multipart bodies: its figure is a raw PUT of the same bytes.
          const r = await upload(s, dataset, file, size, count, s === fc ? kind : 'raw', `${id}-${i}`, sample);
          (s === fc ? row.fileCloud : row.nginx).push(r.mibs);
          if (sample) (s === fc ? growth.fileCloud : growth.nginx).push(r.rssGrowth);
        }
      }
      log(`${label}: nginx ${cell(row.nginx, 'MiB/s')}, File Cloud ${cell(row.fileCloud, 'MiB/s')}${sample ? `; RSS growth ${cell(growth.fileCloud, 'MiB')} MiB` : ''}`);
    };
    await up('putraw', 'put_raw', `${bigMiB} MiB raw PUT`, join(dataset, 'big.bin'), bigSize, 1, 'raw', { kind: 'ratio_at_least', value: 0.8 });
    await up('putmultipart', 'put_multipart', `${bigMiB} MiB multipart PUT`, join(dataset, 'big.bin'), bigSize, 1, 'multipart', { kind: 'ratio_at_least', value: 0.7 }, '[nginx: raw PUT]');
    await up('put4', 'put_parallel', `4 × ${midMiB} MiB parallel raw PUTs`, join(dataset, 'mid.bin'), midSize, 4, 'raw', { kind: 'ratio_at_least', value: 0.8 });
    rows.push(...rssRows);
    const peak: Row = { id: 'peak_rss', label: 'peak RSS, whole run', unit: 'MiB', higherIsBetter: false, nginx: [(await memTotal(ng)).hwm / MiB], fileCloud: [(await memTotal(fc)).hwm / MiB], note: '[nginx: master + workers]' };
    fcPeak = peak.fileCloud[0] as number;
    rows.push(peak);
  } finally {
    // Stop what we started, by pid; File Cloud gracefully (SIGTERM writes its CPU profile).
    if (ng) await stopChild(ng.proc, 'SIGQUIT');
    if (fc) await stopChild(fc.proc, 'SIGTERM');
    for (const p of [...children]) await stopChild(p, 'SIGTERM', 5_000);
    if (!o.keep) await rm(tmp, { recursive: true, force: true });
  }

  const m1 = machine();
  const text = table(rows);
  console.log(`\n${text}\n`);
  const ratios = rows.map((r) => ({ id: r.id, label: r.label, unit: r.unit, target: r.target, nginx: r.nginx, fileCloud: r.fileCloud, ...summarize(r) }));
  const result = {
    when: new Date(started).toISOString(),
    durationSeconds: Math.round((Date.now() - started) / 1000),
    mode: o.quick ? 'quick' : 'full',
    options: { reps: o.reps, seconds: o.seconds, only: o.only ? [...o.only] : 'all', profile: o.profile, fcArgs: o.fcArgs, fcBin: o.fcBin },
    machine: { ...m0, loadavgStart: m0.loadavg, loadavgEnd: m1.loadavg },
    fileCloudPeakRssMiB: fcPeak,
    rows: ratios,
    table: text,
  };
  await mkdir(RESULTS, { recursive: true });
  const file = join(RESULTS, `${new Date(started).toISOString().replace(/[:.]/g, '-')}${o.quick ? '-quick' : ''}.json`);
  await writeFile(file, `${JSON.stringify(result, null, 2)}\n`);
  await writeFile(join(RESULTS, 'latest.json'), `${JSON.stringify(result, null, 2)}\n`);
  console.log(`bench: ${result.durationSeconds} s; load ${m1.loadavg.join(' ')} at the end; results in ${file}${o.keep ? `; data kept in ${tmp}` : ''}`);
  if (o.profile) console.log(`bench: CPU profile in ${join(RESULTS, 'profiles')} (node dist/bench/profile-summary.js FILE)`);
  return 0;
}

// Ctrl-C: stop our own processes by pid, then exit.
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => {
    for (const p of children) if (p.pid !== undefined && p.exitCode === null) process.kill(p.pid, 'SIGTERM');
    process.exit(130);
  });
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(`bench: ${e instanceof BenchError ? e.message : (e as Error).stack}`);
    for (const p of children) if (p.pid !== undefined && p.exitCode === null) process.kill(p.pid, 'SIGTERM');
    process.exit(1);
  },
);
