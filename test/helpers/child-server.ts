import type { ChildProcess } from 'node:child_process';
import { rm } from 'node:fs/promises';

/**
 * Waits until a server process we spawned answers HTTP at `probeUrl` (any
 * status counts), failing with its own error output if it exits or takes
 * longer than `timeoutMs`.
 */
export async function waitUntilServing(proc: ChildProcess, probeUrl: string, name: string, errors: () => Promise<string>, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`${name} exited: ${await errors()}`);
    if (await fetch(probeUrl).then(() => true, () => false)) return;
    if (performance.now() > deadline) throw new Error(`${name} did not start: ${await errors()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Stops a spawned server by its own pid (never by name): `signal` first,
 * SIGKILL after 5 s, then removes its temporary folder.
 */
export async function stopChild(proc: ChildProcess, exited: Promise<void>, signal: NodeJS.Signals, dir: string): Promise<void> {
  if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
  const timer = setTimeout(() => proc.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
  await rm(dir, { recursive: true, force: true });
}
