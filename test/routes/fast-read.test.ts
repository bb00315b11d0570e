import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { Writable } from 'node:stream';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { bearer, postJson } from '../helpers/client.js';

/**
 * The small-read fast path (src/app/fast-read.ts) answers plain GETs and
 * HEADs of files before Fastify. Its answers must be Fastify's answers: a
 * conditional header that does not match sends the same request through
 * Fastify, so each pair below compares the two paths byte for byte.
 */

/** Every header but Date, which is the clock's. */
function headersOf(res: Response): Record<string, string> {
  const out: Record<string, string> = {};
  res.headers.forEach((value, name) => {
    if (name !== 'date') out[name] = value;
  });
  return out;
}

async function answer(res: Response) {
  return { status: res.status, headers: headersOf(res), body: Buffer.from(await res.arrayBuffer()) };
}

/** Through Fastify: an If-None-Match that matches nothing is a plain 200 answered by the route. */
const viaFastify = { 'if-none-match': '"matches-nothing"' };

const FILES: readonly [string, Buffer][] = [
  ['small.txt', Buffer.from('hello fast path')],
  ['empty.bin', Buffer.alloc(0)],
  // Over the whole-read limit (64 KiB): streamed, on the fast path as on Fastify's.
  ['big.bin', Buffer.alloc(200 * 1024, 7)],
  ['page.html', Buffer.from('<script>alert(1)</script>')],
  ['sub/déjà vu.jpg', Buffer.from('not really a jpeg')],
];

for (const [storage, skip] of BACKENDS) {
  describe(`the fast read path on ${storage}: same answers as Fastify's`, { skip }, () => {
    let t: TestApp;
    let auth: Record<string, string>;
    before(async () => {
      t = await startApp({ users: ['alice', 'bob'], storage });
      auth = bearer((await t.login('alice')).access_token);
      for (const [path, bytes] of FILES) await t.fs.put(path, bytes);
      await t.fs.put('bobs.txt', 'bob only', 'bob');
    });
    after(() => t.close());
    const url = (path: string) => `${t.url}/storage/alice/${path.split('/').map(encodeURIComponent).join('/')}`;

    test('GET and HEAD of a file: status, every header and the bytes', async () => {
      for (const [path, bytes] of FILES) {
        for (const method of ['GET', 'HEAD']) {
          const fast = await answer(await fetch(url(path), { method, headers: auth }));
          const slow = await answer(await fetch(url(path), { method, headers: { ...auth, ...viaFastify } }));
          assert.deepEqual(fast, slow, `${method} ${path}`);
          assert.equal(fast.status, 200);
          assert.deepEqual(fast.body, method === 'GET' ? bytes : Buffer.alloc(0), `${method} ${path}`);
        }
      }
    });

    test('a GET with a path token: the same answer as through Fastify', async () => {
      const made = await postJson(url('small.txt'), { action: 'MakePathToken' }, auth);
      const { token } = (await made.json()) as { token: string };
      const fast = await answer(await fetch(`${url('small.txt')}?token=${token}`));
      const slow = await answer(await fetch(`${url('small.txt')}?token=${token}`, { headers: viaFastify }));
      assert.deepEqual(fast, slow);
      assert.equal(fast.body.toString(), 'hello fast path');
      // The token names one path: another file, even the user's own, is refused.
      assert.equal((await fetch(`${url('empty.bin')}?token=${token}`)).status, 401);
    });

    test('what the fast path hands on still gets the contract answer', async () => {
      const json = async (res: Response) => [res.status, ((await res.json()) as { error?: string }).error];
      assert.deepEqual(await json(await fetch(url('small.txt'))), [401, 'unauthorized'], 'no credential');
      assert.deepEqual(await json(await fetch(url('small.txt'), { headers: bearer('not-a-token') })), [401, 'unauthorized'], 'a bad token');
      assert.deepEqual(await json(await fetch(`${url('small.txt')}?token=forged`)), [401, 'unauthorized'], 'a bad path token');
      assert.deepEqual(await json(await fetch(`${t.url}/storage/bob/bobs.txt`, { headers: auth })), [401, 'unauthorized'], "another user's file");
      assert.deepEqual(await json(await fetch(url('missing.txt'), { headers: auth })), [404, 'not_found'], 'nothing there');
      assert.deepEqual(await json(await fetch(`${url('small.txt')}/`, { headers: auth })), [404, 'not_found'], 'a file with a slash');
      const folder = await fetch(url('sub'), { headers: auth });
      assert.equal(folder.status, 200);
      assert.deepEqual(((await folder.json()) as { entries: { name: string }[] }).entries.map((e) => e.name), ['déjà vu.jpg'], 'a folder lists');
      const download = await fetch(`${url('small.txt')}?download=1`, { headers: auth });
      assert.equal(download.headers.get('content-disposition'), 'attachment; filename="small.txt"');
      const range = await fetch(url('small.txt'), { headers: { ...auth, range: 'bytes=0-4' } });
      assert.equal(range.status, 206);
      assert.equal(await range.text(), 'hello');
    });

    test('a signed-out token is refused at once, though it was just served fast', async () => {
      const tokens = await t.login('alice');
      assert.equal((await fetch(url('small.txt'), { headers: bearer(tokens.access_token) })).status, 200);
      assert.equal((await postJson(`${t.url}/auth/logout`, { username: 'alice', refresh_token: tokens.refresh_token })).status, 204);
      assert.equal((await fetch(url('small.txt'), { headers: bearer(tokens.access_token) })).status, 401);
    });

    test('two Authorization headers and a missing Host are refused as before (400)', async () => {
      const raw = async (request: string) =>
        new Promise<string>((resolve, reject) => {
          const u = new URL(t.url);
          const socket = connect(Number(u.port), u.hostname, () => socket.end(request));
          let text = '';
          socket.on('data', (d: Buffer) => (text += d.toString()));
          socket.on('end', () => resolve(text));
          socket.on('error', reject);
        });
      const path = new URL(url('small.txt')).pathname;
      const twice = await raw(`GET ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: ${auth.authorization}\r\nAuthorization: ${auth.authorization}\r\nConnection: close\r\n\r\n`);
      assert.match(twice, /^HTTP\/1\.1 400 /);
      const noHost = await raw(`GET ${path} HTTP/1.1\r\nAuthorization: ${auth.authorization}\r\nConnection: close\r\n\r\n`);
      assert.match(noHost, /^HTTP\/1\.1 400 /);
    });
  });
}

