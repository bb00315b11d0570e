import { createHash, randomBytes } from 'node:crypto';
import assert from 'node:assert/strict';
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

/**
 * After a kill and a restart: staging is empty, every file on disk is whole and holds acknowledged
 * or in-flight contents, and no acknowledged file is lost. What the kill left of the in-flight
 * uploads becomes acknowledged (it is what the server now holds). Returns what is on disk.
 */
export async function checkUploadsAfterKill(dataDir: string, round: number, acked: Map<string, Buffer>, inflight: Map<string, Buffer>): Promise<Map<string, Buffer>> {
  assert.deepEqual(await readdir(join(dataDir, 'tmp')), [], `round ${round}: staging cleared`);
  const onDisk = await filesUnder(join(dataDir, 'storage', 'admin'));
  for (const [path, content] of onDisk) {
    assert.ok(verify(content), `round ${round}: ${path} is whole`);
    const allowed = [acked.get(path), inflight.get(path)].filter((b) => b !== undefined);
    assert.ok(allowed.some((b) => b.equals(content)), `round ${round}: ${path} holds acknowledged or in-flight contents`);
  }
  for (const [path, content] of acked) {
    const now = onDisk.get(path);
    assert.ok(now, `round ${round}: acknowledged ${path} is not lost`);
    assert.ok(now.equals(content) || inflight.get(path)?.equals(now), `round ${round}: ${path} is the last acknowledged or an in-flight version`);
  }
  for (const [p, b] of inflight) if (onDisk.get(p)?.equals(b)) acked.set(p, b);
  return onDisk;
}
