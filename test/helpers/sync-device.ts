// A sync device for client tests: its own folder and state folder, running the real command
// (`file-cloud-sync` of packages/sync, or `file-cloud sync` of the server binary).
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { StateStore, type SyncState } from '../../packages/sync/src/state-store.js';
import { startApp, type TestApp, type TestStorage } from './app.js';
import { bearer, postJson } from './client.js';

export const REPO = fileURLToPath(new URL('../../../', import.meta.url));
/** A --once run reconciles and exits; this bounds a run of a few files on a slow shared machine. */
export const RUN_TIMEOUT_MS = 60_000;

/**
 * Polls `check` until it holds; fails once `ms` (a bound the product promises) has passed. Timed on
 * the monotonic clock: a wall clock set forward meanwhile would end the wait early.
 */
export async function until(check: () => Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = performance.now() + ms;
  for (;;) {
    if (await check()) return;
    if (performance.now() > deadline) assert.fail(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Every folder under a device's folder, sorted. */
export async function localDirs(d: Device, rel = ''): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(join(d.dir, rel), { withFileTypes: true })) {
    if (!e.isDirectory()) continue;
    const p = rel === '' ? e.name : `${rel}/${e.name}`;
    out.push(p, ...(await localDirs(d, p)));
  }
  return out.sort();
}

/** Changes the device's stored state as a crash, a restore or a server change would leave it (through the client's own store). */
export async function editState(d: Device, edit: (s: Record<string, unknown>) => Record<string, unknown>): Promise<void> {
  const store = new StateStore(join(d.stateDir, (await readdir(d.stateDir))[0]!));
  const state = store.load();
  assert.ok(state, 'a state to edit');
  store.save(edit(state as unknown as Record<string, unknown>) as unknown as SyncState);
  store.close();
}

export async function readState(stateDir: string): Promise<{ lastSync?: string } | undefined> {
  const sub = (await readdir(stateDir).catch(() => []))[0];
  if (sub === undefined) return undefined;
  // The state as the client reads it: its snapshot and the journal since.
  return new StateStore(join(stateDir, sub)).load() ?? {};
}

export type Run = { code: number | null; stdout: string; stderr: string };

/** A device: its own folder and its own state folder; `viaServer` runs `file-cloud sync` instead of `file-cloud-sync`. */
export class Device {
  constructor(
    readonly name: string,
    readonly dir: string,
    readonly stateDir: string,
    private readonly viaServer: boolean,
  ) {}

  /** The command running, its output gathered; the caller waits for it or kills it. */
  spawn(args: string[], key: string, env: Record<string, string> = {}): { child: ChildProcessWithoutNullStreams; out: { stdout: string; stderr: string } } {
    const cmd = this.viaServer ? [join(REPO, 'bin/file-cloud.js'), 'sync'] : [join(REPO, 'packages/sync/bin/file-cloud-sync.js')];
    const child = spawn(process.execPath, [...cmd, ...args, '--state-dir', this.stateDir], { env: { ...process.env, FILE_CLOUD_SYNC_KEY: key, ...env } });
    const out = { stdout: '', stderr: '' };
    child.stdout.on('data', (c: Buffer) => (out.stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out.stderr += c.toString()));
    return { child, out };
  }

  run(args: string[], key: string, env: Record<string, string> = {}): Promise<Run> {
    const { child, out } = this.spawn(args, key, env);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`${this.name}: sync did not finish in ${RUN_TIMEOUT_MS} ms\n${out.stdout}\n${out.stderr}`));
      }, RUN_TIMEOUT_MS);
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code, ...out });
      });
    });
  }

  /**
   * A --once run stopped by the client itself at `step` (FILE_CLOUD_SYNC_STOP_AT): resolves once it
   * is stopped there; the caller then kills it or lets it go on (SIGCONT) and waits for `closed`.
   * A run that ends without reaching the step fails.
   */
  async stopAt(url: string, key: string, step: string): Promise<{ child: ChildProcessWithoutNullStreams; out: { stdout: string; stderr: string }; closed: Promise<number | null> }> {
    const { child, out } = this.spawn(this.onceArgs(url), key, { FILE_CLOUD_SYNC_STOP_AT: step });
    const closed = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
    let exited: number | null | undefined;
    void closed.then((code) => (exited = code));
    try {
      await until(async () => out.stderr.includes(`stopped at ${step}`) || exited !== undefined, RUN_TIMEOUT_MS, `${step}: the run reaching it`);
      assert.equal(exited, undefined, `the run ended (exit ${exited}) without reaching ${step}\n${out.stdout}\n${out.stderr}`);
      // The line comes just before the client stops itself: a SIGCONT sent in between would be
      // lost and leave it stopped for good, so the caller acts only once it is stopped.
      await until(async () => (await readFile(`/proc/${child.pid}/stat`, 'utf8').catch(() => '')).split(') ')[1]?.startsWith('T') === true, RUN_TIMEOUT_MS, `${step}: the run stopped there`);
    } catch (e) {
      child.kill('SIGKILL');
      await closed;
      throw e;
    }
    return { child, out, closed };
  }

  onceArgs(url: string, extra: string[] = []): string[] {
    return [this.dir, '/alice/Sync', '--server', url, '--once', '--device', this.name, ...extra];
  }

  once(url: string, key: string, extra: string[] = []): Promise<Run> {
    return this.run(this.onceArgs(url, extra), key);
  }

  async onceOk(url: string, key: string): Promise<Run> {
    const r = await this.once(url, key);
    assert.equal(r.code, 0, `${this.name} sync --once: exit ${r.code}\n${r.stdout}\n${r.stderr}`);
    return r;
  }

  file(rel: string): string {
    return join(this.dir, ...rel.split('/'));
  }

  /** Every file under the folder (not the marker), path → content. */
  async tree(): Promise<Record<string, string>> {
    return readTree(this.dir, (n) => n !== '.file-cloud-sync');
  }

  /** Every file in the sync trash, as contents. */
  async trashed(): Promise<string[]> {
    const out: string[] = [];
    for (const sub of await readdir(this.stateDir).catch(() => [])) Object.values(await readTree(join(this.stateDir, sub, 'trash'))).forEach((c) => out.push(c));
    return out;
  }
}

