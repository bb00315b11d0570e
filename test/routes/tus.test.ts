// tus 1.0 protocol on every backend (CONTRACT "Resumable uploads (tus 1.0)"): creation, HEAD,
// PATCH, termination, deferred length, checksums, ownership, and every error path. The real
// client (tus-js-client, cut connections, concurrent resumes) is in test/clients/tus-client.test.ts;
// expiry and token expiry mid-PATCH in test/routes/tus-expiry.test.ts; SIGKILL in test/process/.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { connect } from 'node:net';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { bearer } from '../helpers/client.js';

const TUS = { 'tus-resumable': '1.0.0' };
const MAX = 1024 * 1024;
const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const meta = (m: Record<string, string>) => Object.entries(m).map(([k, v]) => `${k} ${b64(v)}`).join(',');
const sha1 = (b: Buffer | string) => createHash('sha1').update(b).digest('base64');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Res = { status: number; headers: Headers; text: string };

for (const [storage, skip] of BACKENDS) {
  describe(`tus on ${storage}`, { skip }, () => {
    let t: TestApp;
    let alice: Record<string, string>;
    let bob: Record<string, string>;

    const req = async (method: string, path: string, opts: { headers?: Record<string, string | undefined>; body?: Buffer | string; auth?: Record<string, string> | null } = {}): Promise<Res> => {
      const headers: Record<string, string> = { ...(opts.auth === null ? {} : (opts.auth ?? alice)) };
      for (const [k, v] of Object.entries({ ...TUS, ...opts.headers })) if (v !== undefined) headers[k] = v;
      const res = await fetch(path.startsWith('http') ? path : `${t.url}${path}`, { method, headers, body: opts.body });
      return { status: res.status, headers: res.headers, text: await res.text() };
    };
    const code = (r: Res) => (JSON.parse(r.text) as { error: string }).error;
    /** Creates an upload; returns its path (below the app URL, base path stripped). */
    const create = async (m: Record<string, string>, length: number | 'defer', opts: { auth?: Record<string, string> } = {}) => {
      const r = await req('POST', '/tus/', { auth: opts.auth, headers: { ...(length === 'defer' ? { 'upload-defer-length': '1' } : { 'upload-length': String(length) }), 'upload-metadata': meta(m) } });
      assert.equal(r.status, 201, r.text);
      const location = r.headers.get('location') ?? '';
      assert.match(location, /^\/tus\/[0-9a-f-]{36}$/);
      return location;
    };
    const patch = (path: string, offset: number, body: Buffer | string, headers: Record<string, string> = {}, auth?: Record<string, string> | null) =>
      req('PATCH', path, { auth, body, headers: { 'content-type': 'application/offset+octet-stream', 'upload-offset': String(offset), ...headers } });
    const offsetOf = async (path: string) => Number((await req('HEAD', path)).headers.get('upload-offset'));

    before(async () => {
      t = await startApp({ storage, users: ['alice', 'bob'], flags: { maxUploadSize: String(MAX) } });
      alice = bearer((await t.login('alice')).access_token);
      bob = bearer((await t.login('bob')).access_token);
    });
    after(async () => t?.close());

    test('OPTIONS advertises the version, extensions, max size and checksum algorithm without credentials', async () => {
      for (const path of ['/tus/', '/tus/00000000-0000-0000-0000-000000000000']) {
        const r = await req('OPTIONS', path, { auth: null, headers: { 'tus-resumable': undefined } });
        assert.equal(r.status, 204, path);
        assert.equal(r.headers.get('tus-version'), '1.0.0');
        assert.deepEqual(r.headers.get('tus-extension')?.split(',').sort(), ['checksum', 'creation', 'creation-defer-length', 'creation-with-upload', 'expiration', 'termination']);
        assert.equal(r.headers.get('tus-max-size'), String(MAX));
        assert.equal(r.headers.get('tus-checksum-algorithm'), 'sha1');
        assert.equal(r.headers.get('tus-resumable'), '1.0.0');
      }
    });

    test('an upload in two PATCHes: HEAD tells the offset, the last byte makes the file, File-Cloud-Path names it', async () => {
      const path = await create({ filename: 'two parts.txt' }, 11);
      const h0 = await req('HEAD', path);
      assert.equal(h0.status, 200);
      assert.equal(h0.headers.get('upload-offset'), '0');
      assert.equal(h0.headers.get('upload-length'), '11');
      assert.equal(h0.headers.get('upload-metadata'), meta({ filename: 'two parts.txt' }));
      assert.equal(h0.headers.get('cache-control'), 'no-store');
      assert.ok(Date.parse(h0.headers.get('upload-expires') ?? '') > Date.now(), 'Upload-Expires is in the future');
      const p1 = await patch(path, 0, 'hello ');
      assert.equal(p1.status, 204, p1.text);
      assert.equal(p1.headers.get('upload-offset'), '6');
      assert.equal(p1.headers.get('file-cloud-path'), null, 'not finished yet');
      assert.equal(await t.fs.kind('two parts.txt'), undefined, 'nothing visible before the last byte');
      assert.deepEqual(await t.fs.names(''), [], 'staging is never listed');
      assert.equal(await offsetOf(path), 6);
      const p2 = await patch(path, 6, 'world');
      assert.equal(p2.status, 204);
      assert.equal(p2.headers.get('upload-offset'), '11');
      assert.equal(p2.headers.get('file-cloud-path'), '/alice/two%20parts.txt');
      assert.equal(await t.fs.text('two parts.txt'), 'hello world');
      const h1 = await req('HEAD', path);
      assert.equal(h1.headers.get('upload-offset'), '11', 'a finished upload still answers HEAD');
      assert.equal(h1.headers.get('file-cloud-path'), '/alice/two%20parts.txt');
    });

    test('creation-with-upload: the whole file in the POST', async () => {
      const r = await req('POST', '/tus/', { body: 'all at once', headers: { 'upload-length': '11', 'upload-metadata': meta({ filename: 'once.txt' }), 'content-type': 'application/offset+octet-stream' } });
      assert.equal(r.status, 201, r.text);
      assert.equal(r.headers.get('upload-offset'), '11');
      assert.equal(r.headers.get('file-cloud-path'), '/alice/once.txt');
      assert.equal(await t.fs.text('once.txt'), 'all at once');
      const other = await req('POST', '/tus/', { body: 'x', headers: { 'upload-length': '1', 'upload-metadata': meta({ filename: 'x.txt' }), 'content-type': 'text/plain' } });
      assert.equal(other.status, 415);
    });

    test('collision rule as a multipart PUT: a taken name gets name (1).ext unless overwrite is true; the folder and its parents are created', async () => {
      await t.fs.put('dir/sub/c.txt', 'old');
      const a = await create({ filename: 'c.txt', folder: '/alice/dir/sub' }, 3);
      assert.equal((await patch(a, 0, 'new')).headers.get('file-cloud-path'), '/alice/dir/sub/c%20(1).txt');
      assert.equal(await t.fs.text('dir/sub/c.txt'), 'old');
      assert.equal(await t.fs.text('dir/sub/c (1).txt'), 'new');
      const b = await create({ filename: 'c.txt', folder: '/alice/dir/sub/', overwrite: 'true' }, 4);
      assert.equal((await patch(b, 0, 'new!')).headers.get('file-cloud-path'), '/alice/dir/sub/c.txt');
      assert.equal(await t.fs.text('dir/sub/c.txt'), 'new!');
      const c = await create({ filename: 'ünï #?%.txt', folder: '/alice/fresh/déep' }, 1);
      assert.equal((await patch(c, 0, 'u')).headers.get('file-cloud-path'), `/alice/fresh/${encodeURIComponent('déep')}/${encodeURIComponent('ünï #?%.txt')}`);
      assert.equal(await t.fs.text('fresh/déep/ünï #?%.txt'), 'u');
    });

    test('an empty upload is complete at creation', async () => {
      const r = await req('POST', '/tus/', { headers: { 'upload-length': '0', 'upload-metadata': meta({ filename: 'empty.txt' }) } });
      assert.equal(r.status, 201);
      assert.equal(r.headers.get('upload-offset'), '0');
      assert.equal(r.headers.get('file-cloud-path'), '/alice/empty.txt');
      assert.equal(await t.fs.text('empty.txt'), '');
    });

    test('creation-defer-length: the length comes with a later PATCH', async () => {
      const path = await create({ filename: 'deferred.txt' }, 'defer');
      const h = await req('HEAD', path);
      assert.equal(h.headers.get('upload-defer-length'), '1');
      assert.equal(h.headers.get('upload-length'), null);
      assert.equal((await patch(path, 0, 'abc')).status, 204);
      assert.equal(await t.fs.kind('deferred.txt'), undefined);
      assert.equal((await patch(path, 3, 'def', { 'upload-length': String(MAX + 1) })).status, 413, 'a deferred length over the limit');
      const done = await patch(path, 3, 'def', { 'upload-length': '6' });
      assert.equal(done.status, 204, done.text);
      assert.equal(done.headers.get('file-cloud-path'), '/alice/deferred.txt');
      assert.equal(await t.fs.text('deferred.txt'), 'abcdef');
    });

    test('checksum: a matching sha1 is kept, a mismatch is 460 and the chunk discarded, an unknown algorithm is 400', async () => {
      const path = await create({ filename: 'summed.txt' }, 8);
      assert.equal((await patch(path, 0, 'abcd', { 'upload-checksum': `sha1 ${sha1('abcd')}` })).status, 204);
      const bad = await patch(path, 4, 'efgh', { 'upload-checksum': `sha1 ${sha1('EFGH')}` });
      assert.equal(bad.status, 460);
      assert.equal(code(bad), 'checksum_mismatch');
      assert.equal(await offsetOf(path), 4, 'the chunk was discarded');
      assert.equal((await patch(path, 4, 'efgh', { 'upload-checksum': `md5 ${createHash('md5').update('efgh').digest('base64')}` })).status, 400);
      assert.equal((await patch(path, 4, 'efgh', { 'upload-checksum': `sha1 ${sha1('efgh')}` })).status, 204);
      assert.equal(await t.fs.text('summed.txt'), 'abcdefgh', 'no byte of the bad chunk survived');
    });

    test('protocol errors: Tus-Resumable 412, Upload-Length 400, offsets 409, content type 415, too large 413', async () => {
      const noVersion = await req('POST', '/tus/', { headers: { 'tus-resumable': undefined, 'upload-length': '1', 'upload-metadata': meta({ filename: 'a' }) } });
      assert.equal(noVersion.status, 412);
      assert.equal(noVersion.headers.get('tus-version'), '1.0.0');
      assert.equal(code(noVersion), 'precondition_failed');
      assert.equal((await req('POST', '/tus/', { headers: { 'tus-resumable': '0.2.2', 'upload-length': '1', 'upload-metadata': meta({ filename: 'a' }) } })).status, 412);
      for (const length of [undefined, '', '-1', '1.5', 'abc', '1e3', '99999999999999999']) {
        const r = await req('POST', '/tus/', { headers: { 'upload-length': length, 'upload-metadata': meta({ filename: 'a' }) } });
        assert.equal(r.status, 400, `Upload-Length ${length}`);
        assert.equal(code(r), 'bad_request');
      }
      assert.equal((await req('POST', '/tus/', { headers: { 'upload-length': '1', 'upload-defer-length': '1', 'upload-metadata': meta({ filename: 'a' }) } })).status, 400, 'both lengths');
      assert.equal((await req('POST', '/tus/', { headers: { 'upload-defer-length': '2', 'upload-metadata': meta({ filename: 'a' }) } })).status, 400);
      const tooBig = await req('POST', '/tus/', { headers: { 'upload-length': String(MAX + 1), 'upload-metadata': meta({ filename: 'big' }) } });
      assert.equal(tooBig.status, 413);
      assert.equal(code(tooBig), 'too_large');

      const path = await create({ filename: 'errors.txt' }, 4);
      const wrongOffset = await patch(path, 2, 'cd');
      assert.equal(wrongOffset.status, 409);
      assert.equal(code(wrongOffset), 'offset_mismatch');
      assert.equal((await req('PATCH', path, { body: 'ab', headers: { 'upload-offset': '0' } })).status, 415, 'no Content-Type');
      assert.equal((await req('PATCH', path, { body: 'ab', headers: { 'upload-offset': '0', 'content-type': 'application/octet-stream' } })).status, 415);
      assert.equal((await req('PATCH', path, { body: 'ab', headers: { 'content-type': 'application/offset+octet-stream' } })).status, 400, 'no Upload-Offset');
      assert.equal((await patch(path, 0, 'ab', { 'tus-resumable': '2.0.0' })).status, 412);
      const over = await patch(path, 0, 'abcdef');
      assert.equal(over.status, 413, 'more bytes than Upload-Length (declared: refused before reading)');
      const streamed = await fetch(`${t.url}${path}`, {
        method: 'PATCH',
        headers: { ...alice, ...TUS, 'content-type': 'application/offset+octet-stream', 'upload-offset': '0' },
        body: new ReadableStream({ start: (c) => (c.enqueue(Buffer.from('abc')), c.enqueue(Buffer.from('def')), c.close()) }),
        duplex: 'half',
      } as RequestInit);
      assert.equal(streamed.status, 413, 'more bytes than Upload-Length (chunked: found while reading)');
      assert.equal(await offsetOf(path), 0, 'nothing of an oversized chunk is kept');
      assert.equal((await patch(path, 0, 'abcd', { 'upload-length': '5' })).status, 400, 'the length cannot change');
      assert.equal((await patch(path, 0, 'abcd')).status, 204);
      assert.equal(await t.fs.text('errors.txt'), 'abcd');
    });

    test('metadata errors: no filename or a bad one 400, a bad folder 400, a folder of another user 401, a file in the way 409', async () => {
      const post = (m: string) => req('POST', '/tus/', { headers: { 'upload-length': '1', 'upload-metadata': m } });
      assert.equal((await post('')).status, 400, 'no metadata');
      assert.equal((await post(meta({ folder: '/alice/' }))).status, 400, 'no filename');
      for (const name of ['..', '.', 'a/b', 'a\\b', '', 'x\0y']) {
        const r = await post(meta({ filename: name }));
        assert.equal(r.status, 400, JSON.stringify(name));
      }
      assert.equal((await post('filename !!!')).status, 400, 'not base64');
      for (const folder of ['/alice/../bob', '/alice//x', '/alice/a\\b']) assert.equal((await post(meta({ filename: 'a', folder }))).status, 400, folder);
      const other = await post(meta({ filename: 'a', folder: '/bob/' }));
      assert.equal(other.status, 401);
      assert.equal(code(other), 'unauthorized');
      assert.equal((await post(meta({ filename: 'a', folder: '/nobody/x' }))).status, 401);
      assert.equal((await post(meta({ filename: 'a', overwrite: 'yes' }))).status, 400);
      await t.fs.put('blocker', 'file');
      const blocked = await post(meta({ filename: 'a', folder: '/alice/blocker' }));
      assert.equal(blocked.status, 409);
      assert.equal(code(blocked), 'not_a_directory');
    });

    test("an upload is its owner's alone: other users and requests without a valid token get 404; creating needs a token (401)", async () => {
      const path = await create({ filename: 'private.txt' }, 2);
      for (const auth of [bob, null, { authorization: 'Bearer nope' }, { authorization: 'nope' }]) {
        const who = JSON.stringify(auth);
        const h = await req('HEAD', path, { auth });
        assert.equal(h.status, 404, `HEAD ${who}`);
        const p = await patch(path, 0, 'ab', {}, auth);
        assert.equal(p.status, 404, `PATCH ${who}`);
        assert.equal(code(p), 'not_found');
        assert.equal((await req('DELETE', path, { auth })).status, 404, `DELETE ${who}`);
      }
      assert.equal(await offsetOf(path), 0);
      assert.equal((await req('HEAD', '/tus/00000000-0000-0000-0000-000000000000')).status, 404, 'unknown id');
      assert.equal((await req('HEAD', '/tus/not-an-id')).status, 404);
      assert.equal((await req('POST', '/tus/', { auth: null, headers: { 'upload-length': '1', 'upload-metadata': meta({ filename: 'a' }) } })).status, 401);
      assert.equal((await patch(path, 0, 'ab')).status, 204, 'the owner still can');
      assert.deepEqual(await t.fs.names('', 'bob'), [], "nothing landed in bob's tree");
    });

    test('termination: DELETE removes the upload and its staged bytes; it answers 404 after', async () => {
      const path = await create({ filename: 'gone.txt' }, 10);
      assert.equal((await patch(path, 0, 'abc')).status, 204);
      const d = await req('DELETE', path);
      assert.equal(d.status, 204);
      assert.equal(d.headers.get('tus-resumable'), '1.0.0');
      assert.equal((await req('HEAD', path)).status, 404);
      assert.equal((await patch(path, 3, 'def')).status, 404);
      assert.equal(await t.fs.kind('gone.txt'), undefined);
      if (storage === 'file') assert.ok(!(await readdir(join(t.paths.tmp, 'tus'))).includes(path.split('/').pop() as string), 'staging file removed');
    });

    test('unknown paths under /tus are 404 JSON; a method an address lacks is 405 with Allow', async () => {
      const unknown = await req('HEAD', '/tus/a/b');
      assert.equal(unknown.status, 404);
      const get = await req('GET', '/tus/x/y');
      assert.equal(get.status, 404);
      assert.equal(code(get), 'not_found');
      const path = await create({ filename: 'm.txt' }, 1);
      const g = await req('GET', path);
      assert.equal(g.status, 405);
      assert.match(g.headers.get('allow') ?? '', /PATCH/);
      assert.equal((await req('GET', '/tus/')).status, 405);
    });

    test('a PATCH cut off mid-body keeps exactly the bytes that arrived, and the upload resumes from there', async () => {
      const path = await create({ filename: 'cut.bin' }, 300_000);
      const data = Buffer.alloc(300_000, 0);
      for (let i = 0; i < data.length; i++) data[i] = (i * 7 + (i >> 8)) & 0xff;
      const { hostname, port, pathname } = new URL(`${t.url}${path}`);
      const sent = 123_457;
      await new Promise<void>((resolve, reject) => {
        const socket = connect(Number(port), hostname, () => {
          socket.write(
            `PATCH ${pathname} HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: ${alice.authorization}\r\nTus-Resumable: 1.0.0\r\nContent-Type: application/offset+octet-stream\r\nUpload-Offset: 0\r\nContent-Length: ${data.length}\r\n\r\n`,
          );
          socket.write(data.subarray(0, sent), () => setTimeout(() => (socket.destroy(), resolve()), 300));
        });
        socket.on('error', reject);
      });
      let offset = 0;
      for (let i = 0; i < 100 && offset !== sent; i++) {
        await sleep(100);
        offset = await offsetOf(path);
      }
      assert.equal(offset, sent, 'HEAD reports every byte that arrived');
      const rest = await patch(path, sent, data.subarray(sent));
      assert.equal(rest.status, 204, rest.text);
      assert.ok((await t.fs.read('cut.bin'))?.equals(data), 'the file is whole and in order');
    });

    test('two PATCHes on one upload at once: the second gets 409 while the first writes, bytes never interleave', async () => {
      const path = await create({ filename: 'race.bin' }, 8);
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      const slow = new ReadableStream<Uint8Array>({
        async start(controller) {
          controller.enqueue(Buffer.from('AAAA'));
          await gate;
          controller.enqueue(Buffer.from('BBBB'));
          controller.close();
        },
      });
      const first = fetch(`${t.url}${path}`, { method: 'PATCH', headers: { ...alice, ...TUS, 'content-type': 'application/offset+octet-stream', 'upload-offset': '0' }, body: slow, duplex: 'half' } as RequestInit);
      await sleep(500);
      const second = await patch(path, 0, 'CCCCCCCC');
      assert.equal(second.status, 409, second.text);
      assert.equal(code(second), 'upload_busy');
      assert.equal((await req('DELETE', path)).status, 409, 'termination waits for the writer too');
      release();
      const r = await first;
      assert.equal(r.status, 204, await r.text());
      assert.equal(await t.fs.text('race.bin'), 'AAAABBBB');
    });

    test('an upload whose last byte was recorded but whose file was not committed (a crash in between) is committed by the next HEAD', async () => {
      const path = await create({ filename: 'recovered.txt', folder: '/alice/rec' }, 4);
      const id = path.split('/').pop() as string;
      // What a PATCH that died right after recording its last offset leaves: staged bytes, offset = length.
      await t.backend.resumable.append(id, 0, Readable.from([Buffer.from('data')]), { maxBytes: 4 });
      assert.equal(await t.store.tusUploads.advance(id, 0, 4, Date.now() + 60_000), true);
      assert.equal(await t.fs.kind('rec/recovered.txt'), undefined);
      const h = await req('HEAD', path);
      assert.equal(h.status, 200);
      assert.equal(h.headers.get('upload-offset'), '4');
      assert.equal(h.headers.get('file-cloud-path'), '/alice/rec/recovered.txt');
      assert.equal(await t.fs.text('rec/recovered.txt'), 'data');
      assert.equal((await req('HEAD', path)).headers.get('file-cloud-path'), '/alice/rec/recovered.txt', 'committed once');
      assert.deepEqual(await t.fs.names('rec'), ['recovered.txt']);
    });

    test('an upload whose file was committed but not recorded (a crash in between) answers complete and is not stored twice', async () => {
      const path = await create({ filename: 'lost.txt', folder: '/alice/lost' }, 4);
      const id = path.split('/').pop() as string;
      await t.backend.resumable.append(id, 0, Readable.from([Buffer.from('data')]), { maxBytes: 4 });
      assert.equal(await t.store.tusUploads.advance(id, 0, 4, Date.now() + 60_000), true);
      // The commit that then died before the upload was marked finished.
      assert.ok(await t.backend.resumable.commit(id, 4, { user: 'alice', segments: ['lost', 'lost.txt'] }, { ifExists: 'rename' }));
      const h = await req('HEAD', path);
      assert.equal(h.status, 200);
      assert.equal(h.headers.get('upload-offset'), '4');
      assert.equal(h.headers.get('file-cloud-path'), null, 'where it went is not known');
      assert.equal((await patch(path, 4, '')).status, 204, 'a PATCH at the end is answered too');
      assert.deepEqual(await t.fs.names('lost'), ['lost.txt'], 'stored once');
    });

    test('every answer carries Tus-Resumable, errors a JSON body', async () => {
      const r = await req('POST', '/tus/', { headers: { 'upload-metadata': meta({ filename: 'a' }) } });
      assert.equal(r.headers.get('tus-resumable'), '1.0.0');
      assert.match(r.headers.get('content-type') ?? '', /application\/json/);
      assert.equal(typeof (JSON.parse(r.text) as { message: string }).message, 'string');
    });
  });
}

describe('tus with --base-path', () => {
  let t: TestApp;
  before(async () => {
    t = await startApp({ users: ['alice'], flags: { basePath: '/files' } });
  });
  after(async () => t?.close());

  test('Location includes the base path and the upload answers there', async () => {
    const auth = bearer((await t.login('alice')).access_token);
    const r = await fetch(`${t.origin}/files/tus/`, { method: 'POST', headers: { ...auth, ...TUS, 'upload-length': '2', 'upload-metadata': meta({ filename: 'b.txt' }) } });
    assert.equal(r.status, 201);
    const location = r.headers.get('location') ?? '';
    assert.match(location, /^\/files\/tus\/[0-9a-f-]{36}$/);
    const p = await fetch(`${t.origin}${location}`, { method: 'PATCH', headers: { ...auth, ...TUS, 'content-type': 'application/offset+octet-stream', 'upload-offset': '0' }, body: 'ok' });
    assert.equal(p.status, 204);
    assert.equal(await t.fs.text('b.txt'), 'ok');
    assert.equal((await fetch(`${t.origin}/tus/`, { method: 'OPTIONS' })).status, 404, 'nothing outside the base path');
  });
});
