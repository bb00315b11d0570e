// Names, run through the real sync command against a real server: a name macOS wrote decomposed
// (NFD) is the server's NFC name (one file, no duplicate, no delete loop); two server names that
// differ only in case, on a case-insensitive disk (an rclone mount with --vfs-case-insensitive,
// which answers for either spelling like macOS and Windows do), never overwrite one another.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BACKENDS } from '../helpers/app.js';
import { bearer, encodePath } from '../helpers/client.js';
import { Device, RUN_TIMEOUT_MS, syncServer, twoDevices, until } from '../helpers/sync-device.js';

const NFD_CAFE = 'Cafe\u0301.txt';
const NFD_RESUME = 'Re\u0301sume\u0301';

const rcloneSkip = spawnSync('rclone', ['version'], { stdio: 'ignore' }).status === 0 && spawnSync('fusermount3', ['-V'], { stdio: 'ignore' }).status === 0 ? undefined : 'needs rclone and FUSE (fusermount3) for a case-insensitive mount';

for (const [storage, skip] of BACKENDS) {
  describe(`sync: names (${storage})`, { skip }, () => {
    const s = syncServer(storage);
    const put = async (rel: string, body: string): Promise<void> => {
      const res = await fetch(`${s.url}/storage/alice/Sync/${encodePath(rel)}`, { method: 'PUT', headers: bearer(s.token), body });
      assert.equal(res.status, 201, `PUT ${rel}`);
    };
    const serverText = async (rel: string): Promise<string | undefined> => {
      const res = await fetch(`${s.url}/storage/alice/Sync/${encodePath(rel)}`, { headers: bearer(s.token) });
      return res.status === 200 ? res.text() : undefined;
    };

    test('a decomposed (NFD) local name is the server\'s NFC name: one file, edits both ways, no duplicate, nothing left to do', async () => {
      const [a, b] = await twoDevices(s);
      await writeFile(a.file(NFD_CAFE), 'v1');
      await mkdir(a.file(NFD_RESUME));
      await writeFile(a.file(`${NFD_RESUME}/cv.txt`), 'cv');
      await a.onceOk(s.url, s.key);
      assert.equal(await serverText('Café.txt'), 'v1');
      assert.equal(await serverText('Résumé/cv.txt'), 'cv');
      await b.onceOk(s.url, s.key);
      assert.deepEqual(await b.tree(), { 'Café.txt': 'v1', 'Résumé/cv.txt': 'cv' });

      await put('Café.txt', 'v2');
      await put('Résumé/new.txt', 'new');
      await a.onceOk(s.url, s.key);
      assert.deepEqual((await readdir(a.dir)).filter((n) => n !== '.file-cloud-sync').sort(), [NFD_CAFE, NFD_RESUME], 'the NFD names stay, no NFC twin beside them');
      assert.equal(await readFile(a.file(NFD_CAFE), 'utf8'), 'v2');
      assert.deepEqual((await readdir(a.file(NFD_RESUME))).sort(), ['cv.txt', 'new.txt']);

      await writeFile(a.file(NFD_CAFE), 'v3');
      await a.onceOk(s.url, s.key);
      assert.equal(await serverText('Café.txt'), 'v3');
      const again = await a.onceOk(s.url, s.key);
      assert.equal(again.stdout, '', 'a second run has nothing to do');
      assert.deepEqual(await a.trashed(), ['v1'], 'the one version replaced here (this server keeps no versions) is in the sync trash, once');
    });

    test('two local names that are one name in NFC: one is synced, the other named and left alone', async () => {
      const [a] = await twoDevices(s);
      await writeFile(a.file('Ame\u0301lie.txt'), 'decomposed');
      await writeFile(a.file('Amélie.txt'), 'composed');
      const r = await a.once(s.url, s.key);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /Amélie\.txt: not synced, .* Unicode NFC/);
      assert.ok(['decomposed', 'composed'].includes((await serverText('Amélie.txt')) ?? ''));
      assert.deepEqual(Object.values(await a.tree()).sort(), ['composed', 'decomposed'], 'both stay here as they were');
    });

    describe('on a case-insensitive disk', { skip: rcloneSkip }, () => {
      /** A case-insensitive mount of a fresh folder, for the test's duration. */
      async function caseInsensitiveDevice(name: string): Promise<{ d: Device; src: string; close: () => Promise<void> }> {
        const src = join(s.work, `${name}-src`);
        const mnt = join(s.work, name);
        await mkdir(src, { recursive: true });
        await mkdir(mnt, { recursive: true });
        const child = spawn('rclone', ['mount', src, mnt, '--vfs-case-insensitive', '--vfs-cache-mode', 'writes', '--dir-cache-time', '0s', '--config', join(s.work, 'rclone.conf')], { stdio: 'ignore' });
        const exited = new Promise<void>((r) => child.on('exit', () => r()));
        const close = async (): Promise<void> => {
          spawnSync('fusermount3', ['-u', '-z', mnt]);
          child.kill('SIGTERM');
          await exited;
        };
        try {
          await until(async () => (await readFile('/proc/mounts', 'utf8')).includes(` ${mnt} `), RUN_TIMEOUT_MS, 'the rclone mount');
        } catch (e) {
          await close();
          throw e;
        }
        return { d: new Device(name, mnt, join(s.work, `${name}-state`), false), src, close };
      }

      test('server names differing only in case: one is synced, the other stays on the server untouched, the run names it', async () => {
        await twoDevices(s);
        await put('Report.txt', 'upper');
        await put('report.txt', 'lower');
        await put('docs/a.txt', 'a');
        const { d, close } = await caseInsensitiveDevice(`ci${++s.devices}`);
        try {
          await writeFile(d.file('notes.txt'), 'mine');
          const first = await d.once(s.url, s.key);
          assert.equal(first.code, 1, first.stderr);
          assert.match(first.stderr, /report\.txt: not synced, this disk does not tell it apart from Report\.txt/);
          assert.deepEqual(await d.tree(), { 'Report.txt': 'upper', 'docs/a.txt': 'a', 'notes.txt': 'mine' });

          await put('NOTES.txt', 'theirs');
          await mkdir(d.file('DOCS'), { recursive: true }).catch(() => undefined);
          await writeFile(d.file('DOCS/b.txt'), 'b'); // the same folder as docs/, spelled otherwise
          const second = await d.once(s.url, s.key);
          assert.equal(second.code, 1, second.stderr);
          assert.match(second.stderr, /NOTES\.txt: not synced, .* notes\.txt/);
          assert.equal(await readFile(d.file('notes.txt'), 'utf8'), 'mine', 'the local file is not overwritten');
          for (const [rel, want] of [['Report.txt', 'upper'], ['report.txt', 'lower'], ['NOTES.txt', 'theirs'], ['notes.txt', 'mine'], ['docs/b.txt', 'b']]) assert.equal(await serverText(rel!), want, rel);
          assert.equal(await serverText('DOCS/b.txt'), undefined, 'the file went into the server\'s own spelling of the folder');
          assert.deepEqual(await d.trashed(), []);
        } finally {
          await close();
        }
      });

      test('a case-only rename here (a.txt → A.txt, docs/ → Docs/) is a move on the server: the same ids, no upload, nothing left to do', async () => {
        await twoDevices(s);
        await put('a.txt', 'aa');
        await put('docs/x.txt', 'xx');
        const ids = async (rel: string): Promise<Record<string, string>> => {
          const res = await fetch(`${s.url}/storage/alice/Sync/${rel}`, { headers: bearer(s.token) });
          return Object.fromEntries(((await res.json()) as { entries: { name: string; id: string }[] }).entries.map((e) => [e.name, e.id]));
        };
        const before = { ...(await ids('')), ...(await ids('docs/')) };
        const { d, src, close } = await caseInsensitiveDevice(`ci${++s.devices}`);
        try {
          await d.onceOk(s.url, s.key);
          assert.deepEqual(await d.tree(), { 'a.txt': 'aa', 'docs/x.txt': 'xx' });
          // rclone's case-insensitive mount takes a rename to another case of the same name as a rename
          // onto itself: the disk below is renamed, as macOS and Windows rename in place (the mount
          // then shows new inodes, so the client tells the rename by the name and the bytes).
          // The mount writes back to the disk below a few seconds after a file is closed.
          await until(async () => (await readdir(src).catch(() => [] as string[])).includes('a.txt') && (await readdir(join(src, 'docs')).catch(() => [] as string[])).includes('x.txt'), RUN_TIMEOUT_MS, 'the mount\'s write-back');
          await rename(join(src, 'a.txt'), join(src, 'A.txt'));
          await rename(join(src, 'docs'), join(src, 'Docs'));
          assert.deepEqual((await readdir(d.dir)).filter((n) => n !== '.file-cloud-sync').sort(), ['A.txt', 'Docs']);
          const r = await d.onceOk(s.url, s.key);
          assert.doesNotMatch(r.stdout + r.stderr, /upload|download|delete/, 'a move, not a copy and a delete');
          const after = await ids('');
          assert.deepEqual(Object.keys(after).sort(), ['A.txt', 'Docs']);
          assert.equal(after['A.txt'], before['a.txt'], 'the same file, moved');
          assert.equal(after['Docs'], before['docs'], 'the same folder, moved');
          assert.equal((await ids('Docs/'))['x.txt'], before['x.txt']);
          const again = await d.onceOk(s.url, s.key);
          assert.equal(again.stdout.trim(), '', `nothing left to do\n${again.stdout}`);
          assert.deepEqual(await d.tree(), { 'A.txt': 'aa', 'Docs/x.txt': 'xx' });
          assert.deepEqual(await d.trashed(), []);
        } finally {
          await close();
        }
      });
    });
  });
}
