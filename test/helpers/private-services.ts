// Private instances of the backing services, for fault tests that pause (SIGSTOP) or kill them: the
// shared ones of the run (scripts/test-services.sh) serve every other test file at the same time
// and must never be touched. Redis and PostgreSQL are new processes on their own temp dirs and
// ports; the object store is an extra radosgw gateway on the shared Ceph cluster (rgwStart), so a
// paused or killed gateway stops only this test's requests. Each is stopped by its own pid.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { chown, mkdir, mkdtemp, open, readFile, readdir, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { rgwStart, rgwStop, servicesDir } from './services.js';

const execFileP = promisify(execFile);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export type PrivateService = {
  /** What File Cloud is given: redis://…, postgres://…, or the gateway's http:// endpoint. */
  readonly url: string;
  pause(): Promise<void>;
  resume(): Promise<void>;
  /** SIGKILL, every process of it. */
  kill(): Promise<void>;
  /** Starts it again after kill(), on the same port (and data). */
  restart(): Promise<void>;
  /** Kills it for good and removes its files; safe to call in any state, twice. */
  dispose(): Promise<void>;
};

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** The state letter of a /proc stat line (the field after the command, which may hold spaces and parentheses). */
const stateIn = (stat: string): string => stat.charAt(stat.lastIndexOf(')') + 2);

/**
 * Exists and is not a zombie (a killed backend is re-parented to PID 1, which may be slow to reap
 * it), or is a zombie whose other threads are still exiting: a thread-group leader that dies first
 * stays a zombie until they are gone, and the process's sockets close only with the last of them
 * (scripts/test-services.sh `alive`, the same rule).
 */
function alive(pid: number): boolean {
  try {
    if (stateIn(readFileSync(`/proc/${pid}/stat`, 'utf8')) !== 'Z') return true;
    return readdirSync(`/proc/${pid}/task`).length > 1;
  } catch {
    return false;
  }
}

async function waitGone(pids: number[], ms = 10_000): Promise<void> {
  const t = performance.now();
  while (pids.some(alive) && performance.now() - t < ms) await sleep(25);
}

/** pid and its descendants (PostgreSQL's backends are children of the postmaster). */
async function withChildren(pid: number): Promise<number[]> {
  const out = [pid];
  for (const d of await readdir('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    const stat = await readFile(`/proc/${d}/stat`, 'utf8').catch(() => '');
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (ppid === pid) out.push(Number(d));
  }
  return out;
}

function signalAll(pids: number[], signal: NodeJS.Signals): void {
  for (const p of pids) {
    try {
      process.kill(p, signal);
    } catch {
      // already gone
    }
  }
}

/** The state letter of every thread of pid (`T` once stopped), by thread id; empty when pid is gone. */
async function threadStates(pid: number): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const tid of await readdir(`/proc/${pid}/task`).catch(() => [])) {
    const stat = await readFile(`/proc/${pid}/task/${tid}/stat`, 'utf8').catch(() => '');
    if (stat) out.set(tid, stateIn(stat));
  }
  return out;
}

/**
 * SIGSTOP, then wait until every thread of every pid is stopped: a signal reaches a thread in an
 * uninterruptible wait only when that wait ends, and a test that goes on before then may find the
 * service still answering. `command` is what each pid must be running (a pid file's pid recycled by
 * another process is never taken for the service). Throws, naming what it saw, after 10 s.
 */
async function stopAll(pids: number[], command: string): Promise<void> {
  // A pid gone meanwhile (a PostgreSQL backend that ended) needs no stopping; the first must be there.
  const comms = await Promise.all(pids.map(async (p) => (await readFile(`/proc/${p}/comm`, 'utf8').catch(() => '')).trim()));
  const wrong = pids.flatMap((p, i) => ((comms[i] !== '' || i === 0) && !comms[i]!.startsWith(command) ? [`pid ${p} is ${comms[i] ? `'${comms[i]}'` : 'gone'}`] : []));
  if (wrong.length > 0) throw new Error(`${wrong.join(', ')}, not ${command}: the service cannot be paused`);
  signalAll(pids, 'SIGSTOP');
  const t = performance.now();
  for (;;) {
    const states = await Promise.all(pids.map(async (p) => [p, await threadStates(p)] as const));
    // T: stopped (t: by a tracer); Z and X: exited meanwhile.
    const running = states.filter(([, s]) => [...s.values()].some((x) => !'TtZX'.includes(x)));
    if (running.length === 0) return;
    if (performance.now() - t > 10_000) {
      throw new Error(`${command} did not stop within 10 s: ${running.map(([p, s]) => `pid ${p} threads ${[...s.values()].join('')}`).join('; ')}`);
    }
    await sleep(10);
  }
}

async function waitFor(what: string, ms: number, probe: () => Promise<boolean>, log?: string): Promise<void> {
  const t = performance.now();
  while (!(await probe().catch(() => false))) {
    if (performance.now() - t > ms) throw new Error(`${what} did not come up within ${ms} ms${log ? `: ${(await readFile(log, 'utf8').catch(() => '')).slice(-2000)}` : ''}`);
    await sleep(50);
  }
}

