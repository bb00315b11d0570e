import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { bearer, encodePath } from '../helpers/client.js';
import { multipartBody, type Part } from '../helpers/multipart.js';
import { stagingLeft } from '../helpers/stored.js';

for (const [storage, skip] of BACKENDS) {
  describe(`storage writes on ${storage}`, { skip }, () => {
    let t: TestApp;
    let auth: Record<string, string>;
    before(async () => {
      t = await startApp({ users: ['alice'], flags: { maxUploadSize: '1M' }, storage });
      auth = bearer((await t.login('alice')).access_token);
    });
    after(() => t.close());

    const upload = (path: string, parts: Part[], query = '') => {
      const { body, contentType } = multipartBody(parts);
      return fetch(`${t.url}/storage/alice/${path}${query}`, { method: 'PUT', headers: { ...auth, 'content-type': contentType }, body });
    };
    const filesWritten = async (res: Response) => {
      assert.equal(res.status, 201, await res.clone().text());
      return ((await res.json()) as { files_written: string[] }).files_written;
    };
    const nothingLeft = async () => assert.deepEqual(await stagingLeft(t), []);

    test('multipart PUT to a folder writes every file part, creating the folder and its parents', async () => {
      const res = await upload('new/deep/', [
        { name: 'a', filename: 'one.txt', content: 'first' },
        { name: 'note', content: 'a plain field is ignored' },
        { name: 'b', filename: 'two.txt', content: 'second' },
      ]);
      assert.deepEqual(await filesWritten(res), ['one.txt', 'two.txt']);
      assert.equal(await t.fs.text('new/deep/one.txt'), 'first');
      assert.equal(await t.fs.text('new/deep/two.txt'), 'second');
      await nothingLeft();
    });

    test('a taken name becomes name (1).ext, name (2).ext; overwrite=true replaces', async () => {
      assert.deepEqual(await filesWritten(await upload('c/', [{ filename: 'x.txt', content: 'v1' }])), ['x.txt']);
      assert.deepEqual(await filesWritten(await upload('c/', [{ filename: 'x.txt', content: 'v2' }])), ['x (1).txt']);
      assert.deepEqual(await filesWritten(await upload('c/', [{ filename: 'x.txt', content: 'v3' }, { filename: 'x.txt', content: 'v4' }])), ['x (2).txt', 'x (3).txt']);
      assert.deepEqual(await filesWritten(await upload('c/', [{ filename: 'x.txt', content: 'v5' }], '?overwrite=true')), ['x.txt']);
      assert.equal(await t.fs.text('c/x.txt'), 'v5');
      assert.equal(await t.fs.text('c/x (1).txt'), 'v2');
      assert.deepEqual(await t.fs.names('c'), ['x (1).txt', 'x (2).txt', 'x (3).txt', 'x.txt']);
    });

    test('the filename is reduced to its last segment', async () => {
      assert.deepEqual(await filesWritten(await upload('seg/', [{ filename: 'dir/sub/file.txt', content: '1' }, { filename: 'C:\\Users\\me\\win.txt', content: '2' }])), ['file.txt', 'win.txt']);
    });

    test('invalid file names are refused with 400', async () => {
      for (const filename of ['..', '.', 'dir/..', 'a\u0000b', 'x'.repeat(300)]) {
        const res = await upload('bad/', [{ filename, content: 'x' }]);
        assert.equal(res.status, 400, JSON.stringify(filename));
        assert.ok(['invalid_name', 'bad_request'].includes(((await res.json()) as { error: string }).error));
      }
      await nothingLeft();
    });

    test('a multipart body without file parts, without a boundary, or truncated is 400 and leaves nothing', async () => {
      assert.equal((await upload('none/', [{ name: 'field', content: 'only a field' }])).status, 400);
      const noBoundary = await fetch(`${t.url}/storage/alice/nb/`, { method: 'PUT', headers: { ...auth, 'content-type': 'multipart/form-data' }, body: 'x' });
      assert.equal(noBoundary.status, 400);
      const { body, contentType } = multipartBody([{ filename: 'trunc.txt', content: 'y'.repeat(10_000) }]);
      const truncated = await fetch(`${t.url}/storage/alice/tr/`, { method: 'PUT', headers: { ...auth, 'content-type': contentType }, body: body.subarray(0, 5000) });
      assert.equal(truncated.status, 400);
      assert.equal(await t.fs.kind('tr/trunc.txt'), undefined);
      await nothingLeft();
    });

    test('raw PUT to a file path creates it, then replaces it; parents are created', async () => {
      let res = await fetch(`${t.url}/storage/alice/raw/dir/${encodePath('data #1 %.json')}`, { method: 'PUT', headers: { ...auth, 'content-type': 'application/json' }, body: '{"not": "parsed"' });
      assert.deepEqual(await filesWritten(res), ['data #1 %.json']);
      assert.equal(await t.fs.text('raw/dir/data #1 %.json'), '{"not": "parsed"');
      res = await fetch(`${t.url}/storage/alice/raw/dir/${encodePath('data #1 %.json')}`, { method: 'PUT', headers: auth, body: 'v2' });
      assert.deepEqual(await filesWritten(res), ['data #1 %.json']);
      assert.equal(await t.fs.text('raw/dir/data #1 %.json'), 'v2');
      res = await fetch(`${t.url}/storage/alice/raw/empty.bin`, { method: 'PUT', headers: auth, body: '' });
      assert.equal(res.status, 201);
      assert.deepEqual(await t.fs.read('raw/empty.bin'), Buffer.alloc(0));
    });

    test('raw PUT onto a folder is 409; through a file is 409; to a path ending in / is 400', async () => {
      await t.fs.mkdir('folder');
      await t.fs.put('plain.txt', 'x');
      const put = (p: string) => fetch(`${t.url}/storage/alice/${p}`, { method: 'PUT', headers: auth, body: 'data' });
      const rows: [string, number, string][] = [
        ['folder', 409, 'is_a_directory'],
        ['folder/', 409, 'is_a_directory'],
        ['', 409, 'is_a_directory'],
        ['plain.txt/inside.txt', 409, 'not_a_directory'],
        ['nofolder/', 400, 'invalid_path'],
      ];
      for (const [p, status, code] of rows) {
        const res = await put(p);
        assert.equal(res.status, status, p);
        assert.equal(((await res.json()) as { error: string }).error, code, p);
      }
      assert.equal(await t.fs.text('plain.txt'), 'x');
      await nothingLeft();
    });

    test('multipart into a path where a file is is 409', async () => {
      await t.fs.put('afile', 'x');
      const res = await upload('afile/', [{ filename: 'y.txt', content: 'y' }]);
      assert.equal(res.status, 409);
    });

    test('--max-upload-size: a larger upload gets 413 and leaves nothing behind', async () => {
      const big = Buffer.alloc(1024 * 1024 + 1, 1);
      const raw = await fetch(`${t.url}/storage/alice/big/raw.bin`, { method: 'PUT', headers: auth, body: big });
      assert.equal(raw.status, 413);
      assert.equal(((await raw.json()) as { error: string }).error, 'too_large');
      const multi = await upload('big/', [{ filename: 'multi.bin', content: big }]);
      assert.equal(multi.status, 413);
      assert.equal(await t.fs.kind('big/raw.bin'), undefined);
      assert.equal(await t.fs.kind('big/multi.bin'), undefined);
      // Exactly the limit is fine.
      assert.equal((await fetch(`${t.url}/storage/alice/big/ok.bin`, { method: 'PUT', headers: auth, body: big.subarray(1) })).status, 201);
      await nothingLeft();
    });

    // Last in the suite: it closes every connection at its end, so one the 413 left open can hold up neither the
    // teardown nor a later test (which could meet a pooled socket closed under it).
    test('a chunked raw upload over the limit (no Content-Length) is 413 too, and the unread connection closes', async () => {
      const body = new ReadableStream({
        start(c) {
          for (let i = 0; i < 20; i++) c.enqueue(new Uint8Array(64 * 1024));
          c.close();
        },
      });
      try {
        const res = await fetch(`${t.url}/storage/alice/big/chunked.bin`, { method: 'PUT', headers: auth, body, duplex: 'half' } as RequestInit);
        assert.equal(res.status, 413);
        assert.equal(await t.fs.kind('big/chunked.bin'), undefined);
        await nothingLeft();
        // The rest of the body is never read, so the connection cannot serve another request: it must close, as it
        // does for a declared length over the limit. Kept alive, it sits unread until the 120 s idle timeout, a
        // graceful close waits for it, and a client reusing it fails.
        assert.equal(res.headers.get('connection'), 'close', 'a 413 that leaves the body unread answers Connection: close');
      } finally {
        // In this process only: a cluster app's server is another process, stopped (with its grace period) by close().
        if (storage !== 'cluster') t.app.server.closeAllConnections();
      }
    });
  });
}
