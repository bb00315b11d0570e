/**
 * The one way to run File Cloud's real binary as a child process, shared by
 * the tests (test/helpers/server.ts), the benchmark (bench/lib/file-cloud.ts)
 * and the soak (soak/soak.ts): spawn `serve` on a free port, wait for the
 * listening line, and stop it — primary and workers — by their own pids.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { alive, descendantsOfSync, killLeftovers } from './process-tree.js';

/** The repository root (this file runs from dist/test/kit/). */
export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url)).replace(/\/$/, '');
export const BIN = join(REPO_ROOT, 'bin', 'file-cloud.js');

export type SpawnFileCloudOptions = {
  readonly dataDir: string;
  /** More `serve` arguments (after `--port 0 --data-dir DIR`). */
  readonly args?: readonly string[];
  /** Added to the environment. */
  readonly env?: Readonly<Record<string, string>>;
  /**
   * Whether the caller's own FILE_CLOUD_* variables pass on. The benchmark
   * runs File Cloud as shipped and says false; tests inherit them.
   */
  readonly inheritFileCloudEnv?: boolean;
  /** Where stdout and stderr go: captured in memory (default), or appended to this file (long runs). */
  readonly logFile?: string;
  /** Node's own flags (e.g. --cpu-prof). */
  readonly nodeArgs?: readonly string[];
  readonly bin?: string;
  /**
   * How long the start may take before it counts as hung (default 60 s): a start that fails exits and
   * fails at once; this bounds only one that neither listens nor exits. Two nodes of two workers each,
   * migrating one database, took over 20 s on a busy 2-core CI machine.
   */
  readonly startTimeoutMs?: number;
  /** Lead a process group of its own, so `signalGroup` can signal it as a terminal's Ctrl-C does. */
  readonly processGroup?: boolean;
  /** Called as soon as the process exists (e.g. to stop it on Ctrl-C while it starts). */
  readonly onSpawn?: (proc: ChildProcess) => void;
};

export type FileCloudProcess = {
  readonly proc: ChildProcess;
  /** The base URL from the listening line. */
  readonly url: string;
  /** What the process printed so far (with a logFile: the file's text as stdout). */
  output(): { stdout: string; stderr: string };
  /** Resolves with the exit code (null when a signal ended it). */
  readonly exited: Promise<number | null>;
  /**
   * Sends `signal` to the primary and resolves with its exit code; with
   * `graceMs`, SIGKILL follows when it has not exited by then. Workers that
   * outlive their primary (a killed primary cannot stop them) are killed by
   * pid and start time; the count is in `leftovers`.
   */
  stop(signal?: NodeJS.Signals, graceMs?: number): Promise<{ code: number | null; leftovers: number }>;
  /** Sends `signal` to every process of the group (needs `processGroup`), as a terminal does on Ctrl-C. */
  signalGroup(signal: NodeJS.Signals): void;
};

const LISTENING = /File Cloud listening on (http:\/\/\S+)/;

export async function spawnFileCloud(o: SpawnFileCloudOptions): Promise<FileCloudProcess> {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (o.inheritFileCloudEnv !== false || !k.startsWith('FILE_CLOUD_')) env[k] = v;
  Object.assign(env, o.env);
  const argv = [...(o.nodeArgs ?? []), o.bin ?? BIN, 'serve', '--port', '0', '--data-dir', o.dataDir, ...(o.args ?? [])];

  let stdout = '';
  let stderr = '';
  let proc: ChildProcess;
  // A log file shared by several runs (the bench appends every server's lines) is read from where this run began.
  let logStart = 0;
  if (o.logFile) {
    const out = openSync(o.logFile, 'a');
    logStart = fstatSync(out).size;
    proc = spawn(process.execPath, argv, { cwd: REPO_ROOT, env, stdio: ['ignore', out, out], detached: o.processGroup === true });
    closeSync(out);
  } else {
    proc = spawn(process.execPath, argv, { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: o.processGroup === true });
    proc.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
    proc.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  }
  o.onSpawn?.(proc);
  const logFile = o.logFile;
  const output = () => (logFile ? { stdout: readPart(logFile, logStart), stderr: '' } : { stdout, stderr });
  const exited = new Promise<number | null>((res) => proc.once('exit', (code) => res(code)));
  const timeoutMs = o.startTimeoutMs ?? 60_000;

  const url = await new Promise<string>((res, rej) => {
    let poll: NodeJS.Timeout | undefined;
    const done = (f: () => void) => {
      clearTimeout(timer);
      clearInterval(poll);
      f();
    };
    const check = () => {
      // The listening line comes before any request's: the first 64 KiB hold it.
      const m = LISTENING.exec(logFile ? readPart(logFile, logStart, 64 * 1024) : stdout);
      if (m) done(() => res(m[1] as string));
    };
    const describe = () => {
      const out = logFile ? readPart(logFile, logStart, 4000, true) : stdout.slice(-4000);
      return `\nstdout: ${out}\nstderr: ${stderr.slice(-4000)}`;
    };
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      done(() => rej(new Error(`File Cloud did not start in ${timeoutMs / 1000} s${describe()}`)));
    }, timeoutMs);
    if (logFile) poll = setInterval(check, 50);
    else proc.stdout?.on('data', check);
    void exited.then((code) => done(() => rej(new Error(`File Cloud exited with ${code} before listening${describe()}`))));
  });

  return {
    proc,
    url,
    output,
    exited,
    signalGroup(signal) {
      if (o.processGroup !== true || proc.pid === undefined) throw new Error('signalGroup needs processGroup: true');
      process.kill(-proc.pid, signal);
    },
    async stop(signal = 'SIGTERM', graceMs) {
      const running = proc.exitCode === null && proc.signalCode === null;
      // Synchronously, so the signal follows at once (a test that kills mid-upload means that instant).
      const workers = running && proc.pid !== undefined ? descendantsOfSync(proc.pid) : [];
      if (running) proc.kill(signal);
      const kill = graceMs === undefined ? undefined : setTimeout(() => proc.kill('SIGKILL'), graceMs);
      const code = await exited;
      clearTimeout(kill);
      if (workers.length === 0) return { code, leftovers: 0 };
      // Workers exit on their own once the primary is gone (their IPC channel closes): give them a moment.
      for (let i = 0; i < 50 && (await Promise.all(workers.map((w) => alive(w.pid)))).some(Boolean); i++) await new Promise((r) => setTimeout(r, 100));
      return { code, leftovers: await killLeftovers(workers) };
    },
  };
}

/** The file's text from byte `from` on: all of it, or at most `max` bytes from its start (or its end, `tail`). */
function readPart(file: string, from: number, max = Infinity, tail = false): string {
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    const length = Math.max(0, Math.min(size - from, max));
    const start = tail ? size - length : from;
    const bytes = Buffer.alloc(length);
    let got = 0;
    while (got < length) {
      const n = readSync(fd, bytes, got, length - got, start + got);
      if (n === 0) break;
      got += n;
    }
    return bytes.subarray(0, got).toString('utf8');
  } finally {
    closeSync(fd);
  }
}
