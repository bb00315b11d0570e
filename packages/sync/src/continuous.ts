import { watch, type FSWatcher } from 'node:fs';
import { resolve } from 'node:path';
import { isTempName, MARKER } from './local-scan.js';
import { LocalView } from './local-view.js';
import { StateStore, stateFolder } from './state-store.js';
import { syncOnce, type SyncOptions } from './sync-run.js';

/** Quiet time after a change before a round starts, so a burst of writes is one round. */
const SETTLE_MS = 300;
/** A full stat pass of the folder this often, for what a watcher can miss (`statPassMs` changes it). */
export const STAT_PASS_MS = 3_600_000;
/** After an error or a pause, the next try. */
const RETRY_MS = 30_000;

/**
 * Keeps running: a round after each local change (fs.watch, recursive: inotify on Linux, FSEvents on
 * macOS, no native module to install) and each remote one (the change stream, which delivers a
 * change within a second). A round stats only the paths the watcher named (and those its own steps
 * wrote); a full stat pass runs at the start and hourly, for what a watcher misses, and every round
 * while no watcher works. The watcher stays open across rounds,
 * so a change made while a round runs starts the next one; the stream restarts after each round from
 * the cursor the round stored, so nothing after it is missed.
 */
export async function syncForever(o: SyncOptions, signal: AbortSignal): Promise<number> {
  const changed = { since: false };
  let wake: (() => void) | undefined;
  const fire = (): void => {
    changed.since = true;
    wake?.();
  };
  const statPassMs = o.statPassMs ?? STAT_PASS_MS;
  const view = new LocalView(statPassMs, o.log);
  let watcher: FSWatcher | undefined;
  try {
    while (!signal.aborted) {
      watcher ??= watchFolder(o.localDir, view, fire);
      if (!watcher) view.invalidate();
      changed.since = false;
      const r = await syncOnce(o, view);
      if (r.message) o.log(r.message);
      if (!changed.since) await quiet(o, signal, r.code === 0 ? statPassMs : Math.min(RETRY_MS, statPassMs), (w) => (wake = w), fire);
      wake = undefined;
      // A burst of writes is one round: wait until it settles.
      await new Promise((r) => setTimeout(r, SETTLE_MS));
    }
  } finally {
    watcher?.close();
  }
  return 0;
}

function watchFolder(dir: string, view: LocalView, fire: () => void): FSWatcher | undefined {
  try {
    const w = watch(resolve(dir), { recursive: true }, (_event, name) => {
      const path = name?.toString().split(/[\\/]/).join('/');
      if (path === undefined) {
        view.invalidate(); // an event without a name says only that something changed
        return fire();
      }
      const last = path.slice(path.lastIndexOf('/') + 1);
      if (last === MARKER || last === `${MARKER}.tmp` || isTempName(last)) return;
      view.changed(path);
      fire();
    });
    w.on('error', () => view.invalidate()); // the folder went away: the next round reports it
    return w;
  } catch {
    return undefined; // no folder yet: the round reports it, and the next loop tries again
  }
}

/** Until a change (local or remote), the timeout, or the stop signal. */
function quiet(o: SyncOptions, outer: AbortSignal, timeoutMs: number, setWake: (w: () => void) => void, fire: () => void): Promise<void> {
  return new Promise<void>((done) => {
    if (outer.aborted) return done();
    const stop = new AbortController();
    const finish = (): void => {
      clearTimeout(timer);
      outer.removeEventListener('abort', finish);
      stop.abort();
      done();
    };
    const timer = setTimeout(finish, timeoutMs);
    outer.addEventListener('abort', finish);
    setWake(finish);
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