type Share = { id: string; downloads: number };

for (const [storage, skip] of BACKENDS) {
  describe(`the fast read path of share links on ${storage}: same answers as Fastify's`, { skip }, () => {
    let t: TestApp;
    let auth: Record<string, string>;
    const share = async (body: Record<string, unknown>): Promise<Share> => {
      const res = await postJson(`${t.url}/api/shares`, body, auth);
      assert.equal(res.status, 201, await res.clone().text());
      return (await res.json()) as Share;
    };
    before(async () => {
      t = await startApp({ users: ['alice'], storage });
      auth = bearer((await t.login('alice')).access_token);
      for (const [path, bytes] of FILES) await t.fs.put(`shared/${path}`, bytes);
      await t.fs.put('single.txt', 'one shared file');
    });
    after(() => t.close());
    /** The answer to `path` on the fast path (or whichever path takes it) and through Fastify. */
    const both = async (path: string, method = 'GET', headers: Record<string, string> = {}) => ({
      fast: await answer(await fetch(`${t.url}${path}`, { method, headers })),
      slow: await answer(await fetch(`${t.url}${path}`, { method, headers: { ...headers, ...viaFastify } })),
    });

    test('GET and HEAD of a shared file and of files in a shared folder: status, every header and the bytes', async () => {
      const folder = await share({ path: '/alice/shared/' });
      const file = await share({ path: '/alice/single.txt' });
      const cases: [string, Buffer][] = [
        [`/share/${file.id}`, Buffer.from('one shared file')],
        ...FILES.map(([path, bytes]): [string, Buffer] => [`/share/${folder.id}/${path.split('/').map(encodeURIComponent).join('/')}`, bytes]),
      ];
      for (const [path, bytes] of cases) {
        for (const method of ['GET', 'HEAD']) {
          const { fast, slow } = await both(path, method);
          assert.deepEqual(fast, slow, `${method} ${path}`);
          assert.equal(fast.status, 200);
          assert.equal(fast.headers['content-security-policy'], 'sandbox');
          assert.equal(fast.headers['x-robots-tag'], 'noindex, nofollow');
          assert.deepEqual(fast.body, method === 'GET' ? bytes : Buffer.alloc(0), `${method} ${path}`);
        }
      }
      // Each GET counted as a download, each HEAD not: 2 GETs per file (one per path).
      // Each worker writes its counts within a second (a cluster's other worker too): asked until they are in, 10 s at most.
      const counts = async () => {
        const listed = ((await (await fetch(`${t.url}/api/shares`, { headers: auth })).json()) as { shares: Share[] }).shares;
        return [listed.find((s) => s.id === file.id)?.downloads, listed.find((s) => s.id === folder.id)?.downloads];
      };
      const want = [2, 2 * FILES.length];
      let got = await counts();
      for (let i = 0; i < 40 && got.join() !== want.join(); i++) got = await new Promise((r) => setTimeout(r, 250)).then(counts);
      assert.deepEqual(got, want);
      // Not more, later: HEADs were never counted.
      await new Promise((r) => setTimeout(r, 1200));
      assert.deepEqual(await counts(), want);
    });

    test('a password link: refused without its cookie, served with it, as through Fastify', async () => {
      const locked = await share({ path: '/alice/single.txt', password: 'open sesame' });
      const refused = await both(`/share/${locked.id}`);
      assert.deepEqual(refused.fast, refused.slow);
      assert.equal(refused.fast.status, 401);
      const auth = await postJson(`${t.url}/share/${locked.id}/auth`, { password: 'open sesame' });
      const cookie = (auth.headers.getSetCookie()[0] ?? '').split(';')[0] as string;
      const served = await both(`/share/${locked.id}`, 'GET', { cookie });
      assert.deepEqual(served.fast, served.slow);
      assert.equal(served.fast.body.toString(), 'one shared file');
    });

    test('what the fast path hands on gets the contract answer: dead, upload-only, folder, missing, trailing slash, malformed', async () => {
      const folder = await share({ path: '/alice/shared/' });
      const drop = await share({ path: '/alice/shared/', upload_only: true });
      const file = await share({ path: '/alice/single.txt' });
      const revoked = await share({ path: '/alice/single.txt' });
      assert.equal((await fetch(`${t.url}/api/shares/${revoked.id}`, { method: 'DELETE', headers: auth })).status, 204);
      const paths: [string, number][] = [
        [`/share/${'x'.repeat(32)}`, 404],
        [`/share/${revoked.id}`, 404],
        [`/share/${drop.id}/small.txt`, 404],
        [`/share/${folder.id}/`, 200],
        [`/share/${folder.id}/sub`, 200],
        [`/share/${folder.id}/missing.txt`, 404],
        [`/share/${folder.id}/small.txt/`, 404],
        [`/share/${file.id}/other.txt`, 404],
        [`/share/${folder.id}/%E0%A4%A`, 400],
        [`/share/${folder.id}/..%2Fsingle.txt`, 400],
      ];
      for (const [path, status] of paths) {
        const { fast, slow } = await both(path);
        assert.deepEqual(fast, slow, path);
        assert.equal(fast.status, status, path);
      }
    });

    test('a link with a download limit is counted exactly: the limit holds', async () => {
      const limited = await share({ path: '/alice/single.txt', max_downloads: 2 });
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) statuses.push((await fetch(`${t.url}/share/${limited.id}`)).status);
      assert.deepEqual(statuses, [200, 200, 404]);
    });

  });
}

