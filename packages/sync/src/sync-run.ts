import { mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { act } from './act.js';
import { guardReason } from './guards.js';
import { MARKER, scanFolder } from './local-scan.js';
import { caseView, isCaseInsensitive } from './names.js';
import type { LocalView } from './local-view.js';
import { plan, sameAsBase, type Op } from './planner.js';
import { applyChanges, MissingServerFields, type UnhashedFile } from './remote-feed.js';
import { HttpError, RemoteApi } from './remote-api.js';
import { StateStore, stateFolder, type SyncState } from './state-store.js';
import { SyncTrash } from './sync-trash.js';
import { ancestorsOf } from './tree.js';

export interface SyncOptions {
  readonly localDir: string;
  /** `/<owner>/<path>` */
  readonly remoteRoot: string;
  readonly server: string;
  readonly key: string;
  readonly device: string;
  readonly stateRoot: string;
  readonly allowDeletes: boolean;
  readonly log: (line: string) => void;
  /** Continuous mode: the time between full stat passes of the local folder (default an hour). */
  readonly statPassMs?: number | undefined;
}

/** 0: both sides match; 1: an error; 3: a guard paused it (nothing was destroyed). */
export type SyncResult = { readonly code: 0 | 1 | 3; readonly message?: string };

/** Rounds of feed → scan → plan → act in one run; each round's steps can reveal more (a conflict's copy). */
const MAX_ROUNDS = 10;

/** `view`: continuous mode's local tree, kept between runs (without it, every round stats the whole folder). */
export async function syncOnce(o: SyncOptions, view?: LocalView): Promise<SyncResult> {
  const store = new StateStore(stateFolder(o.stateRoot, o.localDir));
  const loaded = store.load();
  const remoteRoot = `/${o.remoteRoot.split('/').filter(Boolean).join('/')}`.normalize('NFC');
  if (loaded && (loaded.server !== o.server || loaded.remoteRoot !== remoteRoot)) {
    return { code: 1, message: `${o.localDir} is synced with ${loaded.server} ${loaded.remoteRoot}, not ${o.server} ${remoteRoot} (use another --state-dir to change)` };
  }
  const state: SyncState = loaded ?? StateStore.fresh(o.localDir, o.server, remoteRoot);
  const synced = loaded !== undefined;
  const root = resolve(o.localDir);
  const api = new RemoteApi(o.server, o.key, remoteRoot, state.origin);
  const trash = new SyncTrash(join(store.dir, 'trash'));
  let caseInsensitive: boolean | undefined;
  // The last run ended with nothing to do and nothing was recorded since: the trees are what that plan saw.
  const quietBefore = synced && state.quiet === true && state.reconcile !== true;
  try {
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const rootExists = (await stat(root).catch(() => undefined))?.isDirectory() === true;
      const markerPresent = rootExists && (await stat(join(root, MARKER)).catch(() => undefined)) !== undefined;
      const early = guardReason({ ops: [], localFiles: 0, remoteFiles: 0, baseFiles: state.base.size, localDirs: 0, remoteDirs: 0, baseDirs: state.baseDirs.size, rootExists, markerPresent, synced, allowDeletes: o.allowDeletes });
      if (early && (!rootExists || !markerPresent)) return paused(store, state, early);
      if (!rootExists) await mkdir(root, { recursive: true });
      if (round === 0) {
        await api.ensureRoot();
        await trash.purge();
      }
      const remoteChanged = await refreshRemote(api, store, state, o.log);
      if (!markerPresent) await writeMarker(root, state);
      caseInsensitive ??= await isCaseInsensitive(root);
      const scanned = view ? await view.refresh(root, state.base) : await scanFolder(root, state.base);
      // Nothing changed on either side since a run whose plan was empty: the same plan, without making it
      // and without the server's tree (on a big folder, the most of a run with nothing to do).
      const still = round === 0 && quietBefore && !remoteChanged && !caseInsensitive && scanned.skipped.length === 0 && sameAsBase(scanned.files, scanned.dirs, state.base, state.baseDirs);
      // Another folder's marker that a tool put on the server (rclone, a copy) is never synced here.
      if (!still) state.remote.delete(MARKER);
      const seen = still ? undefined : caseInsensitive ? caseView(scanned, state.remote, state.remoteDirs, state.base, state.baseDirs) : { local: scanned, remote: state.remote, remoteDirs: state.remoteDirs, skipped: [] };
      const local = seen?.local ?? scanned;
      const skipped = [...local.skipped, ...(seen?.skipped ?? [])];
      const ops = !seen ? [] : plan({
        local: local.files,
        base: state.base,
        remote: seen.remote,
        localDirs: local.dirs,
        baseDirs: state.baseDirs,
        remoteDirs: seen.remoteDirs,
        noDeletes: state.reconcile === true || !synced,
        device: o.device,
        now: new Date(),
      });
      const reason = guardReason({
        ops,
        localFiles: local.files.size,
        // A quiet run's server tree is the base's paths (its plan was empty), and it deletes nothing.
        remoteFiles: seen?.remote.size ?? state.base.size,
        baseFiles: state.base.size,
        localDirs: local.dirs.size,
        remoteDirs: (seen?.remoteDirs ?? state.remoteDirs).size,
        baseDirs: state.baseDirs.size,
        rootExists: true,
        markerPresent: true,
        synced,
        allowDeletes: o.allowDeletes,
      });
      if (reason) return paused(store, state, reason);
      if (ops.length === 0) {
        const reconciled = state.reconcile === true;
        state.reconcile = undefined;
        // Both sides match but for names this disk cannot hold: the run says which, and fails.
        if (skipped.length > 0) return fail(store, state, skipped.join('; '));
        store.setError(state, null, true);
        if (store.stale || reconciled) store.save(state);
        return { code: 0 };
      }
      const failed = await act(ops, { root, api, store, state, trash, names: local.names }, o.log, describeOp);
      view?.touched(ops);
      if (failed.length > 0) return fail(store, state, `${failed.length} step(s) failed, the others were done: ${failed.join('; ')}`);
    }
    return fail(store, state, `both sides kept changing for ${MAX_ROUNDS} rounds; run again`);
  } catch (e) {
    return fail(store, state, describe(e));
  } finally {
    store.close();
  }
}

