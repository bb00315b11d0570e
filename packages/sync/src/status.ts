import { resolve } from 'node:path';
import { scanFolder } from './local-scan.js';
import { plan } from './planner.js';
import { RemoteApi } from './remote-api.js';
import { StateStore, stateFolder } from './state-store.js';
import type { LocalFile } from './tree.js';

const CONFLICT = / \(conflict [^)]* \d{4}-\d{2}-\d{2} \d{6}(?: \d+)?\)(?:\.[^./]*)?$/;

/** What `sync status` prints: the cursor, the work a run would do now (from what is known), conflicts, the last error. */
export async function syncStatus(localDir: string, stateRoot: string): Promise<{ code: number; text: string }> {
  const state = new StateStore(stateFolder(stateRoot, localDir)).load();
  if (!state) return { code: 1, text: `${resolve(localDir)} has not been synced (no state in ${stateRoot})` };
  const scan = await scanFolder(state.localDir, state.base).catch(() => ({ files: new Map<string, LocalFile>(), dirs: new Set<string>() }));
  const local = scan.files;
  // Folder steps count too (an empty folder to make or remove); the base's own bookkeeping does not.
  const bookkeeping = new Set(['record', 'forget', 'record-folder', 'forget-folder']);
  const pending = plan({
    local,
    base: state.base,
    remote: state.remote,
    localDirs: scan.dirs,
    baseDirs: state.baseDirs,
    remoteDirs: state.remoteDirs,
    noDeletes: state.reconcile === true,
    device: 'status',
    now: new Date(),
  }).filter((op) => !bookkeeping.has(op.kind));
  const conflicts = [...local.keys()].filter((p) => CONFLICT.test(p));
  const lines = [
    `folder:    ${state.localDir}`,
    `server:    ${state.server} ${state.remoteRoot}`,
    `cursor:    ${state.cursor ?? '(none)'}`,
    `files:     ${state.base.size} synced`,
    `pending:   ${pending.length} (as of the last feed read)`,
    `conflicts: ${conflicts.length}${conflicts.map((c) => `\n  ${c}`).join('')}`,
    `last sync: ${state.lastSync ?? '(never)'}`,
    `last error: ${state.lastError ?? '(none)'}`,
  ];
  return { code: 0, text: lines.join('\n') };
}

/**
 * `sync verify`: the server holds, byte for byte, every file of the last synced state — by the
 * SHA-256 it computed from the bytes as they arrived (a file it has not hashed is downloaded and
 * hashed here).
 */
export async function syncVerify(localDir: string, stateRoot: string, key: string): Promise<{ code: number; text: string }> {
  const state = new StateStore(stateFolder(stateRoot, localDir)).load();
  if (!state) return { code: 1, text: `${resolve(localDir)} has not been synced (no state in ${stateRoot})` };
  const server = await new RemoteApi(state.server, key, state.remoteRoot, state.origin).list();
  const missing: string[] = [];
  for (const [path, b] of [...state.base].sort(([a], [c]) => (a < c ? -1 : 1))) {
    const now = server.get(path);
    if (!now) missing.push(`missing: ${path}`);
    else if (now.sha256 !== b.sha256) missing.push(`differs: ${path}`);
  }
  if (missing.length === 0) return { code: 0, text: `the server holds all ${state.base.size} files of the last synced state` };
  return { code: 1, text: missing.join('\n') };
}
