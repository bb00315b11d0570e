// Usage and quotas (CONTRACT "Search, thumbnails, usage"): GET /api/usage kept exact from storage
// events, 507 quota_exceeded with nothing written on every upload path (raw PUT with and without a
// length, multipart, tus creation / deferred length / PATCH, WebDAV PUT and COPY, share upload),
// races of concurrent uploads and deletes, and If-Match on PUT. On every backend.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { readdir } from 'node:fs/promises';
import { ListMultipartUploadsCommand } from '@aws-sdk/client-s3';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { bytesStored } from '../helpers/stored.js';
import { bearer } from '../helpers/client.js';
import { multipartBody, type Part } from '../helpers/multipart.js';
import { s3Client } from '../helpers/services.js';

const KB = 1024;
const TUS = { 'tus-resumable': '1.0.0' };
const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');

/** What an upload may leave behind: data/tmp entries on disk, open multipart uploads on S3. */
async function leftovers(t: TestApp): Promise<string[]> {
  if (t.config.storage.kind !== 's3') return (await readdir(t.paths.tmp)).filter((n) => n !== 'tus');
  const { bucket, prefix } = t.config.storage;
  const s3 = s3Client();
  try {
    const r = await s3.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: `${prefix}alice/` }));
    return (r.Uploads ?? []).map((u) => u.Key ?? '');
  } finally {
    s3.destroy();
  }
}

/** A chunked PUT (no Content-Length) sent piece by piece; resolves with the answer, even one sent before the body ended. */
function chunkedPut(url: string, headers: Record<string, string>, pieces: Buffer[]): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'PUT', headers: { ...headers, 'transfer-encoding': 'chunked' } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    let i = 0;
    const next = () => {
      if (i === pieces.length) return void req.end();
      req.write(pieces[i++], () => setImmediate(next));
    };
    next();
  });
}

