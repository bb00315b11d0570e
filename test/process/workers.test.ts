import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { bearer, login, postJson } from '../helpers/client.js';
import { ADMIN_PASSWORD, startServer } from '../helpers/server.js';
import { spawnFileCloud } from '../kit/file-cloud-process.js';
import { thisMachine, workerCount } from '../../src/cli/worker-count.js';

/** The V8 flags every serving process runs with (src/cli/server-flags.ts). */
const HEAP_BOUNDS = ['--max-semi-space-size=8', '--scavenger-max-new-space-capacity-mb=2', '--heap-growing-percent=50'];

/** The pids whose parent is `pid` (the cluster's workers), from /proc. */
function children(pid: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      // Fields after the command name (which may hold spaces): state, ppid, …
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[1]) === pid && fields[0] !== 'Z') out.push(Number(name));
    } catch {
      // The process ended while we looked.
    }
  }
  return out.sort();
}

async function until<T>(what: string, fn: () => T | undefined, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Starts the real binary with `args`, checks its process tree with `check`, that it serves a signed-in listing, and that SIGTERM ends it cleanly. */
async function serving(args: string[], check: (pid: number) => Promise<void> | void): Promise<void> {
  const server = await startServer({ args });
  try {
    await check(server.proc.pid as number);
    const tokens = await login(server.url, 'admin', server.adminPassword);
    assert.equal((await fetch(`${server.url}/storage/admin/`, { headers: bearer(tokens.access_token) })).status, 200);
  } finally {
    assert.deepEqual(await server.stopTree('SIGTERM'), { code: 0, leftovers: 0 });
    await server.dispose();
  }
}

test('the default (--workers auto) on a small box is one process serving the port itself; on a bigger one, a primary and one worker per core', async () => {
  const machine = thisMachine();
  const want = workerCount('auto', machine);
  await serving([], async (pid) => {
    if (want === 1) assert.deepEqual(children(pid), [], `${machine.cores} cores, ${(machine.memoryBytes / 1024 ** 3).toFixed(1)} GiB: no worker process`);
    else await until(`${want} workers`, () => (children(pid).length === want ? true : undefined));
  });
});

test('a single serving process (--workers 1) runs with the heap bounds a worker gets, in the process that was started (its pid)', async () => {
  await serving(['--workers', '1'], (pid) => {
    assert.deepEqual(children(pid), [], 'no worker: the started process serves');
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    for (const flag of HEAP_BOUNDS) assert.ok(cmdline.includes(flag), `${flag} in ${cmdline.join(' ')}`);
  });
});

test('--workers 2: two worker processes serve one port; a killed worker is replaced and the port keeps answering', async () => {
  const server = await startServer({ args: ['--workers', '2'] });
  try {
    const primary = server.proc.pid as number;
    const first = await until('two workers', () => (children(primary).length === 2 ? children(primary) : undefined));
    assert.equal((server.output().stdout.match(/File Cloud listening on/g) ?? []).length, 1, 'one listening line');
    // V8's young generation and its trigger for dead buffers, bounded (src/cli/server-flags.ts).
    for (const pid of first) for (const flag of HEAP_BOUNDS) assert.ok(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(flag), `${flag} on worker ${pid}'s command line`);
    assert.equal((server.output().stdout.match(/First run: created user/g) ?? []).length, 1, 'the first admin is announced once');
    const tokens = await login(server.url, 'admin', server.adminPassword);
    process.kill(first[0] as number, 'SIGKILL');
    // A connection the primary handed to the worker in the instant it died is lost with it (a request
    // in flight on a killed process); from the moment the primary knows, the other worker serves
    // every request while the replacement starts.
    await until('the primary to notice', () => (/worker died; starting another/.test(server.output().stderr + server.output().stdout) ? true : undefined));
    for (let i = 0; i < 20; i++) assert.equal((await fetch(`${server.url}/storage/admin/`, { headers: { ...bearer(tokens.access_token), connection: 'close' } })).status, 200);
    const replaced = await until('a replacement worker', () => {
      const now = children(primary);
      return now.length === 2 && !now.includes(first[0] as number) ? now : undefined;
    });
    assert.ok(replaced.includes(first[1] as number), 'the surviving worker was left alone');
  } finally {
    assert.deepEqual(await server.stopTree('SIGTERM'), { code: 0, leftovers: 0 }, 'the primary exits 0 and no worker outlives it');
    await server.dispose();
  }
});

test('--workers 2: the login throttle counts the attempts that reached either worker', async () => {
  const server = await startServer({ args: ['--workers', '2', '--login-rate-limit', '10'] });
  try {
    // A new connection per attempt, so the cluster spreads them over both workers.
    const attempt = (password: string) => postJson(`${server.url}/auth/login`, { username: 'admin', password }, { connection: 'close' });
    for (let i = 0; i < 10; i++) assert.equal((await attempt('wrong-password')).status, 401, `attempt ${i + 1}`);
    const eleventh = await attempt(server.adminPassword);
    assert.equal(eleventh.status, 429);
    assert.ok(Number(eleventh.headers.get('retry-after')) > 0);
  } finally {
    await server.dispose();
  }
});

test('--workers 2: SIGTERM drains every worker and the primary exits 0', async () => {
  const server = await startServer({ args: ['--workers', '2'] });
  try {
    const primary = server.proc.pid as number;
    await until('two workers', () => (children(primary).length === 2 ? true : undefined));
    assert.deepEqual(await server.stopTree('SIGTERM'), { code: 0, leftovers: 0 }, 'the primary exits 0 and no worker outlives it');
  } finally {
    await server.dispose();
  }
});

test('a worker that cannot start makes the server exit 1 with its reason, leaving no process behind', async () => {
  // A bucket that does not exist: the primary's own check fails first, with one clear line.
  await assert.rejects(
    startServer({ args: ['--workers', '2', '--storage', 's3://no-such-bucket-fc?endpoint=http://127.0.0.1:9&path_style=true'], env: { AWS_ACCESS_KEY_ID: 'x', AWS_SECRET_ACCESS_KEY: 'y' } }),
    (e: Error) => {
      assert.match(e.message, /exited with 1 before listening/);
      assert.match(e.message, /object store cannot be reached/);
      assert.doesNotMatch(e.message, /\n\s+at /, 'no stack trace');
      return true;
    },
  );
});

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  test(`--workers 2: ${signal} to the whole process group (a terminal's Ctrl-C, systemd's stop) is a clean shutdown, not a worker crash`, async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'fc-group-signal-'));
    try {
      const fc = await spawnFileCloud({ dataDir, args: ['--workers', '2'], env: { FILE_CLOUD_ADMIN_PASSWORD: ADMIN_PASSWORD, FILE_CLOUD_LOG_LEVEL: 'warn' }, processGroup: true });
      await until('two workers', () => (children(fc.proc.pid as number).length === 2 ? true : undefined));
      fc.signalGroup(signal);
      assert.equal(await fc.exited, 0);
      const { stdout, stderr } = fc.output();
      assert.doesNotMatch(stdout + stderr, /worker died|starting another/, 'no worker is reported dead or restarted');
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
}
