// Times set by SFTP clients are kept (issue 52): `sftp put -p` and `scp -p` set the file's
// modification time before the close, rsync through sshfs sets it on the closed file, and the
// stored file has it from then on — in `ls -l`, the JSON listing, WebDAV's getlastmodified and a
// download's Last-Modified — on local disk and on S3 (the object's `mtime` metadata, listings'
// times from the index: docs/storage.md "Times set by clients").
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import ssh2 from 'ssh2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { bearer, postJson } from '../helpers/client.js';
import { fuseSkip, rcloneSftpEnv, run, sftpBatch, sftpRequests, withSftp, sftpFlags, sftpPort, sshIdentity, sshOptions, toolSkip, type SshIdentity } from '../helpers/sftp.js';

/** SETSTAT of a path with its times, as `touch -d` through a mount sends it. */
const setTimes = (s: ssh2.SFTPWrapper, path: string, when: Date) => sftpRequests(s).utimes(path, when);

for (const [storage, skip] of BACKENDS) {
  describe(`times set by SFTP clients on ${storage}`, { skip: skip ?? toolSkip('sftp') }, () => {
    let t: TestApp;
    let id: SshIdentity;
    let port: number;
    let local: string;
    let token: string;
    let mnt: string | undefined;
    before(async () => {
      t = await startApp({ storage, users: ['alice'], flags: await sftpFlags(storage) });
      port = sftpPort(t);
      id = await sshIdentity(t, 'alice');
      token = (await t.login('alice')).access_token;
      local = await mkdtemp(join(tmpdir(), 'fc-sftp-times-'));
    });
    after(async () => {
      if (mnt) await run('fusermount3', ['-u', mnt]);
      await t?.close();
      await id?.dispose();
      if (local) await rm(local, { recursive: true, force: true });
    });

    test('sftp put -p and scp -p keep the client\'s time: ls -l, the JSON listing, WebDAV and Last-Modified show it', async () => {
      const when = new Date('2001-02-03T04:05:06Z');
      await writeFile(join(local, 'a.txt'), 'kept by sftp -p\n');
      await writeFile(join(local, 'b.bin'), Buffer.alloc(300 * 1024, 1));
      await utimes(join(local, 'a.txt'), when, when);
      await utimes(join(local, 'b.bin'), when, when);

      const put = await sftpBatch(id, port, 'alice', ['mkdir kept', 'put -p a.txt kept/a.txt', 'put a.txt kept/plain.txt', 'ls -l kept'].join('\n'), local);
      assert.equal(put.code, 0, put.out);
      assert.match(put.out, /Feb {2}3 {2}2001 a\.txt/);
      const scp = await run('scp', ['-q', '-p', ...sshOptions(id, port), join(local, 'b.bin'), 'alice@127.0.0.1:/kept/b.bin']);
      assert.equal(scp.code, 0, scp.out);

      const listing = (await (await fetch(`${t.url}/storage/alice/kept/`, { headers: bearer(token) })).json()) as { entries: { name: string; modified: string }[] };
      const times = Object.fromEntries(listing.entries.map((e) => [e.name, Date.parse(e.modified)]));
      assert.equal(times['a.txt'], when.getTime());
      assert.equal(times['b.bin'], when.getTime());
      assert.ok((times['plain.txt'] ?? 0) > when.getTime() + 86_400_000, 'a put without -p is dated by its upload');

      const dav = await fetch(`${t.url}/dav/alice/kept/`, { method: 'PROPFIND', headers: { ...bearer(token), depth: '1' } });
      assert.equal(dav.status, 207);
      const xml = await dav.text();
      for (const name of ['a.txt', 'b.bin']) {
        const response = xml.split(/<\/(?:\w+:)?response>/).find((r) => r.includes(`/kept/${name}<`));
        assert.match(response ?? '', /getlastmodified>Sat, 03 Feb 2001 04:05:06 GMT</, name);
      }

      const got = await fetch(`${t.url}/storage/alice/kept/b.bin`, { headers: bearer(token) });
      await got.arrayBuffer();
      assert.equal(got.headers.get('last-modified'), when.toUTCString());
    });

    test('rsync -t into an sshfs mount keeps the times, so a second run sends nothing', { skip: fuseSkip() }, async () => {
      const when = new Date('2002-03-04T05:06:07Z');
      const tree = join(local, 'tree');
      await mkdir(join(tree, 'sub'), { recursive: true });
      await writeFile(join(tree, 'one.txt'), 'one');
      await writeFile(join(tree, 'sub', 'two.bin'), Buffer.alloc(200 * 1024, 2));
      await utimes(join(tree, 'one.txt'), when, when);
      await utimes(join(tree, 'sub', 'two.bin'), when, when);
      const at = join(local, 'mnt');
      await mkdir(at);
      const opts = [`IdentityFile=${id.key}`, 'IdentitiesOnly=yes', 'BatchMode=yes', 'StrictHostKeyChecking=accept-new', `UserKnownHostsFile=${id.knownHosts}`].join(',');
      const mount = await run('sshfs', ['-p', String(port), '-o', opts, 'alice@127.0.0.1:/', at], { timeoutMs: 60_000 });
      assert.equal(mount.code, 0, mount.out);
      mnt = at;
      const rsync = () => run('rsync', ['-rt', '--itemize-changes', '--stats', `${tree}/`, join(at, 'synced/')], { timeoutMs: 120_000 });
      const first = await rsync();
      assert.equal(first.code, 0, first.out);
      assert.match(first.out, /Number of regular files transferred: 2\b/);
      const second = await rsync();
      assert.equal(second.code, 0, second.out);
      assert.match(second.out, /Number of regular files transferred: 0\b/, second.out);
      const listing = (await (await fetch(`${t.url}/storage/alice/synced/sub/`, { headers: bearer(token) })).json()) as { entries: { name: string; modified: string }[] };
      assert.equal(Date.parse(listing.entries.find((e) => e.name === 'two.bin')?.modified ?? ''), when.getTime());
      const unmount = await run('fusermount3', ['-u', at]);
      assert.equal(unmount.code, 0, unmount.out);
      mnt = undefined;
    });

    test('rclone keeps the times it copies: the listing and the change feed show them, a second sync finds every file unchanged, a changed time is seen', { skip: toolSkip('rclone') }, async () => {
      const up = join(local, 'rclone-up');
      const times: Record<string, Date> = { 'one.txt': new Date('2003-01-02T03:04:05Z'), 'sub/two.bin': new Date('2004-02-03T04:05:06Z') };
      await mkdir(join(up, 'sub'), { recursive: true });
      await writeFile(join(up, 'one.txt'), 'one by rclone');
      await writeFile(join(up, 'sub/two.bin'), Buffer.alloc(150 * 1024, 3));
      for (const [p, when] of Object.entries(times)) await utimes(join(up, p), when, when);
      const env = rcloneSftpEnv(port, 'alice', { RCLONE_CONFIG_FC_KEY_FILE: id.key });
      const start = ((await (await fetch(`${t.url}/api/changes?cursor=now`, { headers: bearer(token) })).json()) as { cursor: string }).cursor;
      const copied = await run('rclone', ['copy', up, 'fc:/rc'], { env, timeoutMs: 120_000 });
      assert.equal(copied.code, 0, copied.out);

      const listing = (await (await fetch(`${t.url}/storage/alice/rc/sub/`, { headers: bearer(token) })).json()) as { entries: { name: string; modified: string }[] };
      assert.equal(Date.parse(listing.entries.find((e) => e.name === 'two.bin')?.modified ?? ''), times['sub/two.bin']?.getTime());
      const feed = (await (await fetch(`${t.url}/api/changes?cursor=${start}`, { headers: bearer(token) })).json()) as { changes: { path: string; modified: string }[] };
      for (const [p, when] of Object.entries(times)) {
        const last = feed.changes.filter((c) => c.path === `/alice/rc/${p}`).at(-1);
        assert.equal(Date.parse(last?.modified ?? ''), when.getTime(), `the feed's last entry for ${p}`);
      }

      // Sizes and times equal (the SFTP backend has no hash here): nothing to send.
      const again = await run('rclone', ['sync', '--dry-run', '-vv', up, 'fc:/rc'], { env, timeoutMs: 120_000 });
      assert.equal(again.code, 0, again.out);
      assert.equal(again.out.match(/Unchanged skipping/g)?.length, 2, again.out);
      assert.doesNotMatch(again.out, /Skipped (copy|update modification time)/, again.out);
      // The comparison is real: a new time on one local file makes that file differ.
      const moved = new Date('2006-01-01T00:00:00Z');
      await utimes(join(up, 'one.txt'), moved, moved);
      const changed = await run('rclone', ['sync', '--dry-run', '-vv', up, 'fc:/rc'], { env, timeoutMs: 120_000 });
      assert.equal(changed.code, 0, changed.out);
      assert.match(changed.out, /one\.txt: Skipped (copy|update modification time)/, changed.out);
      assert.equal(changed.out.match(/Unchanged skipping/g)?.length, 1, changed.out);
    });

    test('a time set on a stored file is a write: a read-only app password and a WebDAV lock refuse it, and the file keeps its time', async () => {
      const when = new Date('2004-05-06T07:08:09Z');
      await t.fs.put('guarded.txt', 'guarded', 'alice');
      const timeOf = async () => {
        const { entries } = (await (await fetch(`${t.url}/storage/alice/`, { headers: bearer(token) })).json()) as { entries: { name: string; modified: string }[] };
        return Date.parse(entries.find((e) => e.name === 'guarded.txt')?.modified ?? '');
      };
      const first = await timeOf();
      const readOnly = ((await (await postJson(`${t.url}/api/keys`, { name: 'times', read_only: true }, bearer(token))).json()) as { key: string }).key;
      await assert.rejects(withSftp(port, { username: 'alice', password: readOnly }, (s) => setTimes(s, '/guarded.txt', when)), /forbidden/);
      assert.equal(await timeOf(), first);

      const privateKey = await readFile(id.key, 'utf8');
      const url = `${t.url}/dav/alice/guarded.txt`;
      const basic = { authorization: `Basic ${Buffer.from('alice:alice-password').toString('base64')}` };
      const lockinfo = '<?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockinfo>';
      const lock = await fetch(url, { method: 'LOCK', headers: { ...basic, 'content-type': 'application/xml', timeout: 'Second-600' }, body: lockinfo });
      assert.equal(lock.status, 200, await lock.text());
      try {
        await assert.rejects(withSftp(port, { username: 'alice', privateKey }, (s) => setTimes(s, '/guarded.txt', when)), /locked/);
        assert.equal(await timeOf(), first);
      } finally {
        const unlock = await fetch(url, { method: 'UNLOCK', headers: { ...basic, 'lock-token': lock.headers.get('lock-token') ?? '' } });
        assert.equal(unlock.status, 204);
      }
      await withSftp(port, { username: 'alice', privateKey }, (s) => setTimes(s, '/guarded.txt', when));
      assert.equal(await timeOf(), when.getTime());
      assert.equal(await t.fs.text('guarded.txt'), 'guarded');
    });
  });
}