// Calls are counted by wrapping the app's backend object, which only an in-process app shares
// with the test (the cluster's workers have their own): local disk and S3.
for (const [storage, skip] of BACKENDS.filter(([name]) => name !== 'cluster')) {
  describe(`the fast read path on ${storage}: what it hands on is asked of the store once`, { skip }, () => {
    let t: TestApp;
    let auth: Record<string, string>;
    before(async () => {
      t = await startApp({ users: ['alice'], storage });
      auth = bearer((await t.login('alice')).access_token);
      await t.fs.put('sub/inner.txt', 'inside');
      await t.fs.put('shared/small.txt', 'small');
      await t.fs.put('shared/sub/déjà vu.jpg', 'not really a jpeg');
    });
    after(() => t.close());

    /** The backend's read and stat calls while `method url` is answered with `want`. */
    async function calls(method: string, url: string, headers: Record<string, string>, want: number) {
      const counted = { read: 0, stat: 0 };
      const { read, stat } = t.backend;
      t.backend.read = (...args) => (counted.read++, read.apply(t.backend, args));
      t.backend.stat = (...args) => (counted.stat++, stat.apply(t.backend, args));
      try {
        const res = await fetch(url, { method, headers });
        await res.arrayBuffer();
        assert.equal(res.status, want, `${method} ${url}`);
      } finally {
        t.backend.read = read;
        t.backend.stat = stat;
      }
      return counted;
    }

    test('a folder or a missing file handed on to Fastify is asked of the store once', async () => {
      const storage = (method: string, path: string, want: number) => calls(method, `${t.url}/storage/alice/${path}`, auth, want);
      // GET of a folder: one failed open (it is a folder), then the stat its listing needs.
      assert.deepEqual(await storage('GET', 'sub', 200), { read: 1, stat: 1 });
      assert.deepEqual(await storage('GET', 'missing.txt', 404), { read: 1, stat: 0 });
      assert.deepEqual(await storage('HEAD', 'sub', 200), { read: 0, stat: 1 });
      assert.deepEqual(await storage('HEAD', 'missing.txt', 404), { read: 0, stat: 1 });
    });

    test('a shared folder handed on to Fastify is asked of the store once', async () => {
      const folder = (await (await postJson(`${t.url}/api/shares`, { path: '/alice/shared/' }, auth)).json()) as Share;
      const shared = (method: string, path: string) => calls(method, `${t.url}/share/${folder.id}/${path}`, {}, 200);
      // A file: opened at once (no stat first); a HEAD stats it.
      assert.deepEqual(await shared('GET', 'small.txt'), { read: 1, stat: 0 });
      assert.deepEqual(await shared('HEAD', 'small.txt'), { read: 0, stat: 1 });
      // A folder: a GET's open fails (it is a folder), then the route's one stat; a HEAD's stat is the route's too.
      assert.deepEqual(await shared('GET', 'sub'), { read: 1, stat: 1 });
      assert.deepEqual(await shared('HEAD', 'sub'), { read: 0, stat: 1 });
    });
  });
}

