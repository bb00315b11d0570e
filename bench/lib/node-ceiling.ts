/** Starts the Node ceiling (bench/node-ceiling-server.ts): a bare node:http server doing the contract's least work. */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { thisMachine, workerCount } from '../../src/cli/worker-count.js';
import { BenchError, USER } from './paths.js';
import { children, freePort, processTree, waitFor } from './processes.js';
import type { Server } from './server.js';

const SCRIPT = fileURLToPath(new URL('../node-ceiling-server.js', import.meta.url));

/**
 * `root` holds `<user>/<path>` (the GET mode serves the files there, the PUT
 * mode writes there). Workers: File Cloud's default (`--workers auto`: one on
 * a small box such as this one, one per core above).
 */
export async function startNodeCeiling(tmp: string, mode: 'get' | 'put', root: string): Promise<Server> {
  const dir = join(tmp, `node-ceiling-${mode}`);
  await mkdir(join(root, USER), { recursive: true });
  await mkdir(dir, { recursive: true });
  const port = await freePort();
  const token = randomBytes(24).toString('base64url');
  const args = [SCRIPT, '--mode', mode, '--port', String(port), '--root', root, '--workers', String(workerCount('auto', thisMachine())), '--token', token, '--db', join(dir, 'stamp.db'), '--log', join(dir, 'access.log')];
  const proc = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'inherit'] });
  children.add(proc);
  const server: Server = {
    name: `Node ceiling (${mode})`,
    base: `http://127.0.0.1:${port}`,
    headers: { authorization: `Bearer ${token}` },
    path: (rel) => `/storage/${USER}/${rel}`,
    statsPath: '/',
    pids: async () => (proc.pid ? processTree(proc.pid) : []),
    proc,
  };
  await waitFor(`the Node ceiling (${mode}) listening`, 20_000, async () => {
    if (proc.exitCode !== null) throw new BenchError(`the Node ceiling (${mode}) exited with ${proc.exitCode}`);
    const r = await fetch(`${server.base}/`).catch(() => undefined);
    await r?.arrayBuffer();
    return r?.status === 401 ? true : undefined;
  });
  return server;
}
