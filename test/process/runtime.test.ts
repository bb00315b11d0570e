import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { BIN, REPO_ROOT } from '../helpers/server.js';
import { freePort } from '../helpers/nginx.js';

/**
 * An older Node to start the CLI with: FC_OLD_NODE, else the system's /usr/bin/node when it is below
 * 22.15 (Node 20 on the machines here). Without one these tests skip, saying why.
 */
function oldNode(): string | undefined {
  const candidates = [process.env.FC_OLD_NODE, '/usr/bin/node'].filter((p): p is string => !!p && existsSync(p));
  for (const bin of candidates) {
    const v = spawnSync(bin, ['-p', 'process.versions.node'], { encoding: 'utf8' }).stdout.trim();
    const [major = 0, minor = 0] = v.split('.').map(Number);
    if (major < 22 || (major === 22 && minor < 15)) return bin;
  }
  return undefined;
}

const old = oldNode();
const bundled = existsSync(join(REPO_ROOT, 'node_modules', 'node', 'bin', 'node'));
const skip = old ? false : 'no Node below 22.15 here (set FC_OLD_NODE)';
const run = (args: string[], env: Record<string, string> = {}) =>
  spawnSync(old as string, [BIN, ...args], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, ...env } });

test('on a Node below 22.15 with FILE_CLOUD_NODE_REEXEC=0 the CLI says which Node it needs and exits 1 (better-sqlite3 13 would crash it)', { skip }, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'fc-runtime-'));
  try {
    const r = run(['user', 'add', 'alice', '--password', 'alice-password', '--data-dir', dir], { FILE_CLOUD_NODE_REEXEC: '0' });
    assert.equal(r.signal, null, `killed by ${r.signal}: ${r.stderr}`);
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /Node\.js 22\.15 or newer/);
    assert.match(r.stderr, /v\d+\.\d+\.\d+/, 'names the Node it found');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('on a Node below 22.15 in a checkout, `node bin/file-cloud.js` runs on the Node 24 that npm ci installed', { skip: skip || (bundled ? false : 'no node_modules/node (npm ci)'), timeout: 90_000 }, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'fc-runtime-'));
  try {
    const add = run(['user', 'add', 'alice', '--password', 'alice-password', '--data-dir', dir]);
    assert.equal(add.signal, null, `killed by ${add.signal}: ${add.stderr}`);
    assert.equal(add.status, 0, add.stderr);
    const list = run(['user', 'list', '--data-dir', dir]);
    assert.equal(list.stdout, 'alice\n', list.stderr);
    // serve: a SIGTERM to the launcher's pid (as systemd sends it) reaches the server, which drains and exits 0.
    const port = await freePort();
    const proc = spawn(old as string, [BIN, 'serve', '--port', String(port), '--data-dir', dir, '--workers', '1'], {
      env: { ...process.env, FILE_CLOUD_ADMIN_PASSWORD: 'admin-password-x' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      let out = '';
      proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
      proc.stderr.on('data', (d: Buffer) => (out += d.toString()));
      const deadline = Date.now() + 30_000;
      while (!out.includes('File Cloud listening on') && Date.now() < deadline && proc.exitCode === null) await sleep(100);
      assert.match(out, /File Cloud listening on/, out);
      assert.equal((await fetch(`http://127.0.0.1:${port}/api/health`)).status, 200);
      const exited = once(proc, 'exit');
      proc.kill('SIGTERM');
      const [code, signal] = (await exited) as [number | null, string | null];
      assert.deepEqual({ code, signal }, { code: 0, signal: null }, out);
      await assert.rejects(fetch(`http://127.0.0.1:${port}/api/health`), 'the server is gone with its launcher');
    } finally {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
      // A server left behind by a launcher that did not pass the signal on holds these pipes open.
      proc.stdout.destroy();
      proc.stderr.destroy();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
