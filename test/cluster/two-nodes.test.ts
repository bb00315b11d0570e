import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { bearer, login, postJson } from '../helpers/client.js';
import { nginxSkipReason, startNginx, type Nginx } from '../helpers/nginx.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli, s3ServerOptions, startServer, type ServerProcess } from '../helpers/server.js';
import { newDatabase, redisService, skipReason } from '../helpers/services.js';
import { startAll } from '../helpers/start-all.js';

/**
 * Two File Cloud nodes (two workers each) on different ports sharing
 * PostgreSQL, Redis and S3, behind nginx as a round-robin load balancer
 * (docs/operations.md "Scaling out"): every rule of the contract holds
 * whichever node a request reaches.
 */
const skip = skipReason('S3') ?? skipReason('PostgreSQL') ?? skipReason('Redis') ?? nginxSkipReason(process.env);
const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

describe('a cluster of two nodes behind nginx', { skip }, () => {
  let a: ServerProcess;
  let b: ServerProcess;
  let lb: Nginx;
  let lbUrl: string;
  let nodeArgs: { args: string[]; env: Record<string, string> };
  let shared: string[];

  const startNode = () => startServer(nodeArgs);

  before(async () => {
    const s3 = await s3ServerOptions();
    const database = await newDatabase('cluster');
    shared = [...s3.args, '--database', database];
    nodeArgs = {
      args: [...s3.args, '--database', database, '--redis', redisService() as string, '--workers', '2', '--base-path', '/files', '--trust-proxy', '--login-rate-limit', '10'],
      env: s3.env,
    };
    // Started together, as an orchestrator would: migrations and the first admin happen once.
    [a, b] = await startAll(startNode(), startNode());
    const hostPort = (s: ServerProcess) => new URL(s.url).host;
    lb = await startNginx({ backend: [hostPort(a), hostPort(b)] });
    lbUrl = `${lb.url}/files`;
  });

  after(async () => {
    await lb?.stop();
    await Promise.all([a?.dispose(), b?.dispose()]);
  });

  const adminLogin = (url: string) => login(url, 'admin', a.adminPassword);

  test('exactly one of the nodes created the first admin, and both know it', async () => {
    const printed = [a, b].filter((s) => s.output().stdout.includes('First run: created user "admin"'));
    assert.equal(printed.length, 1);
    await adminLogin(a.url);
    await adminLogin(b.url);
  });

  test('a token from one node works on the other; uploads on one are downloads on the other', async () => {
    const tokens = await adminLogin(a.url);
    const body = randomBytes(3 * 1024 * 1024 + 17);
    const put = await fetch(`${a.url}/storage/admin/cross/node.bin`, { method: 'PUT', headers: bearer(tokens.access_token), body });
    assert.equal(put.status, 201);
    const got = await fetch(`${b.url}/storage/admin/cross/node.bin`, { headers: bearer(tokens.access_token) });
    assert.equal(got.status, 200);
    assert.equal(sha(Buffer.from(await got.arrayBuffer())), sha(body));
    // Through the balancer: requests alternate between the nodes and all agree.
    for (let i = 0; i < 6; i++) {
      const res = await fetch(`${lbUrl}/storage/admin/cross/`, { headers: bearer(tokens.access_token) });
      assert.equal(res.status, 200);
      assert.deepEqual(((await res.json()) as { entries: { name: string }[] }).entries.map((e) => e.name), ['node.bin']);
    }
  });

  test('a path token made on one node verifies on the other', async () => {
    const tokens = await adminLogin(b.url);
    await fetch(`${b.url}/storage/admin/shared.txt`, { method: 'PUT', headers: bearer(tokens.access_token), body: 'for a link' });
    const made = await postJson(`${b.url}/storage/admin/shared.txt`, { action: 'MakePathToken' }, bearer(tokens.access_token));
    const { token } = (await made.json()) as { token: string };
    const res = await fetch(`${a.url}/storage/admin/shared.txt?token=${encodeURIComponent(token)}`);
    assert.equal(res.status, 200);
    assert.equal(await res.text(), 'for a link');
  });

  test('logout on one node is honoured by the other at once', async () => {
    const tokens = await adminLogin(lbUrl);
    assert.equal((await fetch(`${b.url}/api/stats`, { method: 'HEAD', headers: bearer(tokens.access_token) })).status, 200);
    const out = await postJson(`${a.url}/auth/logout`, { username: 'admin', refresh_token: tokens.refresh_token });
    assert.equal(out.status, 204);
    assert.equal((await fetch(`${b.url}/api/stats`, { method: 'HEAD', headers: bearer(tokens.access_token) })).status, 401);
    assert.equal((await postJson(`${b.url}/auth/refresh`, { username: 'admin', refresh_token: tokens.refresh_token })).status, 401);
  });

  test('a password change or a user removal made beside the cluster takes effect on every node at once', async () => {
    // The CLI runs where an operator runs it: its own data dir, the cluster's database and bucket.
    const dir = await mkdtemp(join(tmpdir(), 'fc-cli-'));
    // A client address of its own (the nodes trust the proxy's X-Forwarded-For): these logins must not use up the throttle of the tests after it.
    const client = { 'x-forwarded-for': `198.51.100.${1 + Math.floor(Math.random() * 250)}` };
    const cli = async (...args: string[]) => {
      const r = await runCli(['user', ...args, '--data-dir', dir, ...shared], { env: nodeArgs.env });
      assert.equal(r.code, 0, r.stderr);
    };
    try {
      await cli('add', 'carol', '--password', 'carol-password-1');
      const onA = await login(a.url, 'carol', 'carol-password-1', client);
      const onB = await login(b.url, 'carol', 'carol-password-1', client);
      await fetch(`${a.url}/storage/carol/note.txt`, { method: 'PUT', headers: bearer(onA.access_token), body: 'mine' });
      const { token } = (await (await postJson(`${b.url}/storage/carol/note.txt`, { action: 'MakePathToken' }, bearer(onB.access_token))).json()) as { token: string };
      assert.equal((await fetch(`${a.url}/storage/carol/note.txt?token=${encodeURIComponent(token)}`)).status, 200);

      await cli('passwd', 'carol', '--password', 'carol-password-2');
      for (const node of [a, b]) {
        for (const tokens of [onA, onB]) assert.equal((await fetch(`${node.url}/api/stats`, { method: 'HEAD', headers: bearer(tokens.access_token) })).status, 401);
        assert.equal((await fetch(`${node.url}/storage/carol/note.txt?token=${encodeURIComponent(token)}`)).status, 401, 'path tokens die with the password');
        assert.equal((await postJson(`${node.url}/auth/login`, { username: 'carol', password: 'carol-password-1' }, client)).status, 401);
      }
      const fresh = await login(b.url, 'carol', 'carol-password-2', client);
      assert.equal((await fetch(`${a.url}/api/stats`, { method: 'HEAD', headers: bearer(fresh.access_token) })).status, 200);

      await cli('remove', 'carol');
      for (const node of [a, b]) {
        assert.equal((await fetch(`${node.url}/api/stats`, { method: 'HEAD', headers: bearer(fresh.access_token) })).status, 401);
        assert.equal((await postJson(`${node.url}/auth/refresh`, { username: 'carol', refresh_token: fresh.refresh_token })).status, 401);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('the login throttle counts attempts on both nodes: the 11th is refused wherever it goes', async () => {
    // A client address of its own (the nodes trust the proxy's X-Forwarded-For), so other tests' logins do not count.
    const client = { 'x-forwarded-for': `203.0.113.${1 + Math.floor(Math.random() * 250)}` };
    for (let i = 0; i < 10; i++) {
      const node = i % 2 ? a : b;
      assert.equal((await postJson(`${node.url}/auth/login`, { username: 'admin', password: 'wrong' }, client)).status, 401, `attempt ${i + 1}`);
    }
    for (const node of [a, b]) {
      const res = await postJson(`${node.url}/auth/login`, { username: 'admin', password: a.adminPassword }, client);
      assert.equal(res.status, 429);
      assert.ok(Number(res.headers.get('retry-after')) > 0);
    }
  });

  test('both nodes are healthy for the balancer', async () => {
    for (const s of [a, b]) assert.deepEqual(await (await fetch(`${s.url}/api/health`)).json(), { status: 'ok' });
  });

  test('a resumable (tus) upload continues on another node when the node it was streaming to is killed', async (t) => {
    const c = await startNode();
    try {
      const tokens = await adminLogin(c.url);
      const auth = { ...bearer(tokens.access_token), 'tus-resumable': '1.0.0' };
      const body = randomBytes(12 * 1024 * 1024 + 5);
      const b64 = (v: string) => Buffer.from(v).toString('base64');
      const created = await fetch(`${c.url}/tus/`, { method: 'POST', headers: { ...auth, 'upload-length': String(body.length), 'upload-metadata': `filename ${b64('across.bin')},folder ${b64('/admin/tus-cluster')}` } });
      assert.equal(created.status, 201, await created.text());
      const path = new URL(created.headers.get('location') as string, c.url).pathname;
      const patch = (node: ServerProcess, offset: number, chunk: Buffer) =>
        fetch(new URL(path, node.url), { method: 'PATCH', headers: { ...auth, 'upload-offset': String(offset), 'content-type': 'application/offset+octet-stream' }, body: chunk });
      const first = 5 * 1024 * 1024;
      assert.equal((await patch(c, 0, body.subarray(0, first))).status, 204);
      // The next chunk is on its way to C when C dies: 3 MiB sent, the rest never.
      const cut = request(new URL(path, c.url), { method: 'PATCH', headers: { ...auth, 'upload-offset': String(first), 'content-type': 'application/offset+octet-stream', 'content-length': String(body.length - first) } });
      cut.on('error', () => undefined);
      cut.write(body.subarray(first, first + 3 * 1024 * 1024));
      await new Promise((r) => setTimeout(r, 1000));
      await c.stop('SIGKILL');
      cut.destroy();
      // Another node tells where to resume: at least what C acknowledged, at most what reached it.
      const head = await fetch(new URL(path, b.url), { method: 'HEAD', headers: auth });
      assert.equal(head.status, 200);
      const offset = Number(head.headers.get('upload-offset'));
      assert.ok(offset >= first && offset <= first + 3 * 1024 * 1024, `offset ${offset}`);
      // The dead node's lease on the upload lapses within seconds; until then a writer gets 409, as tus
      // clients expect, and the connection is closed without reading the chunk, so a client still sending
      // it may see the connection go instead of the answer: both mean retry, as tus-js-client does.
      let done: Response | undefined;
      const t0 = Date.now();
      while (Date.now() - t0 < 30_000) {
        done = await patch(b, offset, body.subarray(offset)).catch(() => undefined);
        if (done && done.status !== 409) break;
        await done?.arrayBuffer();
        await new Promise((r) => setTimeout(r, 500));
      }
      t.diagnostic(`resumed on the other node at ${offset} bytes after ${Date.now() - t0} ms`);
      assert.equal(done?.status, 204, await done?.text());
      assert.equal(done?.headers.get('file-cloud-path'), '/admin/tus-cluster/across.bin');
      const got = await fetch(`${a.url}/storage/admin/tus-cluster/across.bin`, { headers: bearer(tokens.access_token) });
      assert.equal(sha(Buffer.from(await got.arrayBuffer())), sha(body));
    } finally {
      await c.dispose();
    }
  });

  test('SIGKILL of one node under load loses no acknowledged write, and the other keeps serving', async (t) => {
    const tokens = await adminLogin(b.url);
    const auth = bearer(tokens.access_token);
    const acknowledged = new Map<string, string>();
    const failures: { at: number; what: string }[] = [];
    const started = Date.now();
    const LOAD_MS = 20_000;
    const KILL_AT = 6_000;
    let killedAt = Infinity;
    let n = 0;
    const worker = async (w: number) => {
      while (Date.now() - started < LOAD_MS) {
        const i = n++;
        const name = `load/w${w}-${i}.txt`;
        const content = `${name} ${randomBytes(8).toString('hex')}`;
        const t0 = Date.now();
        try {
          const op = i % 3;
          if (op === 0 || op === 1) {
            const res = await fetch(`${lbUrl}/storage/admin/${name}`, { method: 'PUT', headers: auth, body: content });
            if (res.status === 201) acknowledged.set(name, content);
            else failures.push({ at: t0, what: `PUT ${res.status}` });
            await res.arrayBuffer();
          } else {
            const res = await fetch(`${lbUrl}/storage/admin/load/`, { headers: auth });
            if (res.status !== 200 && res.status !== 404) failures.push({ at: t0, what: `GET ${res.status}` });
            await res.arrayBuffer();
          }
        } catch (e) {
          failures.push({ at: t0, what: String(e) });
        }
      }
    };
    const killer = (async () => {
      await new Promise((r) => setTimeout(r, KILL_AT));
      killedAt = Date.now();
      await a.stop('SIGKILL');
    })();
    await Promise.all([killer, ...Array.from({ length: 8 }, (_, w) => worker(w))]);

    t.diagnostic(`${n} requests in ${LOAD_MS / 1000} s, ${acknowledged.size} writes acknowledged, ${failures.length} failed (all in flight at the kill): ${[...new Set(failures.map((f) => f.what))].join(', ')}`);
    assert.ok(acknowledged.size > 50, `only ${acknowledged.size} writes were acknowledged`);
    // Errors only for requests that were in flight on the killed node when it died.
    const late = failures.filter((f) => f.at > killedAt + 1000 || f.at < killedAt - 2000);
    assert.deepEqual(late, [], `failures away from the kill: ${JSON.stringify(late.slice(0, 5))}`);
    // Every acknowledged write is there, whole, on the surviving node.
    const listing = (await (await fetch(`${b.url}/storage/admin/load/`, { headers: auth })).json()) as { entries: { name: string }[] };
    const present = new Set(listing.entries.map((e) => `load/${e.name}`));
    for (const name of acknowledged.keys()) {
      assert.ok(present.has(name), `${name} was acknowledged but is missing`);
    }
    const sample = [...acknowledged].filter((_, i) => i % 10 === 0);
    for (const [name, content] of sample) assert.equal(await (await fetch(`${b.url}/storage/admin/${name}`, { headers: auth })).text(), content, name);
    // The survivor still serves, directly and through the balancer.
    assert.equal((await fetch(`${lbUrl}/storage/admin/load/`, { headers: auth })).status, 200);
    assert.equal((await fetch(`${b.url}/api/health`)).status, 200);
  });
});
