import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { startServer, REPO_ROOT } from '../helpers/server.js';
import { bearer, login } from '../helpers/client.js';
import { startCollector } from '../helpers/otlp-collector.js';

test('with OTEL_EXPORTER_OTLP_ENDPOINT set, the server sends one span per request to the collector', { timeout: 60_000 }, async () => {
  const collector = await startCollector();
  const server = await startServer({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url }, args: ['--base-path', '/files'] });
  try {
    const { access_token } = await login(server.url, 'admin', server.adminPassword);
    assert.equal((await fetch(`${server.url}/storage/admin/private-name.txt`, { method: 'PUT', headers: bearer(access_token), body: 'x' })).status, 201);
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    await fetch(`${server.url}/storage/admin/private-name.txt?token=secret-token-value`, { headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` } });
    // Spans are batched; a graceful stop flushes them.
    assert.equal(await server.stop('SIGTERM'), 0);
    await collector.waitFor((s) => s.some((x) => x.name === 'GET /storage/*'));

    const put = collector.spans.find((s) => s.name === 'PUT /storage/*');
    assert.ok(put, 'a span for the upload');
    assert.equal(put.kind, 2, 'SERVER span');
    assert.equal(put.attributes['http.request.method'], 'PUT');
    assert.equal(put.attributes['http.route'], '/storage/*');
    assert.equal(put.attributes['http.response.status_code'], 201);
    assert.equal(put.resource['service.name'], 'file-cloud');
    assert.ok(collector.spans.some((s) => s.name === 'POST /auth/login' && s.attributes['http.response.status_code'] === 200));
    const get = collector.spans.find((s) => s.name === 'GET /storage/*');
    assert.equal(get?.traceId, traceId, 'an incoming traceparent continues the caller\'s trace');
    assert.equal(get?.parentSpanId, '00f067aa0ba902b7');
    const all = JSON.stringify(collector.spans);
    assert.doesNotMatch(all, /private-name|secret-token-value|admin-password/, 'no raw URLs, tokens or names in spans');
    assert.match(collector.contentTypes[0] ?? '', /application\/json/);
  } finally {
    await server.dispose();
    await collector.close();
  }
});

test('without an endpoint nothing loads OpenTelemetry: it is imported only by the tracing module, dynamically', () => {
  const offenders: string[] = [];
  (function walk(dir: string) {
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name.endsWith('.js') && !name.endsWith('.test.js')) {
        const text = readFileSync(p, 'utf8');
        if (/^import [^;]*['"]@opentelemetry\//m.test(text)) offenders.push(`${p}: static import`);
        if (text.includes('@opentelemetry/') && !p.endsWith(join('ops', 'tracing.js'))) offenders.push(`${p}: mentions OpenTelemetry`);
      }
    }
  })(join(REPO_ROOT, 'dist', 'src'));
  assert.deepEqual(offenders, []);
  const buildApp = readFileSync(join(REPO_ROOT, 'dist', 'src', 'app', 'build-app.js'), 'utf8');
  assert.match(buildApp, /await import\(['"]\.\.\/ops\/tracing\.js['"]\)/);
  assert.doesNotMatch(buildApp, /^import .*ops\/tracing/m);
});
