import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stopChild, waitUntilServing } from './child-server.js';

const CANDIDATES = ['/usr/sbin/nginx', '/usr/bin/nginx', '/usr/local/sbin/nginx', '/usr/local/bin/nginx'];

/** The nginx binary, or undefined when it is not installed. */
export function nginxBinary(): string | undefined {
  return CANDIDATES.find((p) => existsSync(p));
}

/**
 * Why a test needing nginx should be skipped, or undefined to run it. In CI
 * (the CI variable set) a missing nginx is a failure, never a silent skip.
 */
export function nginxSkipReason(env: Readonly<Record<string, string | undefined>>): string | undefined {
  if (nginxBinary()) return undefined;
  if (env.CI) throw new Error('nginx is required in CI (apt-get install -y nginx) but is not installed');
  return 'nginx is not installed (apt-get install -y nginx); this test runs in CI';
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      const port = typeof a === 'object' && a ? a.port : 0;
      s.close(() => resolve(port));
    });
  });
}

export type Nginx = { readonly url: string; readonly dir: string; readonly proc: ChildProcess; errors(): Promise<string>; stop(): Promise<void> };

/**
 * The `location` blocks of the nginx configuration in docs/operations.md,
 * taken from the document itself (so the test proves what users copy), with
 * the backend address replaced.
 */
export function fileCloudLocation(backend: string): string {
  const doc = readFileSync(join(process.cwd(), 'docs', 'operations.md'), 'utf8');
  const block = /```nginx\n([\s\S]*?)```/.exec(doc)?.[1];
  if (!block) throw new Error('docs/operations.md has no nginx block');
  const start = block.indexOf('    location');
  const end = block.lastIndexOf('}', block.lastIndexOf('}') - 1);
  if (start === -1 || end === -1) throw new Error('the nginx block in docs/operations.md has no location');
  return block.slice(start, end + 1).replaceAll('127.0.0.1:8000', backend);
}

/**
 * Runs a private nginx (own config, temp dir, 127.0.0.1 port, foreground) in
 * front of File Cloud: one backend, or several as a round-robin upstream
 * (the load balancer of docs/operations.md "Scaling out").
 */
export async function startNginx(opts: { backend: string | readonly string[] }): Promise<Nginx> {
  const backends = typeof opts.backend === 'string' ? [opts.backend] : opts.backend;
  const upstream = backends.length > 1 ? `  upstream file_cloud {\n${backends.map((b) => `    server ${b} max_fails=1 fail_timeout=5s;`).join('\n')}\n  }` : '';
  const target = backends.length > 1 ? 'file_cloud' : (backends[0] as string);
  const bin = nginxBinary();
  if (!bin) throw new Error('nginx is not installed');
  const dir = await mkdtemp(join(tmpdir(), 'fc-nginx-'));
  for (const d of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi', 'logs']) await mkdir(join(dir, d));
  const port = await freePort();
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  const conf = `
${root ? 'user root;' : ''}
worker_processes 1;
daemon off;
master_process on;
pid ${dir}/nginx.pid;
error_log ${dir}/logs/error.log warn;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
${upstream}
  server {
    listen 127.0.0.1:${port};
    server_name localhost;
${fileCloudLocation(target)}
  }
}
`;
  await writeFile(join(dir, 'nginx.conf'), conf);
  const proc = spawn(bin, ['-p', dir, '-c', join(dir, 'nginx.conf'), '-e', join(dir, 'logs', 'error.log')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  proc.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const errors = async () => stderr + (await readFile(join(dir, 'logs', 'error.log'), 'utf8').catch(() => ''));
  const url = `http://127.0.0.1:${port}`;
  await waitUntilServing(proc, `${url}/nginx-ready-probe`, 'nginx', errors, 10_000);
  return {
    url,
    dir,
    proc,
    errors,
    // Stopped by its own pid (the process we spawned), never by name.
    stop: () => stopChild(proc, exited, 'SIGQUIT', dir),
  };
}