describe('the fast read path of share links: the visitor limit and the log', () => {
  test('each visit counts once towards the limit, whichever path answers it', async () => {
    const t = await startApp({ users: ['alice'], flags: { shareRateLimit: '4' } });
    try {
      await t.fs.put('shared/a.txt', 'a');
      const auth = bearer((await t.login('alice')).access_token);
      const { id } = (await (await postJson(`${t.url}/api/shares`, { path: '/alice/shared/' }, auth)).json()) as Share;
      // Two visits handed on (a folder), two answered fast (a file): four, the limit.
      const statuses: number[] = [];
      for (const path of ['', 'a.txt', '', 'a.txt', 'a.txt']) statuses.push((await fetch(`${t.url}/share/${id}/${path}`)).status);
      assert.deepEqual(statuses, [200, 200, 200, 200, 429]);
    } finally {
      await t.close();
    }
  });

  test('a fast share GET is logged with fast: true, its route counted, and the link id redacted', async () => {
    let log = '';
    const sink = new Writable({ write: (chunk: Buffer, _enc, cb) => ((log += chunk.toString()), cb()) });
    const t = await startApp({ users: ['alice'], logTo: sink, flags: { metrics: true } });
    try {
      await t.fs.put('a.txt', 'a');
      const auth = bearer((await t.login('alice')).access_token);
      const { id } = (await (await postJson(`${t.url}/api/shares`, { path: '/alice/a.txt' }, auth)).json()) as Share;
      assert.equal(await (await fetch(`${t.url}/share/${id}`)).text(), 'a');
      const line = log.split('\n').map((l) => (l ? (JSON.parse(l) as { fast?: boolean; req?: { url?: string } }) : {})).find((l) => l.req?.url?.startsWith('/share/'));
      assert.equal(line?.fast, true);
      assert.equal(line?.req?.url, `/share/${id.slice(0, 6)}[redacted]`);
      assert.ok(!log.includes(id), 'no whole share id in the log');
      const metrics = await (await fetch(`${t.url}/metrics`)).text();
      assert.match(metrics, /file_cloud_http_requests_total\{method="GET",route="\/share\/\*",status="200"\} 1/);
    } finally {
      await t.close();
    }
  });
});

