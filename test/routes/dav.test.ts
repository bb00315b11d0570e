// WebDAV routes on every backend (CONTRACT "WebDAV"): each method's answers and error paths,
// authentication, hrefs and live properties, locks and the If header. The real clients
// (litmus, cadaver, rclone) are in test/clients/dav-clients.test.ts.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { runCli } from '../helpers/server.js';
import { rawRequest } from '../helpers/raw-http.js';
import { connect } from 'node:net';
import { mkdir, readdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

const basic = (user: string, password: string) => ({ authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` });
const ALICE = basic('alice', 'alice-password');

type Res = { status: number; headers: Headers; text: string };

for (const [storage, skip] of BACKENDS) {
  describe(`WebDAV routes on ${storage}`, { skip }, () => {
    let t: TestApp;
    const dav = async (method: string, path: string, opts: { headers?: Record<string, string>; body?: string | Buffer; auth?: Record<string, string> | null } = {}): Promise<Res> => {
      const res = await fetch(`${t.url}/dav/${path}`, { method, headers: { ...(opts.auth === null ? {} : (opts.auth ?? ALICE)), ...opts.headers }, body: opts.body });
      return { status: res.status, headers: res.headers, text: await res.text() };
    };
    const errorCode = (r: Res) => (JSON.parse(r.text) as { error: string }).error;
    const lockBody = (scope: 'exclusive' | 'shared') =>
      `<?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:${scope}/></D:lockscope><D:locktype><D:write/></D:locktype><D:owner>tests</D:owner></D:lockinfo>`;
    const lock = async (path: string, opts: { scope?: 'exclusive' | 'shared'; headers?: Record<string, string> } = {}) => {
      const r = await dav('LOCK', path, { body: lockBody(opts.scope ?? 'exclusive'), headers: { 'content-type': 'application/xml', ...opts.headers } });
      return { ...r, token: /<([^>]+)>/.exec(r.headers.get('lock-token') ?? '')?.[1] ?? '' };
    };

    before(async () => {
      t = await startApp({ storage, users: ['alice', 'bob'] });
    });
    after(async () => t?.close());

    test('OPTIONS announces class 1 and 2 and MS-Author-Via without credentials', async () => {
      const r = await dav('OPTIONS', 'alice/', { auth: null });
      assert.equal(r.status, 200);
      assert.equal(r.headers.get('dav'), '1, 2');
      assert.equal(r.headers.get('ms-author-via'), 'DAV');
      assert.match(r.headers.get('allow') ?? '', /PROPFIND.*LOCK/);
    });

    test('no or wrong credentials: 401 with the Basic challenge and the JSON error; Bearer tokens work too', async () => {
      for (const auth of [null, basic('alice', 'wrong'), basic('nobody', 'x'), { authorization: 'Bearer fca_nope' }, { authorization: 'Basic !!!' }]) {
        const r = await dav('PROPFIND', 'alice/', { auth, headers: { depth: '0' } });
        assert.equal(r.status, 401, JSON.stringify(auth));
        assert.equal(r.headers.get('www-authenticate')?.startsWith('Basic realm="File Cloud"'), true);
        assert.equal(errorCode(r), 'unauthorized');
      }
      const tokens = await t.login('alice');
      assert.equal((await dav('PROPFIND', 'alice/', { auth: { authorization: `Bearer ${tokens.access_token}` }, headers: { depth: '0' } })).status, 207);
    });

    test("another user's tree is refused, and PROPFIND /dav/ shows only the caller's own root", async () => {
      assert.equal((await dav('PROPFIND', 'bob/', { headers: { depth: '0' } })).status, 401);
      assert.equal((await dav('PUT', 'bob/x.txt', { body: 'no' })).status, 401);
      const top = await dav('PROPFIND', '', { headers: { depth: '1' } });
      assert.equal(top.status, 207);
      const hrefs = [...top.text.matchAll(/<D:href>([^<]*)<\/D:href>/g)].map((m) => m[1]);
      assert.deepEqual(hrefs, ['/dav/', '/dav/alice/', '/dav/Shared%20with%20me/']);
    });

    test('PUT creates (201) and replaces (204) atomically; a missing parent is 409; GET and HEAD serve it', async () => {
      const created = await dav('PUT', 'alice/put.txt', { body: 'one' });
      assert.equal(created.status, 201);
      assert.equal(created.headers.get('etag'), (await dav('HEAD', 'alice/put.txt')).headers.get('etag'), "the 201's ETag is the new file's");
      const replaced = await dav('PUT', 'alice/put.txt', { body: 'two!' });
      assert.equal(replaced.status, 204);
      const got = await dav('GET', 'alice/put.txt');
      assert.equal(got.text, 'two!');
      assert.ok(got.headers.get('etag'));
      assert.equal(replaced.headers.get('etag'), got.headers.get('etag'), "the 204's ETag is the replacing file's");
      assert.equal((await dav('HEAD', 'alice/put.txt')).headers.get('content-length'), '4');
      const r = await dav('PUT', 'alice/no/such/parent.txt', { body: 'x' });
      assert.equal(r.status, 409);
      assert.equal(await t.fs.kind('no'), undefined, 'nothing created on the way');
    });

    test('MKCOL: 201, then 405 when it exists, 409 without a parent, 415 with a body', async () => {
      assert.equal((await dav('MKCOL', 'alice/col')).status, 201);
      assert.equal(await t.fs.kind('col'), 'folder');
      assert.equal((await dav('MKCOL', 'alice/col')).status, 405);
      assert.equal((await dav('MKCOL', 'alice/a/b')).status, 409);
      const r = await dav('MKCOL', 'alice/withbody', { body: '<x/>', headers: { 'content-type': 'text/xml' } });
      assert.equal(r.status, 415);
      assert.equal(errorCode(r), 'unsupported_media_type');
      assert.equal(await t.fs.kind('withbody'), undefined);
    });

    test('PROPFIND: Depth infinity or none is 403 propfind_finite_depth; Depth 1 lists members with encoded hrefs and live properties', async () => {
      for (const headers of [{ depth: 'infinity' }, {}] as Record<string, string>[]) {
        const r = await dav('PROPFIND', 'alice/', { headers });
        assert.equal(r.status, 403);
        assert.equal(errorCode(r), 'propfind_finite_depth');
      }
      await t.fs.put('names/a b#c%d ü.txt', 'hello');
      await t.fs.mkdir('names/sub dir');
      const r = await dav('PROPFIND', 'alice/names/', { headers: { depth: '1' } });
      assert.equal(r.status, 207);
      assert.match(r.headers.get('content-type') ?? '', /xml/);
      const hrefs = [...r.text.matchAll(/<D:href>([^<]*)<\/D:href>/g)].map((m) => m[1]);
      assert.deepEqual(hrefs, ['/dav/alice/names/', '/dav/alice/names/sub%20dir/', '/dav/alice/names/a%20b%23c%25d%20%C3%BC.txt']);
      for (const prop of ['resourcetype', 'getlastmodified', 'getetag', 'getcontentlength', 'getcontenttype', 'creationdate', 'displayname', 'supportedlock']) {
        assert.match(r.text, new RegExp(`<D:${prop}>`), prop);
      }
      assert.match(r.text, /<D:getcontentlength>5<\/D:getcontentlength>/);
      assert.match(r.text, /<D:displayname>a b#c%d ü.txt<\/D:displayname>/);
      const q = await dav('PROPFIND', 'alice/', {
        headers: { depth: '0' },
        body: '<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:prop><D:quota-used-bytes/><D:quota-available-bytes/><D:nosuch/></D:prop></D:propfind>',
      });
      assert.equal(q.status, 207);
      assert.match(q.text, /<D:quota-used-bytes>\d+<\/D:quota-used-bytes>/);
      assert.match(q.text, /<D:nosuch\/>.*404 Not Found/s);
      if (storage === 'file') assert.match(q.text, /<D:quota-available-bytes>\d+<\/D:quota-available-bytes>/);
    });

    test('malformed, hostile and oversized XML bodies are refused before anything is done', async () => {
      const bad = await dav('PROPFIND', 'alice/', { headers: { depth: '0' }, body: '<D:propfind xmlns:D="DAV:"><D:prop>' });
      assert.equal(bad.status, 400);
      const xxe = await dav('PROPPATCH', 'alice/', {
        body: '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><D:propertyupdate xmlns:D="DAV:"><D:set><D:prop><Z:p xmlns:Z="urn:z">&e;</Z:p></D:prop></D:set></D:propertyupdate>',
      });
      assert.equal(xxe.status, 400);
      assert.doesNotMatch(xxe.text, /root:/);
      assert.deepEqual(await t.store.davProperties.list('alice', ''), []);
      const laughs = `<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "ha"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">]><D:propfind xmlns:D="DAV:"><D:prop>&b;</D:prop></D:propfind>`;
      assert.equal((await dav('PROPFIND', 'alice/', { headers: { depth: '0' }, body: laughs })).status, 400);
      const huge = `<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:prop>${'<D:x/>'.repeat(400_000)}</D:prop></D:propfind>`;
      const big = await dav('PROPFIND', 'alice/', { headers: { depth: '0' }, body: huge });
      assert.equal(big.status, 413);
    });

    test('PROPPATCH keeps dead properties in the database; a protected live property fails the whole request', async () => {
      await t.fs.put('props.txt', 'p');
      const set = await dav('PROPPATCH', 'alice/props.txt', {
        body: '<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:" xmlns:Z="urn:z"><D:set><D:prop><Z:colour>blue &amp; green</Z:colour></D:prop></D:set></D:propertyupdate>',
      });
      assert.equal(set.status, 207);
      assert.match(set.text, /200 OK/);
      const got = await dav('PROPFIND', 'alice/props.txt', { headers: { depth: '0' }, body: '<D:propfind xmlns:D="DAV:"><D:prop><Z:colour xmlns:Z="urn:z"/></D:prop></D:propfind>' });
      assert.match(got.text, /blue &amp; green/);
      const mixed = await dav('PROPPATCH', 'alice/props.txt', {
        body: '<D:propertyupdate xmlns:D="DAV:" xmlns:Z="urn:z"><D:set><D:prop><Z:size>1</Z:size><D:getetag>"x"</D:getetag></D:prop></D:set></D:propertyupdate>',
      });
      assert.equal(mixed.status, 207);
      assert.match(mixed.text, /403 Forbidden/);
      assert.match(mixed.text, /424 Failed Dependency/);
      assert.deepEqual((await t.store.davProperties.list('alice', 'props.txt')).map((p) => p.name), ['colour'], 'nothing of the failed request was applied');
    });

    test('COPY and MOVE: Destination missing (400), another user (403), outside /dav/ (403), Overwrite F onto a target (412), missing parent (409)', async () => {
      await t.fs.put('cm/src.txt', 'source');
      await t.fs.put('cm/taken.txt', 'taken');
      const origin = t.url;
      assert.equal((await dav('COPY', 'alice/cm/src.txt')).status, 400);
      const other = await dav('MOVE', 'alice/cm/src.txt', { headers: { destination: `${origin}/dav/bob/stolen.txt` } });
      assert.equal(other.status, 403);
      assert.equal(await t.fs.kind('stolen.txt', 'bob'), undefined);
      assert.equal((await dav('COPY', 'alice/cm/src.txt', { headers: { destination: `${origin}/storage/alice/x.txt` } })).status, 403);
      assert.equal((await dav('COPY', 'alice/cm/src.txt', { headers: { destination: `${origin}/dav/alice/cm/../../bob/x.txt` } })).status, 400);
      const f = await dav('COPY', 'alice/cm/src.txt', { headers: { destination: `${origin}/dav/alice/cm/taken.txt`, overwrite: 'F' } });
      assert.equal(f.status, 412);
      assert.equal(await t.fs.text('cm/taken.txt'), 'taken');
      assert.equal((await dav('COPY', 'alice/cm/src.txt', { headers: { destination: '/dav/alice/nowhere/x.txt' } })).status, 409);
      assert.equal((await dav('COPY', 'alice/cm/src.txt', { headers: { destination: `${origin}/dav/alice/cm/copy.txt` } })).status, 201);
      assert.equal((await dav('MOVE', 'alice/cm/copy.txt', { headers: { destination: `${origin}/dav/alice/cm/taken.txt` } })).status, 204);
      assert.deepEqual(await t.fs.names('cm'), ['src.txt', 'taken.txt']);
      assert.equal(await t.fs.text('cm/taken.txt'), 'source');
      assert.equal((await dav('MOVE', 'alice/cm/', { headers: { destination: `${origin}/dav/alice/cm/inside/` } })).status, 403);
    });

    test('LOCK: 423 for writes without the token, 412 for a token that does not match, the token in If lets them through; UNLOCK', async () => {
      await t.fs.put('locked.txt', 'v1');
      const l = await lock('alice/locked.txt', { headers: { timeout: 'Second-600' } });
      assert.equal(l.status, 200);
      assert.match(l.token, /^urn:uuid:/);
      assert.match(l.text, /<D:timeout>Second-(600|599)<\/D:timeout>/);
      const blocked = await dav('PUT', 'alice/locked.txt', { body: 'v2' });
      assert.equal(blocked.status, 423);
      assert.equal(errorCode(blocked), 'locked');
      for (const method of ['DELETE', 'PROPPATCH']) assert.equal((await dav(method, 'alice/locked.txt', { body: method === 'PROPPATCH' ? '<D:propertyupdate xmlns:D="DAV:"><D:remove><D:prop><Z:x xmlns:Z="urn:z"/></D:prop></D:remove></D:propertyupdate>' : undefined })).status, 423, method);
      assert.equal((await dav('MOVE', 'alice/locked.txt', { headers: { destination: '/dav/alice/moved.txt' } })).status, 423);
      assert.equal((await dav('PUT', 'alice/locked.txt', { body: 'v2', headers: { if: '(<urn:uuid:00000000-0000-0000-0000-000000000000>)' } })).status, 423);
      assert.equal((await lock('alice/locked.txt')).status, 423, 'a second exclusive lock conflicts');
      assert.equal((await dav('PUT', 'alice/locked.txt', { body: 'v2', headers: { if: `(<${l.token}> ["not-the-etag"])` } })).status, 412);
      assert.equal((await dav('PUT', 'alice/locked.txt', { body: 'v2', headers: { if: `(<${l.token}>)` } })).status, 204);
      assert.equal(await t.fs.text('locked.txt'), 'v2');
      assert.equal((await dav('UNLOCK', 'alice/locked.txt', { headers: { 'lock-token': '<urn:uuid:11111111-1111-1111-1111-111111111111>' } })).status, 409);
      assert.equal((await dav('UNLOCK', 'alice/locked.txt')).status, 400);
      assert.equal((await dav('UNLOCK', 'alice/locked.txt', { headers: { 'lock-token': `<${l.token}>` } })).status, 204);
      assert.equal((await dav('PUT', 'alice/locked.txt', { body: 'v3' })).status, 204);
      assert.equal((await dav('PUT', 'alice/locked.txt', { body: 'v4', headers: { if: `(<${l.token}>)` } })).status, 412, 'a released token no longer matches');
    });

    test('a depth-infinity lock on a collection guards its members; LOCK on an unmapped URL creates an empty file; shared locks coexist', async () => {
      await t.fs.mkdir('guarded');
      const l = await lock('alice/guarded/');
      assert.equal(l.status, 200);
      assert.equal((await dav('PUT', 'alice/guarded/new.txt', { body: 'x' })).status, 423);
      assert.equal((await dav('MKCOL', 'alice/guarded/sub')).status, 423);
      assert.equal((await dav('PUT', 'alice/guarded/new.txt', { body: 'x', headers: { if: `(<${l.token}>)` } })).status, 201);
      const disc = await dav('PROPFIND', 'alice/guarded/', { headers: { depth: '1' }, body: '<D:propfind xmlns:D="DAV:"><D:prop><D:lockdiscovery/></D:prop></D:propfind>' });
      assert.equal(disc.text.split(l.token).length - 1, 2, 'the lock shows on the collection and on its member');
      assert.equal((await dav('UNLOCK', 'alice/guarded/new.txt', { headers: { 'lock-token': `<${l.token}>` } })).status, 204, 'UNLOCK through a member it covers');

      const made = await lock('alice/unmapped.txt');
      assert.equal(made.status, 201);
      assert.equal(await t.fs.text('unmapped.txt'), '');
      const s1 = await lock('alice/shared.txt', { scope: 'shared' });
      const s2 = await lock('alice/shared.txt', { scope: 'shared' });
      assert.equal(s1.status, 201);
      assert.equal(s2.status, 200);
      assert.equal((await lock('alice/shared.txt')).status, 423, 'exclusive over shared conflicts');
      assert.equal((await dav('PUT', 'alice/shared.txt', { body: 's', headers: { if: `(<${s2.token}>)` } })).status, 204);
    });

    test('an expired lock neither blocks nor matches; a refresh extends it', async () => {
      await t.fs.put('brief.txt', 'b');
      const l = await lock('alice/brief.txt', { headers: { timeout: 'Second-1' } });
      assert.equal(l.status, 200);
      const refreshed = await dav('LOCK', 'alice/brief.txt', { headers: { if: `(<${l.token}>)`, timeout: 'Second-2' } });
      assert.equal(refreshed.status, 200);
      assert.match(refreshed.text, /Second-[12]</);
      await new Promise((r) => setTimeout(r, 2300));
      assert.equal((await dav('PUT', 'alice/brief.txt', { body: 'after' })).status, 204);
      assert.equal((await dav('LOCK', 'alice/brief.txt', { headers: { if: `(<${l.token}>)` } })).status, 412);
    });

    test('Finder: LOCK before PUT, a chunked PUT with X-Expected-Entity-Length, AppleDouble ._ files', async () => {
      const l = await lock('alice/finder.txt');
      assert.equal(l.status, 201, 'Finder locks the new name first, which creates it empty');
      const chunked = (text: string) =>
        new ReadableStream<Uint8Array>({
          start(c) {
            for (const part of [text.slice(0, 4), text.slice(4)]) c.enqueue(new TextEncoder().encode(part));
            c.close();
          },
        });
      const put = (headers: Record<string, string>) =>
        fetch(`${t.url}/dav/alice/finder.txt`, { method: 'PUT', headers: { ...ALICE, 'x-expected-entity-length': '11', ...headers }, body: chunked('hello world'), duplex: 'half' } as RequestInit);
      assert.equal((await put({})).status, 423, 'not without the token');
      const r = await put({ if: `(<${l.token}>)` });
      assert.equal(r.status, 204);
      assert.equal(await t.fs.text('finder.txt'), 'hello world');
      assert.equal((await dav('PUT', 'alice/._finder.txt', { body: Buffer.from([0, 5, 22, 7]) })).status, 201);
      const list = await dav('PROPFIND', 'alice/', { headers: { depth: '1' } });
      assert.match(list.text, /<D:href>\/dav\/alice\/\._finder\.txt<\/D:href>/);
      assert.equal((await dav('UNLOCK', 'alice/finder.txt', { headers: { 'lock-token': `<${l.token}>` } })).status, 204);
      assert.equal((await dav('PUT', 'alice/finder.txt', { body: 'free again' })).status, 204);
    });

    test('confinement: "..", encoded dots and slashes never leave the tree, in the URL or the Destination', async () => {
      await t.fs.put('secret.txt', 'bob secret', 'bob');
      await t.fs.put('mine.txt', 'mine');
      const auth = `Authorization: ${ALICE.authorization}\r\n`;
      for (const path of ['/dav/alice/../bob/secret.txt', '/dav/alice/%2e%2e/bob/secret.txt', '/dav/alice/..%2fbob/secret.txt', '/dav/alice/%2E%2E%2Fbob%2Fsecret.txt', '/dav/../dav/bob/secret.txt']) {
        const get = await rawRequest(t.url, `GET ${path} HTTP/1.1\r\nHost: x\r\n${auth}Connection: close\r\n\r\n`);
        assert.ok(get.status >= 400 && get.status < 500, `GET ${path}: ${get.status}`);
        assert.ok(!get.body.includes('bob secret'), `GET ${path} leaked`);
        const put = await rawRequest(t.url, `PUT ${path.replace('secret.txt', 'evil.txt')} HTTP/1.1\r\nHost: x\r\n${auth}Content-Length: 4\r\nConnection: close\r\n\r\nevil`);
        assert.ok(put.status >= 400 && put.status < 500, `PUT ${path}: ${put.status}`);
      }
      for (const destination of ['/dav/alice/../bob/stolen.txt', '/dav/alice/%2e%2e/bob/stolen.txt', `${t.url}/dav/bob/stolen.txt`, '/storage/alice/x.txt']) {
        for (const method of ['COPY', 'MOVE']) {
          const r = await dav(method, 'alice/mine.txt', { headers: { destination } });
          assert.ok(r.status === 400 || r.status === 403, `${method} → ${destination}: ${r.status}`);
        }
      }
      assert.deepEqual(await t.fs.names('', 'bob'), ['secret.txt']);
      assert.equal(await t.fs.text('mine.txt'), 'mine');
    });

    test('an aborted PUT leaves no file, and a replaced file keeps its old bytes', async () => {
      await t.fs.put('keep.txt', 'old bytes');
      for (const name of ['partial.bin', 'keep.txt']) {
        await new Promise<void>((resolve, reject) => {
          const { hostname, port } = new URL(t.url);
          const socket = connect(Number(port), hostname, () => {
            socket.write(`PUT /dav/alice/${name} HTTP/1.1\r\nHost: x\r\nAuthorization: ${ALICE.authorization}\r\nContent-Length: 1000000\r\n\r\n`);
            socket.write(Buffer.alloc(64 * 1024, 1));
            setTimeout(() => {
              socket.destroy();
              resolve();
            }, 300);
          });
          socket.on('error', reject);
        });
      }
      // The server notices the reset and drops what it staged; poll briefly for a file that must never appear.
      for (let i = 0; i < 10; i++) {
        assert.equal(await t.fs.kind('partial.bin'), undefined);
        assert.equal(await t.fs.text('keep.txt'), 'old bytes');
        await new Promise((r) => setTimeout(r, 100));
      }
    });

    test('DELETE removes a tree with its dead properties and locks; the root cannot be deleted', async () => {
      await t.fs.put('gone/a/b.txt', 'b');
      await dav('PROPPATCH', 'alice/gone/a/b.txt', { body: '<D:propertyupdate xmlns:D="DAV:"><D:set><D:prop><Z:t xmlns:Z="urn:z">1</Z:t></D:prop></D:set></D:propertyupdate>' });
      assert.equal((await dav('DELETE', 'alice/gone/')).status, 204);
      assert.equal(await t.fs.kind('gone'), undefined);
      assert.deepEqual(await t.store.davProperties.list('alice', 'gone/a/b.txt'), []);
      assert.equal((await dav('DELETE', 'alice/gone/')).status, 404);
      assert.equal((await dav('DELETE', 'alice/')).status, 403);
    });
  });
}

