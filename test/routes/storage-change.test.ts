import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, mkdir, writeFile, stat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { startApp, type TestApp } from '../helpers/app.js';
import { bearer, postJson } from '../helpers/client.js';

let t: TestApp;
let auth: Record<string, string>;
const disk = (...p: string[]) => join(t.paths.storage, 'alice', ...p);
const exists = (p: string) => stat(p).then(() => true, () => false);
before(async () => {
  t = await startApp({ users: ['alice', 'bob'] });
  auth = bearer((await t.login('alice')).access_token);
});
after(() => t.close());

const action = (path: string, body: unknown) => postJson(`${t.url}/storage/alice/${path}`, body, auth);
const errorCode = async (res: Response) => ((await res.json()) as { error: string }).error;

test('DELETE removes a file and, recursively, a folder: 204', async () => {
  await mkdir(disk('d', 'sub', 'deeper'), { recursive: true });
  await writeFile(disk('d', 'sub', 'deeper', 'f.txt'), 'x');
  await writeFile(disk('d', 'g.txt'), 'x');
  assert.equal((await fetch(`${t.url}/storage/alice/d/g.txt`, { method: 'DELETE', headers: auth })).status, 204);
  assert.equal(await exists(disk('d', 'g.txt')), false);
  assert.equal((await fetch(`${t.url}/storage/alice/d/`, { method: 'DELETE', headers: auth })).status, 204);
  assert.equal(await exists(disk('d')), false);
});

test('DELETE of a missing path is 404; of the root is 400', async () => {
  const missing = await fetch(`${t.url}/storage/alice/missing`, { method: 'DELETE', headers: auth });
  assert.equal(missing.status, 404);
  const rootRes = await fetch(`${t.url}/storage/alice/`, { method: 'DELETE', headers: auth });
  assert.equal(rootRes.status, 400);
  assert.equal(await exists(disk()), true);
});

test('CreateFolder creates parents: 201; existing → 409; a file in the way → 409', async () => {
  assert.equal((await action('p/q/r', { action: 'CreateFolder' })).status, 201);
  assert.ok((await stat(disk('p', 'q', 'r'))).isDirectory());
  const again = await action('p/q/r/', { action: 'CreateFolder' });
  assert.equal(again.status, 409);
  assert.equal(await errorCode(again), 'already_exists');
  await writeFile(disk('file.txt'), 'x');
  assert.equal((await action('file.txt', { action: 'CreateFolder' })).status, 409);
  assert.equal((await action('file.txt/sub', { action: 'CreateFolder' })).status, 409);
  assert.equal((await action('', { action: 'CreateFolder' })).status, 409);
});

test('Move renames a file and creates the destination parents: 204', async () => {
  await writeFile(disk('m1.txt'), 'move me');
  const res = await action('m1.txt', { action: 'Move', new_path: '/alice/moved/deep/m1 renamed.txt' });
  assert.equal(res.status, 204);
  assert.equal(await readFile(disk('moved', 'deep', 'm1 renamed.txt'), 'utf8'), 'move me');
  assert.equal(await exists(disk('m1.txt')), false);
  // Leading slash optional; names in new_path are literal, not percent-decoded.
  await writeFile(disk('m2.txt'), 'two');
  assert.equal((await action('m2.txt', { action: 'Move', new_path: 'alice/100%25 sure.txt' })).status, 204);
  assert.equal(await readFile(disk('100%25 sure.txt'), 'utf8'), 'two');
});

test('Move onto an existing destination is 409 unless overwrite', async () => {
  await writeFile(disk('src.txt'), 'new');
  await writeFile(disk('dst.txt'), 'old');
  const res = await action('src.txt', { action: 'Move', new_path: '/alice/dst.txt' });
  assert.equal(res.status, 409);
  assert.equal(await errorCode(res), 'already_exists');
  assert.equal(await readFile(disk('dst.txt'), 'utf8'), 'old');
  assert.equal((await action('src.txt', { action: 'Move', new_path: '/alice/dst.txt', overwrite: true })).status, 204);
  assert.equal(await readFile(disk('dst.txt'), 'utf8'), 'new');
  assert.equal(await exists(disk('src.txt')), false);
});

test('Move of a folder with overwrite replaces a folder destination whole', async () => {
  await mkdir(disk('fa'), { recursive: true });
  await writeFile(disk('fa', 'a.txt'), 'a');
  await mkdir(disk('fb'), { recursive: true });
  await writeFile(disk('fb', 'b.txt'), 'b');
  assert.equal((await action('fa', { action: 'Move', new_path: '/alice/fb' })).status, 409);
  assert.equal((await action('fa', { action: 'Move', new_path: '/alice/fb', overwrite: true })).status, 204);
  assert.deepEqual(await readdir(disk('fb')), ['a.txt']);
  assert.deepEqual(await readdir(t.paths.tmp), []);
});

test('Move errors: into itself 400, missing source 404, another user 401, root 400', async () => {
  await mkdir(disk('self', 'child'), { recursive: true });
  const rows: [string, unknown, number][] = [
    ['self', { action: 'Move', new_path: '/alice/self/child/self' }, 400],
    ['self', { action: 'Move', new_path: '/alice/self' }, 400],
    ['nothing', { action: 'Move', new_path: '/alice/x' }, 404],
    ['self', { action: 'Move', new_path: '/bob/stolen' }, 401],
    ['self', { action: 'Move', new_path: '/nobody/x' }, 401],
    ['self', { action: 'Move', new_path: '/alice/' }, 400],
    ['', { action: 'Move', new_path: '/alice/newroot' }, 400],
    ['self', { action: 'Move', new_path: '/alice/../bob/x' }, 400],
    ['self', { action: 'Move' }, 400],
    ['self', { action: 'Move', new_path: 42 }, 400],
    ['self', { action: 'Move', new_path: '/alice/x', overwrite: 'yes' }, 400],
  ];
  for (const [path, body, status] of rows) {
    const res = await action(path, body);
    assert.equal(res.status, status, `${path} ${JSON.stringify(body)}`);
  }
  assert.ok((await stat(disk('self', 'child'))).isDirectory());
  assert.deepEqual(await readdir(join(t.paths.storage, 'bob')), []);
});

test('unknown or missing action, malformed JSON and non-object bodies are 400', async () => {
  const rows: [string, string][] = [
    ['{"action":"Explode"}', 'unknown_action'],
    ['{}', 'unknown_action'],
    ['{"action":', 'invalid_json'],
    ['[1,2]', 'bad_request'],
    ['"MakePathToken"', 'bad_request'],
    ['', 'bad_request'],
  ];
  for (const [body, code] of rows) {
    const res = await fetch(`${t.url}/storage/alice/`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body });
    assert.equal(res.status, 400, body);
    assert.equal(await errorCode(res), code, body);
  }
  const huge = await fetch(`${t.url}/storage/alice/`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ action: 'CreateFolder', pad: 'x'.repeat(100_000) }) });
  assert.equal(huge.status, 413);
});
