import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { bearer } from '../helpers/client.js';

/**
 * The small-upload fast path (src/app/fast-write.ts) writes and answers plain raw PUTs of small
 * files before Fastify. Its answers must be Fastify's: an If-None-Match that names no ETag sends
 * the same write through Fastify's route, so each pair below compares the two paths.
 */

/** Through Fastify: an If-None-Match that matches no file is a plain write answered by the route. */
const viaFastify = { 'if-none-match': '"matches-nothing"' };

/** Status, every header but Date and the ETag (the file's own), and the JSON body. */
async function answer(res: Response) {
  const headers: Record<string, string> = {};
  res.headers.forEach((value, name) => {
    if (name !== 'date' && name !== 'etag') headers[name] = value;
  });
  return { status: res.status, headers, body: (await res.json()) as { files_written?: string[]; files?: Record<string, unknown>[]; error?: string } };
}

type Line = { fast?: boolean; req?: { method?: string; url?: string }; res?: { statusCode?: number } };

for (const [storage, skip] of BACKENDS) {
  describe(`the fast write path on ${storage}: same answers as Fastify's`, { skip }, () => {
    let t: TestApp;
    let auth: Record<string, string>;
    const lines: Line[] = [];
    const sink = new Writable({ write: (chunk: Buffer, _enc, cb) => (lines.push(...chunk.toString().trim().split('\n').map((l) => JSON.parse(l) as Line)), cb()) });
    before(async () => {
      t = await startApp({ users: ['alice', 'bob'], storage, logTo: sink, flags: { maxUploadSize: '64K' } });
      auth = bearer((await t.login('alice')).access_token);
    });
    after(() => t.close());
    const url = (path: string, user = 'alice') => `${t.url}/storage/${user}/${path.split('/').map(encodeURIComponent).join('/')}`;
    const put = (path: string, body: string | Buffer, headers: Record<string, string> = {}) => fetch(url(path), { method: 'PUT', headers: { ...auth, ...headers }, body });
    /**
     * Whether the last answer to a PUT of `path` was given by the fast path, from its log line (Fastify
     * logs after the answer has gone, and a cluster's processes through a pipe: waited for, up to 10 s).
     */
    const fast = async (path: string, query = '') => {
      const target = new URL(url(path)).pathname + query;
      for (const deadline = Date.now() + 10_000; ; await sleep(20)) {
        const line = lines.filter((l) => l.req?.method === 'PUT' && l.req.url === target).at(-1);
        if (line) return line.fast === true;
        if (Date.now() > deadline) throw new Error(`no log line of PUT ${target}`);
      }
    };

    test('a new file and a replace: status, every header, the sync fields, the bytes; logged with fast: true', async () => {
      for (const [name, bytes] of [['new.txt', 'fast bytes'], ['sub/dir/déjà vu.txt', 'in new folders'], ['empty.bin', '']] as const) {
        const quick = await answer(await put(`a/${name}`, bytes));
        assert.ok(await fast(`a/${name}`), `${name}: answered by the fast path`);
        const slow = await answer(await put(`b/${name}`, bytes, viaFastify));
        assert.ok(!(await fast(`b/${name}`)), `${name}: answered by Fastify`);
        assert.equal(quick.status, 201);
        assert.deepEqual(quick.headers, slow.headers, name);
        const shape = (a: typeof quick) => ({ ...a.body, files: a.body.files?.map((f) => ({ ...f, path: String(f.path).replace(/^\/alice\/[ab]\//, ''), etag: typeof f.etag, id: typeof f.id })) });
        assert.deepEqual(shape(quick), shape(slow), name);
        assert.equal(quick.body.files?.[0]?.id === null, false, `${name}: the index's id is in the answer`);
        assert.equal(await (await fetch(url(`a/${name}`), { headers: auth })).text(), bytes);
      }
      // A replace: the new bytes, and its ETag the one a GET gives.
      lines.length = 0;
      const replaced = await put('a/new.txt', 'replaced');
      assert.equal(replaced.status, 201);
      assert.ok(await fast('a/new.txt'));
      const got = await fetch(url('a/new.txt'), { headers: auth });
      assert.equal(await got.text(), 'replaced');
      assert.equal(replaced.headers.get('etag'), got.headers.get('etag'));
    });

    test('what the fast path hands on still gets the contract answer, and nothing is written', async () => {
      await put('folder/inside.txt', 'x');
      await put('afile', 'x');
      const cases: [string, () => Promise<Response>, number, string][] = [
        ['no credential', () => fetch(url('n1.txt'), { method: 'PUT', body: 'x' }), 401, 'unauthorized'],
        ['a bad token', () => fetch(url('n2.txt'), { method: 'PUT', headers: bearer('not-a-token'), body: 'x' }), 401, 'unauthorized'],
        ["another user's tree", () => fetch(url('n3.txt', 'bob'), { method: 'PUT', headers: auth, body: 'x' }), 401, 'unauthorized'],
        ['a folder at the name', () => put('folder', 'x'), 409, 'is_a_directory'],
        ['a file in the way of a folder', () => put('afile/n4.txt', 'x'), 409, 'not_a_directory'],
        ['over --max-upload-size', () => put('n5.bin', Buffer.alloc(65 * 1024)), 413, 'too_large'],
      ];
      for (const [what, send, status, code] of cases) {
        const res = await send();
        const body = (await res.json()) as { error: string };
        assert.deepEqual([res.status, body.error], [status, code], what);
        assert.equal(res.headers.get('x-content-type-options'), 'nosniff', `${what}: the storage answer's headers`);
      }
      for (const name of ['n1.txt', 'n2.txt', 'n4.txt', 'n5.bin']) assert.equal((await fetch(url(name), { headers: auth })).status, 404, name);
    });

    test('over the quota: 507 with nothing written, as through Fastify', async () => {
      const usage = async () => ((await (await fetch(`${t.url}/api/usage`, { headers: auth })).json()) as { used: number }).used;
      await t.store.usage.setQuota('alice', (await usage()) + 10);
      try {
        const quick = await answer(await put('q/over.bin', Buffer.alloc(11)));
        const slow = await answer(await put('q/over.bin', Buffer.alloc(11), viaFastify));
        assert.deepEqual(quick, slow);
        assert.equal(quick.body.error, 'quota_exceeded');
        assert.equal((await fetch(url('q/over.bin'), { headers: auth })).status, 404);
        assert.equal((await put('q/fits.bin', Buffer.alloc(10))).status, 201);
        assert.ok(await fast('q/fits.bin'));
      } finally {
        await t.store.usage.setQuota('alice', null);
      }
    });

    test('conditional, digest, multipart, query and oversized writes go through Fastify', async () => {
      const sends: [string, Record<string, string>, string, Buffer | string][] = [
        ['c/if-none-match', { 'if-none-match': '*' }, '', 'x'],
        ['c/digest', { 'repr-digest': 'sha-256=:LCa0a2j/xo/5m0U8HTBBNBNCLXBkg7+g+YpeiGJm564=:' }, '', 'foo'],
        ['c/query', {}, '?overwrite=true', 'x'],
        ['c/big', {}, '', Buffer.alloc(257 * 1024)],
      ];
      for (const [path, headers, query, body] of sends) {
        const res = await fetch(`${url(path)}${query}`, { method: 'PUT', headers: { ...auth, ...headers }, body });
        await res.arrayBuffer();
        assert.equal(await fast(path, query), false, `${path}: answered by Fastify`);
      }
    });
  });
}
