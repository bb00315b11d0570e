import { AppError } from '../domain/errors.js';
import type { Principal } from '../domain/principal.js';
import type { ChangeService, ChangesPage, Change } from './changes.js';
import type { ChangeWaker } from './change-waker.js';
import type { StreamSlots } from './stream-slots.js';

/** A heartbeat this often keeps proxies and clients from taking a quiet stream for a dead one; the credential is checked again with each. */
export const HEARTBEAT_MS = 15_000;
/**
 * A stream ends after this long and the client reconnects (EventSource does so by itself, with
 * Last-Event-ID); the new request is authenticated again.
 */
export const STREAM_LIFETIME_MS = 10 * 60_000;
/** Streams one user may have open at once, on all nodes together: tabs and devices, well within it. */
export const STREAMS_PER_USER = 20;
/** How long a stream's place is held without renewal: longer than a stream lives. */
export const STREAM_SLOT_MS = STREAM_LIFETIME_MS + 60_000;
/** Entries read per page while a stream catches up. */
const STREAM_PAGE = 500;

/** What a stream sends, in the order it happens; the front end turns it into its protocol (server-sent events). */
export type StreamSink = {
  /** The stream starts; `id` is where it starts. */
  open(id: string): void;
  change(c: Change): void;
  /** `id`: where a reconnect resumes now (freshly sealed each time, so it says nothing of what passed). */
  heartbeat(id: string): void;
  end(): void;
};

export type ChangeStream = {
  start(sink: StreamSink): void;
  /** The client went away. */
  stop(): void;
};

export type ChangeStreams = ReturnType<typeof createChangeStreams>;

/**
 * GET /api/changes/stream without the HTTP (docs/api.md, docs/security.md
 * "The change feed"): one user's entries as they are journaled, from a
 * cursor. A stream holds one of the user's places (stream-slots.ts) while it
 * is open; it is woken only by writes it may be shown (change-waker.ts); it
 * asks whether its credential still holds before it sends entries and with
 * each heartbeat, and ends when it does not.
 */
export function createChangeStreams(deps: {
  changes: ChangeService;
  waker: ChangeWaker;
  slots: StreamSlots;
  onError: (err: unknown) => void;
  heartbeatMs?: number;
  lifetimeMs?: number;
}) {
  const { changes } = deps;
  const live = new Set<() => Promise<void>>();
  return {
    /**
     * Opens a stream after `from` (a cursor or "now"). Anything that refuses it (a bad or expired
     * cursor, a server without the journal, no place left) is thrown here, before anything is sent.
     * `stillAuthorized` asks again whether the request's credential passes.
     */
    async open(principal: Principal, from: string, stillAuthorized: () => Promise<boolean>): Promise<ChangeStream> {
      const user = changes.reader(principal);
      const slot = await deps.slots.take(user.userId);
      if (!slot) throw new AppError('too_many_streams', `You have ${STREAMS_PER_USER} change streams open (browser tabs, devices); close one first.`);
      let woken = false;
      let wake = () => void (woken = true);
      let unwatch: (() => void) | undefined;
      let first: ChangesPage;
      try {
        unwatch = await deps.waker.watch(user.username, () => wake());
        first = await changes.list(user, { cursor: from, limit: STREAM_PAGE });
      } catch (err) {
        unwatch?.();
        await slot.release().catch(deps.onError);
        throw err;
      }
      const stopWatching = unwatch;
      const startId = from === 'now' ? first.cursor : changes.reseal(user, from);
      let cursor = first.cursor;
      let sink: StreamSink | undefined;
      let closed = false;
      let released: Promise<void> = Promise.resolve();
      let heartbeat: NodeJS.Timeout | undefined;
      let lifetime: NodeJS.Timeout | undefined;
      const finish = (): Promise<void> => {
        if (closed) return released;
        closed = true;
        live.delete(finish);
        stopWatching();
        clearInterval(heartbeat);
        clearTimeout(lifetime);
        sink?.end();
        released = slot.release().catch(deps.onError);
        return released;
      };
      live.add(finish);
      let running = false;
      let again = first.more;
      const pump = async () => {
        if (running) {
          again = true;
          return;
        }
        running = true;
        try {
          do {
            again = false;
            const page = await changes.list(user, { cursor, limit: STREAM_PAGE });
            // Read first, then asked: nothing is sent that was read after the credential went.
            if (page.changes.length > 0 && !(await stillAuthorized())) return void finish();
            if (closed) return;
            for (const c of page.changes) sink?.change(c);
            cursor = page.cursor;
            if (page.more) again = true;
          } while (again && !closed);
        } catch (err) {
          // An expired cursor (retention caught up with a stalled client) or a store outage: the client reconnects.
          deps.onError(err);
          void finish();
        } finally {
          running = false;
        }
      };
      const beat = async () => {
        try {
          if (!(await stillAuthorized())) return void finish();
          if (!closed) sink?.heartbeat(changes.reseal(user, cursor));
        } catch (err) {
          deps.onError(err);
          void finish();
        }
      };
      return {
        start(s) {
          if (closed) return s.end();
          sink = s;
          s.open(startId);
          for (const c of first.changes) s.change(c);
          wake = () => void pump();
          heartbeat = setInterval(() => void beat(), deps.heartbeatMs ?? HEARTBEAT_MS);
          lifetime = setTimeout(() => void finish(), deps.lifetimeMs ?? STREAM_LIFETIME_MS);
          if (again || woken) void pump();
        },
        stop: () => void finish(),
      };
    },

    /** Ends every open stream (the server is closing) and gives their places back. */
    async closeAll(): Promise<void> {
      await Promise.all([...live].map((finish) => finish()));
    },
  };
}
