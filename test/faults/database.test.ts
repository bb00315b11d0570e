import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, open, readFile, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { BIN, REPO_ROOT, runCli } from '../helpers/server.js';

/**
 * A corrupt or locked database file stops `serve` (and the user commands)
 * at startup with one clear line on stderr and exit code 1, instead of a
 * server that starts and then fails requests.
 */

type Run = { code: number | null; stdout: string; stderr: string; ms: number };

/** Runs the binary; a process still running after `limitMs` is killed and reported (code null). */
function run(args: string[], limitMs = 20_000): Promise<Run> {
  const started = Date.now();
  return new Promise((resolve) => {
    const proc = spawn(process.execPath, [BIN, ...args], { cwd: REPO_ROOT, env: { ...process.env, FILE_CLOUD_ADMIN_PASSWORD: 'admin-password-x', FILE_CLOUD_LOG_LEVEL: 'warn' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => proc.kill('SIGKILL'), limitMs);
    proc.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: Date.now() - started });
    });
  });
}

/** A data dir with a real database holding a few users, checkpointed so everything is in file-cloud.db. */
async function populated(): Promise<{ dir: string; db: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'fc-dbfault-'));
  for (const u of ['bob', 'carol', 'dave']) assert.equal((await runCli(['user', 'add', u, '--password', 'long-password', '--data-dir', dir])).code, 0);
  const db = join(dir, 'file-cloud.db');
  const sqlite = new Database(db);
  sqlite.pragma('wal_checkpoint(TRUNCATE)');
  sqlite.close();
  return { dir, db };
}

function assertOneLineFailure(r: Run, mentions: RegExp): void {
  assert.equal(r.code, 1, `exit code (stderr: ${r.stderr})`);
  const lines = r.stderr.trim().split('\n');
  assert.equal(lines.length, 1, `one line on stderr: ${r.stderr}`);
  assert.match(lines[0] as string, /^file-cloud: cannot open the database .*file-cloud\.db: /);
  assert.match(lines[0] as string, mentions);
  assert.doesNotMatch(r.stdout, /listening/);
}

test('serve on a file that is not a database exits 1 with one clear line', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'fc-dbfault-'));
  try {
    await writeFile(join(dir, 'file-cloud.db'), randomBytes(64 * 1024));
    assertOneLineFailure(await run(['serve', '--port', '0', '--data-dir', dir]), /not a database/);
    assertOneLineFailure(await run(['user', 'list', '--data-dir', dir]), /not a database/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('serve on a database with a damaged page exits 1 with one clear line (regression: it used to start)', async () => {
  const { dir, db } = await populated();
  try {
    const sqlite = new Database(db, { readonly: true });
    const { rootpage } = sqlite.prepare("SELECT rootpage FROM sqlite_master WHERE name = 'access_tokens'").get() as { rootpage: number };
    sqlite.close();
    const f = await open(db, 'r+');
    await f.write(Buffer.alloc(512, 0xff), 0, 512, (rootpage - 1) * 4096);
    await f.close();
    assertOneLineFailure(await run(['serve', '--port', '0', '--data-dir', dir]), /damaged.*restore it from a backup/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('serve on a truncated database exits 1 with one clear line', async () => {
  const { dir, db } = await populated();
  try {
    await truncate(db, Math.floor((await stat(db)).size / 2) + 100);
    assertOneLineFailure(await run(['serve', '--port', '0', '--data-dir', dir]), /damaged|malformed|not a database/);
    assert.ok((await readFile(db)).length > 0, 'the damaged file is left for the administrator to inspect');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('serve on a database another process holds locked exits 1 within seconds, saying so (regression: it used to start)', async () => {
  const { dir, db } = await populated();
  const holder = spawn(process.execPath, ['-e', `const D = require('better-sqlite3'); const db = new D(${JSON.stringify(db)}); db.exec('BEGIN EXCLUSIVE'); console.log('locked'); setInterval(() => {}, 1000);`], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    await new Promise<void>((resolve, reject) => {
      holder.stdout.on('data', (d: Buffer) => d.toString().includes('locked') && resolve());
      holder.once('exit', () => reject(new Error('lock holder exited')));
    });
    const r = await run(['serve', '--port', '0', '--data-dir', dir]);
    assertOneLineFailure(r, /locked by another process/);
    assert.ok(r.ms < 15_000, `failed after ${r.ms} ms`);
  } finally {
    holder.kill('SIGKILL');
    await new Promise((r) => holder.once('exit', r));
  }
  // Once the lock is gone the same data dir serves again.
  const again = await run(['user', 'list', '--data-dir', dir]);
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stdout, /bob/);
  await rm(dir, { recursive: true, force: true });
});
