import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startServer } from '../helpers/server.js';
import { bearer, postJson } from '../helpers/client.js';
import { multipartBody } from '../helpers/multipart.js';
import { caddyBinary, startCaddy } from '../helpers/caddy.js';
import { nginxSkipReason, startNginx } from '../helpers/nginx.js';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const skip = nginxSkipReason(process.env);
const caddySkip = caddyBinary() ? undefined : 'caddy is not installed (apt-get install -y caddy)';

/** A login attempt from a chosen loopback address (Linux routes all of 127/8 to lo), optionally with a forged X-Forwarded-For. */
function loginFrom(base: string, localAddress: string, forged?: string): Promise<number> {
  const url = new URL(`${base}/auth/login`);
  const body = JSON.stringify({ username: 'admin', password: 'wrong-password-for-throttle' });
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, path: url.pathname, method: 'POST', localAddress, headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), ...(forged ? { 'x-forwarded-for': forged } : {}) } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

type Proxy = { url: string; errors(): Promise<string>; stop(): Promise<void> };

/** The whole scenario through `proxy` (started in front of the server's host:port) at /files/. */
async function throughProxy(startProxy: (backend: string) => Promise<Proxy>): Promise<void> {
  const server = await startServer({ args: ['--base-path', '/files', '--trust-proxy', '--login-rate-limit', '3', '--metrics'] });
  const backend = new URL(server.url).host;
  let nginx: Proxy;
  try {
    nginx = await startProxy(backend);
  } catch (e) {
    await server.dispose();
    throw e;
  }
  const base = `${nginx.url}/files`;
  try {
    // The web UI through the proxy, with its assets under the prefix.
    const page = await fetch(`${base}/browse/`);
    assert.equal(page.status, 200);
    const html = await page.text();
    const script = /src="(\/files\/assets\/[^"]+\.js)"/.exec(html);
    assert.ok(script, 'the shell links its script under /files/assets/');
    assert.equal((await fetch(`${nginx.url}${script[1]}`)).status, 200);
    assert.equal((await fetch(`${base}/is_file_cloud`, { method: 'HEAD' })).status, 200);

    // Log in (from 127.0.0.1: a different client address than the throttle test below).
    const res = await postJson(`${base}/auth/login`, { username: 'admin', password: server.adminPassword });
    assert.equal(res.status, 200);
    const { access_token: token } = (await res.json()) as { access_token: string };

    // A streamed raw upload larger than nginx's default 1 MiB body limit, and a multipart one.
    const big = randomBytes(24 * 1024 * 1024 + 17);
    const put = await fetch(`${base}/storage/admin/big%20file.bin`, { method: 'PUT', headers: { ...bearer(token), 'content-type': 'application/octet-stream' }, body: big });
    assert.equal(put.status, 201, await put.clone().text());
    const mp = multipartBody([{ filename: 'notes #1.txt', content: 'hello through nginx' }]);
    const putMp = await fetch(`${base}/storage/admin/docs/`, { method: 'PUT', headers: { ...bearer(token), 'content-type': mp.contentType }, body: mp.body });
    assert.equal(putMp.status, 201);
    const written = (await putMp.json()) as { files_written: string[]; files: { name: string; path: string; size: number }[] };
    assert.deepEqual(written.files_written, ['notes #1.txt']);
    assert.deepEqual(written.files.map((f) => [f.name, f.path, f.size]), [['notes #1.txt', '/admin/docs/notes #1.txt', 19]]);
    assert.equal(sha(await readFile(join(server.dataDir, 'storage', 'admin', 'big file.bin'))), sha(big), 'stored bytes are the uploaded bytes');

    // Download, whole and ranged.
    const got = await fetch(`${base}/storage/admin/big%20file.bin`, { headers: bearer(token) });
    assert.equal(got.status, 200);
    assert.equal(sha(Buffer.from(await got.arrayBuffer())), sha(big));
    const ranged = await fetch(`${base}/storage/admin/big%20file.bin`, { headers: { ...bearer(token), range: 'bytes=10-19' } });
    assert.equal(ranged.status, 206);
    assert.deepEqual(Buffer.from(await ranged.arrayBuffer()), big.subarray(10, 20));

    // A path-token link, used without any Authorization header.
    const made = await postJson(`${base}/storage/admin/docs/notes%20%231.txt`, { action: 'MakePathToken' }, bearer(token));
    assert.equal(made.status, 200);
    const { token: pathToken } = (await made.json()) as { token: string };
    const link = `${base}/storage/admin/docs/notes%20%231.txt?token=${encodeURIComponent(pathToken)}&download=1`;
    const shared = await fetch(link);
    assert.equal(shared.status, 200);
    assert.equal(await shared.text(), 'hello through nginx');
    assert.match(shared.headers.get('content-disposition') ?? '', /attachment/);
    assert.equal((await fetch(`${base}/storage/admin/big%20file.bin?token=${encodeURIComponent(pathToken)}`)).status, 401, 'the token is bound to its path');

    // Outside the base path the proxy answers itself; the app never sees it.
    const outside = await fetch(`${nginx.url}/storage/admin/`, { headers: bearer(token) });
    assert.doesNotMatch(await outside.text(), /entries|big file/, 'File Cloud is not reachable outside /files/');

    // --trust-proxy: the throttle sees each client's own address (appended by nginx), so
    // client A is throttled, client B is not, and A cannot escape by forging X-Forwarded-For.
    for (let i = 0; i < 3; i++) assert.equal(await loginFrom(base, '127.0.0.2'), 401, `attempt ${i + 1} of client A`);
    assert.equal(await loginFrom(base, '127.0.0.2'), 429, 'client A is throttled after 3 attempts');
    assert.equal(await loginFrom(base, '127.0.0.2', '203.0.113.9'), 429, 'a forged X-Forwarded-For does not reset the count');
    assert.equal(await loginFrom(base, '127.0.0.3'), 401, 'client B, behind the same proxy, is not throttled');

    // The documented proxy rule keeps metrics private; Prometheus scrapes the backend directly.
    assert.equal((await fetch(`${base}/metrics`)).status, 404, 'metrics are not reachable through the proxy');
    assert.equal((await fetch(`${server.url}/metrics`)).status, 200, 'metrics are served on the backend address');
    // Without a trailing slash the prefix still leads to the app.
    const bare = await fetch(base, { redirect: 'manual' });
    assert.ok([301, 308].includes(bare.status), `bare prefix redirects: ${bare.status}`);
    assert.match(bare.headers.get('location') ?? '', /\/files\/$/);
  } catch (e) {
    throw new Error(`${(e as Error).message}\nproxy: ${await nginx.errors()}\nserver: ${server.output().stderr}`, { cause: e });
  } finally {
    await nginx.stop();
    await server.dispose();
  }
}

test('File Cloud behind a real nginx at /files/: UI, login, upload, download, path-token link, client address', { skip, timeout: 120_000 }, () =>
  throughProxy((backend) => startNginx({ backend })),
);

test('File Cloud behind Caddy at /files/ with the documented Caddyfile: the same scenario', { skip: caddySkip, timeout: 120_000 }, () =>
  throughProxy((backend) => startCaddy({ backend })),
);
