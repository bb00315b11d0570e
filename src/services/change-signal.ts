import type { Redis } from 'ioredis';

/**
 * A wake-up for change streams: "the journal may have grown, read it". It
 * carries no change itself; the journal is the truth and every stream reads
 * it from its own cursor, so a lost or doubled wake-up loses or doubles
 * nothing. Sources: this process's own writes (at once), other nodes' over
 * Redis pub/sub (when --redis is given), and a poll of the journal's latest
 * cursor while any stream listens — which alone bounds the delay for writes
 * of other workers and nodes without Redis (SQLite workers, CLI `index`).
 */
export type ChangeSignal = {
  /** This process appended to the journal. */
  notify(): void;
  /** `fn` runs on every wake-up until the returned function is called. */
  subscribe(fn: () => void): () => void;
  close(): Promise<void>;
};

/** The poll's period: the bound on a change's delay to a stream when no faster wake-up reaches it. */
export const CHANGE_POLL_MS = 500;

export function createChangeSignal(deps: { latest: () => Promise<number>; redis?: Redis | undefined; channel?: string; onError?: (e: unknown) => void }): ChangeSignal {
  const listeners = new Set<() => void>();
  const onError = deps.onError ?? (() => undefined);
  const channel = deps.channel ?? 'fc:changes';
  const fire = () => {
    for (const l of listeners) l();
  };
  let seen = -1;
  let polling: Promise<void> | undefined;
  const timer = setInterval(() => {
    if (listeners.size === 0 || polling) return;
    polling = deps
      .latest()
      .then((n) => {
        if (n !== seen) {
          seen = n;
          fire();
        }
      }, onError)
      .finally(() => (polling = undefined));
  }, CHANGE_POLL_MS);
  timer.unref();
  // Subscribing puts a Redis connection in a mode that takes no other command: its own connection.
  const sub = deps.redis?.duplicate();
  if (sub) {
    sub.on('error', onError);
    sub.on('message', () => fire());
    sub.subscribe(channel).catch(onError);
  }
  // A wake-up carries nothing, so writes that come while one is being published share the next:
  // at most one PUBLISH in flight and one waiting, however many writes a second.
  let publishing = false;
  let again = false;
  const publish = (redis: Redis): void => {
    if (publishing) {
      again = true;
      return;
    }
    publishing = true;
    redis
      .publish(channel, '1')
      .catch(onError)
      .finally(() => {
        publishing = false;
        if (again) {
          again = false;
          publish(redis);
        }
      });
  };
  return {
    notify() {
      fire();
      if (deps.redis) publish(deps.redis);
    },
    subscribe(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
    async close() {
      clearInterval(timer);
      await polling;
      sub?.disconnect();
    },
  };
}
