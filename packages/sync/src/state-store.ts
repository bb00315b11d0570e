import { createHash, randomBytes } from 'node:crypto';
import { closeSync, fdatasyncSync, fsyncSync, mkdirSync, openSync, readSync, renameSync, writeSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
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
  /** The last run ended with nothing to do, and no tree has changed since (the next may skip the planner). */
  quiet?: boolean | undefined;
}

/** The snapshot's header says so: a header line, then a line per path (before it: one JSON object). */
const SNAPSHOT_FORMAT = 2;
/** Characters written at once while the snapshot is written. */
const WRITE_CHUNK = 1 << 20;

type Header = Omit<SyncState, 'base' | 'remote' | 'baseDirs' | 'remoteDirs'> & {
  format?: number;
  /** Format 1: the trees in the one object (folders absent in states written before they were tracked). */
  base?: Record<string, BaseRecord>;
  remote?: Record<string, FileVersion>;
  baseDirs?: string[];
  remoteDirs?: string[];
};

function fromHeader(h: Header): SyncState {
  const { format: _format, base, remote, baseDirs, remoteDirs, ...rest } = h;
  return { ...rest, base: new Map(Object.entries(base ?? {})), remote: new Map(Object.entries(remote ?? {})), baseDirs: new Set(baseDirs), remoteDirs: new Set(remoteDirs) };
}

/** The lines of a file, read 1 MiB at a time (UTF-8 split across reads is joined). Throws ENOENT at once. */
function linesOf(path: string): Iterable<string> {
  const fd = openSync(path, 'r');
  return (function* () {
    try {
      const buf = Buffer.alloc(1 << 20);
      const decoder = new StringDecoder('utf8');
      let rest = '';
      for (let n = readSync(fd, buf); n > 0; n = readSync(fd, buf)) {
        const parts = (rest + decoder.write(buf.subarray(0, n))).split('\n');
        rest = parts.pop() ?? '';
        yield* parts;
      }
      yield rest + decoder.end();
    } finally {
      closeSync(fd);
    }
  })();
}

/** A journal longer than this is folded into the snapshot at the end of a run. */
const JOURNAL_LINES_MAX = 1000;

type JournalLine = { b: [string, BaseRecord | null] } | { r: [string, FileVersion | null] } | { bd: [string, boolean] } | { rd: [string, boolean] } | { c: string; e?: string | undefined } | { err: string | null; at?: string; q?: boolean };

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
  /** Journal lines since the snapshot: those that change a tree (not the cursor, not the last error), and all of them. */
  private steps = 0;
  private lines = 0;
  constructor(readonly dir: string) {}

  /**
   * The snapshot is behind the journal by a step, or the journal has grown long (a last-sync line
   * per run): a run that changed nothing rewrites no snapshot (on a big folder, the most of its time and memory).
   */
  get stale(): boolean {
    return this.steps > 0 || this.lines > JOURNAL_LINES_MAX;
  }

  static fresh(localDir: string, server: string, remoteRoot: string): SyncState {
    return { localDir: resolve(localDir), server, remoteRoot, origin: randomBytes(12).toString('base64url'), base: new Map(), remote: new Map(), baseDirs: new Set(), remoteDirs: new Set() };
  }

  /** undefined: this folder has never been synced (or its state is lost). */
  load(): SyncState | undefined {
    let state: SyncState | undefined;
    let lines: Iterable<string>;
    try {
      lines = linesOf(join(this.dir, 'state.json'));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw e;
    }
    let quiet: boolean | undefined;
    for (const line of lines) {
      if (!line) continue;
      if (state) apply(state, JSON.parse(line) as JournalLine);
      else quiet = (state = fromHeader(JSON.parse(line) as Header)).quiet;
    }
    if (!state) return undefined;
    // The snapshot's own lines are its trees, not changes since: its header says whether it was quiet.
    state.quiet = quiet;
    shareStrings(state);
    let journal: Iterable<string> = [];
    try {
      journal = linesOf(join(this.dir, 'journal'));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
    for (const line of journal) {
      if (!line) continue;
      let entry: JournalLine;
      try {
        entry = JSON.parse(line) as JournalLine;
      } catch {
        break; // a line cut by a crash: the step it recorded is redone, which is safe
      }
      apply(state, entry);
      this.count(entry);
    }
    return state;
  }

  /**
   * Writes the whole state atomically and empties the journal. The snapshot is a header line and then
   * one line per path, as the journal's, written and read a piece at a time: a folder of 100,000
   * files never becomes one 40 MB string (nor its parse one heap of garbage).
   */
  save(state: SyncState): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const { base, remote, baseDirs, remoteDirs, ...header } = state;
    const tmp = join(this.dir, `state.json.${process.pid}.tmp`);
    const fd = openSync(tmp, 'w', 0o600);
    try {
      let chunk = `${JSON.stringify({ ...header, format: SNAPSHOT_FORMAT })}\n`;
      const put = (line: JournalLine): void => {
        chunk += `${JSON.stringify(line)}\n`;
        if (chunk.length < WRITE_CHUNK) return;
        writeSync(fd, chunk);
        chunk = '';
      };
      for (const b of base) put({ b });
      for (const r of remote) put({ r });
      for (const d of baseDirs) put({ bd: [d, true] });
      for (const d of remoteDirs) put({ rd: [d, true] });
      writeSync(fd, chunk);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, join(this.dir, 'state.json'));
    this.steps = 0;
    this.lines = 0;
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
  /** `quiet`: the run ended with an empty plan (err null). */
  setError(state: SyncState, err: string | null, quiet = false): void {
    this.record(state, { err, at: new Date().toISOString(), ...(quiet ? { q: true } : {}) });
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
    for (const line of lines) {
      apply(state, line);
      this.count(line);
    }
    if (this.fd === undefined) {
      mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      this.fd = openSync(join(this.dir, 'journal'), 'a', 0o600);
    }
    writeSync(this.fd, lines.map((line) => `${JSON.stringify(line)}\n`).join(''));
    fdatasyncSync(this.fd);
  }

  private count(line: JournalLine): void {
    this.lines++;
    if ('b' in line || 'r' in line || 'bd' in line || 'rd' in line) this.steps++;
  }

  private closeJournal(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}

/**
 * A synced path's hash and id are the same in the base and the server tree: one string for both
 * (a big folder's state is mostly these; parsed, each would be held twice).
 */
function shareStrings(state: SyncState): void {
  for (const [p, r] of state.remote) {
    const b = state.base.get(p) as { sha256: string; id?: string | undefined } | undefined;
    if (!b || b.sha256 !== r.sha256) continue;
    const shared = r as { sha256: string; id?: string | undefined };
    shared.sha256 = b.sha256;
    if (b.id !== undefined && b.id === r.id) shared.id = b.id;
  }
}

function apply(state: SyncState, line: JournalLine): void {
  if ('b' in line || 'r' in line || 'bd' in line || 'rd' in line) state.quiet = undefined;
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
    state.quiet = line.q === true || undefined;
    if (line.err === null) state.lastSync = line.at;
  }
}
