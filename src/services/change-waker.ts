import type { ChangeRepo } from '../store/changes.js';
import type { GrantRepo } from '../store/grants.js';
import type { ChangeSignal } from './change-signal.js';

export type ChangeWaker = {
  /**
   * Calls `wake` whenever the journal gains an entry of a tree `username` may be shown: their own,
   * or one whose owner has a grant that reaches them. Resolves once entries from then on will wake
   * it; the returned function stops it.
   */
  watch(username: string, wake: () => void): Promise<() => void>;
  /** This process's streams that watch, and how many wake-ups they were given (for the metrics). */
  readonly stats: { readonly open: number; readonly wakeups: number };
};

/**
 * Wakes each change stream only for writes it may be shown, so that a
 * write's cost does not grow with the streams that wait elsewhere. On each
 * signal (change-signal.ts: "the journal may have grown") the process reads,
 * once for all its streams, the owners of the new entries and the users
 * their grants reach, and wakes the streams of those users. Which entries a
 * stream then sends is the feed's own rule (`visible` in changes.ts); this
 * only decides which streams look.
 */
export function createChangeWaker(deps: {
  signal: ChangeSignal;
  changes: Pick<ChangeRepo, 'latest' | 'ownersBetween'>;
  grants: Pick<GrantRepo, 'recipientsOf'>;
  onError: (err: unknown) => void;
}): ChangeWaker {
  const byUser = new Map<string, Set<() => void>>();
  let open = 0;
  let wakeups = 0;
  // The journal position up to which this process has woken its streams; unknown while none watches.
  let seen: number | undefined;
  let starting: Promise<void> | undefined;
  let unsubscribe: (() => void) | undefined;
  let reading = false;
  let again = false;

  const readOnce = async () => {
    const from = seen;
    if (from === undefined) return;
    const latest = await deps.changes.latest();
    if (latest <= from) {
      seen = latest;
      return;
    }
    const owners = await deps.changes.ownersBetween(from, latest);
    const users = new Set([...owners, ...(await deps.grants.recipientsOf(owners))]);
    seen = latest;
    for (const user of users) {
      for (const wake of byUser.get(user) ?? []) {
        wakeups++;
        wake();
      }
    }
  };

  // Wake-ups that come while the journal is read share the next read: one read in flight, one waiting.
  const dispatch = async () => {
    again = true;
    if (reading || seen === undefined) return;
    reading = true;
    try {
      while (again && open > 0) {
        again = false;
        await readOnce();
      }
    } catch (err) {
      deps.onError(err);
    } finally {
      reading = false;
    }
  };

  return {
    async watch(username, wake) {
      const mine = byUser.get(username) ?? new Set();
      byUser.set(username, mine);
      mine.add(wake);
      open++;
      unsubscribe ??= deps.signal.subscribe(() => void dispatch());
      const stop = () => {
        if (!mine.delete(wake)) return;
        if (mine.size === 0) byUser.delete(username);
        open--;
        if (open === 0) {
          unsubscribe?.();
          unsubscribe = undefined;
          seen = undefined;
        }
      };
      try {
        // The stream reads its first page after this: an entry it does not read wakes it.
        if (seen === undefined) {
          starting ??= deps.changes.latest().then(
            (n) => {
              seen = n;
              starting = undefined;
              if (again) void dispatch();
            },
            (err: unknown) => {
              starting = undefined;
              throw err;
            },
          );
          await starting;
        }
      } catch (err) {
        stop();
        throw err;
      }
      return stop;
    },
    stats: {
      get open() {
        return open;
      },
      get wakeups() {
        return wakeups;
      },
    },
  };
}
