import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { mountSlowDisk, slowDiskMissing } from '../helpers/slow-disk.js';
import { stagingLeft } from '../helpers/stored.js';

/**
 * The contract: an aborted upload leaves no staging garbage. Here that is
 * promised within a bound: once the client's connection is gone, its staging
 * (a data/tmp file on disk, an open multipart upload on S3) is gone within
 * LEFT_FOR_AT_MOST. Once, under load, a staging file of an upload aborted
 * after 100 MB stayed for more than 5 s: its name was removed only after the
 * file's close, which waits for the background fsync and the writes still
 * queued on a busy disk. Many uploads of every kind are aborted at many
 * points, all at once (the load), over several rounds.
 */
const LEFT_FOR_AT_MOST = { file: 1_000, s3: 5_000 } as const;
const MiB = 1024 * 1024;
/** Byte counts after which the client gives up: before any byte, inside the first chunk, after a background fsync began (32 MiB). */
const ABORT_AFTER = [0, 1, 65_536, MiB, 8 * MiB, 40 * MiB];
const ROUNDS = 3;

/** Sends the head and `bytes` bytes of a body announced much longer, then drops the connection. */
function abortAfter(url: string, head: string, bytes: number, prefix = Buffer.alloc(0)): Promise<void> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    socket.on('error', () => undefined);
    socket.on('connect', async () => {
      try {
        const chunk = Buffer.alloc(256 * 1024, 0x61);
        const write = (b: Buffer) => new Promise<void>((res) => (socket.write(b) ? res() : socket.once('drain', res)));
        await write(Buffer.from(head));
        let sent = 0;
        if (bytes > 0 && prefix.length > 0) {
          await write(prefix.subarray(0, bytes));
          sent = Math.min(bytes, prefix.length);
        }
        while (sent < bytes) {
          const n = Math.min(chunk.length, bytes - sent);
          await write(chunk.subarray(0, n));
          sent += n;
        }
        // Every byte handed to the kernel reached the server's socket before the reset.
        await new Promise<void>((res) => socket.write(Buffer.alloc(0), () => res()));
        socket.resetAndDestroy();
        resolve();
      } catch (e) {
        reject(e as Error);
      }
    });
  });
}

