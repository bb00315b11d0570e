import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nginxBinary, runNginx } from '../kit/nginx.js';

export { nginxBinary };

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
  const dir = await mkdtemp(join(tmpdir(), 'fc-nginx-'));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  try {
    const nginx = await runNginx({
      dir,
      probe: `${url}/nginx-ready-probe`,
      http: `  access_log off;
${upstream}
  server {
    listen 127.0.0.1:${port};
    server_name localhost;
${fileCloudLocation(target)}
  }`,
    });
    return { url, dir, proc: nginx.proc, errors: nginx.errors, stop: async () => {
      await nginx.stop('SIGQUIT');
      await rm(dir, { recursive: true, force: true });
    } };
  } catch (e) {
    await rm(dir, { recursive: true, force: true });
    throw e;
  }
}
