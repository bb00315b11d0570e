import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { utimes } from 'node:fs/promises';
import { join } from 'node:path';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { bearer, encodePath } from '../helpers/client.js';

for (const [storage, skip] of BACKENDS) {
  describe(`storage reads on ${storage}`, { skip }, () => {
    let t: TestApp;
    let auth: Record<string, string>;
    before(async () => {
      t = await startApp({ users: ['alice'], storage });
      auth = bearer((await t.login('alice')).access_token);
      await t.fs.mkdir('b-folder');
      await t.fs.mkdir('A-folder');
      await t.fs.put('a.txt', 'hello world');
      await t.fs.put('B.bin', Buffer.alloc(1000, 1));
      await t.fs.put('é.txt', 'accent');
      await t.fs.put('.hidden', 'dot');
      await t.fs.put('page.html', '<script>alert(1)</script>');
      await t.fs.put('\uffee.txt', 'bmp');
      await t.fs.put('😀.txt', 'astral');
      // Local files keep any date; an object's date is the time it was stored.
      if (storage === 'file') await utimes(join(t.paths.storage, 'alice', 'a.txt'), new Date('2026-01-02T03:04:05Z'), new Date('2026-01-02T03:04:05Z'));
    });
    after(() => t.close());
    const wantModified = () => (storage === 'file' ? '2026-01-02T03:04:05.000Z' : undefined);

    test('a folder lists its entries, folders first, then names in code-point order', async () => {
      const res = await fetch(`${t.url}/storage/alice/`, { headers: auth });
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
      const { entries } = (await res.json()) as { entries: { is_file: boolean; name: string; size: number; modified: string }[] };
      assert.deepEqual(entries.map((e) => e.name), ['A-folder', 'b-folder', '.hidden', 'B.bin', 'a.txt', 'page.html', 'é.txt', '\uffee.txt', '😀.txt']);
      const a = entries.find((e) => e.name === 'a.txt');
      // The sync fields beside these (id, sha256, etag): test/routes/sync-fields.test.ts.
      assert.deepEqual(a && { is_file: a.is_file, name: a.name, size: a.size, modified: a.modified }, { is_file: true, name: 'a.txt', size: 11, modified: wantModified() ?? a?.modified });
      if (!wantModified()) assert.ok(Math.abs(Date.parse(a?.modified ?? '') - Date.now()) < 120_000, 'an object is dated when it was stored');
      const folder = entries[0];
      assert.equal(folder?.is_file, false);
      assert.equal(typeof folder?.size, 'number');
      for (const e of entries) assert.match(e.modified, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    });

    test('the root needs its trailing slash; other folders work with or without one', async () => {
      assert.equal((await fetch(`${t.url}/storage/alice`, { headers: auth })).status, 404);
      assert.equal((await fetch(`${t.url}/storage/alice/A-folder`, { headers: auth })).status, 200);
      assert.equal((await fetch(`${t.url}/storage/alice/A-folder/`, { headers: auth })).status, 200);
    });

    test('a plain GET (opened at once) and a conditional GET (stat first) answer alike; a folder without its slash lists, a file with one is 404', async () => {
      const plain = await fetch(`${t.url}/storage/alice/a.txt`, { headers: auth });
      const conditional = await fetch(`${t.url}/storage/alice/a.txt`, { headers: { ...auth, 'if-none-match': '"not-this-one"' } });
      assert.equal(plain.status, 200);
      assert.equal(conditional.status, 200);
      for (const h of ['content-type', 'content-length', 'etag', 'last-modified', 'accept-ranges', 'cache-control', 'x-content-type-options', 'content-security-policy']) {
        assert.equal(plain.headers.get(h), conditional.headers.get(h), h);
      }
      assert.equal(await plain.text(), await conditional.text());
      const bare = await fetch(`${t.url}/storage/alice/A-folder`, { headers: auth });
      const slashed = await fetch(`${t.url}/storage/alice/A-folder/`, { headers: auth });
      assert.equal(bare.headers.get('content-type'), 'application/json; charset=utf-8');
      assert.equal(await bare.text(), await slashed.text());
      const fileSlash = await fetch(`${t.url}/storage/alice/a.txt/`, { headers: auth });
      assert.equal(fileSlash.status, 404);
      assert.equal(((await fileSlash.json()) as { error: string }).error, 'not_found');
    });

    test('a file downloads with its headers', async () => {
      const res = await fetch(`${t.url}/storage/alice/a.txt`, { headers: auth });
      assert.equal(res.status, 200);
      assert.equal(await res.text(), 'hello world');
      assert.equal(res.headers.get('content-type'), 'text/plain; charset=utf-8');
      assert.equal(res.headers.get('content-length'), '11');
      assert.match(res.headers.get('etag') ?? '', /^"[^"]+"$/);
      if (storage === 'file') assert.equal(res.headers.get('last-modified'), 'Fri, 02 Jan 2026 03:04:05 GMT');
      else assert.ok(Math.abs(Date.parse(res.headers.get('last-modified') ?? '') - Date.now()) < 120_000);
      assert.equal(res.headers.get('accept-ranges'), 'bytes');
      assert.equal(res.headers.get('content-disposition'), null);
      assert.equal((await fetch(`${t.url}/storage/alice/B.bin`, { headers: auth })).headers.get('content-type'), 'application/octet-stream');
    });

    test('unicode, dot-files and encoded names download', async () => {
      assert.equal(await (await fetch(`${t.url}/storage/alice/${encodePath('é.txt')}`, { headers: auth })).text(), 'accent');
      assert.equal(await (await fetch(`${t.url}/storage/alice/.hidden`, { headers: auth })).text(), 'dot');
    });

    test('a missing file or folder is 404 with the contract body', async () => {
      for (const p of ['nothing.txt', 'nothing/', 'A-folder/deeper/x', 'a.txt/']) {
        const res = await fetch(`${t.url}/storage/alice/${p}`, { headers: auth });
        assert.equal(res.status, 404, p);
        assert.equal(((await res.json()) as { error: string }).error, 'not_found', p);
      }
    });

    test('HEAD mirrors GET without a body', async () => {
      const get = await fetch(`${t.url}/storage/alice/a.txt`, { headers: auth });
      const head = await fetch(`${t.url}/storage/alice/a.txt`, { method: 'HEAD', headers: auth });
      assert.equal(head.status, 200);
      assert.equal(await head.text(), '');
      for (const h of ['content-type', 'content-length', 'etag', 'last-modified', 'accept-ranges']) assert.equal(head.headers.get(h), get.headers.get(h), h);
      assert.equal((await fetch(`${t.url}/storage/alice/A-folder`, { method: 'HEAD', headers: auth })).status, 200);
      assert.equal((await fetch(`${t.url}/storage/alice/missing`, { method: 'HEAD', headers: auth })).status, 404);
    });

    test('a single Range gives 206 and the bytes; a range outside the file gives 416', async () => {
      const rows: [string, number, string, string | null][] = [
        ['bytes=0-4', 206, 'hello', 'bytes 0-4/11'],
        ['bytes=6-', 206, 'world', 'bytes 6-10/11'],
        ['bytes=-5', 206, 'world', 'bytes 6-10/11'],
        ['bytes=6-100', 206, 'world', 'bytes 6-10/11'],
        ['bytes=11-', 416, '', 'bytes */11'],
        ['bytes=50-60', 416, '', 'bytes */11'],
        ['bytes=0-1,3-4', 200, 'hello world', null],
        ['items=0-1', 200, 'hello world', null],
      ];
      for (const [range, status, body, contentRange] of rows) {
        const res = await fetch(`${t.url}/storage/alice/a.txt`, { headers: { ...auth, range } });
        assert.equal(res.status, status, range);
        assert.equal(res.headers.get('content-range'), contentRange, range);
        if (status === 416) assert.equal(((await res.json()) as { error: string }).error, 'range_not_satisfiable');
        else assert.equal(await res.text(), body, range);
      }
    });

    test('If-Range with the current ETag keeps the range; with an old one the whole file is sent', async () => {
      const etag = (await fetch(`${t.url}/storage/alice/a.txt`, { method: 'HEAD', headers: auth })).headers.get('etag') as string;
      const current = await fetch(`${t.url}/storage/alice/a.txt`, { headers: { ...auth, range: 'bytes=0-4', 'if-range': etag } });
      assert.equal(current.status, 206);
      assert.equal(await current.text(), 'hello');
      const stale = await fetch(`${t.url}/storage/alice/a.txt`, { headers: { ...auth, range: 'bytes=0-4', 'if-range': '"an-older-version"' } });
      assert.equal(stale.status, 200);
      assert.equal(await stale.text(), 'hello world');
    });

    test('If-None-Match and If-Modified-Since give 304', async () => {
      const first = await fetch(`${t.url}/storage/alice/a.txt`, { headers: auth });
      const etag = first.headers.get('etag') as string;
      const lastModified = first.headers.get('last-modified') as string;
      const rows: [Record<string, string>, number][] = [
        [{ 'if-none-match': etag }, 304],
        [{ 'if-none-match': `"other", ${etag}` }, 304],
        [{ 'if-none-match': '"other"' }, 200],
        [{ 'if-modified-since': lastModified }, 304],
        [{ 'if-modified-since': new Date(Date.parse(lastModified) - 86_400_000).toUTCString() }, 200],
        [{ 'if-modified-since': 'not a date' }, 200],
      ];
      for (const [headers, status] of rows) {
        const res = await fetch(`${t.url}/storage/alice/a.txt`, { headers: { ...auth, ...headers } });
        assert.equal(res.status, status, JSON.stringify(headers));
        if (status === 304) assert.equal(await res.text(), '');
      }
    });

    test('?download=1 adds an RFC 6266 attachment disposition', async () => {
      const res = await fetch(`${t.url}/storage/alice/${encodePath('é.txt')}?download=1`, { headers: auth });
      const cd = res.headers.get('content-disposition') ?? '';
      assert.match(cd, /^attachment;/);
      assert.ok(cd.includes("filename*=UTF-8''%C3%A9.txt"), cd);
    });

    test('every storage response is sandboxed and nosniff, errors included', async () => {
      for (const p of ['page.html', '', 'missing']) {
        const res = await fetch(`${t.url}/storage/alice/${p}`, { headers: auth });
        assert.equal(res.headers.get('content-security-policy'), 'sandbox', p);
        assert.equal(res.headers.get('x-content-type-options'), 'nosniff', p);
      }
      const unauth = await fetch(`${t.url}/storage/alice/page.html`);
      assert.equal(unauth.headers.get('content-security-policy'), 'sandbox');
    });

    test('a large file streams whole', async () => {
      const big = Buffer.alloc(5 * 1024 * 1024 + 7, 0x61);
      await t.fs.put('big.bin', big);
      const res = await fetch(`${t.url}/storage/alice/big.bin`, { headers: auth });
      assert.equal(Buffer.compare(Buffer.from(await res.arrayBuffer()), big), 0);
    });
  });
}
