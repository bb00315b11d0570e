import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startApp, type TestApp } from '../helpers/app.js';
import { bearer } from '../helpers/client.js';
import { BANNER_MAX_BYTES } from '../../src/routes/banner.js';

let t: TestApp;
let token: string;
const file = (name: string) => join(t.dataDir, 'banner', `${name}.txt`);
before(async () => {
  t = await startApp({ users: ['alice'] });
  token = (await t.login('alice')).access_token;
  await mkdir(join(t.dataDir, 'banner'), { recursive: true });
});
after(() => t.close());

test('GET /banner/page refuses a missing or invalid token', async () => {
  await writeFile(file('page'), 'for users');
  for (const headers of [{}, bearer('garbage'), bearer('fca_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA')]) {
    const res = await fetch(`${t.url}/banner/page`, { headers });
    assert.equal(res.status, 401);
    assert.equal(((await res.json()) as { error: string }).error, 'unauthorized');
  }
});

test('no banner is an empty 204, not an error, when its file is absent or blank', async () => {
  await rm(file('login'), { force: true });
  await rm(file('page'), { force: true });
  for (const [path, headers] of [['/banner/login', {}], ['/banner/page', bearer(token)]] as const) {
    for (const method of ['GET', 'HEAD']) {
      const res = await fetch(`${t.url}${path}`, { method, headers });
      assert.equal(res.status, 204, `${method} ${path}`);
      assert.equal(await res.text(), '');
    }
  }
  await writeFile(file('login'), ' \n\n');
  assert.equal((await fetch(`${t.url}/banner/login`)).status, 204, 'a blank file is no banner');
});

test('banners are plain UTF-8 text, re-read on every request (no restart)', async () => {
  await writeFile(file('login'), 'Welcome — authorised use only <script>');
  let res = await fetch(`${t.url}/banner/login`);
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-type'), 'text/plain; charset=utf-8');
  assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
  assert.equal(await res.text(), 'Welcome — authorised use only <script>');
  await writeFile(file('login'), 'Changed');
  res = await fetch(`${t.url}/banner/login`);
  assert.equal(await res.text(), 'Changed');

  await writeFile(file('page'), 'Quota: 10 GB');
  res = await fetch(`${t.url}/banner/page`, { headers: bearer(token) });
  assert.equal(res.status, 200);
  assert.equal(await res.text(), 'Quota: 10 GB');
  assert.equal((await fetch(`${t.url}/banner/page`, { method: 'HEAD', headers: bearer(token) })).status, 200);
});

test('a huge banner file is cut to the limit', async () => {
  await writeFile(file('login'), 'x'.repeat(BANNER_MAX_BYTES * 4));
  const res = await fetch(`${t.url}/banner/login`);
  assert.equal((await res.text()).length, BANNER_MAX_BYTES);
});

test('banner paths are never the web UI shell', async () => {
  for (const p of ['/banner/', '/banner/other', '/banner/login/x']) {
    const res = await fetch(`${t.url}${p}`);
    assert.equal(res.status, 404, p);
  }
});
