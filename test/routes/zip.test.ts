import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import Fastify from 'fastify';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { bearer, postJson } from '../helpers/client.js';
import { readZip } from '../helpers/zip-reader.js';
import { AppError } from '../../src/domain/errors.js';
import { installErrorHandling } from '../../src/http/error-handler.js';
import { sendFolderZip } from '../../src/routes/zip-reply.js';
import { createZipService } from '../../src/services/zip.js';
import { systemClock } from '../../src/lib/clock.js';

const big = randomBytes(100_000);
const tree: [string, string | Buffer][] = [
  ['proj/a.txt', 'hello'],
  ['proj/sub/b.bin', big],
  ['proj/sub/deeper/c.txt', 'deep'],
  ['proj/zero.bin', Buffer.alloc(0)],
  ['proj/日本語.txt', 'cjk'],
  ['proj/😀 party.txt', 'emoji'],
  ['proj/caf\u00e9.txt', 'nfc'],
];
const wantNames = [
  'proj/',
  'proj/a.txt',
  'proj/caf\u00e9.txt',
  'proj/empty/',
  'proj/sub/',
  'proj/sub/b.bin',
  'proj/sub/deeper/',
  'proj/sub/deeper/c.txt',
  'proj/zero.bin',
  'proj/日本語.txt',
  'proj/😀 party.txt',
];