for (const [storage, skip] of BACKENDS) {
  describe(`aborted uploads leave no staging (${storage})`, { skip }, () => {
    let t: TestApp;
    let token: string;
    let quotaToken: string;

    before(async () => {
      t = await startApp({ storage, users: ['alice', 'bob'] });
      token = (await t.login('alice')).access_token;
      quotaToken = (await t.login('bob')).access_token;
      // bob has a quota: his uploads take the metered path (reservation, usage.meter).
      const admin = 'quota-setter';
      await t.addUser(admin, { admin: true });
      const adminToken = (await t.login(admin)).access_token;
      const res = await fetch(`${t.url}/api/admin/users/bob`, { method: 'PATCH', headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' }, body: JSON.stringify({ quota: 10 * 1024 * MiB }) });
      assert.equal(res.status, 200, await res.text());
    });
    after(async () => {
      await t?.close();
    });

    const ANNOUNCED = 200 * MiB;
    const base = () => new URL(t.url).pathname.replace(/\/$/, '');
    const host = () => new URL(t.url).host;
    const uploads = (round: number): (() => Promise<void>)[] => {
      const jobs: (() => Promise<void>)[] = [];
      for (const [user, tok] of [['alice', token], ['bob', quotaToken]] as const) {
        // The 40 MiB point is for the disk's background fsync; an object store has none, and its parts are 8 MiB.
        for (const bytes of storage === 'file' ? ABORT_AFTER : ABORT_AFTER.filter((b) => b <= 8 * MiB)) {
          const name = `r${round}-${bytes}`;
          const auth = `Authorization: Bearer ${tok}\r\nHost: ${host()}\r\n`;
          jobs.push(() => abortAfter(t.url, `PUT ${base()}/storage/${user}/raw/${name}.bin HTTP/1.1\r\n${auth}Content-Type: application/octet-stream\r\nContent-Length: ${ANNOUNCED}\r\n\r\n`, bytes));
          const boundary = 'xBOUNDARYx';
          const partHead = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="f"; filename="${name}.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`);
          jobs.push(() => abortAfter(t.url, `PUT ${base()}/storage/${user}/multi/ HTTP/1.1\r\n${auth}Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${ANNOUNCED}\r\n\r\n`, bytes === 0 ? 0 : partHead.length + bytes, partHead));
          jobs.push(() => abortAfter(t.url, `PUT ${base()}/dav/${user}/dav-${name}.bin HTTP/1.1\r\n${auth}Content-Type: application/octet-stream\r\nContent-Length: ${ANNOUNCED}\r\n\r\n`, bytes));
        }
      }
      return jobs;
    };

    test(`${ROUNDS} rounds of uploads aborted at ${ABORT_AFTER.length} points (raw, multipart, WebDAV; with and without a quota): staging gone within the bound`, async () => {
      const bound = storage === 'file' ? LEFT_FOR_AT_MOST.file : LEFT_FOR_AT_MOST.s3;
      for (let round = 0; round < ROUNDS; round++) {
        await Promise.all(uploads(round).map((job) => job()));
        const aborted = Date.now();
        let left = await stagingLeft(t, { resumable: 'ignore' });
        while (left.length > 0 && Date.now() - aborted < bound) {
          await sleep(20);
          left = await stagingLeft(t, { resumable: 'ignore' });
        }
        assert.deepEqual(left, [], `round ${round}: staging still there ${Date.now() - aborted} ms after the last client went away`);
      }
    });
  });
}

/**
 * The finding itself, made certain: on a disk where closing a file takes seconds (a real
 * filesystem, FUSE, whose close is slow for staging files, as on a network mount or a busy disk),
 * an aborted upload's staging name still goes within the bound, because it goes before the close.
 * (Removing it only after the close, it stayed CLOSE_TAKES.) One upload at a time: each slow close
 * holds one of libuv's four threads.
 */
const CLOSE_TAKES = 4_000;
// In CI (CI set) nothing may be missing: there the test runs and fails instead of skipping.
const slowDiskSkip = process.env.CI ? undefined : process.getuid?.() !== 0 ? 'mounting a FUSE filesystem needs root here' : slowDiskMissing();
if (slowDiskSkip) console.log(`# upload-abort slow disk: skipped, ${slowDiskSkip}`);
describe('aborted uploads on a disk whose close is slow (file)', { skip: slowDiskSkip }, () => {
  test(`staging gone within ${LEFT_FOR_AT_MOST.file} ms although closing takes ${CLOSE_TAKES} ms (raw, multipart, WebDAV)`, async () => {
    const disk = await mountSlowDisk({ closeDelayMs: CLOSE_TAKES, slowPrefix: '/tmp/' });
    let t: TestApp | undefined;
    let dataDir: string | undefined;
    try {
      // Files and their staging on the slow disk (one filesystem, for rename and link); the SQLite
      // database stays off it (FUSE does not serve its shared memory map).
      dataDir = await mkdtemp(join(tmpdir(), 'fc-slow-data-'));
      await mkdir(join(disk.dir, 'storage'));
      await mkdir(join(disk.dir, 'tmp'));
      await symlink(join(disk.dir, 'storage'), join(dataDir, 'storage'));
      await symlink(join(disk.dir, 'tmp'), join(dataDir, 'tmp'));
      t = await startApp({ flags: { dataDir }, users: ['alice'] });
      const tok = (await t.login('alice')).access_token;
      const { host, pathname } = new URL(t.url);
      const base = pathname.replace(/\/$/, '');
      const auth = `Authorization: Bearer ${tok}\r\nHost: ${host}\r\n`;
      const boundary = 'xBOUNDARYx';
      const partHead = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="f"; filename="m.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`);
      const heads: [string, string, Buffer<ArrayBuffer>?][] = [
        ['raw', `PUT ${base}/storage/alice/raw.bin HTTP/1.1\r\n${auth}Content-Type: application/octet-stream\r\nContent-Length: ${100 * MiB}\r\n\r\n`],
        ['multipart', `PUT ${base}/storage/alice/ HTTP/1.1\r\n${auth}Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${100 * MiB}\r\n\r\n`, partHead],
        ['WebDAV', `PUT ${base}/dav/alice/dav.bin HTTP/1.1\r\n${auth}Content-Type: application/octet-stream\r\nContent-Length: ${100 * MiB}\r\n\r\n`],
      ];
      for (const [kind, head, prefix] of heads) {
        // Until the staging file exists, so the abort finds a file to clean up.
        const sending = abortAfter(t.url, head, (prefix?.length ?? 0) + MiB, prefix);
        await sending;
        const aborted = Date.now();
        let left = await stagingLeft(t, { resumable: 'ignore' });
        while (left.length > 0 && Date.now() - aborted < LEFT_FOR_AT_MOST.file) {
          await sleep(20);
          left = await stagingLeft(t, { resumable: 'ignore' });
        }
        assert.deepEqual(left, [], `${kind}: staging still there ${Date.now() - aborted} ms after the client went away`);
        // The slow close of this upload ends before the next begins (one libuv thread each).
        await sleep(CLOSE_TAKES);
      }
    } finally {
      await t?.close();
      if (dataDir) await rm(dataDir, { recursive: true, force: true });
      await disk.unmount();
    }
  });
});