describe('WebDAV Basic authentication: the credential cache and the login throttle', () => {
  let t: TestApp;
  before(async () => {
    t = await startApp({ users: ['alice'], flags: { dev: false, loginRateLimit: '5' } });
  });
  after(async () => t?.close());

  test('a password change drops the cached credential at once; full checks count towards the throttle, cached ones do not', async () => {
    const propfind = (auth: Record<string, string>) => fetch(`${t.url}/dav/alice/`, { method: 'PROPFIND', headers: { ...auth, depth: '0' } });
    // One full check, then cached: many requests cost one attempt of five.
    for (let i = 0; i < 12; i++) assert.equal((await propfind(ALICE)).status, 207);
    const r = await runCli(['user', 'passwd', 'alice', '--password', 'alice-new-password', '--data-dir', t.dataDir]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal((await propfind(ALICE)).status, 401, 'the old password stops working at once');
    assert.equal((await propfind(basic('alice', 'alice-new-password'))).status, 207);
    // Attempts so far: 3. Wrong passwords are full checks: two more reach the limit, the next is 429.
    assert.equal((await propfind(basic('alice', 'bad-1'))).status, 401);
    assert.equal((await propfind(basic('alice', 'bad-2'))).status, 401);
    const limited = await propfind(basic('alice', 'bad-3'));
    assert.equal(limited.status, 429);
    assert.ok(Number(limited.headers.get('retry-after')) > 0);
    assert.equal((await propfind(basic('alice', 'alice-new-password'))).status, 207, 'a cached credential still works while the address is throttled');
  });
});

describe('WebDAV under --base-path, and symbolic links on local disk', () => {
  let t: TestApp;
  before(async () => {
    t = await startApp({ users: ['alice', 'bob'], flags: { basePath: '/files' } });
  });
  after(async () => t?.close());

  test('hrefs and Destination carry the base path; one without it is refused', async () => {
    await t.fs.put('a b/#1 100%.txt', 'x');
    const r = await fetch(`${t.url}/dav/alice/a%20b/`, { method: 'PROPFIND', headers: { ...ALICE, depth: '1' } });
    assert.equal(r.status, 207);
    const hrefs = [...(await r.text()).matchAll(/<D:href>([^<]*)<\/D:href>/g)].map((m) => m[1]);
    assert.deepEqual(hrefs, ['/files/dav/alice/a%20b/', '/files/dav/alice/a%20b/%231%20100%25.txt']);
    const copy = (destination: string) => fetch(`${t.url}/dav/alice/a%20b/%231%20100%25.txt`, { method: 'COPY', headers: { ...ALICE, destination } });
    assert.equal((await copy('https://public.example/files/dav/alice/copy.txt')).status, 201);
    assert.equal((await copy('/dav/alice/other.txt')).status, 403);
    assert.equal(await t.fs.text('copy.txt'), 'x');
  });

  test('symbolic links planted on disk are neither listed as a way out nor followed', async () => {
    const alice = join(t.paths.storage, 'alice');
    await mkdir(join(t.paths.storage, 'bob'), { recursive: true });
    await writeFile(join(t.paths.storage, 'bob', 'secret.txt'), 'bob secret');
    await symlink(join(t.paths.storage, 'bob'), join(alice, 'bob-link'));
    await symlink('/etc/passwd', join(alice, 'passwd-link'));
    const list = await fetch(`${t.url}/dav/alice/`, { method: 'PROPFIND', headers: { ...ALICE, depth: '1' } });
    const text = await list.text();
    for (const p of ['bob-link/secret.txt', 'passwd-link']) {
      const r = await fetch(`${t.url}/dav/alice/${p}`, { headers: ALICE });
      const body = await r.text();
      assert.ok(r.status === 404 || r.status === 400, `GET ${p}: ${r.status}`);
      assert.ok(!body.includes('bob secret') && !body.includes('root:'), `GET ${p} leaked`);
      const put = await fetch(`${t.url}/dav/alice/bob-link/evil.txt`, { method: 'PUT', headers: ALICE, body: 'evil' });
      assert.ok(put.status >= 400 && put.status < 500, `PUT through a link: ${put.status}`);
    }
    assert.ok(!text.includes('secret.txt'));
    assert.deepEqual((await readdir(join(t.paths.storage, 'bob'))).sort(), ['secret.txt']);
  });
});