for (const [storage, skip] of BACKENDS) {
  describe(`folder zips on ${storage}`, { skip }, () => {
    let t: TestApp;
    let auth: Record<string, string>;
    const zipUrl = (q = '') => `${t.url}/storage/alice/proj/?zip=1${q}`;
    const get = (url: string, headers: Record<string, string> = {}, method = 'GET') => fetch(url, { method, headers: { ...auth, ...headers } });
    let whole: Buffer;
    let etag: string;

    before(async () => {
      t = await startApp({ users: ['alice', 'bob'], storage });
      auth = bearer((await t.login('alice')).access_token);
      for (const [p, data] of tree) await t.fs.put(p, data);
      await t.fs.mkdir('proj/empty');
      await t.fs.put('other.txt', 'outside');
    });
    after(() => t.close());

    test('a folder downloads as a zip with its headers, every entry and the exact bytes', async () => {
      const res = await get(zipUrl());
      assert.equal(res.status, 200);
      whole = Buffer.from(await res.arrayBuffer());
      assert.equal(res.headers.get('content-type'), 'application/zip');
      assert.equal(res.headers.get('content-length'), String(whole.length));
      assert.equal(res.headers.get('accept-ranges'), 'bytes');
      assert.equal(res.headers.get('content-disposition'), 'attachment; filename="proj.zip"');
      assert.equal(res.headers.get('last-modified'), null, 'only the ETag validates a zip');
      etag = res.headers.get('etag') ?? '';
      assert.match(etag, /^"z-[A-Za-z0-9_-]+"$/, 'a strong ETag');
      const entries = readZip(whole);
      assert.deepEqual(entries.map((e) => e.name), wantNames);
      for (const e of entries) assert.equal(e.flags & 0x0800, 0x0800, `UTF-8 flag on ${e.name}`);
      for (const [p, data] of tree) assert.ok(entries.find((e) => e.name === p)?.data?.equals(Buffer.from(data)), p);
    });

    test('the same tree gives the same bytes and ETag again; HEAD gives the same headers without a body', async () => {
      const again = await get(zipUrl());
      assert.equal(again.headers.get('etag'), etag);
      assert.ok(Buffer.from(await again.arrayBuffer()).equals(whole));
      const head = await get(zipUrl(), {}, 'HEAD');
      assert.equal(head.status, 200);
      assert.equal(head.headers.get('content-length'), String(whole.length));
      assert.equal(head.headers.get('etag'), etag);
      assert.equal((await head.arrayBuffer()).byteLength, 0);
    });

    test('If-None-Match answers 304; Range 206; past the end 416', async () => {
      const cached = await get(zipUrl(), { 'if-none-match': etag });
      assert.equal(cached.status, 304);
      assert.equal(cached.headers.get('etag'), etag);
      for (const [range, start, end] of [
        ['bytes=0-99', 0, 99],
        ['bytes=500-', 500, whole.length - 1],
        ['bytes=-30', whole.length - 30, whole.length - 1],
        ['bytes=300-60000', 300, 60_000],
      ] as const) {
        const res = await get(zipUrl(), { range });
        assert.equal(res.status, 206, range);
        assert.equal(res.headers.get('content-range'), `bytes ${start}-${end}/${whole.length}`);
        assert.equal(res.headers.get('content-length'), String(end - start + 1));
        assert.ok(Buffer.from(await res.arrayBuffer()).equals(whole.subarray(start, end + 1)), range);
      }
      const past = await get(zipUrl(), { range: `bytes=${whole.length}-` });
      assert.equal(past.status, 416);
      assert.equal(past.headers.get('content-range'), `bytes */${whole.length}`);
      assert.equal(((await past.json()) as { error: string }).error, 'range_not_satisfiable');
    });

    test('If-Range: the current ETag gets the range, another ETag or a date the whole zip', async () => {
      const match = await get(zipUrl(), { range: 'bytes=10-19', 'if-range': etag });
      assert.equal(match.status, 206);
      assert.ok(Buffer.from(await match.arrayBuffer()).equals(whole.subarray(10, 20)));
      for (const ifRange of ['"z-old"', new Date(Date.now() + 3600_000).toUTCString()]) {
        const res = await get(zipUrl(), { range: 'bytes=10-19', 'if-range': ifRange });
        assert.equal(res.status, 200, ifRange);
        assert.equal((await res.arrayBuffer()).byteLength, whole.length);
      }
    });

    test('name= selects entries directly inside the folder', async () => {
      const res = await get(zipUrl(`&name=a.txt&name=sub&name=${encodeURIComponent('日本語.txt')}`));
      assert.equal(res.status, 200);
      const names = readZip(Buffer.from(await res.arrayBuffer())).map((e) => e.name);
      assert.deepEqual(names, ['proj/', 'proj/a.txt', 'proj/sub/', 'proj/sub/b.bin', 'proj/sub/deeper/', 'proj/sub/deeper/c.txt', 'proj/日本語.txt']);
      assert.notEqual(res.headers.get('etag'), etag);
      const missing = await get(zipUrl('&name=a.txt&name=nope'));
      assert.equal(missing.status, 404);
      assert.equal(((await missing.json()) as { error: string }).error, 'not_found');
      for (const bad of ['..', 'sub%2Fb.bin', '', 'a%5Cb']) {
        const res2 = await get(zipUrl(`&name=${bad}`));
        assert.equal(res2.status, 400, `name=${bad}`);
        assert.equal(((await res2.json()) as { error: string }).error, 'invalid_name');
      }
    });

    test("a user's root zips under the username; errors for a file, a missing folder, another user", async () => {
      const res = await get(`${t.url}/storage/alice/?zip=1`);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-disposition'), 'attachment; filename="alice.zip"');
      const names = readZip(Buffer.from(await res.arrayBuffer())).map((e) => e.name);
      assert.ok(names.includes('alice/') && names.includes('alice/other.txt') && names.includes('alice/proj/sub/b.bin'), names.join());
      assert.equal((await get(`${t.url}/storage/alice/other.txt?zip=1`)).status, 409);
      assert.equal((await get(`${t.url}/storage/alice/nothing/?zip=1`)).status, 404);
      assert.equal((await fetch(zipUrl())).status, 401);
      const bob = bearer((await t.login('bob')).access_token);
      assert.equal((await fetch(zipUrl(), { headers: bob })).status, 401);
    });

    test("a path token for the folder downloads its zip, and nothing else's", async () => {
      const made = await postJson(`${t.url}/storage/alice/proj/`, { action: 'MakePathToken' }, auth);
      assert.equal(made.status, 200);
      const token = encodeURIComponent(((await made.json()) as { token: string }).token);
      const res = await fetch(`${t.url}/storage/alice/proj/?zip=1&token=${token}`);
      assert.equal(res.status, 200);
      assert.ok(Buffer.from(await res.arrayBuffer()).equals(whole));
      assert.equal((await fetch(`${t.url}/storage/alice/?zip=1&token=${token}`)).status, 401);
    });

    test('a change in the tree changes the ETag and the bytes', async () => {
      await t.fs.put('proj/zz.txt', 'new');
      const res = await get(zipUrl());
      assert.notEqual(res.headers.get('etag'), etag);
      assert.ok(readZip(Buffer.from(await res.arrayBuffer())).some((e) => e.name === 'proj/zz.txt'));
      const stale = await get(zipUrl(), { range: 'bytes=10-19', 'if-range': etag });
      assert.equal(stale.status, 200, 'a resume against the old ETag restarts');
      await stale.arrayBuffer();
    });

    test('a file replaced while the zip streams cuts the connection instead of sending another archive', async () => {
      await t.fs.put('race/1-big.bin', randomBytes(24 * 1024 * 1024));
      await t.fs.put('race/2-big.bin', randomBytes(24 * 1024 * 1024));
      await t.fs.put('race/3-small.txt', 'before');
      const res = await get(`${t.url}/storage/alice/race/?zip=1`);
      assert.equal(res.status, 200);
      const reader = (res.body as ReadableStream<Uint8Array>).getReader();
      await reader.read();
      // The first big file fills the socket buffers, so the small one (two files on; only the next file
      // is opened ahead) is opened only after this.
      await t.fs.put('race/3-small.txt', 'after, and longer');
      let got = 0;
      await assert.rejects(async () => {
        for (;;) {
          const r = await reader.read();
          if (r.done) break;
          got += r.value.length;
        }
      });
      assert.ok(got < Number(res.headers.get('content-length')));
    });

    if (storage === 'file') {
      test('symbolic links inside the folder are not followed', async () => {
        await t.fs.put('links/real.txt', 'real');
        const dir = join(t.paths.storage, 'alice', 'links');
        const outside = join(t.dataDir, 'secret.txt');
        await writeFile(outside, 'secret');
        await symlink(outside, join(dir, 'to-file'));
        await symlink(t.dataDir, join(dir, 'to-dir'));
        const res = await get(`${t.url}/storage/alice/links/?zip=1`);
        assert.equal(res.status, 200);
        const zip = Buffer.from(await res.arrayBuffer());
        assert.deepEqual(readZip(zip).map((e) => e.name), ['links/', 'links/real.txt']);
        assert.ok(!zip.includes('secret'));
      });
    }

    if (storage !== 'cluster') {
      test('sendFolderZip: archiveName, and charge for every answer that sends bytes, with what it sent', async () => {
        const app = Fastify();
        installErrorHandling(app);
        const calls: [number, number][] = [];
        const settled: number[] = [];
        let refuse = false;
        app.get('/z', (request, reply) =>
          sendFolderZip(request, reply, createZipService({ backend: t.backend, crcs: t.store.zipCrcs, clock: systemClock }), {
            folder: { user: 'alice', segments: ['proj'] },
            names: ['a.txt'],
            archiveName: 'Shared thing',
            charge: async (bytes, size) => {
              if (refuse) throw new AppError('not_found', 'gone');
              calls.push([bytes, size]);
              return (sent) => settled.push(sent);
            },
          }),
        );
        await app.listen({ host: '127.0.0.1', port: 0 });
        try {
          const address = app.server.address();
          const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/z`;
          const res = await fetch(url);
          assert.equal(res.status, 200);
          assert.equal(res.headers.get('content-disposition'), 'attachment; filename="Shared thing.zip"');
          const zip = Buffer.from(await res.arrayBuffer());
          assert.deepEqual(readZip(zip).map((e) => e.name), ['Shared thing/', 'Shared thing/a.txt']);
          assert.deepEqual(calls, [[zip.length, zip.length]]);
          assert.equal((await fetch(url, { method: 'HEAD' })).status, 200);
          assert.equal((await fetch(url, { headers: { 'if-none-match': res.headers.get('etag') ?? '' } })).status, 304);
          assert.equal(calls.length, 1, 'HEAD and a 304 send no bytes');
          const later = await fetch(url, { headers: { range: 'bytes=5-' } });
          assert.equal(later.status, 206);
          await later.arrayBuffer();
          assert.deepEqual(calls[1], [zip.length - 5, zip.length], 'a later range counts what it sends');
          const deadline = Date.now() + 5000;
          while (settled.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
          assert.deepEqual(settled, [zip.length, zip.length - 5], 'settled with the bytes sent');
          refuse = true;
          assert.equal((await fetch(url)).status, 404, 'charge may refuse');
        } finally {
          await app.close();
        }
      });
    }
  });
}
