import { randomInt, randomUUID } from 'node:crypto';
import type { Clock } from '../lib/clock.js';
import type { StoredLeaseRepo } from '../store/leases.js';

/** A place one open change stream holds; `release` gives it back. */
export type StreamSlot = { release(): Promise<void> };

export type StreamSlots = {
  /** One of the user's places, or undefined when all are held. */
  take(userId: string): Promise<StreamSlot | undefined>;
};

/**
 * The change streams one user may have open, counted across every process
 * and node: a stream holds one of `perUser` named leases in the metadata
 * store (`change-stream:<user id>:<n>`). A lease is taken for `holdMs`, more
 * than a stream can live, so it needs no renewal; a stream that ends gives
 * it back, and one of a process that died frees itself when it runs out.
 * The held names are read first, so a user at the limit costs one read.
 */
export function createStreamSlots(deps: { leases: StoredLeaseRepo; clock: Clock; perUser: number; holdMs: number }): StreamSlots {
  return {
    async take(userId) {
      const prefix = `change-stream:${userId}:`;
      const now = deps.clock.now();
      const held = new Set(await deps.leases.held(prefix, now));
      // From a random place: streams opened at once by one user rarely try the same free name.
      const start = randomInt(deps.perUser);
      for (let i = 0; i < deps.perUser; i++) {
        const name = `${prefix}${(start + i) % deps.perUser}`;
        if (held.has(name)) continue;
        const owner = randomUUID();
        if (await deps.leases.acquire(name, owner, now, now + deps.holdMs)) return { release: () => deps.leases.release(name, owner) };
      }
      return undefined;
    },
  };
}
