import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { bearer, login, postJson } from '../helpers/client.js';
import { multipartBody } from '../helpers/multipart.js';
import { s3ServerOptions, startServer, type ServerProcess } from '../helpers/server.js';
import { newDatabase, redisService, skipReason } from '../helpers/services.js';
import { startAll } from '../helpers/start-all.js';

/**
 * Share links across two nodes (two workers each) on shared S3, PostgreSQL
 * and Redis, under --base-path: the download limit is exact whichever node
 * serves, a revocation on one ends the link on the other at once, the
 * password cookie of one node opens the share on the other, and password
 * attempts are counted across nodes.
 */
const skip = skipReason('S3') ?? skipReason('PostgreSQL') ?? skipReason('Redis');

describe('share links on two nodes', { skip }, () => {
  let a: ServerProcess;
  let b: ServerProcess;
  let auth: Record<string, string>;

  before(async () => {
    const s3 = await s3ServerOptions();
    const database = await newDatabase('shares');
    const node = { args: [...s3.args, '--database', database, '--redis', redisService() as string, '--workers', '2', '--base-path', '/files', '--login-rate-limit', '4'], env: s3.env };
    [a, b] = await startAll(startServer(node), startServer(node));
    auth = bearer((await login(a.url, 'admin', a.adminPassword)).access_token);
    const put = await fetch(`${a.url}/storage/admin/big.bin`, { method: 'PUT', headers: auth, body: Buffer.alloc(256 * 1024, 3) });
    assert.equal(put.status, 201);
  });
  after(async () => {
    await Promise.all([a?.dispose(), b?.dispose()]);
  });

  const share = async (body: Record<string, unknown>) => {
    const res = await postJson(`${a.url}/api/shares`, body, auth);
    assert.equal(res.status, 201);
    return (await res.json()) as { id: string; url: string };
  };

  test('20 parallel downloads over both nodes on a max_downloads: 5 link: exactly 5 succeed', async () => {
    const s = await share({ path: '/admin/big.bin', max_downloads: 5 });
    assert.equal(s.url, `/files/s/${s.id}`, 'the url carries the base path');
    const origin = (n: ServerProcess) => new URL(n.url).origin;
    const results = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const res = await fetch(`${origin(i % 2 ? a : b)}/files/share/${s.id}`);
        return { status: res.status, size: (await res.arrayBuffer()).byteLength };
      }),
    );
    assert.equal(results.filter((r) => r.status === 200).length, 5, JSON.stringify(results.map((r) => r.status)));
    assert.ok(results.filter((r) => r.status === 200).every((r) => r.size === 256 * 1024));
    assert.equal(results.filter((r) => r.status === 404).length, 15);
  });

  test('revoked on one node, dead on the other at once', async () => {
    const s = await share({ path: '/admin/big.bin' });
    assert.equal((await fetch(`${b.url}/share/${s.id}`, { method: 'HEAD' })).status, 200);
    assert.equal((await fetch(`${b.url}/api/shares/${s.id}`, { method: 'DELETE', headers: auth })).status, 204);
    assert.equal((await fetch(`${a.url}/share/${s.id}`, { method: 'HEAD' })).status, 404);
  });

  test('the password cookie of one node opens the share on the other; attempts count across nodes', async (t) => {
    const s = await share({ path: '/admin/', password: 'pw on a' });
    const ok = await postJson(`${a.url}/share/${s.id}/auth`, { password: 'pw on a' });
    assert.equal(ok.status, 204);
    const cookies = ok.headers.getSetCookie();
    assert.deepEqual(cookies.map((c) => /Path=([^;]+)/.exec(c)?.[1]).sort(), [`/files/s/${s.id}`, `/files/share/${s.id}`]);
    const cookie = (cookies[0] as string).split(';')[0] as string;
    const listing = await fetch(`${b.url}/share/${s.id}/`, { headers: { cookie } });
    assert.equal(listing.status, 200);
    assert.ok(((await listing.json()) as { entries: { name: string }[] }).entries.some((e) => e.name === 'big.bin'));
    const page = await fetch(`${b.url}/s/${s.id}/`, { headers: { cookie } });
    assert.equal(page.status, 200);
    const html = await page.text();
    assert.match(html, /href="\/files\/s\/_assets\/share\.css"/);
    assert.match(html, new RegExp(`href="/files/share/${s.id}/big\\.bin\\?download=1"`));
    assert.match(html, new RegExp(`href="/files/share/${s.id}/\\?zip=1"`));
    // One success above; 3 more attempts alternate nodes, then the 5th attempt is refused wherever it goes.
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await postJson(`${(i % 2 ? a : b).url}/share/${s.id}/auth`, { password: 'wrong' })).status);
    // Exact while Redis answers. A Redis command that misses its 1.5 s timeout (on a loaded machine a
    // stalled event loop is enough) sends the node's attempts to the database for 5 s (src/cluster/redis.ts),
    // where those before are not counted: the count may split then, and the node logs why.
    const fellBack = [a, b].some((n) => /Redis does not answer/.test(n.output().stdout + n.output().stderr));
    if (fellBack && statuses.at(-1) !== 429) t.diagnostic(`a node fell back to the database (logged), so the count could split: ${statuses.join(', ')}`);
    else assert.deepEqual(statuses, [401, 401, 401, 429]);
  });

  test('an upload-only link written through both nodes keeps every file', async () => {
    const put = await fetch(`${a.url}/storage/admin/inbox/`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ action: 'CreateFolder' }) });
    assert.equal(put.status, 201);
    const s = await share({ path: '/admin/inbox', upload_only: true });
    const results = await Promise.all(
      Array.from({ length: 6 }, async (_, i) => {
        const { body, contentType } = multipartBody([{ filename: 'same.txt', content: `upload ${i}` }]);
        return (await fetch(`${(i % 2 ? a : b).url}/share/${s.id}/`, { method: 'PUT', headers: { 'content-type': contentType }, body })).status;
      }),
    );
    assert.deepEqual(results, [201, 201, 201, 201, 201, 201]);
    const listing = (await (await fetch(`${a.url}/storage/admin/inbox/`, { headers: auth })).json()) as { entries: { name: string }[] };
    assert.equal(listing.entries.length, 6, 'concurrent uploads of one name all survive under distinct names');
  });
});
