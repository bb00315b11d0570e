import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig, UsageError } from './load.js';

test('operations options default to off', () => {
  const c = loadConfig({}, {});
  assert.equal(c.basePath, '');
  assert.equal(c.publicUrl, '');
  assert.deepEqual(c.corsOrigin, []);
  assert.equal(c.metrics, false);
  assert.equal(c.logFormat, 'auto');
  assert.equal(c.otlpEndpoint, '');
});

test('--base-path is normalized to a leading slash and no trailing one', () => {
  const rows: [string, string][] = [['/files', '/files'], ['/files/', '/files'], ['/', ''], ['', ''], ['/a/b-c_d.e~', '/a/b-c_d.e~']];
  for (const [raw, want] of rows) assert.equal(loadConfig({ basePath: raw }, {}).basePath, want, raw);
  for (const bad of ['files', '/a//b', '/a/../b', '/a b', '/a?x', '/ä', '/a/./b']) {
    assert.throws(() => loadConfig({ basePath: bad }, {}), (e: unknown) => e instanceof UsageError && /--base-path/.test(e.message), bad);
  }
  assert.equal(loadConfig({}, { FILE_CLOUD_BASE_PATH: '/drive/' }).basePath, '/drive');
});

test('--public-url is an http(s) URL without query, fragment or trailing slash', () => {
  assert.equal(loadConfig({ publicUrl: 'https://example.com/files/' }, {}).publicUrl, 'https://example.com/files');
  assert.equal(loadConfig({ publicUrl: 'http://h:8080' }, {}).publicUrl, 'http://h:8080');
  for (const bad of ['example.com', 'ftp://h/x', 'https://h/x?y=1', 'https://h/#f', 'https://u:p@h/']) {
    assert.throws(() => loadConfig({ publicUrl: bad }, {}), /--public-url/, bad);
  }
});

test('--log-format and OTEL_EXPORTER_OTLP_ENDPOINT are validated', () => {
  assert.equal(loadConfig({ logFormat: 'PRETTY' }, {}).logFormat, 'pretty');
  assert.equal(loadConfig({}, { FILE_CLOUD_LOG_FORMAT: 'json' }).logFormat, 'json');
  assert.equal(loadConfig({ logFormat: 'auto' }, { FILE_CLOUD_LOG_FORMAT: 'json' }).logFormat, 'auto', 'the flag wins');
  assert.throws(() => loadConfig({ logFormat: 'xml' }, {}), /--log-format/);
  assert.equal(loadConfig({}, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).otlpEndpoint, 'http://collector:4318');
  assert.throws(() => loadConfig({}, { OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }), /OTEL_EXPORTER_OTLP_ENDPOINT/);
  assert.equal(loadConfig({}, { FILE_CLOUD_METRICS: 'on' }).metrics, true);
});
