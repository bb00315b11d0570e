import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ADMIN_PASSWORD, REPO_ROOT } from '../helpers/server.js';

const ENTRYPOINT = join(REPO_ROOT, 'deploy', 'docker-entrypoint.sh');
const HEALTHCHECK = join(REPO_ROOT, 'deploy', 'healthcheck.mjs');
const dockerfile = () => readFileSync(join(REPO_ROOT, 'Dockerfile'), 'utf8');

/** The ENV of the Dockerfile's final stage, as the container sees it. */
function imageEnv(): Record<string, string> {
  const stages = dockerfile().replace(/\\\n/g, ' ').split(/^FROM /m);
  const last = stages[stages.length - 1] as string;
  const env: Record<string, string> = {};
  for (const line of last.split('\n').filter((l) => l.startsWith('ENV '))) {
    for (const m of line.slice(4).matchAll(/([A-Z_]+)=(\S+)/g)) env[m[1] as string] = m[2] as string;
  }
  return env;
}

/** Runs the entrypoint outside Docker: FILE_CLOUD_HOME is /app in the image, the checkout here. */
function entrypoint(args: string[], env: Record<string, string>) {
  return spawn('sh', [ENTRYPOINT, ...args], { env: { ...process.env, FILE_CLOUD_LOG_LEVEL: 'warn', FILE_CLOUD_HOME: REPO_ROOT, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
}

function runEntrypoint(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const p = entrypoint(args, env);
  let stdout = '';
  let stderr = '';
  p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => p.once('exit', (code) => resolve({ code, stdout, stderr })));
}

function healthcheck(env: Record<string, string>): number | null {
  return spawnSync(process.execPath, [HEALTHCHECK], { env: { ...process.env, ...env }, timeout: 10_000 }).status;
}

test('the Dockerfile is multi-stage, non-root, with /data, port 8000, a node health check and container defaults', () => {
  const text = dockerfile();
  const froms = text.match(/^FROM .*/gm) ?? [];
  assert.ok(froms.length >= 2, 'multi-stage');
  assert.match(froms[0] as string, /^FROM node:24-bookworm-slim AS build/);
  assert.match(froms[froms.length - 1] as string, /^FROM node:24-bookworm-slim\s*$/);
  const [build, runtime] = [text.split(/^FROM /m)[1] as string, text.split(/^FROM /m).pop() as string];
  // better-sqlite3 13 and sharp bring their binaries in their npm packages: nothing is compiled.
  assert.doesNotMatch(text, /g\+\+|python3|apt-get/, 'no compiler, no apt layer');
  assert.match(build, /npm ci --ignore-scripts/);
  const user = /^USER (\S+)/m.exec(runtime);
  assert.ok(user && user[1] !== 'root' && user[1] !== '0', 'runs as a non-root user');
  assert.match(runtime, /^VOLUME \["\/data"\]/m);
  assert.match(runtime, /^EXPOSE 8000$/m);
  assert.match(runtime, /^HEALTHCHECK .*CMD \["node", "\/app\/deploy\/healthcheck\.mjs"\]/m);
  assert.match(runtime, /^ENTRYPOINT \["\/app\/deploy\/docker-entrypoint\.sh"\]/m);
  const env = imageEnv();
  assert.equal(env.FILE_CLOUD_HOST, '0.0.0.0');
  assert.equal(env.FILE_CLOUD_DATA_DIR, '/data');
  assert.equal(env.FILE_CLOUD_PORT, '8000');
  // Every file the build copies from the context exists, and the context leaves out data and secrets.
  for (const m of text.matchAll(/^COPY (?!--from)(.+) \S+$/gm)) for (const src of (m[1] as string).split(/\s+/)) assert.ok(existsSync(join(REPO_ROOT, src)), `COPY source ${src} exists`);
  const ignore = readFileSync(join(REPO_ROOT, '.dockerignore'), 'utf8').split('\n');
  for (const p of ['data', 'node_modules', 'dist', '.git']) assert.ok(ignore.includes(p), `.dockerignore has ${p}`);
  // `npm run build` compiles every folder tsconfig.json includes: none may be left out of the context.
  const include = (JSON.parse(readFileSync(join(REPO_ROOT, 'tsconfig.json'), 'utf8')) as { include: string[] }).include.map((g) => g.split('/')[0] as string);
  for (const dir of [...include, 'web', 'bin', 'scripts', 'deploy', 'package.json', 'package-lock.json']) assert.ok(!ignore.includes(dir), `.dockerignore keeps ${dir}`);
  const compose = readFileSync(join(REPO_ROOT, 'compose.yaml'), 'utf8');
  assert.match(compose, /- file-cloud-data:\/data/);
  assert.match(compose, /"127\.0\.0\.1:8000:8000"/);
});

test('the entrypoint with the image defaults serves on 0.0.0.0, and the health check follows the server', { timeout: 60_000 }, async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'fc-entry-'));
  // The image's environment, with a free port and a temp dir instead of /data.
  const env = { ...imageEnv(), FILE_CLOUD_DATA_DIR: join(dataDir, 'data'), FILE_CLOUD_ADMIN_PASSWORD: ADMIN_PASSWORD, FILE_CLOUD_BASE_PATH: '/files' };
  const p = entrypoint(['--port', '0', '--log-format', 'pretty', '--log-level', 'info'], env);
  let stdout = '';
  p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  const exited = new Promise<number | null>((resolve) => p.once('exit', (code) => resolve(code)));
  try {
    const port = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no listening line: ${stdout}`)), 20_000);
      p.stdout.on('data', () => {
        const m = /File Cloud listening on http:\/\/0\.0\.0\.0:(\d+)\/files/.exec(stdout);
        if (m) {
          clearTimeout(timer);
          resolve(m[1] as string);
        }
      });
    });
    assert.equal(healthcheck({ FILE_CLOUD_PORT: port, FILE_CLOUD_BASE_PATH: '/files' }), 0, 'healthy while serving');
    assert.equal(healthcheck({ FILE_CLOUD_PORT: port }), 1, 'the wrong base path is unhealthy');
    // --log-format pretty: readable lines, not JSON.
    assert.match(stdout, /^\d\d:\d\d:\d\d\.\d{3} INFO {2}effective configuration/m);
    assert.doesNotMatch(stdout, /^\{"level"/m);
    p.kill('SIGTERM');
    assert.equal(await exited, 0);
    assert.equal(healthcheck({ FILE_CLOUD_PORT: port, FILE_CLOUD_BASE_PATH: '/files' }), 1, 'unhealthy once stopped');
  } finally {
    p.kill('SIGKILL');
    await rm(dataDir, { recursive: true, force: true });
  }
});

test('the entrypoint runs user commands, passes other commands through, and names an unwritable data dir', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'fc-entry-'));
  try {
    const env = { ...imageEnv(), FILE_CLOUD_DATA_DIR: join(dir, 'data') };
    const add = await runEntrypoint(['user', 'add', 'bob', '--password', 'bob-password-long'], env);
    assert.equal(add.code, 0, add.stderr);
    const list = await runEntrypoint(['user', 'list'], env);
    assert.match(list.stdout, /\bbob\b/);
    const other = await runEntrypoint(['echo', 'passed through'], env);
    assert.equal(other.stdout.trim(), 'passed through');
    await writeFile(join(dir, 'a-file'), '');
    const bad = await runEntrypoint([], { ...env, FILE_CLOUD_DATA_DIR: join(dir, 'a-file', 'data') });
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /^file-cloud: data directory .*a-file\/data is not writable by uid \d+; chown it/);
    assert.equal(bad.stderr.trim().split('\n').length, 1, 'one line');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('the systemd unit runs as a dedicated user in a sandbox, writing only the data dir', () => {
  const unit = join(REPO_ROOT, 'deploy', 'file-cloud.service');
  const lines = readFileSync(unit, 'utf8').split('\n').filter((l) => /^\w+=/.test(l));
  const values = (key: string) => lines.filter((l) => l.startsWith(`${key}=`)).map((l) => l.slice(key.length + 1));
  const one = (key: string) => values(key)[0];
  assert.equal(one('User'), 'file-cloud');
  assert.equal(one('ProtectSystem'), 'strict');
  assert.equal(one('NoNewPrivileges'), 'true');
  assert.equal(one('ReadWritePaths'), '/var/lib/file-cloud');
  assert.ok(values('Environment').includes('FILE_CLOUD_DATA_DIR=/var/lib/file-cloud'), 'the data dir is the writable path');
  assert.equal(one('StateDirectory'), 'file-cloud');
  for (const k of ['ProtectHome', 'PrivateTmp', 'PrivateDevices', 'RestrictSUIDSGID', 'LockPersonality']) assert.equal(one(k), 'true', k);
  assert.equal(one('CapabilityBoundingSet'), '');
  assert.equal(one('KillSignal'), 'SIGTERM');
  assert.equal(values('MemoryDenyWriteExecute').length, 0, 'would break the V8 JIT');
  assert.match(one('ExecStart') ?? '', /bin\/file-cloud\.js serve$/);
  assert.equal(one('WantedBy'), 'multi-user.target');
  const analyze = spawnSync('systemd-analyze', ['verify', unit], { encoding: 'utf8' });
  if (analyze.error) return; // systemd-analyze not installed: the key checks above stand alone
  assert.equal(analyze.status, 0, analyze.stderr);
  assert.doesNotMatch(analyze.stderr, /file-cloud\.service:\d+:/, 'no warning about our unit');
});
