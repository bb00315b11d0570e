// The sync client killed (SIGKILL) at each point of a step where one side has changed and its
// journal does not say so yet: download, upload, delete, moves both ways, a folder move and a
// conflict. The client stops itself at the named point (FILE_CLOUD_SYNC_STOP_AT), so the kill
// lands there and nowhere else. Afterwards the next run converges, no temp file is left, and every
// version that existed at a sync point still exists (live on a device, a server version, or in a
// sync trash).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, rename, unlink, writeFile } from 'node:fs/promises';
import { BACKENDS } from '../helpers/app.js';
import { bearer, postJson } from '../helpers/client.js';
import { serverVersions, syncServer, twoDevices, writeAll, type Device } from '../helpers/sync-device.js';

/** Bigger than one read chunk (64 KiB), so an upload can be stopped with part of it sent. */
const BIG = 'b'.repeat(200 * 1024);

interface Scenario {
  readonly step: string;
  /** Brings both devices to a synced state and makes the change the stopped run acts on. */
  readonly setup: (a: Device, b: Device, api: ServerApi) => Promise<void>;
  /** What both devices hold in the end. */
  readonly expect: Record<string, string | RegExp>;
  /** Every content that existed at a sync point. */
  readonly versions: readonly string[];
  /** A change made on the device after the kill, before the next run. */
  readonly afterKill?: (a: Device) => Promise<void>;
}

interface ServerApi {
  put(rel: string, body: string): Promise<void>;
  move(from: string, to: string): Promise<void>;
  sync(d: Device): Promise<void>;
}

/** Both devices hold `files` (synced by a, then b). */
async function synced(a: Device, b: Device, api: ServerApi, files: Record<string, string>): Promise<void> {
  await writeAll(a, files);
  await api.sync(a);
  await api.sync(b);
}

const SCENARIOS: Scenario[] = [
  {
    step: 'upload:sending',
    setup: async (a, b, api) => {
      await synced(a, b, api, { 'keep.txt': 'keep' });
      await writeFile(a.file('big.bin'), BIG);
    },
    expect: { 'keep.txt': 'keep', 'big.bin': BIG },
    versions: ['keep', BIG],
  },
  {
    step: 'upload:stored',
    setup: async (a, b, api) => {
      await synced(a, b, api, { 'keep.txt': 'keep', 'e.txt': 'v1' });
      await writeFile(a.file('e.txt'), 'v2 from laptop');
      await writeFile(a.file('new.txt'), 'new');
    },
    expect: { 'keep.txt': 'keep', 'e.txt': 'v2 from laptop', 'new.txt': 'new' },
    versions: ['keep', 'v1', 'v2 from laptop', 'new'],
  },
  {
    // The server has the new file; its answer was lost with the client, and the feed's echo of it is
    // the client's own (skipped). The file is edited here before the next run, so what the server
    // holds is not these bytes: the run must learn it, not try the upload for ever.
    step: 'upload:stored',
    setup: async (a, b, api) => {
      await synced(a, b, api, { 'keep.txt': 'keep' });
      await writeFile(a.file('new.txt'), 'new');
    },
    afterKill: (a) => writeFile(a.file('new.txt'), 'new, edited after the kill'),
    expect: { 'keep.txt': 'keep', 'new.txt': 'new', 'new (conflict laptop': /^new, edited after the kill$/ },
    versions: ['keep', 'new', 'new, edited after the kill'],
  },
  {
    step: 'download:fetched',
    setup: async (a, b, api) => {
      await synced(a, b, api, { 'keep.txt': 'keep', 'e.txt': 'v1' });
      await api.put('e.txt', 'v2 from the server');
    },
    expect: { 'keep.txt': 'keep', 'e.txt': 'v2 from the server' },
    versions: ['keep', 'v1', 'v2 from the server'],
  },
  {
    step: 'download:placed',
    setup: async (a, b, api) => {
      await synced(a, b, api, { 'keep.txt': 'keep', 'e.txt': 'v1' });
      await api.put('e.txt', 'v2 from the server');
      await api.put('sub/fresh.txt', 'fresh');
    },
    expect: { 'keep.txt': 'keep', 'e.txt': 'v2 from the server', 'sub/fresh.txt': 'fresh' },
    versions: ['keep', 'v1', 'v2 from the server', 'fresh'],
  },
  {
    step: 'delete-remote:deleted',
    setup: async (a, b, api) => {
      await synced(a, b, api, { 'keep.txt': 'keep', 'gone.txt': 'deleted on the laptop' });
      await unlink(a.file('gone.txt'));
    },
    expect: { 'keep.txt': 'keep' },
    versions: ['keep', 'deleted on the laptop'],
  },
  {
    step: 'move-local:renamed',
    setup: async (a, b, api) => {
      await synced(a, b, api, { 'keep.txt': 'keep', 'old.txt': 'moved on the server' });
      await api.move('old.txt', 'sub/new.txt');
    },
    expect: { 'keep.txt': 'keep', 'sub/new.txt': 'moved on the server' },
    versions: ['keep', 'moved on the server'],
  },
  {
    step: 'move-remote:moved',
    setup: async (a, b, api) => {
      await synced(a, b, api, { 'keep.txt': 'keep', 'old.txt': 'renamed on the laptop' });
      await rename(a.file('old.txt'), a.file('new.txt'));
    },
    expect: { 'keep.txt': 'keep', 'new.txt': 'renamed on the laptop' },
    versions: ['keep', 'renamed on the laptop'],
  },
  {
    step: 'move-remote-folder:moved',
    setup: async (a, b, api) => {
      await synced(a, b, api, { 'keep.txt': 'keep', 'Photos/1.jpg': 'one', 'Photos/2.jpg': 'two' });
      await rename(a.file('Photos'), a.file('Pictures'));
    },
    expect: { 'keep.txt': 'keep', 'Pictures/1.jpg': 'one', 'Pictures/2.jpg': 'two' },
    versions: ['keep', 'one', 'two'],
  },
  {
    step: 'conflict:renamed',
    setup: async (a, b, api) => {
      await synced(a, b, api, { 'keep.txt': 'keep', 'c.txt': 'base' });
      await writeFile(b.file('c.txt'), 'from desktop');
      await api.sync(b);
      await writeFile(a.file('c.txt'), 'from laptop');
    },
    expect: { 'keep.txt': 'keep', 'c.txt': 'from desktop', 'c (conflict laptop': /^from laptop$/ },
    versions: ['keep', 'base', 'from desktop', 'from laptop'],
  },
];

