import { createHash, randomBytes } from 'node:crypto';
import { closeSync, fdatasyncSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import type { BaseRecord, FileVersion } from './tree.js';

/** What a sync folder remembers between runs, outside the folder itself. */
export interface SyncState {
  localDir: string;
  server: string;
  remoteRoot: string;
  /** Sent as File-Cloud-Origin: the feed's echoes of this client's own writes carry it. */
  origin: string;
  cursor?: string | undefined;
  epoch?: string | undefined;
  base: Map<string, BaseRecord>;
  /** The server's tree as of `cursor`. */
  remote: Map<string, FileVersion>;
  /** The folders of the last synced state, and the server's as of `cursor`. */
  baseDirs: Set<string>;
  remoteDirs: Set<string>;
  lastError?: string | undefined;
  lastSync?: string | undefined;
  /** A listing replaced the feed: nothing is deleted until both sides match again. */
  reconcile?: boolean | undefined;
}

type JournalLine = { b: [string, BaseRecord | null] } | { r: [string, FileVersion | null] } | { bd: [string, boolean] } | { rd: [string, boolean] } | { c: string; e?: string | undefined } | { err: string | null; at?: string };

/** `--state-dir`, else $XDG_STATE_HOME/file-cloud, else ~/.local/state/file-cloud. */
export function stateRoot(flag: string | undefined, env: NodeJS.ProcessEnv): string {
  if (flag) return resolve(flag);
  if (env.XDG_STATE_HOME) return join(env.XDG_STATE_HOME, 'file-cloud');
  return join(homedir(), '.local', 'state', 'file-cloud');
}

/** One folder of state per local folder, named by a hash of its absolute path. */
export function stateFolder(root: string, localDir: string): string {
  return join(root, createHash('sha256').update(resolve(localDir)).digest('hex').slice(0, 16));
}

/**
 * The state of one sync folder: a snapshot (state.json, replaced atomically) and a journal of the
 * steps confirmed since (one fsynced line each). The base of a path changes only through a journal
 * line written after its step is confirmed, so a crash at any moment leaves a state that is true.
 */
export class StateStore {
  private fd: number | undefined;
  constructor(readonly dir: string) {}

  static fresh(localDir: string, server: string, remoteRoot: string): SyncState {
    return { localDir: resolve(localDir), server, remoteRoot, origin: randomBytes(12).toString('base64url'), base: new Map(), remote: new Map(), baseDirs: new Set(), remoteDirs: new Set() };
  }

  /** undefined: this folder has never been synced (or its state is lost). */
  load(): SyncState | undefined {
    let snapshot: string;
    try {
      snapshot = readFileSync(join(this.dir, 'state.json'), 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw e;
    }
    // A state written before folders were tracked has none: every folder then counts as new (made, never removed).
    const raw = JSON.parse(snapshot) as Omit<SyncState, 'base' | 'remote' | 'baseDirs' | 'remoteDirs'> & { base: Record<string, BaseRecord>; remote: Record<string, FileVersion>; baseDirs?: string[]; remoteDirs?: string[] };
    const state: SyncState = {
      ...raw,
      base: new Map(Object.entries(raw.base)),
      remote: new Map(Object.entries(raw.remote)),
      baseDirs: new Set(raw.baseDirs),
      remoteDirs: new Set(raw.remoteDirs),
    };
    let journal = '';
    try {
      journal = readFileSync(join(this.dir, 'journal'), 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
    for (const line of journal.split('\n')) {
      if (!line) continue;
      let entry: JournalLine;
      try {
        entry = JSON.parse(line) as JournalLine;
      } catch {
        break; // a line cut by a crash: the step it recorded is redone, which is safe
      }
      apply(state, entry);
    }
    return state;
  }

  /** Writes the whole state atomically and empties the journal. */
  save(state: SyncState): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const body = JSON.stringify({ ...state, base: Object.fromEntries(state.base), remote: Object.fromEntries(state.remote), baseDirs: [...state.baseDirs], remoteDirs: [...state.remoteDirs] });
    const tmp = join(this.dir, `state.json.${process.pid}.tmp`);
    const fd = openSync(tmp, 'w', 0o600);
    try {
      writeSync(fd, body);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, join(this.dir, 'state.json'));
    this.closeJournal();
    const j = openSync(join(this.dir, 'journal'), 'w', 0o600);
    fsyncSync(j);
    closeSync(j);
  }

  setBase(state: SyncState, path: string, rec: BaseRecord | null): void {
    this.record(state, { b: [path, rec] });
  }
  setRemote(state: SyncState, path: string, v: FileVersion | null): void {
    this.record(state, { r: [path, v] });
  }
  setCursor(state: SyncState, cursor: string, epoch: string | undefined): void {
    this.record(state, { c: cursor, e: epoch });
  }
  setError(state: SyncState, err: string | null): void {
    this.record(state, { err, at: new Date().toISOString() });
  }

  /** Several base and remote changes as one confirmed step (one fsync). */
  setMany(
    state: SyncState,
    changes: { base?: [string, BaseRecord | null][]; remote?: [string, FileVersion | null][]; baseDirs?: [string, boolean][]; remoteDirs?: [string, boolean][] },
  ): void {
    this.record(
      state,
      ...(changes.remote ?? []).map((r): JournalLine => ({ r })),
      ...(changes.base ?? []).map((b): JournalLine => ({ b })),
      ...(changes.remoteDirs ?? []).map((rd): JournalLine => ({ rd })),
      ...(changes.baseDirs ?? []).map((bd): JournalLine => ({ bd })),
    );
  }

  close(): void {
    this.closeJournal();
  }

  private record(state: SyncState, ...lines: JournalLine[]): void {
    for (const line of lines) apply(state, line);
    if (this.fd === undefined) {
      mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      this.fd = openSync(join(this.dir, 'journal'), 'a', 0o600);
    }
    writeSync(this.fd, lines.map((line) => `${JSON.stringify(line)}\n`).join(''));
    fdatasyncSync(this.fd);
  }

  private closeJournal(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}

function apply(state: SyncState, line: JournalLine): void {
  if ('b' in line) {
    const [p, rec] = line.b;
    if (rec) state.base.set(p, rec);
    else state.base.delete(p);
  } else if ('r' in line) {
    const [p, v] = line.r;
    if (v) state.remote.set(p, v);
    else state.remote.delete(p);
  } else if ('bd' in line || 'rd' in line) {
    const [p, present] = 'bd' in line ? line.bd : line.rd;
    const dirs = 'bd' in line ? state.baseDirs : state.remoteDirs;
    if (present) dirs.add(p);
    else dirs.delete(p);
  } else if ('c' in line) {
    state.cursor = line.c;
    state.epoch = line.e;
  } else {
    state.lastError = line.err ?? undefined;
    if (line.err === null) state.lastSync = line.at;
  }
}
