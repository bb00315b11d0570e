import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stopChild, waitUntilServing } from './child-server.js';
import { freePort } from './nginx.js';

const CANDIDATES = ['/usr/bin/caddy', '/usr/local/bin/caddy'];

export function caddyBinary(): string | undefined {
  return CANDIDATES.find((p) => existsSync(p));
}

/**
 * The first Caddyfile of docs/operations.md (File Cloud at /files/), taken
 * from the document itself, on plain HTTP at `address` in front of `backend`.
 */
export function fileCloudCaddySite(address: string, backend: string): string {
  const doc = readFileSync(join(process.cwd(), 'docs', 'operations.md'), 'utf8');
  const block = /```caddy\n([\s\S]*?)```/.exec(doc)?.[1];
  if (!block || !block.startsWith('example.com {')) throw new Error('docs/operations.md has no Caddyfile for example.com');
  return block.replace('example.com {', `${address} {`).replaceAll('127.0.0.1:8000', backend);
}

/** A private Caddy (own Caddyfile, temp dir, no admin API, no TLS) on a 127.0.0.1 port, stopped by its pid. */
export async function startCaddy(opts: { backend: string }): Promise<{ url: string; proc: ChildProcess; errors(): Promise<string>; stop(): Promise<void> }> {
  const bin = caddyBinary();
  if (!bin) throw new Error('caddy is not installed');
  const dir = await mkdtemp(join(tmpdir(), 'fc-caddy-'));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  await writeFile(join(dir, 'Caddyfile'), `{\n\tadmin off\n\tauto_https off\n}\n\n${fileCloudCaddySite(url, opts.backend)}`);
  const proc = spawn(bin, ['run', '--config', join(dir, 'Caddyfile'), '--adapter', 'caddyfile'], {
    env: { ...process.env, HOME: dir, XDG_DATA_HOME: join(dir, 'data'), XDG_CONFIG_HOME: join(dir, 'config') },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  proc.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const errors = async () => stderr + (await readFile(join(dir, 'Caddyfile'), 'utf8').catch(() => ''));
  await waitUntilServing(proc, `${url}/caddy-ready-probe`, 'caddy', errors, 15_000);
  return {
    url,
    proc,
    errors,
    // Stopped by its own pid (the process we spawned), never by name.
    stop: () => stopChild(proc, exited, 'SIGTERM', dir),
  };
}
