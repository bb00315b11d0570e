import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { loadConfig, redactedConfig, UsageError } from './load.js';
import { OPTIONS, parseSize } from './options.js';

test('defaults are the contract defaults', () => {
  const c = loadConfig({}, {});
  assert.equal(c.dataDir, './data');
  assert.equal(c.host, '127.0.0.1');
  assert.equal(c.port, 8000);
  assert.equal(c.dev, false);
  assert.equal(c.accessTokenTtl, 3600);
  assert.equal(c.refreshTokenTtl, 2592000);
  assert.equal(c.pathTokenTtl, 86400);
  assert.equal(c.loginRateLimit, 10);
  assert.equal(c.maxUploadSize, Infinity);
  assert.equal(c.trustProxy, false);
  assert.ok(Object.isFrozen(c));
});

test('flags win over the environment, the environment over defaults', () => {
  assert.equal(loadConfig({}, { FILE_CLOUD_PORT: '9000' }).port, 9000);
  assert.equal(loadConfig({ port: '9001' }, { FILE_CLOUD_PORT: '9000' }).port, 9001);
  assert.equal(loadConfig({}, { FILE_CLOUD_DEV: '1' }).dev, true);
  assert.equal(loadConfig({ dev: false }, { FILE_CLOUD_DEV: '1' }).dev, false);
  assert.equal(loadConfig({}, { FILE_CLOUD_TRUST_PROXY: 'yes' }).trustProxy, true);
});

test('bad values name their source', () => {
  const rows: [Record<string, string>, Record<string, string>, RegExp][] = [
    [{ port: 'abc' }, {}, /--port/],
    [{}, { FILE_CLOUD_PORT: '-1' }, /FILE_CLOUD_PORT/],
    [{ accessTokenTtl: '0' }, {}, /--access-token-ttl/],
    [{}, { FILE_CLOUD_DEV: 'maybe' }, /FILE_CLOUD_DEV/],
    [{ logLevel: 'loud' }, {}, /--log-level/],
    [{ maxUploadSize: '5X' }, {}, /--max-upload-size/],
  ];
  for (const [flags, env, re] of rows) assert.throws(() => loadConfig(flags, env), (e: unknown) => e instanceof UsageError && re.test(e.message));
});

test('sizes accept binary units', () => {
  const rows: [string, number][] = [['1024', 1024], ['1K', 1024], ['10M', 10 * 2 ** 20], ['2G', 2 * 2 ** 30], ['1GiB', 2 ** 30], ['5mb', 5 * 2 ** 20], ['unlimited', Infinity], ['0', Infinity]];
  for (const [raw, n] of rows) assert.equal(parseSize(raw), n, raw);
});

test('the effective configuration hides secrets', () => {
  const shown = redactedConfig(loadConfig({}, { FILE_CLOUD_ADMIN_PASSWORD: 'hunter2-hunter2' }));
  assert.equal(shown.adminPassword, '[redacted]');
  assert.ok(!JSON.stringify(shown).includes('hunter2'));
  assert.equal(shown.maxUploadSize, 'unlimited');
});

test("the README's configuration table matches the option table", () => {
  const readme = readFileSync('README.md', 'utf8');
  for (const spec of Object.values(OPTIONS)) {
    const row = readme.split('\n').find((l) => l.startsWith(`| \`${spec.flag}\` |`));
    assert.ok(row, `README has a row for ${spec.flag}`);
    assert.ok(row.includes(`\`${spec.env}\``), `README row of ${spec.flag} names ${spec.env}`);
    const def = 'defaultLabel' in spec ? spec.defaultLabel : String(spec.default);
    assert.ok(row.includes(def), `README row of ${spec.flag} gives the default ${def}`);
  }
});