describe('the fast read path in the log', () => {
  test('a plain GET is logged with fast: true, a conditional one by Fastify, with the same fields otherwise', async () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({ write: (chunk: Buffer, _enc, cb) => (lines.push(...chunk.toString().trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>)), cb()) });
    const t = await startApp({ users: ['alice'], logTo: sink });
    try {
      await t.fs.put('a.txt', 'a');
      const auth = bearer((await t.login('alice')).access_token);
      assert.equal((await fetch(`${t.url}/storage/alice/a.txt`, { headers: auth })).status, 200);
      assert.equal((await fetch(`${t.url}/storage/alice/a.txt`, { headers: { ...auth, ...viaFastify } })).status, 200);
      const reads = lines.filter((l) => (l.req as { url?: string } | undefined)?.url === '/storage/alice/a.txt');
      assert.equal(reads.length, 2);
      const [fast, slow] = reads as [Record<string, unknown>, Record<string, unknown>];
      assert.equal(fast.fast, true);
      assert.equal(slow.fast, undefined);
      assert.deepEqual(Object.keys(fast).filter((k) => k !== 'fast'), Object.keys(slow));
      assert.deepEqual([fast.req, fast.res, fast.msg], [slow.req, slow.res, slow.msg]);
      assert.notEqual(fast.reqId, slow.reqId, 'one sequence of request ids for both paths');
    } finally {
      await t.close();
    }
  });

  test('behind --trust-proxy, the client address is the one Fastify takes from X-Forwarded-For', async () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({ write: (chunk: Buffer, _enc, cb) => (lines.push(...chunk.toString().trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>)), cb()) });
    const t = await startApp({ users: ['alice'], logTo: sink, flags: { trustProxy: true } });
    try {
      await t.fs.put('a.txt', 'a');
      const auth = bearer((await t.login('alice')).access_token);
      for (const forwarded of [undefined, '203.0.113.7', '198.51.100.1, 203.0.113.7', ' 203.0.113.9 ,  ', '198.51.100.1, , 2001:db8::1', ',']) {
        const headers = forwarded === undefined ? auth : { ...auth, 'x-forwarded-for': forwarded };
        lines.length = 0;
        await (await fetch(`${t.url}/storage/alice/a.txt`, { headers })).arrayBuffer();
        await (await fetch(`${t.url}/storage/alice/a.txt`, { headers: { ...headers, ...viaFastify } })).arrayBuffer();
        const reads = lines.filter((l) => (l.req as { url?: string } | undefined)?.url === '/storage/alice/a.txt') as { req: { remoteAddress: string }; fast?: boolean }[];
        assert.deepEqual(reads.map((l) => l.fast), [true, undefined], String(forwarded));
        assert.equal(reads[0]?.req.remoteAddress, reads[1]?.req.remoteAddress, String(forwarded));
      }
    } finally {
      await t.close();
    }
  });

  test('with CORS on, every request goes through Fastify (its headers are on the answer)', async () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({ write: (chunk: Buffer, _enc, cb) => (lines.push(...chunk.toString().trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>)), cb()) });
    const t = await startApp({ users: ['alice'], logTo: sink, flags: { corsOrigin: 'https://app.example' } });
    try {
      await t.fs.put('a.txt', 'a');
      const auth = bearer((await t.login('alice')).access_token);
      const res = await fetch(`${t.url}/storage/alice/a.txt`, { headers: { ...auth, origin: 'https://app.example' } });
      assert.equal(res.headers.get('access-control-allow-origin'), 'https://app.example');
      assert.ok(lines.some((l) => (l.req as { url?: string } | undefined)?.url === '/storage/alice/a.txt'));
      assert.ok(lines.every((l) => l.fast === undefined));
    } finally {
      await t.close();
    }
  });
});
