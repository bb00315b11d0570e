import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, stat, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type AddressInfo } from 'node:net';
import { ADMIN_PASSWORD, BIN, runCli, startServer } from '../helpers/server.js';
import { freePort } from '../helpers/nginx.js';
import { bearer, login, postJson } from '../helpers/client.js';

const tempDir = () => mkdtemp(join(tmpdir(), 'fc-cli-'));

test('user add, list, passwd and remove work with --data-dir before or after the command words', async () => {
  const dir = await tempDir();
  try {
    let r = await runCli(['--data-dir', dir, 'user', 'add', 'alice', '--password', 'alice-password']);
    assert.equal(r.code, 0, r.stderr);
    r = await runCli(['user', 'add', 'bob', '--admin', '--password-stdin', '--data-dir', dir], { input: 'bob-password\n' });
    assert.equal(r.code, 0, r.stderr);
    r = await runCli(['user', '--data-dir', dir, 'list']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'alice\nbob\tadmin\n');
    r = await runCli(['user', 'list'], { env: { FILE_CLOUD_DATA_DIR: dir } });
    assert.equal(r.stdout, 'alice\nbob\tadmin\n', 'FILE_CLOUD_DATA_DIR is honoured');
    r = await runCli(['user', 'passwd', 'alice', '--password', 'new-password', '--data-dir', dir]);
    assert.equal(r.code, 0, r.stderr);
    // bob is the only administrator: alice takes the right first (the server never loses its last one).
    r = await runCli(['user', 'admin', 'alice', 'on', '--data-dir', dir]);
    assert.equal(r.code, 0, r.stderr);
    r = await runCli(['user', 'remove', 'bob', '--data-dir', dir]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal((await runCli(['user', 'list', '--data-dir', dir])).stdout, 'alice\tadmin\n');
    // The data directory holds exactly the contract's entries (the db may have WAL companions).
    const entries = (await readdir(dir)).filter((n) => !/^file-cloud\.db-(wal|shm)$/.test(n)).sort();
    assert.deepEqual(entries, ['file-cloud.db', 'storage', 'tmp']);
    assert.ok((await stat(join(dir, 'storage', 'alice'))).isDirectory(), 'user add creates the storage root');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('group add, member add|remove, list and remove; exit 1 for an unknown group or user, 2 for a usage error', async () => {
  const dir = await tempDir();
  try {
    for (const u of ['alice', 'bob']) assert.equal((await runCli(['user', 'add', u, '--password', `${u}-password`, '--data-dir', dir])).code, 0);
    let r = await runCli(['group', 'add', 'team', '--data-dir', dir]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal((await runCli(['group', 'member', 'team', 'add', 'bob', '--data-dir', dir])).code, 0);
    assert.equal((await runCli(['group', 'member', 'team', 'add', 'alice', '--data-dir', dir])).code, 0);
    assert.equal((await runCli(['group', 'add', 'empty', '--data-dir', dir])).code, 0);
    r = await runCli(['group', 'list', '--data-dir', dir]);
    assert.equal(r.stdout, 'empty\t\nteam\talice,bob\n');
    assert.equal((await runCli(['group', 'member', 'team', 'remove', 'alice', '--data-dir', dir])).code, 0);
    assert.equal((await runCli(['group', 'list', '--data-dir', dir])).stdout, 'empty\t\nteam\tbob\n');
    r = await runCli(['group', 'add', 'team', '--data-dir', dir]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /exists already/);
    assert.equal((await runCli(['group', 'member', 'team', 'add', 'nobody', '--data-dir', dir])).code, 1);
    assert.equal((await runCli(['group', 'member', 'ghosts', 'add', 'bob', '--data-dir', dir])).code, 1);
    assert.equal((await runCli(['group', 'member', 'team', 'join', 'bob', '--data-dir', dir])).code, 2);
    assert.equal((await runCli(['group', 'frobnicate', '--data-dir', dir])).code, 2);
    assert.equal((await runCli(['group', 'add', '--data-dir', dir])).code, 2);
    assert.equal((await runCli(['group', 'remove', 'team', '--data-dir', dir])).code, 0);
    assert.equal((await runCli(['group', 'list', '--data-dir', dir])).stdout, 'empty\t\n');
    assert.equal((await runCli(['group', 'remove', 'team', '--data-dir', dir])).code, 1);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('user remove --delete-files deletes the storage folder; without it the files stay', async () => {
  const dir = await tempDir();
  try {
    await runCli(['user', 'add', 'alice', '--password', 'alice-password', '--data-dir', dir]);
    await runCli(['user', 'add', 'bob', '--password', 'bob-password', '--data-dir', dir]);
    assert.equal((await runCli(['user', 'remove', 'alice', '--delete-files', '--data-dir', dir])).code, 0);
    assert.equal((await runCli(['user', 'remove', 'bob', '--data-dir', dir])).code, 0);
    await assert.rejects(stat(join(dir, 'storage', 'alice')));
    assert.ok((await stat(join(dir, 'storage', 'bob'))).isDirectory());
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('exit codes: 2 for usage errors, 1 for runtime failures, one line on stderr without a stack', async () => {
  const dir = await tempDir();
  try {
    const cases: [string[], number, RegExp][] = [
      [['frobnicate'], 2, /unknown command/],
      [[], 2, /no command given/],
      [['user'], 2, /user needs a command/],
      [['user', 'add'], 2, /usage: file-cloud user add/],
      [['user', 'add', 'x', 'y', '--password', 'long-enough'], 2, /usage/],
      [['user', 'list', '--bogus'], 2, /unknown option/i],
      [['serve', '--port', 'eighty'], 2, /invalid value for --port/],
      [['serve', '--port', '70000'], 2, /invalid value for --port/],
      [['serve', '--max-upload-size', 'lots'], 2, /invalid value for --max-upload-size/],
      [['user', 'add', 'carol', '--password', 'x', '--password-stdin'], 2, /either --password or --password-stdin/],
      [['user', 'add', 'carol'], 2, /no terminal/],
      [['user', 'add', '.hidden', '--password', 'long-enough'], 1, /Invalid username/],
      [['user', 'add', 'carol', '--password', 'short'], 1, /at least 8 characters/],
      [['user', 'remove', 'nobody'], 1, /no user "nobody"/],
      [['user', 'passwd', 'nobody', '--password', 'long-enough'], 1, /no user "nobody"/],
    ];
    for (const [args, code, message] of cases) {
      const r = await runCli([...args, '--data-dir', dir]);
      assert.equal(r.code, code, `${args.join(' ')}: ${r.stderr}`);
      const out = code === 0 ? r.stdout : r.stderr;
      assert.match(out, message, args.join(' '));
      if (code !== 0) {
        assert.equal(r.stderr.trim().split('\n').length, 1, `one line for ${args.join(' ')}: ${r.stderr}`);
        assert.doesNotMatch(r.stderr, /\n\s+at /);
      }
    }
    const env = await runCli(['serve', '--data-dir', dir], { env: { FILE_CLOUD_PORT: 'x' } });
    assert.equal(env.code, 2);
    assert.match(env.stderr, /invalid value for FILE_CLOUD_PORT/);
    assert.equal((await runCli(['user', 'add', 'dave', '--password', 'long-enough', '--data-dir', dir])).code, 0);
    const dup = await runCli(['user', 'add', 'dave', '--password', 'long-enough', '--data-dir', dir]);
    assert.equal(dup.code, 1);
    assert.match(dup.stderr, /already exists/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('user admin NAME on|off grants and takes the right; the last administrator keeps it (also against user remove)', async () => {
  const dir = await tempDir();
  try {
    assert.equal((await runCli(['user', 'add', 'root', '--admin', '--password', 'root-password', '--data-dir', dir])).code, 0);
    assert.equal((await runCli(['user', 'add', 'alice', '--password', 'alice-password', '--data-dir', dir])).code, 0);
    let r = await runCli(['user', 'admin', 'alice', 'on', '--data-dir', dir]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /"alice" is now an administrator/);
    assert.equal((await runCli(['user', 'list', '--data-dir', dir])).stdout, 'alice\tadmin\nroot\tadmin\n');
    assert.equal((await runCli(['user', 'admin', 'root', 'off', '--data-dir', dir])).code, 0);
    for (const args of [['user', 'admin', 'alice', 'off'], ['user', 'remove', 'alice']]) {
      r = await runCli([...args, '--data-dir', dir]);
      assert.equal(r.code, 1, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, /"alice" is the last administrator; make another user an administrator first/);
      assert.equal(r.stderr.trim().split('\n').length, 1);
    }
    assert.equal((await runCli(['user', 'list', '--data-dir', dir])).stdout, 'alice\tadmin\nroot\n', 'refusals change nothing');
    for (const args of [['user', 'admin', 'alice', 'maybe'], ['user', 'admin', 'alice'], ['user', 'admin', 'alice', 'on', 'extra']]) {
      r = await runCli([...args, '--data-dir', dir]);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, /usage: file-cloud user admin NAME on\|off/);
    }
    r = await runCli(['user', 'admin', 'nobody', 'on', '--data-dir', dir]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /no user "nobody"/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('--help works on every command and lists its options', async () => {
  for (const args of [['--help'], ['serve', '--help'], ['user', '--help'], ['user', 'add', '--help'], ['user', 'remove', '--help'], ['user', 'passwd', '--help'], ['user', 'admin', '--help'], ['user', 'list', '--help']]) {
    const r = await runCli(args);
    assert.equal(r.code, 0, args.join(' '));
    assert.match(r.stdout, /Usage/, args.join(' '));
  }
  const serve = await runCli(['serve', '--help']);
  for (const flag of ['--host', '--port', '--dev', '--access-token-ttl', '--refresh-token-ttl', '--path-token-ttl', '--login-rate-limit', '--max-upload-size', '--trust-proxy', '--data-dir']) {
    assert.ok(serve.stdout.includes(flag), `serve --help mentions ${flag}`);
  }
  assert.match((await runCli(['--version'])).stdout, /^\d+\.\d+\.\d+\n$/);
  const bare = await runCli([]);
  assert.equal(bare.code, 0);
  assert.match(bare.stdout, /Usage: file-cloud <command>/);
});

test('first run creates admin with a random password, printed once', async () => {
  const server = await startServer({ env: { FILE_CLOUD_ADMIN_PASSWORD: '' } });
  try {
    const m = /First run: created user "admin"[^\n]*\n\n\s+(\S+)\n/.exec(server.output().stdout);
    assert.ok(m, server.output().stdout);
    const password = m[1] as string;
    assert.ok(password.length >= 20);
    await login(server.url, 'admin', password);
    const st = await stat(join(server.dataDir, 'secret'));
    assert.equal(st.mode & 0o777, 0o600, 'data/secret is mode 0600');
    await server.stop();
    const again = await startServer({ dataDir: server.dataDir, env: { FILE_CLOUD_ADMIN_PASSWORD: '' } });
    try {
      assert.doesNotMatch(again.output().stdout, /First run/);
      await login(again.url, 'admin', password);
    } finally {
      await again.dispose();
    }
  } finally {
    await server.stop();
    await rm(server.dataDir, { recursive: true, force: true });
  }
});

test('sessions survive a restart', async () => {
  const server = await startServer();
  try {
    const tokens = await login(server.url, 'admin', server.adminPassword);
    assert.equal(await server.stop(), 0, 'SIGTERM exits 0');
    const again = await startServer({ dataDir: server.dataDir });
    try {
      assert.equal((await fetch(`${again.url}/api/stats`, { method: 'HEAD', headers: bearer(tokens.access_token) })).status, 200);
      assert.equal((await postJson(`${again.url}/auth/refresh`, { username: 'admin', refresh_token: tokens.refresh_token })).status, 200);
    } finally {
      await again.stop();
    }
  } finally {
    await rm(server.dataDir, { recursive: true, force: true });
  }
});

test('user commands work while the server runs, and passwd and remove revoke within 5 s', async () => {
  const server = await startServer();
  try {
    const cli = (...args: string[]) => runCli([...args, '--data-dir', server.dataDir]);
    assert.equal((await cli('user', 'add', 'alice', '--password', 'alice-password')).code, 0);
    const tokens = await login(server.url, 'alice', 'alice-password');
    const stats = () => fetch(`${server.url}/api/stats`, { method: 'HEAD', headers: bearer(tokens.access_token) }).then((r) => r.status);
    assert.equal(await stats(), 200);
    const put = await fetch(`${server.url}/storage/alice/a.txt`, { method: 'PUT', headers: bearer(tokens.access_token), body: 'hello' });
    assert.equal(put.status, 201);
    const { token: pathToken } = (await (await postJson(`${server.url}/storage/alice/a.txt`, { action: 'MakePathToken' }, bearer(tokens.access_token))).json()) as { token: string };
    assert.equal((await fetch(`${server.url}/storage/alice/a.txt?token=${pathToken}`)).status, 200);

    assert.equal((await cli('user', 'passwd', 'alice', '--password', 'changed-password')).code, 0);
    const deadline = Date.now() + 5000;
    while ((await stats()) !== 401) {
      assert.ok(Date.now() < deadline, 'access token still valid 5 s after user passwd');
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal((await fetch(`${server.url}/storage/alice/a.txt?token=${pathToken}`)).status, 401, 'path token revoked by passwd');
    assert.equal((await postJson(`${server.url}/auth/refresh`, { username: 'alice', refresh_token: tokens.refresh_token })).status, 401);

    const fresh = await login(server.url, 'alice', 'changed-password');
    const { token: freshPathToken } = (await (await postJson(`${server.url}/storage/alice/a.txt`, { action: 'MakePathToken' }, bearer(fresh.access_token))).json()) as { token: string };
    assert.equal((await fetch(`${server.url}/storage/alice/a.txt?token=${freshPathToken}`)).status, 200);
    assert.equal((await cli('user', 'remove', 'alice')).code, 0);
    assert.equal((await fetch(`${server.url}/api/stats`, { method: 'HEAD', headers: bearer(fresh.access_token) })).status, 401, 'user remove revokes at once');
    assert.equal((await fetch(`${server.url}/storage/alice/a.txt?token=${freshPathToken}`)).status, 401, 'path tokens stop working when the owner is removed');
    // A new user of the same name does not inherit the old path tokens (a new auth epoch).
    assert.equal((await cli('user', 'add', 'alice', '--password', 'another-password')).code, 0);
    assert.equal((await fetch(`${server.url}/storage/alice/a.txt?token=${freshPathToken}`)).status, 401, 'a re-created user does not revive old path tokens');
  } finally {
    await server.dispose();
  }
});

test('the login throttle of the real binary: 11th attempt 429, lifted by --dev', async () => {
  const server = await startServer();
  try {
    for (let i = 0; i < 10; i++) assert.equal((await postJson(`${server.url}/auth/login`, { username: 'admin', password: 'wrong-password' })).status, 401);
    const res = await postJson(`${server.url}/auth/login`, { username: 'admin', password: 'wrong-password' });
    assert.equal(res.status, 429);
    assert.ok(Number(res.headers.get('retry-after')) > 0);
  } finally {
    await server.dispose();
  }
  const dev = await startServer({ args: ['--dev'] });
  try {
    for (let i = 0; i < 12; i++) assert.equal((await postJson(`${dev.url}/auth/login`, { username: 'admin', password: 'wrong-password' })).status, 401);
  } finally {
    await dev.dispose();
  }
});

test('unknown user and wrong password take about the same time with the real password hash', async () => {
  const server = await startServer({ args: ['--dev'] });
  try {
    const time = async (username: string) => {
      const t0 = performance.now();
      await postJson(`${server.url}/auth/login`, { username, password: 'wrong-password' });
      return performance.now() - t0;
    };
    await time('admin');
    const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
    const known: number[] = [];
    const unknown: number[] = [];
    for (let i = 0; i < 5; i++) {
      known.push(await time('admin'));
      unknown.push(await time('nobody-here'));
    }
    const [k, u] = [median(known), median(unknown)];
    // Both run one full scrypt (~100+ ms); a missing dummy hash would make unknown users ~100x faster.
    assert.ok(u > k * 0.5 && u < k * 2, `known ${k.toFixed(0)} ms, unknown ${u.toFixed(0)} ms`);
  } finally {
    await server.dispose();
  }
});

test('SIGINT also shuts down cleanly: exit code 0, no error while closing, the port refuses connections, the database left whole without a WAL', async () => {
  const server = await startServer();
  try {
    const { access_token } = await login(server.url, 'admin', server.adminPassword);
    // A write, so the database has a write-ahead log that only a clean close folds back and removes.
    assert.equal((await fetch(`${server.url}/storage/admin/kept.txt`, { method: 'PUT', headers: bearer(access_token), body: 'kept' })).status, 201);
    assert.ok((await readdir(server.dataDir)).includes('file-cloud.db-wal'), 'a WAL while serving');
    // Exit code 0 alone proves little: serve (and each worker) exits 0 even when closing fails; it logs the error.
    assert.equal(await server.stop('SIGINT'), 0);
    const { stdout, stderr } = server.output();
    assert.doesNotMatch(stdout + stderr, /error during (worker )?shutdown|"level":(50|60)/, 'nothing failed while closing');
    await assert.rejects(fetch(server.url), 'the port refuses connections');
    const left = (await readdir(server.dataDir)).filter((n) => n.startsWith('file-cloud.db'));
    assert.deepEqual(left, ['file-cloud.db'], 'the store was closed: no -wal or -shm left behind');
  } finally {
    await server.dispose();
  }
});

test('a reader of stdout that goes away (serve | head) ends the output, not the server', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'fc-epipe-'));
  const port = await freePort();
  const proc = spawn(process.execPath, [BIN, 'serve', '--data-dir', dataDir, '--port', String(port)], {
    env: { ...process.env, FILE_CLOUD_ADMIN_PASSWORD: ADMIN_PASSWORD },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // The reader of the pipe gone before the server writes: every write to stdout, from the first-run
  // banner on, gets EPIPE, as with `file-cloud serve | head -c 1` once head has its byte.
  proc.stdout?.destroy();
  let stderr = '';
  proc.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = once(proc, 'exit') as Promise<[number | null]>;
  try {
    const url = `http://127.0.0.1:${port}`;
    for (let i = 0; ; i++) {
      const up = await fetch(`${url}/api/health`).then((r) => r.ok, () => false);
      if (up) break;
      assert.ok(i < 300 && proc.exitCode === null, `the server stopped or never answered: ${stderr}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const { access_token } = await login(url, 'admin', ADMIN_PASSWORD);
    for (let i = 0; i < 20; i++) assert.equal((await fetch(`${url}/storage/admin/`, { headers: bearer(access_token) })).status, 200, `request ${i}`);
    proc.kill('SIGTERM');
    assert.equal((await exited)[0], 0);
    assert.doesNotMatch(stderr, /EPIPE|Unhandled/, 'no crash on the closed pipe');
  } finally {
    if (proc.exitCode === null) proc.kill('SIGKILL');
    await rm(dataDir, { recursive: true, force: true });
  }
});

/** Waits (up to 30 s) until an upload is staged in `tmpDir` with some bytes written. */
async function untilStaging(tmpDir: string): Promise<void> {
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 20))) {
    for (const name of await readdir(tmpDir).catch(() => [] as string[])) {
      if (name.startsWith('upload-') && (await stat(join(tmpDir, name)).catch(() => undefined))?.size) return;
    }
  }
  throw new Error(`no upload staged in ${tmpDir} within 30 s`);
}

test('SIGTERM lets an upload in flight finish before exiting 0', async () => {
  const server = await startServer();
  try {
    const { access_token } = await login(server.url, 'admin', server.adminPassword);
    const total = 8 * 1024 * 1024;
    let sent = 0;
    let signalled = false;
    const body = new ReadableStream({
      async pull(c) {
        if (sent >= total) return c.close();
        if (sent >= total / 2 && !signalled) {
          signalled = true;
          // Half the body can sit in the loopback socket's buffers before the server has read the
          // request line; a request the server has not begun is refused with 503 while it closes
          // (as it should be). The signal goes once the server is writing this upload.
          await untilStaging(join(server.dataDir, 'tmp'));
          server.proc.kill('SIGTERM');
          await new Promise((r) => setTimeout(r, 200));
        }
        sent += 64 * 1024;
        c.enqueue(new Uint8Array(64 * 1024));
      },
    });
    const res = await fetch(`${server.url}/storage/admin/inflight.bin`, { method: 'PUT', headers: { ...bearer(access_token), 'content-length': String(total) }, body, duplex: 'half' } as RequestInit);
    assert.equal(res.status, 201);
    assert.equal(await server.stop(), 0);
    assert.equal((await stat(join(server.dataDir, 'storage', 'admin', 'inflight.bin'))).size, total);
  } finally {
    await server.dispose();
  }
});

test('the effective configuration is logged at startup with secrets redacted', async () => {
  const server = await startServer({ env: { FILE_CLOUD_LOG_LEVEL: 'info', FILE_CLOUD_ADMIN_PASSWORD: 'very-secret-admin-pw' } });
  try {
    const { stdout } = server.output();
    const line = stdout.split('\n').find((l) => l.includes('effective configuration'));
    assert.ok(line, stdout);
    const config = (JSON.parse(line) as { config: Record<string, unknown> }).config;
    assert.equal(config.adminPassword, '[redacted]');
    assert.equal(config.port, 0);
    assert.ok(!stdout.includes('very-secret-admin-pw'));
  } finally {
    await server.dispose();
  }
});

test('serve starts and stops without a runtime warning (no Fastify or Node deprecation), with workers too', async () => {
  const server = await startServer({ args: ['--workers', '2'] });
  try {
    await fetch(`${server.url}/api/health`);
    assert.equal(await server.stop(), 0);
    const { stdout, stderr } = server.output();
    assert.doesNotMatch(stdout + stderr, /Warning|FSTDEP|\[DEP\d+\]/, stderr);
  } finally {
    await server.dispose();
  }
});

for (const workers of ['1', '2']) {
  test(`first run on a port already taken (--workers ${workers}): exit 1, one clear line, and no admin created`, async () => {
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    const port = (taken.address() as AddressInfo).port;
    const dataDir = await mkdtemp(join(tmpdir(), 'fc-port-taken-'));
    try {
      const run = await runCli(['serve', '--port', String(port), '--workers', workers, '--data-dir', dataDir], { env: { FILE_CLOUD_ADMIN_PASSWORD: '', FILE_CLOUD_LOG_LEVEL: 'warn' } });
      assert.equal(run.code, 1);
      assert.equal(run.stderr, `file-cloud: cannot listen on 127.0.0.1:${port}: the port is already in use (another File Cloud or another program); choose another with --port\n`);
      assert.doesNotMatch(run.stdout, /First run|listening/);
      const users = await runCli(['user', 'list', '--data-dir', dataDir]);
      assert.equal(users.code, 0, users.stderr);
      assert.equal(users.stdout, '', 'nobody was created');
    } finally {
      taken.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
}
