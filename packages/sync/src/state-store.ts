import { createHash, randomBytes } from 'node:crypto';
import { closeSync, fdatasyncSync, fsyncSync, mkdirSync, openSync, readSync, renameSync, writeSync } from 'node:fs';
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

/**
 * The lines of a file, read 1 MiB at a time and split as bytes (a line split across reads is joined).
 * A line `skip` picks out by its first bytes is never decoded. Throws ENOENT at once.
 */
function linesOf(path: string, skip?: (buf: Buffer, start: number) => boolean): Iterable<string> {
  const fd = openSync(path, 'r');
  return (function* () {
    try {
      let buf = Buffer.alloc(READ_CHUNK);
      let filled = 0;
      for (;;) {
        const n = readSync(fd, buf, filled, buf.length - filled, null);
        const end = filled + n;
        let start = 0;
        for (let nl = buf.indexOf(10, start); nl >= 0 && nl < end; nl = buf.indexOf(10, start)) {
          if (nl > start && !skip?.(buf, start)) yield buf.toString('utf8', start, nl);
          start = nl + 1;
        }
        if (n === 0) {
          if (end > start && !skip?.(buf, start)) yield buf.toString('utf8', start, end);
          return;
        }
        // The cut line moves to the front; a line longer than the buffer doubles it.
        if (start === 0 && end === buf.length) buf = Buffer.concat([buf, Buffer.alloc(buf.length)]);
        else buf.copy(buf, 0, start, end);
        filled = end - start;
      }
    } finally {
      closeSync(fd);
    }
  })();
}

/** Bytes read at once from the snapshot and the journal. */
const READ_CHUNK = 1 << 20;
/** A line of the server's tree (`{"r":[…]}`, never `{"rd":…`): such lines are read only when the tree is first needed. */
const isRemoteLine = (buf: Buffer, start: number): boolean => buf[start + 2] === 0x72 /* r */ && buf[start + 3] === 0x22 /* " */;

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

  /**
   * undefined: this folder has never been synced (or its state is lost). The server's tree is read
   * from the snapshot only when something first asks for `state.remote`: a run whose feed brings
   * nothing and whose scan finds the base never needs it (on a big folder, half the state's time and memory).
   */
  load(): SyncState | undefined {
    const snapshot = join(this.dir, 'state.json');
    let state: SyncState | undefined;
    let lines: Iterable<string>;
    try {
      lines = linesOf(snapshot, isRemoteLine);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw e;
    }
    let quiet: boolean | undefined;
    let format: number | undefined;
    for (const line of lines) {
      if (state) apply(state, JSON.parse(line) as JournalLine);
      else {
        const header = JSON.parse(line) as Header;
        format = header.format;
        quiet = (state = fromHeader(header)).quiet;
      }
    }
    if (!state) return undefined;
    // The snapshot's own lines are its trees, not changes since: its header says whether it was quiet.
    state.quiet = quiet;
    const laterRemote: JournalLine[] = [];
    for (const line of optionalLines(join(this.dir, 'journal'))) {
      let entry: JournalLine;
      try {
        entry = JSON.parse(line) as JournalLine;
      } catch {
        break; // a line cut by a crash: the step it recorded is redone, which is safe
      }
      this.count(entry);
      if ('r' in entry) {
        laterRemote.push(entry);
        state.quiet = undefined;
      } else apply(state, entry);
    }
    // Format 1 held the server's tree in its header, read already.
    if (format === SNAPSHOT_FORMAT) lazyRemote(state, () => remoteOf(snapshot, state.base, laterRemote));
    else for (const entry of laterRemote) apply(state, entry);
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

/** A file's lines, none when it does not exist. */
function* optionalLines(path: string): Iterable<string> {
  try {
    yield* linesOf(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
}

/**
 * The server's tree: the snapshot's lines of it, then the journal's since. A synced path's hash and
 * id are the same in the base and the server tree: one string for both (a big folder's state is
 * mostly these; parsed, each would be held twice).
 */
function remoteOf(snapshot: string, base: ReadonlyMap<string, BaseRecord>, later: readonly JournalLine[]): Map<string, FileVersion> {
  const remote = new Map<string, FileVersion>();
  for (const line of linesOf(snapshot, (buf, start) => !isRemoteLine(buf, start))) {
    const [p, v] = (JSON.parse(line) as { r: [string, FileVersion & { sha256: string; id?: string | undefined }] }).r;
    const b = base.get(p);
    if (b && b.sha256 === v.sha256) {
      v.sha256 = b.sha256;
      if (b.id !== undefined && b.id === v.id) v.id = b.id;
    }
    remote.set(p, v);
  }
  for (const entry of later) {
    const [p, v] = (entry as { r: [string, FileVersion | null] }).r;
    if (v) remote.set(p, v);
    else remote.delete(p);
  }
  return remote;
}

/** `state.remote` is read by `read` when first asked for (once); setting it replaces it as before. */
function lazyRemote(state: SyncState, read: () => Map<string, FileVersion>): void {
  let remote: Map<string, FileVersion> | undefined;
  Object.defineProperty(state, 'remote', {
    enumerable: true,
    configurable: true,
    get: () => (remote ??= read()),
    set: (v: Map<string, FileVersion>) => void (remote = v),
  });
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
