import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startApp, type TestApp } from '../helpers/app.js';
import { bearer } from '../helpers/client.js';
import { CORPUS, type Ctx } from './corpus.js';
import { rawExchange } from './raw-client.js';

/**
 * Every hostile request of the corpus gets a 4xx with the contract's
 * `{error, message}` JSON body, and the server keeps serving the whole time.
 */

let t: TestApp;
let ctx: Ctx;
before(async () => {
  t = await startApp({ users: ['alice'] });
  const tokens = await t.login('alice');
  ctx = { token: tokens.access_token, refresh: tokens.refresh_token, user: 'alice' };
  assert.equal((await fetch(`${t.url}/storage/alice/f.txt`, { method: 'PUT', headers: bearer(ctx.token), body: 'precious' })).status, 201);
});
after(() => t.close());

async function stillServing(): Promise<void> {
  assert.equal((await fetch(`${t.url}/is_file_cloud`, { method: 'HEAD' })).status, 200);
  const res = await fetch(`${t.url}/storage/alice/f.txt`, { headers: bearer(ctx.token) });
  assert.equal(res.status, 200);
  assert.equal(await res.text(), 'precious');
}

test('the corpus holds at least 100 hostile requests', () => {
  assert.ok(CORPUS.length >= 100, `${CORPUS.length} cases`);
  assert.equal(new Set(CORPUS.map((c) => c.name)).size, CORPUS.length, 'case names are unique');
});

test('every hostile request gets a 4xx with the contract JSON body, and the server keeps serving', async () => {
  const failures: string[] = [];
  for (const [i, c] of CORPUS.entries()) {
    let res;
    try {
      res = await rawExchange(t.url, c.request(ctx));
    } catch (e) {
      failures.push(`${c.name}: ${(e as Error).message}`);
      continue;
    }
    const where = `${c.name}: ${res.status} ${res.body.slice(0, 160)}`;
    if (c.status !== undefined ? res.status !== c.status : res.status < 400 || res.status > 499) {
      failures.push(`${where} (expected ${c.status ?? '4xx'})`);
      continue;
    }
    let body: unknown;
    try {
      body = JSON.parse(res.body);
    } catch {
      failures.push(`${where} (body is not JSON)`);
      continue;
    }
    const keys = Object.keys(body as object).sort().join(',');
    const { error, message } = body as { error?: unknown; message?: unknown };
    if (keys !== 'error,message' || typeof error !== 'string' || !/^[a-z]+(_[a-z]+)*$/.test(error) || typeof message !== 'string' || message === '') {
      failures.push(`${where} (not the contract body)`);
    }
    if (!/^application\/json/.test(res.headers['content-type'] ?? '')) failures.push(`${where} (content-type ${res.headers['content-type']})`);
    if (i % 20 === 19) await stillServing();
  }
  assert.deepEqual(failures, []);
  await stillServing();
});

test('after the corpus no staging file is left and nothing was written outside alice\'s folder', async () => {
  assert.deepEqual(await readdir(t.paths.tmp), []);
  assert.deepEqual(await readdir(t.paths.storage), ['alice']);
  assert.equal(await readFile(join(t.paths.storage, 'alice', 'f.txt'), 'utf8'), 'precious');
});