/** A Redis 7 of its own: no persistence, 127.0.0.1 only. */
export async function privateRedis(): Promise<PrivateService> {
  const dir = await mkdtemp(join(tmpdir(), 'fc-private-redis-'));
  const port = await freePort();
  let pid: number | undefined;
  const start = async () => {
    const child = spawn('redis-server', ['--bind', '127.0.0.1', '--port', String(port), '--save', '', '--appendonly', 'no', '--dir', dir, '--protected-mode', 'yes'], { stdio: 'ignore', detached: true });
    child.unref();
    pid = child.pid;
    await waitFor('redis', 10_000, async () => (await execFileP('redis-cli', ['-h', '127.0.0.1', '-p', String(port), 'ping'], { timeout: 2000 })).stdout.trim() === 'PONG');
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}/0`,
    pause: () => stopAll([pid!], 'redis-server'),
    resume: async () => signalAll([pid!], 'SIGCONT'),
    async kill() {
      signalAll([pid!], 'SIGKILL');
      await waitGone([pid!]);
    },
    restart: start,
    async dispose() {
      if (pid !== undefined) {
        signalAll([pid], 'SIGCONT');
        signalAll([pid], 'SIGKILL');
        await waitGone([pid]);
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}

const PG_BIN = '/usr/lib/postgresql/15/bin';

/** A PostgreSQL 15 cluster of its own (initdb), trusting 127.0.0.1: a test's throwaway server. */
export async function privatePostgres(): Promise<PrivateService> {
  const dir = await mkdtemp(join(tmpdir(), 'fc-private-pg-'));
  const data = join(dir, 'data');
  const sock = join(dir, 'sock');
  await mkdir(sock);
  // PostgreSQL refuses to run as root: as root, its files belong to 'postgres' and it runs as that user
  // (spawn's uid/gid, not runuser: runuser stops itself when its child is stopped, and never reaps it then).
  let ids: { uid: number; gid: number } | undefined;
  if (process.getuid?.() === 0) {
    ids = { uid: Number((await execFileP('id', ['-u', 'postgres'])).stdout), gid: Number((await execFileP('id', ['-g', 'postgres'])).stdout) };
    await chown(dir, ids.uid, ids.gid);
    await chown(sock, ids.uid, ids.gid);
  }
  await execFileP(`${PG_BIN}/initdb`, ['-D', data, '-U', 'postgres', '-E', 'UTF8', '--locale=C.UTF-8', '--auth-local=trust', '--auth-host=trust', '--no-sync'], { timeout: 60_000, cwd: dir, ...ids });
  const port = await freePort();
  let postmaster: number | undefined;
  const start = async () => {
    const log = await open(join(dir, 'postgres.log'), 'a');
    // Its dynamic shared memory as files in its data dir, not in /dev/shm: a PostgreSQL killed with
    // SIGKILL (kill(), dispose()) cannot remove its segments, and /dev/shm kept two of them (1 MiB in
    // all) for every such kill until the machine restarted; the data dir goes with dispose().
    const args = ['-D', data, '-c', 'listen_addresses=127.0.0.1', '-c', `port=${port}`, '-c', `unix_socket_directories=${sock}`, '-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', 'dynamic_shared_memory_type=mmap'];
    const child = spawn(`${PG_BIN}/postgres`, args, { stdio: ['ignore', log.fd, log.fd], detached: true, cwd: dir, ...ids });
    child.unref();
    await log.close();
    const { default: pg } = await import('pg');
    await waitFor('postgres', 30_000, async () => {
      const c = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${port}/postgres`, connectionTimeoutMillis: 1000 });
      try {
        await c.connect();
        await c.query('SELECT 1');
        return true;
      } finally {
        await c.end().catch(() => undefined);
      }
    }, join(dir, 'postgres.log'));
    postmaster = Number((await readFile(join(data, 'postmaster.pid'), 'utf8')).split('\n')[0]);
  };
  await start();
  const all = async () => (postmaster === undefined ? [] : withChildren(postmaster));
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    // Every process: the postmaster and the backends that hold File Cloud's pooled connections. The
    // postmaster first: a backend it forks for a new connection while the list is read and signalled
    // would run on unpaused (CI saw a DELETE answered 204 through one); once it is stopped it forks
    // no more, and the list read after that is whole.
    pause: async () => {
      if (postmaster !== undefined) await stopAll([postmaster], 'postgres');
      await stopAll(await all(), 'postgres');
    },
    resume: async () => signalAll(await all(), 'SIGCONT'),
    async kill() {
      const pids = await all();
      signalAll(pids, 'SIGKILL');
      await waitGone(pids);
    },
    restart: start,
    async dispose() {
      const pids = await all();
      signalAll(pids, 'SIGCONT');
      signalAll(pids, 'SIGKILL');
      await waitGone(pids);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** An extra radosgw gateway `name` on the shared Ceph cluster (the shared gateway is never touched). */
export async function privateGateway(name: string): Promise<PrivateService> {
  const gw = await rgwStart(name);
  const pidOf = async () => Number((await readFile(join(servicesDir() as string, 'pids', `rgw-${name}.pid`), 'utf8')).trim());
  let pid = await pidOf();
  return {
    url: gw.endpoint,
    pause: () => stopAll([pid], 'radosgw'),
    resume: async () => signalAll([pid], 'SIGCONT'),
    async kill() {
      signalAll([pid], 'SIGCONT');
      await rgwStop(name, 'KILL');
    },
    async restart() {
      await rgwStart(name, gw.port);
      pid = await pidOf();
    },
    async dispose() {
      signalAll([pid], 'SIGCONT');
      await rgwStop(name, 'KILL').catch(() => undefined);
    },
  };
}