export function describeOp(op: Op): string {
  if (op.kind === 'move-remote-folder') return `${op.kind} ${op.from}/ → ${op.to}/ (${op.files.length} files)`;
  return 'path' in op ? `${op.kind} ${op.path}${op.kind === 'conflict' ? ` → ${op.copy}` : ''}` : `${op.kind} ${op.from} → ${op.to}`;
}

/**
 * Brings `state.remote` up to the server: from the change feed, or — with no cursor, an expired one
 * (410) or a new server epoch — from one listing, after which the plan deletes nothing until both
 * sides match again (a disappearance the base cannot explain is no delete).
 */
async function refreshRemote(api: RemoteApi, store: StateStore, state: SyncState, log: (line: string) => void): Promise<boolean> {
  const followed = state.cursor === undefined ? undefined : await followFeed(api, store, state, log);
  if (followed !== undefined) return followed;
  // The cursor is taken before the listing: what changes during it is in the feed after it.
  const now = await api.changes(undefined);
  if (now.epoch === undefined) throw new MissingServerFields('the server\'s /api/changes carries no epoch (it is older than this client)');
  const tree = await api.listTree();
  state.remote = tree.files;
  state.remoteDirs = tree.dirs;
  state.cursor = now.cursor;
  state.epoch = now.epoch;
  state.reconcile = true;
  state.quiet = undefined;
  store.save(state);
  return true;
}

/**
 * Applies the feed since the cursor: whether it brought any change; undefined when it cannot be
 * trusted (410, a new epoch) and the tree must be listed.
 */
async function followFeed(api: RemoteApi, store: StateStore, state: SyncState, log: (line: string) => void): Promise<boolean | undefined> {
  let changed = false;
  for (;;) {
    let page;
    try {
      page = await api.changes(state.cursor);
    } catch (e) {
      if (e instanceof HttpError && e.status === 410) {
        log('the change cursor expired: listing the server folder once, deleting nothing');
        return undefined;
      }
      throw e;
    }
    if (page.epoch === undefined) throw new MissingServerFields("the server's /api/changes carries no epoch (it is older than this client)");
    if (state.epoch !== undefined && page.epoch !== state.epoch) {
      log('the server is a new instance (its epoch changed): listing it once, deleting nothing');
      return undefined;
    }
    const unhashed: UnhashedFile[] = [];
    // An empty page leaves the server's tree unread (a quiet run never needs it).
    const arrived = new Set(page.changes.length === 0 ? [] : applyChanges(state.remote, page.changes, state.remoteRoot, state.origin, unhashed, state.remoteDirs));
    // A folder's listing takes in the folders below it (a chain made at once is one listing).
    for (const folder of [...arrived].filter((f) => !ancestorsOf(f).some((above) => arrived.has(above)))) {
      const tree = await api.listTree(folder);
      for (const [p, v] of tree.files) state.remote.set(p, v);
      for (const d of tree.dirs) state.remoteDirs.add(d);
    }
    for (const f of unhashed) {
      const v = await api.versionOf(f.path, f.id);
      if (v) state.remote.set(f.path, v);
    }
    if (page.changes.length > 0) {
      changed = true;
      state.quiet = undefined;
      state.cursor = page.cursor;
      state.epoch = page.epoch;
      store.save(state);
    } else if (page.cursor !== state.cursor) {
      // Kept, so that a folder with nothing new for weeks does not let its cursor expire.
      store.setCursor(state, page.cursor, page.epoch);
    }
    if (!page.more) return changed;
  }
}

async function writeMarker(root: string, state: SyncState): Promise<void> {
  const tmp = join(root, `${MARKER}.tmp`);
  await writeFile(tmp, `${JSON.stringify({ server: state.server, folder: state.remoteRoot })}\n`);
  await rename(tmp, join(root, MARKER));
}

export async function readMarker(root: string): Promise<{ server: string; folder: string } | undefined> {
  try {
    return JSON.parse(await readFile(join(root, MARKER), 'utf8')) as { server: string; folder: string };
  } catch {
    return undefined;
  }
}

function paused(store: StateStore, state: SyncState, reason: string): SyncResult {
  const message = `paused: ${reason}; nothing was deleted. Check the folder, then run once with --allow-deletes to go ahead`;
  if (store.load() !== undefined || state.base.size > 0) store.setError(state, message);
  return { code: 3, message };
}

function fail(store: StateStore, state: SyncState, message: string): SyncResult {
  try {
    store.setError(state, message);
  } catch {
    // the state folder itself failed: the message still reaches stderr
  }
  return { code: 1, message };
}

function describe(e: unknown): string {
  if (e instanceof Error && 'cause' in e && e.cause instanceof Error) return `${e.message}: ${e.cause.message}`;
  return e instanceof Error ? e.message : String(e);
}
