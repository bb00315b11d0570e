import type { JournalRepo } from '../store/journal.js';
import type { LeaseRepo } from '../store/leases.js';
import { outsideRequest } from '../lib/progress.js';
import { holdOwner } from '../lib/process-id.js';

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
  const owner = holdOwner();
  if (!(await c.leases.acquire(name, owner, now(), now() + ttlMs))) return undefined;
  return keptAlive(c, [name], owner, ttlMs, () => c.leases.release(name, owner));
}

/** Renews `names` for `owner` until released (one timer for the set); `letGo` frees them in the store. */
function keptAlive(c: Leasing, names: readonly string[], owner: string, ttlMs: number, letGo: () => Promise<void>): HeldLease {
  const now = c.now ?? Date.now;
  // Renewals answered are not progress of the request that took the lease (src/app/request-deadline.ts).
  const timer = outsideRequest(() =>
    setInterval(() => {
      for (const name of names) c.leases.renew(name, owner, now() + ttlMs).catch(() => undefined);
    }, ttlMs / 3),
  );
  timer.unref();
  return {
    async release() {
      clearInterval(timer);
      await letGo().catch(() => undefined);
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

/** Waits (polling with backoff) until none of `names` is held any more. */
export async function waitFree(c: Leasing, names: readonly string[], signal?: AbortSignal): Promise<void> {
  const now = c.now ?? Date.now;
  for (let wait = 20; (await c.leases.heldOf(names, now())).length > 0; wait = Math.min(wait * 2, 200)) {
    signal?.throwIfAborted();
    await new Promise((r) => setTimeout(r, wait));
  }
}

/**
 * Waits (polling with backoff) until no lease named `prefix`… is held: a change of a whole folder,
 * holding the folder's lease, waits for the changes below it that began before it (holdInside). `own`
 * are the caller's leases, which the prefix may name too (a user root's; a move's other end below it).
 */
export async function waitFreeWithin(c: Leasing, prefix: string, own: readonly string[], signal?: AbortSignal): Promise<void> {
  const now = c.now ?? Date.now;
  const busy = async () => (await c.leases.heldWithin(prefix, now())).some((n) => !own.includes(n));
  for (let wait = 20; await busy(); wait = Math.min(wait * 2, 200)) {
    signal?.throwIfAborted();
    await new Promise((r) => setTimeout(r, wait));
  }
}

/**
 * A change inside folders: holds `own` (holdAll) once none of `around` — the leases of the folders
 * around its names, which a change of a whole folder holds — is held. It takes its own leases
 * first and only then looks at the folders', and a folder's change takes its lease first and only
 * then looks at the leases below it (waitFree), so of two that start together one always sees the
 * other: this one steps back (lets its leases go and waits) until the folder's change is done, or
 * that one waits for this one. Stepping back, never waiting while it holds, is what keeps a folder's
 * change that waits for the changes below it from ever waiting on itself, and lets changes
 * side by side in one folder run together (they hold no lease of the folder).
 */
export async function holdInside(c: Leasing, own: readonly string[], around: readonly string[], signal?: AbortSignal): Promise<HeldLease> {
  const now = c.now ?? Date.now;
  const others = around.filter((n) => !own.includes(n));
  for (;;) {
    const held = await holdAll(c, own, signal);
    const busy = others.length === 0 ? [] : await c.leases.heldOf(others, now()).catch(async (e: unknown) => {
      await held.release();
      throw e;
    });
    if (busy.length === 0) return held;
    await held.release();
    await waitFree(c, busy, signal);
  }
}

/**
 * holdInside without waiting, in one turn of the lease store: all of `own` held, or undefined when
 * one of them is taken or one of `around` is held (a change of a folder around them is under way).
 * For a write with a way around the wait (S3's create onto a free name falls back to the replace,
 * which waits). The store writes `own` before it reads `around` (LeaseRepo.acquireAll), so the
 * argument of holdInside holds as it is; one timer renews the set and one turn lets it go.
 */
export async function tryHoldAll(c: Leasing, own: readonly string[], around: readonly string[] = [], ttlMs = TTL_MS): Promise<HeldLease | undefined> {
  const now = c.now ?? Date.now;
  const owner = holdOwner();
  const names = [...new Set(own)];
  const others = around.filter((n) => !names.includes(n));
  if (!(await c.leases.acquireAll(names, owner, now(), now() + ttlMs, others))) return undefined;
  return keptAlive(c, names, owner, ttlMs, () => c.leases.releaseAll(names, owner));
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
