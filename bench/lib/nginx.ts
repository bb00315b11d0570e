/** nginx: the reference server on the dataset (sendfile, autoindex json, dav PUT), and the load balancer in front of File Cloud nodes. */
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { runNginx } from '../../test/kit/nginx.js';
import { BenchError } from './paths.js';
import { children, freePort } from './processes.js';
import type { Server } from './server.js';

export async function startNginx(tmp: string, root: string): Promise<Server> {
  const port = await freePort();
  const nginx = await runNginx({
    dir: join(tmp, 'nginx'),
    probe: `http://127.0.0.1:${port}/tiny.txt`,
    probeStatus: 200,
    workerProcesses: 'auto',
    workerConnections: 4096,
    http: `  default_type application/octet-stream;
  types { text/plain txt; }
  # Access logging on, as in nginx's default configuration (File Cloud logs every request at info).
  access_log ${join(tmp, 'nginx')}/access.log;
  sendfile on;
  tcp_nopush on;
  keepalive_timeout 72s;
  keepalive_requests 1000000;
  client_max_body_size 0;
  server {
    listen 127.0.0.1:${port};
    root ${root};
    location = /api/stats { return 200; }
    location / {
      autoindex on;
      autoindex_format json;
      dav_methods PUT;
      create_full_put_path on;
    }
  }`,
  }).catch((e: unknown) => {
    throw new BenchError((e as Error).message);
  });
  children.add(nginx.proc);
  return {
    name: 'nginx',
    base: `http://127.0.0.1:${port}`,
    headers: {},
    path: (rel) => `/${rel}`,
    statsPath: '/api/stats',
    pids: nginx.pids,
    proc: nginx.proc,
  };
}

/** One front of the balancer: its name and the File Cloud nodes (host:port) it spreads requests over. */
export type Front = { name: string; backends: string[] };

export type Balancer = { proc: ChildProcess; fronts: { name: string; base: string; backends: string[] }[]; pids(): Promise<number[]> };

/**
 * One nginx in front of File Cloud nodes, with one listener per front, each
 * proxying to its own round-robin `upstream` (e.g. one front with node 1
 * alone and one with nodes 1 and 2: the same balancer, the same proxy hop,
 * only the number of nodes differs). The proxy settings are those of
 * deploy/cluster/nginx.conf (docs/operations.md "Scaling out"): HTTP/1.1
 * with upstream keep-alive, no request or response buffering, streaming
 * bodies, no body size limit; no base path, so File Cloud is at the root.
 * Access logging off: the nodes log every request themselves.
 */
export async function startBalancer(tmp: string, name: string, fronts: Front[]): Promise<Balancer> {
  const ports: number[] = [];
  for (let i = 0; i < fronts.length; i++) ports.push(await freePort());
  const blocks = fronts.map((f, i) => `  upstream fc_${i} {
${f.backends.map((b) => `    server ${b} max_fails=1 fail_timeout=5s;`).join('\n')}
    keepalive 32;
  }
  server {
    listen 127.0.0.1:${ports[i]};
    # ${f.name}
    location / {
      proxy_pass http://fc_${i};
      proxy_http_version 1.1;
      proxy_set_header Host $host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto $scheme;
      proxy_set_header Connection "";
      client_max_body_size 0;
      proxy_request_buffering off;
      proxy_buffering off;
      proxy_read_timeout 1h;
      proxy_send_timeout 1h;
      proxy_next_upstream error timeout http_502 http_503;
    }
  }`);
  // Ready when the first front reaches File Cloud (/is_file_cloud: no authentication, no disk).
  const nginx = await runNginx({
    dir: join(tmp, name),
    probe: `http://127.0.0.1:${ports[0]}/is_file_cloud`,
    probeStatus: 200,
    workerProcesses: 'auto',
    workerConnections: 4096,
    http: `  access_log off;
  keepalive_timeout 72s;
  keepalive_requests 1000000;
${blocks.join('\n')}`,
  }).catch((e: unknown) => {
    throw new BenchError((e as Error).message);
  });
  children.add(nginx.proc);
  const proc = nginx.proc;
  const pids = nginx.pids;
  return { proc, fronts: fronts.map((f, i) => ({ name: f.name, base: `http://127.0.0.1:${ports[i]}`, backends: f.backends })), pids };
}
