import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';

/**
 * A plain WebDAV PUT of a small file is written and answered before Fastify (src/app/fast-write.ts)
 * by the WebDAV service's `put`. Its answers must be Fastify's, and every WebDAV rule must hold on
 * it: an If header that is always true (`(Not <DAV:no-lock>)`) sends the same write through
 * Fastify's route, so each pair below compares the two paths. Locks taken after a tree was seen
 * without any must stop the next write at once, in this process or another (the cached "no lock"
 * of src/store/dav-locks-repo.ts).
 */

const basic = (user: string, password: string) => ({ authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` });
const ALICE = basic('alice', 'alice-password');
const viaFastify = { if: '(Not <DAV:no-lock>)' };

type Line = { fast?: boolean; req?: { method?: string; url?: string }; res?: { statusCode?: number } };

/** Status, every header but Date and the ETag (the file's own). */
function answer(res: Response) {
  const headers: Record<string, string> = {};
  res.headers.forEach((value, name) => {
    if (name !== 'date' && name !== 'etag') headers[name] = value;
  });
  return { status: res.status, headers };
}

for (const [storage, skip] of BACKENDS) {
  describe(`the fast write path for WebDAV PUTs on ${storage}: same answers and rules as Fastify's`, { skip }, () => {
    let t: TestApp;
    const lines: Line[] = [];
    const sink = new Writable({ write: (chunk: Buffer, _enc, cb) => (lines.push(...chunk.toString().trim().split('\n').map((l) => JSON.parse(l) as Line)), cb()) });
    before(async () => {
      t = await startApp({ users: ['alice', 'bob'], storage, logTo: sink });
    });
    after(() => t.close());
    const url = (path: string) => `${t.url}/dav/${path.split('/').map(encodeURIComponent).join('/')}`;
    const dav = async (method: string, path: string, opts: { headers?: Record<string, string>; body?: string; auth?: Record<string, string> } = {}) =>
      fetch(url(path), { method, headers: { ...(opts.auth ?? ALICE), ...opts.headers }, body: opts.body });
    const put = (path: string, body: string, headers: Record<string, string> = {}, auth = ALICE) => dav('PUT', path, { body, headers, auth });
    /** Whether the last answer to a PUT of `path` was the fast path's, from its log line (waited for up to 10 s: Fastify logs after answering, a cluster through a pipe). */
    const fast = async (path: string) => {
      const target = new URL(url(path)).pathname;
      for (const deadline = Date.now() + 10_000; ; await sleep(20)) {
        const line = lines.filter((l) => l.req?.method === 'PUT' && l.req.url === target).at(-1);
        if (line) return line.fast === true;
        if (Date.now() > deadline) throw new Error(`no log line of PUT ${target}`);
      }
    };
    const lock = async (path: string, depth: '0' | 'infinity') => {
      const body = '<?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype><D:owner>tests</D:owner></D:lockinfo>';
      const res = await dav('LOCK', path, { body, headers: { 'content-type': 'application/xml', depth } });
      assert.ok(res.status === 200 || res.status === 201, `LOCK ${path}: ${res.status}`);
      return /<([^>]+)>/.exec(res.headers.get('lock-token') ?? '')?.[1] ?? '';
    };
    const read = async (path: string) => (await dav('GET', path)).text();

    test('a new file (201) and a replace (204): status and every header as Fastify gives them; the bytes; logged with fast: true', async () => {
      assert.equal((await dav('MKCOL', 'alice/a')).status, 201);
      assert.equal((await dav('MKCOL', 'alice/b')).status, 201);
      for (const [name, bytes] of [['new.txt', 'fast bytes'], ['déjà vu.txt', 'accents'], ['empty.bin', '']] as const) {
        const quick = answer(await put(`alice/a/${name}`, bytes));
        assert.ok(await fast(`alice/a/${name}`), `${name}: answered by the fast path`);
        const slow = answer(await put(`alice/b/${name}`, bytes, viaFastify));
        assert.ok(!(await fast(`alice/b/${name}`)), `${name}: answered by Fastify`);
        assert.equal(quick.status, 201, name);
        assert.deepEqual(quick, slow, name);
        assert.equal(await read(`alice/a/${name}`), bytes);
      }
      const replaced = await put('alice/a/new.txt', 'replaced');
      assert.ok(await fast('alice/a/new.txt'));
      const slow = await put('alice/b/new.txt', 'replaced', viaFastify);
      assert.deepEqual(answer(replaced), answer(slow));
      assert.equal(replaced.status, 204);
      const got = await dav('GET', 'alice/a/new.txt');
      assert.equal(await got.text(), 'replaced');
      assert.equal(replaced.headers.get('etag'), got.headers.get('etag'));
    });

    test('a lock taken after writes that saw none stops the next plain PUT (423), on the file and under a locked folder; nothing is written', async () => {
      assert.equal((await dav('MKCOL', 'alice/l')).status, 201);
      assert.equal((await put('alice/l/f.txt', 'one')).status, 201);
      assert.ok(await fast('alice/l/f.txt'));
      const onFile = await lock('alice/l/f.txt', '0');
      for (let i = 0; i < 3; i++) assert.equal((await put('alice/l/f.txt', 'not while locked')).status, 423, `replace ${i}`);
      assert.equal(await read('alice/l/f.txt'), 'one');
      // With the token in an If header the owner of the lock writes (through Fastify).
      assert.equal((await put('alice/l/f.txt', 'two', { if: `(<${onFile}>)` })).status, 204);
      assert.equal((await dav('UNLOCK', 'alice/l/f.txt', { headers: { 'lock-token': `<${onFile}>` } })).status, 204);
      assert.equal((await put('alice/l/f.txt', 'three')).status, 204);
      assert.equal(await read('alice/l/f.txt'), 'three');
      // A name of its own: another process's log line for an earlier PUT of f.txt may come last.
      assert.equal((await put('alice/l/g.txt', 'g')).status, 201);
      assert.ok(await fast('alice/l/g.txt'), 'fast again once the lock is gone');
      const onFolder = await lock('alice/l', 'infinity');
      const created = await put('alice/l/new.txt', 'not while locked');
      assert.deepEqual([created.status, ((await created.json()) as { error: string }).error], [423, 'locked']);
      assert.equal((await dav('GET', 'alice/l/new.txt')).status, 404);
      assert.equal((await dav('UNLOCK', 'alice/l', { headers: { 'lock-token': `<${onFolder}>` } })).status, 204);
      assert.equal((await put('alice/l/new.txt', 'now')).status, 201);
      assert.equal(await read('alice/l/new.txt'), 'now');
    });

    test('what the fast path hands on gets the WebDAV answer, and nothing is written', async () => {
      const before = lines.length;
      const cases: [string, () => Promise<Response>, number][] = [
        ['a wrong password', () => put('alice/w1.txt', 'x', {}, basic('alice', 'wrong')), 401],
        ["another user's tree", () => put('bob/w2.txt', 'x'), 401],
        ['no parent collection', () => put('alice/nowhere/w3.txt', 'x'), 409],
        ['a collection at the name', () => put('alice/a', 'x'), 405],
      ];
      for (const [what, send, status] of cases) {
        const res = await send();
        await res.arrayBuffer();
        assert.equal(res.status, status, what);
        // A 401 is answered by the authorization hook, before the /dav/ scope adds its headers.
        if (status === 401) assert.match(res.headers.get('www-authenticate') ?? '', /^Basic realm="File Cloud"/, what);
        else assert.equal(res.headers.get('dav'), '1, 2', `${what}: the WebDAV headers`);
      }
      for (const name of ['w1.txt', 'nowhere/w3.txt']) assert.equal((await dav('GET', `alice/${name}`)).status, 404, name);
      assert.equal((await dav('GET', 'bob/w2.txt', { auth: basic('bob', 'bob-password') })).status, 404);
      // A wrong password is checked (and counted against the throttle) once: by Fastify, not also here.
      const refused = lines.slice(before).filter((l) => l.req?.method === 'PUT' && l.req.url === new URL(url('alice/w1.txt')).pathname);
      assert.deepEqual(refused.map((l) => [l.res?.statusCode, l.fast === true]), [[401, false]]);
    });
  });
}
