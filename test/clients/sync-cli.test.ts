// The sync client, run as its real command (`file-cloud-sync` of packages/sync and `file-cloud sync`
// of the server binary) against a real server, two devices on one server folder. After every run:
// every version of every file that existed at a sync point still exists (live, conflict copy, or
// sync trash), and the sides converge.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFile, rename, rm, stat, unlink, writeFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { BACKENDS } from '../helpers/app.js';
import { bearer, encodePath, postJson } from '../helpers/client.js';
import { editState, newEpochRun, readState, REPO, RUN_TIMEOUT_MS, syncServer, twoDevices, until, type Device } from '../helpers/sync-device.js';

/** The contract's bound for continuous mode: a change on either side reaches the other within 5 s. */
const CONTINUOUS_BOUND_MS = 5_000;

for (const [storage, skip] of BACKENDS) {
  describe(`sync CLI, two devices (${storage})`, { skip }, () => {
    const s = syncServer(storage, { users: ['alice', 'bob'] });

    /** Gives the device a cursor the server answers with 410: one it gave another account. */
    async function expireCursor(d: Device): Promise<void> {
      const bob = (await s.t.login('bob')).access_token;
      const foreign = ((await (await fetch(`${s.url}/api/changes`, { headers: bearer(bob) })).json()) as { cursor: string }).cursor;
      await editState(d, (st) => ({ ...st, cursor: foreign }));
    }
    const serverText = async (rel: string): Promise<string | undefined> => {
      const res = await fetch(`${s.url}/storage/alice/Sync/${encodePath(rel)}`, { headers: bearer(s.token) });
      return res.status === 200 ? res.text() : undefined;
    };

    test('a first sync carries files both ways; edit/edit gives one conflict copy on every side; verify holds', async () => {
      const [a, b] = await twoDevices(s);
      await writeFile(a.file('notes.txt'), 'base');
      await mkdir(a.file('docs'));
      await writeFile(a.file('docs/plan.md'), 'plan');
      await a.onceOk(s.url, s.key);
      await b.onceOk(s.url, s.key);
      assert.deepEqual(await b.tree(), { 'docs/plan.md': 'plan', 'notes.txt': 'base' });

      await writeFile(a.file('notes.txt'), 'from laptop');
      await writeFile(b.file('notes.txt'), 'from desktop');
      await a.onceOk(s.url, s.key);
      await b.onceOk(s.url, s.key);
      await a.onceOk(s.url, s.key);
      const ta = await a.tree();
      const conflict = Object.keys(ta).filter((p) => /^notes \(conflict desktop \d{4}-\d{2}-\d{2} \d{6}\)\.txt$/.test(p));
      assert.equal(conflict.length, 1, JSON.stringify(ta));
      assert.equal(ta['notes.txt'], 'from laptop', 'the server version keeps the name');
      assert.equal(ta[conflict[0]!], 'from desktop', 'the other edit is the conflict copy');
      assert.deepEqual(await b.tree(), ta, 'both devices hold the same');
      assert.equal(await serverText(conflict[0]!), 'from desktop', 'the conflict copy is on the server');

      const verify = await a.run(['verify', a.dir], s.key);
      assert.equal(verify.code, 0, verify.stderr);
      assert.equal((await fetch(`${s.url}/storage/alice/Sync/docs/plan.md`, { method: 'DELETE', headers: bearer(s.token) })).status, 204);
      const lacking = await a.run(['verify', a.dir], s.key);
      assert.equal(lacking.code, 1);
      assert.match(lacking.stderr, /^missing: docs\/plan\.md$/m);
      const status = await b.run(['status', b.dir], s.key);
      assert.equal(status.code, 0, status.stderr);
      assert.match(status.stdout, /conflicts: 1/);
    });

    test('equal edits are no conflict; a delete on one device reaches the other, whose copy goes to its sync trash', async () => {
      const [a, b] = await twoDevices(s);
      await writeFile(a.file('x.txt'), 'one');
      await writeFile(a.file('y.txt'), 'keep me');
      await a.onceOk(s.url, s.key);
      await b.onceOk(s.url, s.key);
      await writeFile(a.file('x.txt'), 'same');
      await writeFile(b.file('x.txt'), 'same');
      await a.onceOk(s.url, s.key);
      await b.onceOk(s.url, s.key);
      assert.deepEqual(await b.tree(), { 'x.txt': 'same', 'y.txt': 'keep me' });

      await unlink(b.file('y.txt'));
      await b.onceOk(s.url, s.key);
      assert.equal(await serverText('y.txt'), undefined);
      await a.onceOk(s.url, s.key);
      assert.deepEqual(await a.tree(), { 'x.txt': 'same' });
      assert.deepEqual(await a.trashed(), ['keep me'], 'the bytes exist nowhere else: the sync trash keeps them');
    });

    test('a file another tool put on the server, not hashed by it yet, syncs down', async () => {
      const [a] = await twoDevices(s);
      await a.onceOk(s.url, s.key);
      await s.t.fs.put('Sync/other-tool.txt', 'put beside the server');
      await s.t.fs.put('Sync/deep/er.txt', 'also');
      // The feed does not know them (no front end wrote them): an expired cursor makes the client list.
      await expireCursor(a);
      await a.onceOk(s.url, s.key);
      assert.deepEqual(await a.tree(), { 'deep/er.txt': 'also', 'other-tool.txt': 'put beside the server' });
      const verify = await a.run(['verify', a.dir], s.key);
      assert.equal(verify.code, 0, verify.stderr);
    });

    test('an edit beats a delete on the other device', async () => {
      const [a, b] = await twoDevices(s);
      await writeFile(a.file('e.txt'), 'v1');
      await writeFile(a.file('other.txt'), 'so the folder is not emptied');
      await a.onceOk(s.url, s.key);
      await b.onceOk(s.url, s.key);
      await unlink(a.file('e.txt'));
      await writeFile(b.file('e.txt'), 'v2');
      await a.onceOk(s.url, s.key);
      await b.onceOk(s.url, s.key);
      await a.onceOk(s.url, s.key);
      assert.deepEqual(await a.tree(), { 'e.txt': 'v2', 'other.txt': 'so the folder is not emptied' });
      assert.deepEqual(await b.tree(), await a.tree());
    });

    test('a rename on the server is a local rename: same inode, no download', async () => {
      const [a] = await twoDevices(s);
      await writeFile(a.file('old.txt'), 'content');
      await a.onceOk(s.url, s.key);
      const ino = (await stat(a.file('old.txt'))).ino;
      const moved = await postJson(`${s.url}/storage/alice/Sync/old.txt`, { action: 'Move', new_path: '/alice/Sync/sub/new.txt' }, bearer(s.token));
      assert.equal(moved.status, 204);
      await a.onceOk(s.url, s.key);
      assert.deepEqual(await a.tree(), { 'sub/new.txt': 'content' });
      assert.equal((await stat(a.file('sub/new.txt'))).ino, ino);
    });

    test('a local folder rename is one move on the server; the other device renames too (same inodes, no download)', async () => {
      const [a, b] = await twoDevices(s);
      await mkdir(a.file('Photos/2025'), { recursive: true });
      for (let i = 0; i < 30; i++) await writeFile(a.file(`Photos/2025/p${i}.jpg`), `photo ${i}`);
      await writeFile(a.file('stay.txt'), 'stay');
      await a.onceOk(s.url, s.key);
      await b.onceOk(s.url, s.key);
      const inodes = await Promise.all(Array.from({ length: 30 }, async (_, i) => (await stat(b.file(`Photos/2025/p${i}.jpg`))).ino));
      const since = ((await (await fetch(`${s.url}/api/changes`, { headers: bearer(s.token) })).json()) as { cursor: string }).cursor;

      await rename(a.file('Photos'), a.file('Pictures'));
      await a.onceOk(s.url, s.key);
      const feed = (await (await fetch(`${s.url}/api/changes?cursor=${since}`, { headers: bearer(s.token) })).json()) as { changes: { type: string; path: string; from?: string; is_file: boolean }[] };
      assert.deepEqual(
        feed.changes.map((c) => [c.type, c.from, c.path, c.is_file]),
        [['moved', '/alice/Sync/Photos', '/alice/Sync/Pictures', false]],
        'one folder move, nothing uploaded',
      );

      await b.onceOk(s.url, s.key);
      const tb = await b.tree();
      assert.equal(Object.keys(tb).length, 31);
      assert.equal(tb['Pictures/2025/p7.jpg'], 'photo 7');
      for (let i = 0; i < 30; i++) assert.equal((await stat(b.file(`Pictures/2025/p${i}.jpg`))).ino, inodes[i], `p${i} was renamed, not downloaded`);
      assert.equal(await stat(b.file('Photos')).catch(() => undefined), undefined, 'the old folder is gone');
    });

    test('guards: a mass delete, a missing marker and an emptied folder pause with exit 3 and destroy nothing; --allow-deletes goes ahead', async () => {
      const [a] = await twoDevices(s);
      for (let i = 0; i < 60; i++) await writeFile(a.file(`f${i}.txt`), `file ${i}`);
      await writeFile(a.file('stay.txt'), 'stay');
      await a.onceOk(s.url, s.key);

      for (let i = 0; i < 55; i++) await unlink(a.file(`f${i}.txt`));
      const mass = await a.once(s.url, s.key);
      assert.equal(mass.code, 3, mass.stderr);
      assert.match(mass.stderr, /paused: the plan deletes 55 of 61 files on the server/);
      assert.equal(await serverText('f0.txt'), 'file 0', 'nothing was deleted on the server');

      await unlink(a.file('.file-cloud-sync'));
      const marker = await a.once(s.url, s.key);
      assert.equal(marker.code, 3, marker.stderr);
      assert.match(marker.stderr, /marker/);

      const allowed = await a.once(s.url, s.key, ['--allow-deletes']);
      assert.equal(allowed.code, 0, allowed.stderr);
      assert.equal(await serverText('f0.txt'), undefined);
      assert.equal(await serverText('f59.txt'), 'file 59');

      await rm(a.dir, { recursive: true });
      await mkdir(a.dir);
      const emptied = await a.once(s.url, s.key);
      assert.equal(emptied.code, 3, emptied.stderr);
      await rm(a.dir, { recursive: true });
      const missing = await a.once(s.url, s.key);
      assert.equal(missing.code, 3, missing.stderr);
      assert.equal(await serverText('stay.txt'), 'stay');
    });

    test('an expired cursor (410) lists once and deletes nothing: a file deleted meanwhile comes back', async () => {
      const [a] = await twoDevices(s);
      await writeFile(a.file('k.txt'), 'kept');
      await a.onceOk(s.url, s.key);
      await expireCursor(a);
      assert.equal((await fetch(`${s.url}/storage/alice/Sync/k.txt`, { method: 'DELETE', headers: bearer(s.token) })).status, 204);
      const r = await a.onceOk(s.url, s.key);
      assert.match(r.stdout, /cursor expired/);
      assert.deepEqual(await a.tree(), { 'k.txt': 'kept' });
      assert.equal(await serverText('k.txt'), 'kept', 'uploaded again, not deleted here');
    });

    test('a new server epoch lists once and deletes nothing: files gone on either side come back', async () => {
      const [a] = await twoDevices(s);
      const r = await newEpochRun(s, a);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /epoch changed/);
      assert.deepEqual(await a.tree(), { 'p.txt': 'p', 'q.txt': 'q' });
      assert.equal(await serverText('p.txt'), 'p');
      assert.equal(await serverText('q.txt'), 'q');
    });

    test('continuous mode: a change on either side reaches the other within 5 s', async () => {
      const [a] = await twoDevices(s);
      await writeFile(a.file('start.txt'), 'start');
      const child = spawn(process.execPath, [join(REPO, 'packages/sync/bin/file-cloud-sync.js'), a.dir, '/alice/Sync', '--server', s.url, '--device', 'laptop', '--state-dir', a.stateDir], {
        env: { ...process.env, FILE_CLOUD_SYNC_KEY: s.key },
        stdio: 'ignore',
      });
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      try {
        // The first round lists and uploads; its end is written as lastSync in the state.
        await until(async () => (await readState(a.stateDir))?.lastSync !== undefined, RUN_TIMEOUT_MS, 'the first round');
        await writeFile(a.file('local.txt'), 'written here');
        await until(async () => (await serverText('local.txt')) === 'written here', CONTINUOUS_BOUND_MS, 'a local file on the server');
        const put = await fetch(`${s.url}/storage/alice/Sync/remote.txt`, { method: 'PUT', headers: bearer(s.token), body: 'written there' });
        assert.equal(put.status, 201);
        await until(async () => (await readFile(a.file('remote.txt'), 'utf8').catch(() => undefined)) === 'written there', CONTINUOUS_BOUND_MS, 'a server file here');
      } finally {
        child.kill('SIGTERM');
        await exited;
      }
    });

    test('a file the server refuses (a backslash in its name) fails the run with its name; the other files are synced', async () => {
      const [a] = await twoDevices(s);
      await writeFile(a.file('ok.txt'), 'fine');
      await writeFile(a.file('back\\slash.txt'), 'refused');
      const r = await a.once(s.url, s.key);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /upload back\\slash\.txt: .*400/);
      assert.equal(await serverText('ok.txt'), 'fine');
    });

    test('usage errors exit 2', async () => {
      const [a] = await twoDevices(s);
      const noServer = await a.run([a.dir, '/alice/Sync', '--once'], s.key);
      assert.equal(noServer.code, 2);
      const noKey = await a.run([a.dir, '/alice/Sync', '--once', '--server', s.url], '');
      assert.equal(noKey.code, 2);
    });
  });
}