/** Paths of download temp files (`.fcsync-….tmp`) anywhere under `dir`. */
async function tempFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true });
  return entries.filter((p) => /(^|\/)\.fcsync-[^/]*\.tmp$/.test(p));
}

for (const [storage, skip] of BACKENDS) {
  describe(`sync CLI killed at every step (${storage})`, { skip }, () => {
    const srv = syncServer(storage, { flags: { versions: true } });

    const api: ServerApi = {
      put: async (rel, body) => {
        const res = await fetch(`${srv.url}/storage/alice/Sync/${rel}`, { method: 'PUT', headers: bearer(srv.token), body });
        assert.ok(res.status === 201 || res.status === 200 || res.status === 204, `PUT ${rel}: ${res.status}`);
      },
      move: async (from, to) => {
        const res = await postJson(`${srv.url}/storage/alice/Sync/${from}`, { action: 'Move', new_path: `/alice/Sync/${to}` }, bearer(srv.token));
        assert.equal(res.status, 204);
      },
      sync: async (d) => void (await d.onceOk(srv.url, srv.key)),
    };

    /** Runs the device's sync until it stops itself at `step`, then kills it there. */
    async function killAt(d: Device, step: string): Promise<void> {
      const { child, closed } = await d.stopAt(srv.url, srv.key, step);
      child.kill('SIGKILL');
      await closed;
    }

    for (const s of SCENARIOS) {
      test(`killed at ${s.step}${s.afterKill ? ', then edited' : ''}: the next run converges, no temp file is left, no version is lost`, async () => {
        const [a, b] = await twoDevices(srv);
        await s.setup(a, b, api);

        await killAt(a, s.step);
        await s.afterKill?.(a);
        await api.sync(a);
        assert.deepEqual(await tempFiles(a.dir), [], 'no temp file is left');
        await api.sync(b);
        await api.sync(a);

        const ta = await a.tree();
        assert.deepEqual(await b.tree(), ta, 'both devices hold the same');
        assert.equal(Object.keys(ta).length, Object.keys(s.expect).length, JSON.stringify(Object.keys(ta)));
        for (const [p, want] of Object.entries(s.expect)) {
          if (typeof want === 'string') assert.equal(ta[p], want, p);
          else assert.ok(Object.entries(ta).some(([q, c]) => q.startsWith(p) && want.test(c)), `${p}…: ${JSON.stringify(Object.keys(ta))}`);
        }
        for (const d of [a, b]) {
          const v = await d.run(['verify', d.dir], srv.key);
          assert.equal(v.code, 0, `${d.name} verify: ${v.stderr}`);
        }
        const everywhere = [...Object.values(ta), ...(await serverVersions(srv.url, srv.token, Object.keys(ta))), ...(await a.trashed()), ...(await b.trashed())];
        for (const v of s.versions) assert.ok(everywhere.includes(v), `a version is lost: ${v.slice(0, 40)}`);
      });
    }
  });
}
