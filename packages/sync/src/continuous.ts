import { watch } from 'node:fs';
import { resolve } from 'node:path';
import { isTempName, MARKER } from './local-scan.js';
import { StateStore, stateFolder } from './state-store.js';
import { syncOnce, type SyncOptions } from './sync-run.js';

/** Quiet time after a change before a round starts, so a burst of writes is one round. */
const SETTLE_MS = 300;
/** A full stat pass of the folder at least this often, for what a watcher can miss. */
const RESCAN_MS = 3_600_000;
/** After an error or a pause, the next try. */
const RETRY_MS = 30_000;

/**
 * Keeps running: a round after each local change (fs.watch, recursive: inotify on Linux, FSEvents on
 * macOS, no native module to install) and each remote one (the change stream, which delivers a
 * change within a second), plus an hourly rescan for what a watcher misses. A round always stats the
 * whole folder, so a missed event costs time, not correctness.
 */
export async function syncForever(o: SyncOptions, signal: AbortSignal): Promise<number> {
  while (!signal.aborted) {
    const r = await syncOnce(o);
    if (r.message) o.log(r.message);
    await nextChange(o, signal, r.code === 0 ? RESCAN_MS : RETRY_MS);
  }
  return 0;
}

function nextChange(o: SyncOptions, outer: AbortSignal, timeoutMs: number): Promise<void> {
  return new Promise<void>((done) => {
    if (outer.aborted) return done(); // stopped during the round: no wait
    const stop = new AbortController();
    let settle: NodeJS.Timeout | undefined;
    const fire = (): void => {
      clearTimeout(settle);
      settle = setTimeout(finish, SETTLE_MS);
    };
    const timer = setTimeout(finish, timeoutMs);
    function finish(): void {
      clearTimeout(timer);
      clearTimeout(settle);
      outer.removeEventListener('abort', finish);
      stop.abort();
      done();
    }
    outer.addEventListener('abort', finish);
    try {
      watch(resolve(o.localDir), { recursive: true, signal: stop.signal }, (_event, name) => {
        const last = name?.toString().split(/[\\/]/).pop() ?? '';
        if (last !== MARKER && last !== `${MARKER}.tmp` && !isTempName(last)) fire();
      }).on('error', fire);
    } catch {
      fire(); // the folder is gone: the round reports it
    }
    void remoteEvents(o, stop.signal, fire);
  });
}

/** Calls `fire` for each change on the server since the stored cursor that this client did not write. */
async function remoteEvents(o: SyncOptions, signal: AbortSignal, fire: () => void): Promise<void> {
  const state = new StateStore(stateFolder(o.stateRoot, o.localDir)).load();
  if (!state?.cursor) return;
  const url = `${o.server.replace(/\/+$/, '')}/api/changes/stream?cursor=${encodeURIComponent(state.cursor)}`;
  try {
    const res = await fetch(url, { headers: { authorization: `Bearer ${o.key}` }, signal });
    if (!res.ok || !res.body) return setTimeout(fire, RETRY_MS).unref() && undefined;
    const decoder = new TextDecoder();
    let buffered = '';
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buffered += decoder.decode(chunk, { stream: true });
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) {
        if (!line.startsWith('data:')) continue;
        const entry = JSON.parse(line.slice(5)) as { origin?: string; path?: string };
        if (entry.origin !== state.origin && entry.path?.startsWith(state.remoteRoot)) fire();
      }
    }
    fire(); // the stream ended (it does every 10 minutes): a round, then a new stream
  } catch {
    if (!signal.aborted) fire();
  }
}
