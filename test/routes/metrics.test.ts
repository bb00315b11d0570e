import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { startApp } from '../helpers/app.js';
import { bearer, postJson } from '../helpers/client.js';
import { sample } from '../helpers/metrics.js';

test('metrics are off by default', async () => {
  const t = await startApp();
  try {
    const res = await fetch(`${t.url}/metrics`);
    assert.equal(res.status, 404);
    assert.equal(((await res.json()) as { error: string }).error, 'not_found');
  } finally {
    await t.close();
  }
});

test('--metrics serves Prometheus text at <base>/metrics: requests by route pattern, latency, bytes, logins, uploads, process', async () => {
  const t = await startApp({ users: ['alice'], flags: { metrics: true, basePath: '/files', dev: false, loginRateLimit: '1' } });
  try {
    const { access_token } = await t.login('alice');
    const body = Buffer.alloc(100_000, 1);
    assert.equal((await fetch(`${t.url}/storage/alice/secret-name.bin`, { method: 'PUT', headers: bearer(access_token), body })).status, 201);
    assert.equal((await fetch(`${t.url}/storage/alice/secret-name.bin`, { headers: bearer(access_token) })).status, 200);
    assert.equal((await fetch(`${t.url}/storage/alice/missing`, { headers: bearer(access_token) })).status, 404);
    assert.equal((await postJson(`${t.url}/auth/login`, { username: 'alice', password: 'wrong-password' })).status, 429, 'second attempt of the minute after the login above: throttled');
    assert.equal((await fetch(`${t.origin}/no/such/place`)).status, 404);

    const res = await fetch(`${t.url}/metrics`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    assert.equal(sample(text, 'file_cloud_http_requests_total', { method: 'PUT', route: '/storage/*', status: '201' }), 1);
    assert.equal(sample(text, 'file_cloud_http_requests_total', { method: 'GET', route: '/storage/*', status: '200' }), 1);
    assert.equal(sample(text, 'file_cloud_http_requests_total', { method: 'GET', route: '/storage/*', status: '404' }), 1);
    assert.equal(sample(text, 'file_cloud_http_requests_total', { method: 'POST', route: '/auth/login', status: '200' }), 1);
    assert.equal(sample(text, 'file_cloud_http_requests_total', { method: 'GET', route: 'unmatched', status: '404' }), 1);
    assert.equal(sample(text, 'file_cloud_http_request_duration_seconds_count', { method: 'PUT', route: '/storage/*', status: '201' }), 1);
    assert.ok((sample(text, 'file_cloud_http_received_bytes_total', { route: '/storage/*' }) ?? 0) >= body.length, 'upload bytes counted in');
    assert.ok((sample(text, 'file_cloud_http_sent_bytes_total', { route: '/storage/*' }) ?? 0) >= body.length, 'download bytes counted out');
    assert.equal(sample(text, 'file_cloud_login_throttled_total'), 1);
    assert.equal(sample(text, 'file_cloud_uploads_in_flight'), 0);
    assert.ok(sample(text, 'process_cpu_seconds_total') !== undefined, 'process metrics');
    assert.ok(sample(text, 'nodejs_eventloop_lag_seconds') !== undefined, 'Node.js metrics');
    // Never raw URLs, user names or file names in labels.
    assert.doesNotMatch(text, /secret-name|alice|missing|no\/such/);
  } finally {
    await t.close();
  }
});

test('login failures are counted, and an upload in flight shows in the gauge', async () => {
  const t = await startApp({ users: ['alice'], flags: { metrics: true } });
  try {
    const { access_token } = await t.login('alice');
    assert.equal((await postJson(`${t.url}/auth/login`, { username: 'alice', password: 'wrong-password' })).status, 401);
    assert.equal((await postJson(`${t.url}/auth/login`, { username: 'nobody', password: 'wrong-password' })).status, 401);
    const url = new URL(`${t.url}/storage/alice/slow.bin`);
    const req = request({ host: url.hostname, port: url.port, path: url.pathname, method: 'PUT', headers: { ...bearer(access_token), 'content-length': '1000' } });
    req.on('error', () => {});
    req.write(Buffer.alloc(10));
    let text = '';
    for (let i = 0; i < 50; i++) {
      text = await (await fetch(`${t.url}/metrics`)).text();
      if (sample(text, 'file_cloud_uploads_in_flight') === 1) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(sample(text, 'file_cloud_uploads_in_flight'), 1);
    assert.equal(sample(text, 'file_cloud_login_failures_total'), 2);
    req.destroy();
    for (let i = 0; i < 50; i++) {
      text = await (await fetch(`${t.url}/metrics`)).text();
      if (sample(text, 'file_cloud_uploads_in_flight') === 0) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(sample(text, 'file_cloud_uploads_in_flight'), 0, 'an aborted upload leaves the gauge');
  } finally {
    await t.close();
  }
});