for (const [storage, skip] of BACKENDS) {
  describe(`usage and quotas on ${storage}`, { skip }, () => {
    let t: TestApp;
    let auth: Record<string, string>;
    const setQuota = (bytes: number | null) => t.store.usage.setQuota('alice', bytes);
    const usage = async (headers = auth) => {
      const res = await fetch(`${t.url}/api/usage`, { headers });
      assert.equal(res.status, 200, await res.clone().text());
      return (await res.json()) as { used: number; quota: number | null };
    };
    const actual = () => bytesStored(t, 'alice');
    const put = (path: string, body: Buffer | string, headers: Record<string, string> = {}) => fetch(`${t.url}/storage/alice/${path}`, { method: 'PUT', headers: { ...auth, ...headers }, body });
    const upload = (path: string, parts: Part[], query = '') => {
      const { body, contentType } = multipartBody(parts);
      return fetch(`${t.url}/storage/alice/${path}${query}`, { method: 'PUT', headers: { ...auth, 'content-type': contentType }, body });
    };
    const del = (path: string) => fetch(`${t.url}/storage/alice/${path}`, { method: 'DELETE', headers: auth });
    const refused = async (res: Response | { status: number; body: string }, what: string) => {
      const text = res instanceof Response ? await res.text() : res.body;
      assert.equal(res.status, 507, `${what}: ${text}`);
      assert.equal((JSON.parse(text) as { error: string }).error, 'quota_exceeded', what);
    };
    /** Sets the quota to leave exactly `free` bytes. */
    const leave = async (free: number) => {
      const { used } = await usage();
      await setQuota(used + free);
    };

    before(async () => {
      t = await startApp({ users: ['alice', 'bob'], storage });
      auth = bearer((await t.login('alice')).access_token);
    });
    after(() => t?.close());

    test('GET /api/usage: the caller\'s bytes and quota, kept as files come and go; 401 without a token', async () => {
      assert.deepEqual(await usage(), { used: 0, quota: null });
      assert.equal((await fetch(`${t.url}/api/usage`)).status, 401);
      assert.equal((await put('u/a.bin', Buffer.alloc(1000, 1))).status, 201);
      assert.equal((await upload('u/', [{ filename: 'b.bin', content: Buffer.alloc(500, 2) }])).status, 201);
      assert.deepEqual(await usage(), { used: 1500, quota: null });
      assert.equal((await put('u/a.bin', Buffer.alloc(300, 1))).status, 201, 'replaced by a smaller file');
      assert.equal((await usage()).used, 800);
      const moved = await fetch(`${t.url}/storage/alice/u/b.bin`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ action: 'Move', new_path: '/alice/u/a.bin', overwrite: true }) });
      assert.equal(moved.status, 204, 'a move over a file frees the file it replaced');
      assert.equal((await usage()).used, 500);
      assert.equal((await del('u')).status, 204);
      assert.deepEqual(await usage(), { used: 0, quota: null });
      await setQuota(10 * KB);
      assert.deepEqual(await usage(), { used: 0, quota: 10 * KB });
      const bob = bearer((await t.login('bob')).access_token);
      assert.deepEqual(await usage(bob), { used: 0, quota: null }, 'another user\'s figures are their own');
      await setQuota(null);
    });

    test('raw PUT: over the quota → 507 before a byte is stored, with or without Content-Length; a replace counts only its growth', async () => {
      await leave(4 * KB);
      await refused(await put('raw/big.bin', Buffer.alloc(4 * KB + 1, 1)), 'declared length');
      const chunked = await chunkedPut(`${t.url}/storage/alice/raw/chunked.bin`, auth, Array.from({ length: 8 }, () => Buffer.alloc(KB, 3)));
      await refused(chunked, 'chunked body');
      assert.equal(await t.fs.kind('raw/big.bin'), undefined);
      assert.equal(await t.fs.kind('raw/chunked.bin'), undefined);
      assert.deepEqual(await leftovers(t), []);
      assert.equal((await put('raw/fits.bin', Buffer.alloc(4 * KB, 1))).status, 201, 'exactly the rest fits');
      await refused(await put('raw/one-more.bin', 'x'), 'one byte more');
      assert.equal((await put('raw/fits.bin', Buffer.alloc(4 * KB, 2))).status, 201, 'a replace of the same size fits at the limit');
      assert.equal((await put('raw/fits.bin', Buffer.alloc(KB, 2))).status, 201, 'and a smaller one');
      assert.equal((await usage()).used, await actual());
      await setQuota(null);
      assert.equal((await del('raw')).status, 204);
    });

    test('multipart PUT: an upload whose last part passes the quota writes none of its files', async () => {
      await leave(3 * KB);
      const res = await upload('mp/', [
        { filename: 'one.bin', content: Buffer.alloc(2 * KB, 1) },
        { filename: 'two.bin', content: Buffer.alloc(2 * KB, 2) },
      ]);
      await refused(res, 'two parts');
      assert.equal(await t.fs.kind('mp/one.bin'), undefined);
      assert.equal(await t.fs.kind('mp/two.bin'), undefined);
      assert.deepEqual(await leftovers(t), []);
      assert.equal((await upload('mp/', [{ filename: 'one.bin', content: Buffer.alloc(KB, 1) }, { filename: 'two.bin', content: Buffer.alloc(2 * KB, 2) }])).status, 201);
      assert.deepEqual(await t.fs.names('mp'), ['one.bin', 'two.bin']);
      assert.equal((await usage()).used, await actual());
      await setQuota(null);
      assert.equal((await del('mp')).status, 204);
    });

    test('tus: refused at creation with a known length (which it then holds), at the PATCH that sets a deferred one, and at the PATCH that passes it', async () => {
      await leave(4 * KB);
      const tus = (method: string, path: string, headers: Record<string, string>, body?: Buffer) => fetch(`${t.url}${path}`, { method, headers: { ...auth, ...TUS, ...headers }, body });
      const metadata = (name: string) => `filename ${b64(name)},folder ${b64('/alice/tus')}`;
      await refused(await tus('POST', '/tus/', { 'upload-length': String(4 * KB + 1), 'upload-metadata': metadata('big.bin') }), 'creation');

      const deferred = await tus('POST', '/tus/', { 'upload-defer-length': '1', 'upload-metadata': metadata('deferred.bin') });
      assert.equal(deferred.status, 201);
      const d = deferred.headers.get('location') as string;
      await refused(await tus('PATCH', d, { 'content-type': 'application/offset+octet-stream', 'upload-offset': '0', 'upload-length': String(5 * KB) }, Buffer.alloc(KB)), 'deferred length set');

      // A deferred upload whose bytes pass the quota: the PATCH that passes it is refused, nothing appears.
      const open = await tus('POST', '/tus/', { 'upload-defer-length': '1', 'upload-metadata': metadata('open.bin') });
      const o = open.headers.get('location') as string;
      const first = await tus('PATCH', o, { 'content-type': 'application/offset+octet-stream', 'upload-offset': '0' }, Buffer.alloc(3 * KB, 1));
      assert.equal(first.status, 204, await first.text());
      await refused(await tus('PATCH', o, { 'content-type': 'application/offset+octet-stream', 'upload-offset': String(3 * KB) }, Buffer.alloc(2 * KB, 1)), 'patch past the quota');
      assert.equal(await t.fs.kind('tus/open.bin'), undefined);
      assert.equal(await t.fs.kind('tus/deferred.bin'), undefined);
      // Terminated, the open uploads give back what they held.
      for (const u of [d, o]) assert.equal((await tus('DELETE', u, {})).status, 204);

      // Two uploads that each fit alone but not together: the first holds its length from creation, so the second is refused there.
      const a = (await tus('POST', '/tus/', { 'upload-length': String(3 * KB), 'upload-metadata': metadata('a.bin') })).headers.get('location') as string;
      await refused(await tus('POST', '/tus/', { 'upload-length': String(3 * KB), 'upload-metadata': metadata('b.bin') }), 'second upload');
      assert.equal((await tus('PATCH', a, { 'content-type': 'application/offset+octet-stream', 'upload-offset': '0' }, Buffer.alloc(3 * KB, 4))).status, 204);
      assert.deepEqual(await t.fs.names('tus'), ['a.bin']);
      assert.equal((await usage()).used, await actual());
      await setQuota(null);
      assert.equal((await del('tus')).status, 204);
    });

    test('WebDAV PUT and COPY over the quota → 507, nothing written', async () => {
      await leave(3 * KB);
      const dav = (method: string, path: string, headers: Record<string, string> = {}, body?: Buffer) => fetch(`${t.url}/dav/alice/${path}`, { method, headers: { ...auth, ...headers }, body });
      assert.equal((await dav('MKCOL', 'dav/')).status, 201);
      await refused(await dav('PUT', 'dav/big.bin', {}, Buffer.alloc(3 * KB + 1)), 'WebDAV PUT');
      assert.equal((await dav('PUT', 'dav/two.bin', {}, Buffer.alloc(2 * KB, 7))).status, 201);
      await refused(await dav('COPY', 'dav/two.bin', { destination: `${t.url}/dav/alice/dav/copy.bin` }), 'COPY of a file');
      await refused(await dav('COPY', 'dav/', { destination: `${t.url}/dav/alice/dav-copy/` }), 'COPY of a folder');
      assert.equal(await t.fs.kind('dav/copy.bin'), undefined);
      assert.equal(await t.fs.kind('dav-copy'), undefined);
      assert.equal(await t.fs.kind('dav/big.bin'), undefined);
      const props = await dav('PROPFIND', '', { depth: '0', 'content-type': 'application/xml' }, Buffer.from('<?xml version="1.0"?><propfind xmlns="DAV:"><prop><quota-used-bytes/><quota-available-bytes/></prop></propfind>'));
      const xml = await props.text();
      const { used, quota } = await usage();
      assert.match(xml, new RegExp(`<[^>]*quota-used-bytes>${used}<`), xml);
      assert.match(xml, new RegExp(`<[^>]*quota-available-bytes>${(quota as number) - used}<`), xml);
      await setQuota(null);
      assert.equal((await dav('COPY', 'dav/two.bin', { destination: `${t.url}/dav/alice/dav/copy.bin` })).status, 201, 'fits without a quota');
      assert.equal((await usage()).used, await actual());
      assert.equal((await del('dav')).status, 204);
    });

    test('a share upload counts against the owner: past the quota → 507, nothing written', async () => {
      assert.equal((await fetch(`${t.url}/storage/alice/inbox/`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ action: 'CreateFolder' }) })).status, 201);
      const created = await fetch(`${t.url}/api/shares`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ path: '/alice/inbox', upload_only: true }) });
      assert.equal(created.status, 201);
      const { id } = (await created.json()) as { id: string };
      await leave(KB);
      const send = (parts: Part[]) => {
        const { body, contentType } = multipartBody(parts);
        return fetch(`${t.url}/share/${id}/`, { method: 'PUT', headers: { 'content-type': contentType }, body });
      };
      await refused(await send([{ filename: 'visitor.bin', content: Buffer.alloc(KB + 1) }]), 'share upload');
      assert.deepEqual(await t.fs.names('inbox'), []);
      assert.equal((await send([{ filename: 'small.bin', content: Buffer.alloc(KB) }])).status, 201);
      assert.equal((await usage()).used, await actual());
      await setQuota(null);
      assert.equal((await del('inbox')).status, 204);
    });

    test('20 concurrent uploads, replaces and deletes: usage equals the bytes stored; under a quota, what is stored never passes it', async () => {
      const size = (i: number) => 1000 + i * 37;
      for (let i = 0; i < 10; i++) assert.equal((await put(`race/old-${i}.bin`, Buffer.alloc(size(i), i))).status, 201);
      const ops = Array.from({ length: 20 }, (_, i) => {
        if (i % 3 === 0) return del(`race/old-${i % 10}.bin`);
        if (i % 3 === 1) return put(`race/old-${i % 10}.bin`, Buffer.alloc(size(i) * 2, i));
        return i % 2 === 0 ? put(`race/new-${i}.bin`, Buffer.alloc(size(i), i)) : upload('race/', [{ filename: `new-${i}.bin`, content: Buffer.alloc(size(i), i) }]);
      });
      for (const res of await Promise.all(ops)) assert.ok([201, 204, 404].includes(res.status), `${res.status} ${await res.text()}`);
      assert.equal((await usage()).used, await actual());
      assert.equal((await del('race')).status, 204);
      assert.equal((await usage()).used, await actual());

      // Twenty uploads of 1 KiB that each fit alone; together only ten do.
      await leave(10 * KB);
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? put(`q/f-${i}.bin`, Buffer.alloc(KB, i)) : upload('q/', [{ filename: `f-${i}.bin`, content: Buffer.alloc(KB, i) }]))));
      const ok = results.filter((r) => r.status === 201).length;
      for (const r of results) if (r.status !== 201) await refused(r, 'concurrent upload');
      const { used, quota } = await usage();
      assert.ok(used <= (quota as number), `used ${used} passes the quota ${quota}`);
      assert.equal(used, await actual());
      assert.equal((await t.fs.names('q')).length, ok);
      assert.ok(ok >= 1 && ok <= 10, `${ok} uploads succeeded`);
      await setQuota(null);
      assert.equal((await del('q')).status, 204);
    });

    test('PUT with If-Match: the matching ETag replaces; another (or a missing file) → 412 and the file stays', async () => {
      assert.equal((await put('edit.txt', 'version 1')).status, 201);
      const etag = (await fetch(`${t.url}/storage/alice/edit.txt`, { headers: auth })).headers.get('etag') as string;
      assert.ok(etag);
      assert.equal((await put('edit.txt', 'version 2', { 'if-match': etag })).status, 201);
      assert.equal(await t.fs.text('edit.txt'), 'version 2');
      const stale = await put('edit.txt', 'version 3', { 'if-match': etag });
      assert.equal(stale.status, 412);
      assert.equal(((await stale.json()) as { error: string }).error, 'precondition_failed');
      assert.equal(await t.fs.text('edit.txt'), 'version 2', 'a concurrent change is not overwritten');
      assert.equal((await put('missing.txt', 'x', { 'if-match': etag })).status, 412);
      assert.equal(await t.fs.kind('missing.txt'), undefined);
      assert.equal((await put('edit.txt', 'version 4', { 'if-match': '*' })).status, 201);
      assert.deepEqual(await leftovers(t), []);
      assert.equal((await del('edit.txt')).status, 204);
    });
  });
}
