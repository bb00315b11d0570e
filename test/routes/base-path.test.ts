import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startApp, type TestApp } from '../helpers/app.js';
import { bearer, postJson } from '../helpers/client.js';
import { WEB_ROOT } from '../../src/main.js';
import { adaptShell } from '../../src/routes/ui.js';
import { rawStoragePath } from '../../src/http/url.js';

let t: TestApp;
let token: string;
before(async () => {
  t = await startApp({ users: ['alice'], flags: { basePath: '/files', publicUrl: 'https://example.com/drive' }, webRoot: WEB_ROOT });
  token = (await t.login('alice')).access_token;
});
after(() => t.close());

test('with --base-path every API route answers under the prefix', async () => {
  assert.equal((await fetch(`${t.origin}/files/is_file_cloud`, { method: 'HEAD' })).status, 200);
  assert.equal((await fetch(`${t.origin}/files/api/stats`, { headers: bearer(token) })).status, 200);
  const put = await fetch(`${t.origin}/files/storage/alice/docs/a%20b.txt`, { method: 'PUT', headers: bearer(token), body: 'hello' });
  assert.equal(put.status, 201);
  const get = await fetch(`${t.origin}/files/storage/alice/docs/a%20b.txt`, { headers: bearer(token) });
  assert.equal(await get.text(), 'hello');
  const made = await postJson(`${t.origin}/files/storage/alice/docs/a%20b.txt`, { action: 'MakePathToken' }, bearer(token));
  const { token: pathToken } = (await made.json()) as { token: string };
  const shared = await fetch(`${t.origin}/files/storage/alice/docs/a%20b.txt?token=${encodeURIComponent(pathToken)}`);
  assert.equal(shared.status, 200, 'a path token works at the prefixed path');
  assert.equal(await shared.text(), 'hello');
});

test('requests outside the base path are 404 JSON, not the app', async () => {
  for (const path of ['/is_file_cloud', '/auth/login', '/storage/alice/', '/api/stats', '/', '/browse/', '/filesx/', '/assets/x.js']) {
    const res = await fetch(`${t.origin}${path}`, { headers: bearer(token) });
    assert.equal(res.status, 404, path);
    assert.equal(((await res.json()) as { error: string }).error, 'not_found', path);
  }
});

test('the web UI is served under the prefix with prefixed assets and the base in a meta tag', async () => {
  const page = await fetch(`${t.origin}/files/browse/docs/`);
  assert.equal(page.status, 200);
  const html = await page.text();
  assert.match(html, /<meta name="file-cloud-base" content="\/files"/);
  assert.match(html, /<meta name="file-cloud-public-url" content="https:\/\/example.com\/drive"/);
  const asset = /src="(\/files\/assets\/[^"]+\.js)"/.exec(html);
  assert.ok(asset, 'script URL carries the base path');
  assert.equal((await fetch(`${t.origin}${asset[1]}`)).status, 200);
  const bare = await fetch(`${t.origin}/files`, { redirect: 'manual' });
  assert.equal(bare.status, 308);
  assert.equal(bare.headers.get('location'), '/files/');
  assert.equal((await fetch(`${t.origin}/files/`)).status, 200);
  // API prefixes under the base are never the shell.
  assert.equal((await fetch(`${t.origin}/files/storage`)).status, 404);
});

test('adaptShell rewrites relative and root asset URLs and escapes meta values', () => {
  const out = adaptShell('<head><script src="./assets/a.js"></script><link href="/assets/b.css"></head>', { basePath: '/x', publicUrl: 'https://h/"p' });
  assert.match(out, /src="\/x\/assets\/a.js"/);
  assert.match(out, /href="\/x\/assets\/b.css"/);
  assert.match(out, /content="https:\/\/h\/&quot;p"/);
  assert.doesNotMatch(adaptShell('<head></head>', { basePath: '', publicUrl: '' }), /public-url/);
});

test('rawStoragePath honours the base path', () => {
  assert.equal(rawStoragePath('/files/storage/a/b?x=1', '/files'), 'a/b');
  assert.equal(rawStoragePath('/storage/a/b', '/files'), undefined);
  assert.equal(rawStoragePath('/storage/a/b'), 'a/b');
});

test('the banner directory is read under the data dir, also with a base path', async () => {
  await mkdir(join(t.dataDir, 'banner'), { recursive: true });
  await writeFile(join(t.dataDir, 'banner', 'login.txt'), 'Authorised use only');
  const res = await fetch(`${t.origin}/files/banner/login`);
  assert.equal(res.status, 200);
  assert.equal(await res.text(), 'Authorised use only');
});
