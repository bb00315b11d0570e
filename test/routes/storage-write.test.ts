import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startApp, type TestApp } from '../helpers/app.js';
import { bearer, encodePath } from '../helpers/client.js';
import { multipartBody, type Part } from '../helpers/multipart.js';

let t: TestApp;
let auth: Record<string, string>;
const disk = (...p: string[]) => join(t.paths.storage, 'alice', ...p);
before(async () => {
  t = await startApp({ users: ['alice'], flags: { maxUploadSize: '1M' } });
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
const tmpIsEmpty = async () => assert.deepEqual(await readdir(t.paths.tmp), []);

test('multipart PUT to a folder writes every file part, creating the folder and its parents', async () => {
  const res = await upload('new/deep/', [
    { name: 'a', filename: 'one.txt', content: 'first' },
    { name: 'note', content: 'a plain field is ignored' },
    { name: 'b', filename: 'two.txt', content: 'second' },
  ]);
  assert.deepEqual(await filesWritten(res), ['one.txt', 'two.txt']);
  assert.equal(await readFile(disk('new', 'deep', 'one.txt'), 'utf8'), 'first');
  assert.equal(await readFile(disk('new', 'deep', 'two.txt'), 'utf8'), 'second');
  await tmpIsEmpty();
});

test('a taken name becomes name (1).ext, name (2).ext; overwrite=true replaces', async () => {
  assert.deepEqual(await filesWritten(await upload('c/', [{ filename: 'x.txt', content: 'v1' }])), ['x.txt']);
  assert.deepEqual(await filesWritten(await upload('c/', [{ filename: 'x.txt', content: 'v2' }])), ['x (1).txt']);
  assert.deepEqual(await filesWritten(await upload('c/', [{ filename: 'x.txt', content: 'v3' }, { filename: 'x.txt', content: 'v4' }])), ['x (2).txt', 'x (3).txt']);
  assert.deepEqual(await filesWritten(await upload('c/', [{ filename: 'x.txt', content: 'v5' }], '?overwrite=true')), ['x.txt']);
  assert.equal(await readFile(disk('c', 'x.txt'), 'utf8'), 'v5');
  assert.equal(await readFile(disk('c', 'x (1).txt'), 'utf8'), 'v2');
  assert.deepEqual((await readdir(disk('c'))).sort(), ['x (1).txt', 'x (2).txt', 'x (3).txt', 'x.txt']);
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
  await tmpIsEmpty();
});

test('a multipart body without file parts, without a boundary, or truncated is 400 and leaves nothing', async () => {
  assert.equal((await upload('none/', [{ name: 'field', content: 'only a field' }])).status, 400);
  const noBoundary = await fetch(`${t.url}/storage/alice/nb/`, { method: 'PUT', headers: { ...auth, 'content-type': 'multipart/form-data' }, body: 'x' });
  assert.equal(noBoundary.status, 400);
  const { body, contentType } = multipartBody([{ filename: 'trunc.txt', content: 'y'.repeat(10_000) }]);
  const truncated = await fetch(`${t.url}/storage/alice/tr/`, { method: 'PUT', headers: { ...auth, 'content-type': contentType }, body: body.subarray(0, 5000) });
  assert.equal(truncated.status, 400);
  await assert.rejects(readFile(disk('tr', 'trunc.txt')));
  await tmpIsEmpty();
});

test('raw PUT to a file path creates it, then replaces it; parents are created', async () => {
  let res = await fetch(`${t.url}/storage/alice/raw/dir/${encodePath('data #1 %.json')}`, { method: 'PUT', headers: { ...auth, 'content-type': 'application/json' }, body: '{"not": "parsed"' });
  assert.deepEqual(await filesWritten(res), ['data #1 %.json']);
  assert.equal(await readFile(disk('raw', 'dir', 'data #1 %.json'), 'utf8'), '{"not": "parsed"');
  res = await fetch(`${t.url}/storage/alice/raw/dir/${encodePath('data #1 %.json')}`, { method: 'PUT', headers: auth, body: 'v2' });
  assert.deepEqual(await filesWritten(res), ['data #1 %.json']);
  assert.equal(await readFile(disk('raw', 'dir', 'data #1 %.json'), 'utf8'), 'v2');
  res = await fetch(`${t.url}/storage/alice/raw/empty.bin`, { method: 'PUT', headers: auth, body: '' });
  assert.equal(res.status, 201);
  assert.equal((await readFile(disk('raw', 'empty.bin'))).length, 0);
});

test('raw PUT onto a folder is 409; through a file is 409; to a path ending in / is 400', async () => {
  await mkdir(disk('folder'), { recursive: true });
  await writeFile(disk('plain.txt'), 'x');
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
  assert.equal(await readFile(disk('plain.txt'), 'utf8'), 'x');
  await tmpIsEmpty();
});

test('multipart into a path where a file is is 409', async () => {
  await writeFile(disk('afile'), 'x');
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
  await assert.rejects(readFile(disk('big', 'raw.bin')));
  await assert.rejects(readFile(disk('big', 'multi.bin')));
  // Exactly the limit is fine.
  assert.equal((await fetch(`${t.url}/storage/alice/big/ok.bin`, { method: 'PUT', headers: auth, body: big.subarray(1) })).status, 201);
  await tmpIsEmpty();
});

test('a chunked raw upload over the limit (no Content-Length) is 413 too', async () => {
  const body = new ReadableStream({
    start(c) {
      for (let i = 0; i < 20; i++) c.enqueue(new Uint8Array(64 * 1024));
      c.close();
    },
  });
  const res = await fetch(`${t.url}/storage/alice/big/chunked.bin`, { method: 'PUT', headers: auth, body, duplex: 'half' } as RequestInit);
  assert.equal(res.status, 413);
  await assert.rejects(readFile(disk('big', 'chunked.bin')));
  await tmpIsEmpty();
});
