import { createHash, randomBytes } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { startServer, type ServerProcess } from '../helpers/server.js';
import { login } from '../helpers/client.js';
export { prng } from '../kit/prng.js';


export const faultSeed = (): number => Number(process.env.FC_FAULT_SEED ?? Date.now() % 1_000_000);

/**
 * File contents that prove themselves whole: the SHA-256 of the payload,
 * a newline, the payload. A torn or partial file fails verify().
 */
export function selfChecking(size: number): Buffer {
  const payload = randomBytes(size);
  return Buffer.concat([Buffer.from(`${createHash('sha256').update(payload).digest('hex')}\n`), payload]);
}

export function verify(content: Buffer): boolean {
  if (content.length < 65 || content[64] !== 0x0a) return false;
  return createHash('sha256').update(content.subarray(65)).digest('hex') === content.subarray(0, 64).toString('latin1');
}

/** Every file under dir, relative path → contents. */
export async function filesUnder(dir: string, rel = ''): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  let names: string[];
  try {
    names = await readdir(join(dir, rel));
  } catch {
    return out;
  }
  for (const n of names) {
    const r = rel ? `${rel}/${n}` : n;
    if ((await stat(join(dir, r))).isDirectory()) for (const [k, v] of await filesUnder(dir, r)) out.set(k, v);
    else out.set(r, await readFile(join(dir, r)));
  }
  return out;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));


/**
 * One crash round: starts the real binary on dataDir, logs in, runs `work`
 * (a loop of requests that records what the server acknowledged) and
 * SIGKILLs the server `killAfterMs` later, whatever it is doing. The loop
 * ends at the first failed request. Returns once the process is gone.
 */
export async function crashRound(dataDir: string, killAfterMs: number, work: (url: string, token: string) => Promise<void>): Promise<void> {
  const server = await startServer({ dataDir });
  const { access_token } = await login(server.url, 'admin', server.adminPassword);
  const killed = sleep(killAfterMs).then(() => server.stop('SIGKILL'));
  await work(server.url, access_token).catch(() => undefined);
  await killed;
}

/** Restarts the binary on dataDir (which clears staging) and returns it, for checks. */
export async function restart(dataDir: string): Promise<ServerProcess> {
  return startServer({ dataDir });
}