/** A server for sync tests: alice signed in, an app password of hers, a work folder for devices. */
export interface SyncServer {
  t: TestApp;
  url: string;
  token: string;
  key: string;
  work: string;
  devices: number;
  /** The server's JSON log lines (`accessLog`: its access lines at info), as written so far. */
  log: string;
}

/** Inside a describe: starts the server before its tests and closes it (and the work folder) after. */
export function syncServer(storage: TestStorage, opts: { users?: string[]; flags?: Record<string, string | boolean>; accessLog?: boolean } = {}): SyncServer {
  const s = { devices: 0, log: '' } as SyncServer;
  before(async () => {
    const logTo = opts.accessLog ? new Writable({ write: (chunk: Buffer, _enc, cb) => ((s.log += chunk.toString()), cb()) }) : undefined;
    s.t = await startApp({ storage, users: opts.users ?? ['alice'], ...(opts.flags ? { flags: opts.flags } : {}), ...(logTo ? { logTo } : {}) });
    s.url = s.t.url;
    s.token = (await s.t.login('alice')).access_token;
    const res = await postJson(`${s.url}/api/keys`, { name: 'sync' }, bearer(s.token));
    assert.equal(res.status, 201);
    s.key = ((await res.json()) as { key: string }).key;
    s.work = await mkdtemp(join(tmpdir(), 'fc-sync-'));
  });
  after(async () => {
    await s.t?.close();
    if (s.work) await rm(s.work, { recursive: true, force: true });
  });
  return s;
}

/** Two fresh devices on a fresh server folder /alice/Sync (emptied first): laptop runs `file-cloud-sync`, desktop `file-cloud sync`. */
export async function twoDevices(s: SyncServer, names: [string, string] = ['laptop', 'desktop']): Promise<[Device, Device]> {
  await fetch(`${s.url}/storage/alice/Sync`, { method: 'DELETE', headers: bearer(s.token) });
  const id = ++s.devices;
  const a = new Device(names[0], join(s.work, `a${id}`), join(s.work, `a${id}-state`), false);
  const b = new Device(names[1], join(s.work, `b${id}`), join(s.work, `b${id}-state`), true);
  await mkdir(a.dir, { recursive: true });
  await mkdir(b.dir, { recursive: true });
  return [a, b];
}

/** Writes each file (path → content) into the device's folder, making its folders. */
export async function writeAll(d: Device, files: Record<string, string>): Promise<void> {
  for (const [p, c] of Object.entries(files)) {
    await mkdir(join(d.file(p), '..'), { recursive: true });
    await writeFile(d.file(p), c);
  }
}

/** The contents of every kept version (server `--versions`) of alice's files at `paths` under /alice/Sync. */
export async function serverVersions(url: string, token: string, paths: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  const auth = { authorization: `Bearer ${token}` };
  for (const p of paths) {
    const file = `${url}/storage/alice/Sync/${p.split('/').map(encodeURIComponent).join('/')}`;
    const res = await fetch(`${file}?versions`, { headers: auth });
    assert.equal(res.status, 200, `${p}?versions`);
    for (const v of ((await res.json()) as { versions: { id: string }[] }).versions) out.push(await (await fetch(`${file}?version=${v.id}`, { headers: auth })).text());
  }
  return out;
}

/** The requests (method and path) the server logged in `log`'s complete lines. */
export function requestsIn(log: string): { method: string; path: string }[] {
  const out: { method: string; path: string }[] = [];
  for (const line of log.split('\n').slice(0, -1)) {
    if (!line.includes('request completed')) continue;
    const req = (JSON.parse(line) as { req?: { method?: string; url?: string } }).req;
    if (req?.method && req.url) out.push({ method: req.method, path: decodeURIComponent(req.url.split('?')[0] ?? '') });
  }
  return out;
}

export async function readTree(root: string, keep: (name: string) => boolean = () => true, rel = ''): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const d of await readdir(join(root, rel), { withFileTypes: true }).catch(() => [])) {
    const p = rel === '' ? d.name : `${rel}/${d.name}`;
    if (rel === '' && !keep(d.name)) continue;
    if (d.isDirectory()) Object.assign(out, await readTree(root, keep, p));
    else out[p] = await readFile(join(root, p), 'utf8');
  }
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => (a < b ? -1 : 1)));
}

/**
 * The new-epoch case: `a` syncs p.txt and q.txt, its state then names another server instance,
 * p.txt is deleted on the server and q.txt here; resolves to the next --once run (which must list
 * once, delete nothing and bring both back).
 */
export async function newEpochRun(s: SyncServer, a: Device): Promise<Run> {
  await writeFile(a.file('p.txt'), 'p');
  await writeFile(a.file('q.txt'), 'q');
  await a.onceOk(s.url, s.key);
  // The state says it synced with another server instance (a restored or replaced server).
  await editState(a, (st) => ({ ...st, epoch: 'another-server' }));
  assert.equal((await fetch(`${s.url}/storage/alice/Sync/p.txt`, { method: 'DELETE', headers: { authorization: `Bearer ${s.token}` } })).status, 204);
  await unlink(a.file('q.txt'));
  return a.once(s.url, s.key);
}
