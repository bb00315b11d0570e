import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startStoreProxy, type StoreProxy } from '../../bench/lib/store-proxy.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { bearer } from '../helpers/client.js';
import { multipartBody } from '../helpers/multipart.js';
import { newDatabase, s3Service, skipReason } from '../helpers/services.js';

const skip = skipReason('S3') ?? skipReason('PostgreSQL');
const EACH = 10;

/**
 * A new small file on S3 + PostgreSQL is one store request, its PutObject, whichever door it comes
 * through: the index answers for the name and its folder (CONTRACT "Backends and nodes"). Counted by
 * the bench's proxy (bench/lib/store-proxy.ts) in front of the store. The leader's rescans are off
 * here: one 30 s after start lists the whole bucket, which is no upload's request (the bench's
 * "1.80 per WebDAV PUT, 0.80 of them listings" was that rescan falling inside its count).
 */
describe('S3 + PostgreSQL: the store requests of a small upload', { skip }, () => {
  let t: TestApp;
  let proxy: StoreProxy;
  let auth: Record<string, string>;
  const direct = process.env.FC_TEST_S3_ENDPOINT;

  before(async () => {
    proxy = await startStoreProxy(s3Service()!.endpoint);
    // The app's storage flag is made from this variable (helpers/app.ts): its store traffic goes through the proxy.
    process.env.FC_TEST_S3_ENDPOINT = proxy.endpoint;
    t = await startApp({ storage: 's3', flags: { database: await newDatabase('store_requests'), indexInterval: '0' }, users: ['alice'] });
    process.env.FC_TEST_S3_ENDPOINT = direct;
    auth = bearer((await t.login('alice')).access_token);
    for (const folder of ['raw', 'dav', 'parts']) {
      const made = await fetch(`${t.url}/storage/alice/${folder}/`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ action: 'CreateFolder' }) });
      assert.equal(made.status, 201);
    }
  });
  after(async () => {
    process.env.FC_TEST_S3_ENDPOINT = direct;
    await t?.close();
    await proxy?.close();
  });

  /** The store requests per upload, by S3 operation, over EACH uploads one after another. */
  async function perUpload(put: (i: number) => Promise<Response>): Promise<Record<string, number>> {
    proxy.reset();
    for (let i = 0; i < EACH; i++) {
      const res = await put(i);
      assert.equal(res.status, 201, await res.text());
    }
    return Object.fromEntries([...proxy.counts()].map(([op, n]) => [op, n / EACH]));
  }

  test('an API raw PUT and a WebDAV PUT of a new file: one PutObject each, no listing, no HEAD', async () => {
    const body = Buffer.alloc(4096, 1);
    assert.deepEqual(await perUpload((i) => fetch(`${t.url}/storage/alice/raw/${i}.bin`, { method: 'PUT', headers: auth, body })), { PutObject: 1 });
    const basic = { authorization: `Basic ${Buffer.from('alice:alice-password').toString('base64')}` };
    assert.deepEqual(await perUpload((i) => fetch(`${t.url}/dav/alice/dav/${i}.bin`, { method: 'PUT', headers: basic, body })), { PutObject: 1 });
    assert.deepEqual(await t.fs.read('dav/9.bin'), body);
  });

  test('a multipart PUT of small files stores several at once, each still one PutObject, the names and the answer in the parts\' order', async () => {
    // With every store request held back this long, parts stored one after another reach the store
    // at least this far apart: each PutObject waits for the answer to the one before.
    const held = 400;
    const names = ['a.txt', 'b.txt', 'a.txt', 'c.txt', 'd.txt', 'e.txt'];
    const { body, contentType } = multipartBody(names.map((filename, i) => ({ filename, content: `part ${i}` })));
    proxy.reset();
    proxy.delayMs = held;
    let res: Response;
    try {
      res = await fetch(`${t.url}/storage/alice/parts/`, { method: 'PUT', headers: { ...auth, 'content-type': contentType }, body });
    } finally {
      proxy.delayMs = 0;
    }
    assert.equal(res.status, 201);
    // Before the reads below, which go through the proxy too.
    const puts = proxy.arrivals().filter((r) => r.operation === 'PutObject');
    assert.deepEqual(Object.fromEntries(proxy.counts()), { PutObject: names.length });
    const written = ['a.txt', 'b.txt', 'a (1).txt', 'c.txt', 'd.txt', 'e.txt'];
    assert.deepEqual(((await res.json()) as { files_written: string[] }).files_written, written);
    for (const [i, name] of written.entries()) assert.equal(await t.fs.text(`parts/${name}`), `part ${i}`);
    const closest = Math.min(...puts.slice(1).map((r, i) => r.at - (puts[i] as { at: number }).at));
    assert.ok(closest < held, `the PutObjects came at least ${Math.round(closest)} ms apart: one after another`);
  });
});
