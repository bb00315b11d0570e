import { randomUUID } from 'node:crypto';
import type { JournalRepo } from '../store/journal.js';
import type { LeaseRepo } from '../store/leases.js';
import { outsideRequest } from '../lib/progress.js';

/**
 * What a backend without atomic operations of its own (S3) needs from the
 * metadata store to stay correct across processes and nodes: leases for
 * mutual exclusion, a journal for multi-step work.
 */
export type Coordination = { readonly leases: LeaseRepo; readonly journal: JournalRepo; readonly now?: () => number };

/** The part of Coordination that mutual exclusion needs (the local backend has no journal). */
export type Leasing = Pick<Coordination, 'leases' | 'now'>;

export type HeldLease = { release(): Promise<void> };

const TTL_MS = 30_000;

/**
 * Takes a lease and keeps it renewed until released, so a long upload or
 * move keeps its claim while its process lives and loses it ~30 s after the
 * process dies. Undefined when someone else holds it.
 */
export async function tryHold(c: Leasing, name: string, ttlMs = TTL_MS): Promise<HeldLease | undefined> {
  const now = c.now ?? Date.now;
  const owner = randomUUID();
  if (!(await c.leases.acquire(name, owner, now(), now() + ttlMs))) return undefined;
  // Renewals answered are not progress of the request that took the lease (src/app/request-deadline.ts).
  const timer = outsideRequest(() =>
    setInterval(() => {
      c.leases.renew(name, owner, now() + ttlMs).catch(() => undefined);
    }, ttlMs / 3),
  );
  timer.unref();
  return {
    async release() {
      clearInterval(timer);
      await c.leases.release(name, owner).catch(() => undefined);
    },
  };
}

/**
 * Waits for a lease (polling with backoff up to `maxWaitMs`) until it is
 * free or the signal fires. A lease held for a whole upload is polled
 * slowly; one held around a single change (holdAll) is worth asking for often.
 */
export async function hold(c: Leasing, name: string, signal?: AbortSignal, maxWaitMs = 500): Promise<HeldLease> {
  for (let wait = 20; ; wait = Math.min(wait * 2, maxWaitMs)) {
    const lease = await tryHold(c, name);
    if (lease) return lease;
    signal?.throwIfAborted();
    await new Promise((r) => setTimeout(r, wait));
  }
}

/**
 * Waits for several short-held leases, taken in one global order (sorted,
 * each name once) so two callers that need overlapping sets never wait on
 * each other in a circle.
 */
export async function holdAll(c: Leasing, names: readonly string[], signal?: AbortSignal): Promise<HeldLease> {
  const held: HeldLease[] = [];
  const release = async () => {
    for (const l of held.reverse()) await l.release();
  };
  try {
    for (const name of [...new Set(names)].sort()) held.push(await hold(c, name, signal, 80));
  } catch (e) {
    await release();
    throw e;
  }
  return { release };
}

/** Runs fn while the lease is held, releasing it however fn ends. */
export async function whileHeld<T>(lease: Promise<HeldLease>, fn: () => Promise<T>): Promise<T> {
  const held = await lease;
  try {
    return await fn();
  } finally {
    await held.release();
  }
}
