/** Request rates with wrk: fixed connections, a Lua script cycling through paths, the latency histogram. */
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BenchError } from './paths.js';
import { children } from './processes.js';
import type { Server } from './server.js';

export type WrkResult = { rps: number; p50: number; p99: number; requests: number };

export type WrkRun = { name: string; method: 'GET' | 'HEAD'; paths: string[]; connections: number; seconds: number; warmup?: boolean };

export async function wrk(server: Server, tmp: string, o: WrkRun): Promise<WrkResult> {
  const script = join(tmp, `wrk-${o.name}-${server.name.replace(/[^A-Za-z0-9]+/g, '-')}.lua`);
  const lua = [
    `local paths = { ${o.paths.map((p) => JSON.stringify(p)).join(', ')} }`,
    'local i = 0',
    `wrk.method = "${o.method}"`,
    'request = function()',
    '  i = i % #paths + 1',
    '  return wrk.format(nil, paths[i])',
    'end',
  ].join('\n');
  await writeFile(script, lua);
  return runWrk(server, script, o);
}

/**
 * Runs wrk with a Lua script (2 threads, `connections`, `seconds`, the server's headers) and reads
 * its rate and latency; fails on any non-2xx answer or socket error, and on no request at all unless
 * it is a warm-up.
 */
export async function runWrk(server: Server, script: string, o: { name: string; connections: number; seconds: number; warmup?: boolean }): Promise<WrkResult> {
  const args = ['-t', '2', '-c', String(o.connections), '-d', `${o.seconds}s`, '--timeout', '10s', '--latency', '-s', script];
  for (const [k, v] of Object.entries(server.headers)) args.push('-H', `${k}: ${v}`);
  args.push(`${server.base}/`);
  const out = await new Promise<string>((res, rej) => {
    const p = spawn('wrk', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(p);
    let text = '';
    p.stdout.on('data', (d: Buffer) => (text += d.toString()));
    p.stderr.on('data', (d: Buffer) => (text += d.toString()));
    const timer = setTimeout(() => p.pid && process.kill(p.pid, 'SIGKILL'), (o.seconds + 30) * 1000);
    p.on('error', rej);
    p.on('exit', (code) => {
      clearTimeout(timer);
      children.delete(p);
      if (code === 0) res(text);
      else rej(new BenchError(`wrk exited with ${code}: ${text}`));
    });
  });
  const num = (re: RegExp) => Number(re.exec(out)?.[1] ?? NaN);
  const latency = (pct: string) => {
    const m = new RegExp(`\\s${pct}%\\s+([\\d.]+)(us|ms|s)\\b`).exec(out);
    if (!m) return NaN;
    return Number(m[1]) * ({ us: 0.001, ms: 1, s: 1000 }[m[2] as 'us' | 'ms' | 's']);
  };
  const requests = num(/(\d+) requests in/);
  const non2xx = num(/Non-2xx or 3xx responses: (\d+)/);
  const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  const sockErrors = sock ? sock.slice(1).reduce((a, x) => a + Number(x), 0) : 0;
  if (!(requests > 0) && !o.warmup) throw new BenchError(`${server.name}: wrk ${o.name} made no requests:\n${out}`);
  if (non2xx > 0 || sockErrors > 0) throw new BenchError(`${server.name}: wrk ${o.name}: ${Number.isNaN(non2xx) ? 0 : non2xx} non-2xx answers, ${sockErrors} socket errors:\n${out}`);
  return { rps: num(/Requests\/sec:\s+([\d.]+)/), p50: latency('50'), p99: latency('99'), requests };
}

/** p50/p99 of latencies in ms (sorts them in place). */
export function percentiles(latencies: number[]): { p50: number; p99: number } {
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
  return { p50: at(0.5), p99: at(0.99) };
}
