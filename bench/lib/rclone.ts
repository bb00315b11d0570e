/** Debian's `rclone serve webdav` on a temporary folder, with --user/--pass: the small-upload reference (issue 30). */
import { spawn, spawnSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BenchError } from './paths.js';
import { children, freePort, processTree, waitFor } from './processes.js';
import type { Server } from './server.js';

export type Rclone = { server: Server; root: string; version: string };

/** `rclone version`'s first line, or undefined when rclone is not installed. */
export function rcloneVersion(): string | undefined {
  const r = spawnSync('rclone', ['version'], { encoding: 'utf8', timeout: 10_000 });
  return r.status === 0 ? r.stdout.split('\n')[0]?.trim() : undefined;
}

export async function startRclone(tmp: string, user: string, password: string): Promise<Rclone> {
  const version = rcloneVersion();
  if (!version) throw new BenchError('rclone is missing (the small-upload reference): bench/setup installs it (apt-get install rclone)');
  const dir = join(tmp, 'rclone');
  const root = join(dir, 'root');
  await mkdir(root, { recursive: true });
  // An empty config of its own: never the caller's remotes or settings.
  const config = join(dir, 'rclone.conf');
  await writeFile(config, '');
  const port = await freePort();
  const proc = spawn('rclone', ['serve', 'webdav', root, '--addr', `127.0.0.1:${port}`, `--user=${user}`, `--pass=${password}`, '--config', config, '--log-file', join(dir, 'rclone.log')], { stdio: 'ignore' });
  children.add(proc);
  const server: Server = {
    name: 'rclone serve webdav',
    base: `http://127.0.0.1:${port}`,
    headers: { authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` },
    path: (rel) => `/${rel}`,
    statsPath: '/',
    pids: async () => (proc.pid ? processTree(proc.pid) : []),
    proc,
  };
  await waitFor('rclone serve webdav listening', 20_000, async () => {
    if (proc.exitCode !== null) throw new BenchError(`rclone serve webdav exited with ${proc.exitCode}; see ${join(dir, 'rclone.log')}`);
    const r = await fetch(`${server.base}/`, { method: 'PROPFIND', headers: { ...server.headers, depth: '0' } });
    await r.arrayBuffer();
    return r.status === 207 ? true : undefined;
  });
  return { server, root, version };
}
