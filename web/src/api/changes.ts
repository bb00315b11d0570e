import { ApiError } from './errors';
import type { ApiClient } from './client';
import { withBase } from '../lib/base';

/** One entry of the change feed (GET /api/changes, docs/api.md "Changes"). */
export type Change = {
  readonly cursor: string;
  readonly type: 'created' | 'modified' | 'deleted' | 'moved';
  readonly path: string;
  readonly from?: string;
  readonly is_file: boolean;
};

/** How long to wait before connecting again, growing up to the last value while the server stays away. */
const RETRY_MS = [500, 1000, 2000, 5000, 10_000];
/** How long after the page shows the stream opens. */
const START_DELAY_MS = 2000;

/**
 * Follows GET /api/changes/stream for as long as the page wants it. The
 * browser's EventSource cannot send the Bearer token, so this reads the
 * event stream with fetch and does EventSource's part itself: it keeps the
 * last event id and reconnects with Last-Event-ID (after a lost network, a
 * laptop's sleep, a server restart or the stream's own end), so nothing is
 * missed or seen twice. `onReset` says changes may have been missed (the
 * first connection, or an expired cursor): reload whatever is shown.
 * `onReachable` says whether the server answers: false once a try to
 * connect again fails (a stream that drops and reconnects at once is no
 * news), true when a connection is made again.
 */
export function watchChanges(client: ApiClient, onChange: (c: Change) => void, onReset: () => void, onReachable: (up: boolean) => void = () => undefined): () => void {
  const ctrl = new AbortController();
  let last: string | undefined;
  let failures = 0;
  /** Whether the last try got a connection (a failure after that is a dropped stream, before it an unreachable server). */
  let connected = false;
  let wake: (() => void) | undefined;
  // Back online: try at once instead of waiting out the pause.
  const online = () => wake?.();
  window.addEventListener('online', online);

  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wake = () => (clearTimeout(timer), resolve());
    });

  async function readStream(): Promise<void> {
    const res = await client.request(withBase('/api/changes/stream'), { headers: { accept: 'text/event-stream', ...(last ? { 'last-event-id': last } : {}) }, signal: ctrl.signal });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    let id: string | undefined;
    let data = '';
    failures = 0;
    connected = true;
    onReachable(true);
    // The first connection starts at "now", after the shown listing was read: reload once, so a change in between shows.
    if (last === undefined) onReset();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let nl: number;
      while ((nl = buffer.search(/\r\n|\r|\n/)) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + (buffer.startsWith('\r\n', nl) ? 2 : 1));
        if (line === '') {
          // An event ends: an id alone moves the cursor on; data makes a change.
          if (id !== undefined) last = id;
          if (data !== '') onChange(JSON.parse(data) as Change);
          id = undefined;
          data = '';
        } else if (line.startsWith('id:')) {
          id = line.slice(3).trim();
        } else if (line.startsWith('data:')) {
          data += line.slice(5).trimStart();
        }
      }
    }
  }

  void (async () => {
    // The page's own first requests go first, and a page that just loaded reaches "network idle" (tools
    // and tests wait for it; a stream is a request that never ends). What changes meanwhile: the reload below.
    await pause(START_DELAY_MS);
    while (!ctrl.signal.aborted) {
      connected = false;
      try {
        await readStream();
      } catch (e) {
        if (ctrl.signal.aborted) return;
        // No answer, or a proxy's 5xx in place of one: the server is out of reach.
        if (!connected && (!(e instanceof ApiError) || e.status === 0 || e.status >= 500)) onReachable(false);
        if (e instanceof ApiError && e.code === 'cursor_expired') {
          last = undefined;
          onReset();
        } else if (e instanceof ApiError && (e.status === 401 || e.code === 'changes_disabled')) {
          // Signed out, or a server run with --changes off: no stream to follow, the folder shows as loaded.
          return;
        }
        failures++;
      }
      if (ctrl.signal.aborted) return;
      // Coming back after a gap: what happened meanwhile arrives first, by Last-Event-ID.
      await pause(RETRY_MS[Math.min(failures, RETRY_MS.length - 1)] as number);
    }
  })();

  return () => {
    ctrl.abort();
    wake?.();
    window.removeEventListener('online', online);
  };
}

/** One entry of GET /api/changes/recent: a feed entry, with when it was recorded (docs/api.md). */
export type RecentChange = Change & { readonly size?: number; readonly at: string };

/** The newest changes the signed-in user may see, newest first; with `path` (`/<owner>/<path>`), at or below it. */
export async function recentChanges(client: ApiClient, opts: { path?: string; limit?: number; signal?: AbortSignal } = {}): Promise<RecentChange[]> {
  const q = new URLSearchParams();
  if (opts.path) q.set('path', opts.path);
  if (opts.limit) q.set('limit', String(opts.limit));
  return (await client.json<{ changes: RecentChange[] }>(withBase(`/api/changes/recent?${q}`), { signal: opts.signal })).changes;
}
