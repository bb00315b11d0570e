#!/usr/bin/env node
// Regenerates the endpoint index of docs/api.md from the OpenAPI document of a real app
// (built as `serve --metrics` builds it, on a throwaway data dir). Run after `npm run build`;
// test/routes/openapi.test.ts fails while docs/api.md is out of date.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { buildApp } = await import(join(root, 'dist/src/app/build-app.js'));
const { createLogger } = await import(join(root, 'dist/src/app/logger.js'));
const { loadConfig } = await import(join(root, 'dist/src/config/load.js'));
const { loadOrCreateSecret } = await import(join(root, 'dist/src/lib/secret.js'));
const { openDataDir } = await import(join(root, 'dist/src/main.js'));
const { withEndpointIndex } = await import(join(root, 'dist/src/http/openapi-markdown.js'));

const dataDir = mkdtempSync(join(tmpdir(), 'fc-docs-api-'));
try {
  const config = loadConfig({ dataDir, logLevel: 'silent', metrics: true }, {});
  const { store, backend, paths } = await openDataDir(config, true, {});
  const secret = await loadOrCreateSecret(paths.secret);
  const app = await buildApp(config, { store, backend, secret, logger: createLogger('silent') });
  const res = await app.inject({ method: 'GET', url: '/api/openapi.json' });
  if (res.statusCode !== 200) throw new Error(`GET /api/openapi.json answered ${res.statusCode}`);
  const file = join(root, 'docs/api.md');
  const before = readFileSync(file, 'utf8');
  const after = withEndpointIndex(before, res.json());
  if (after !== before) writeFileSync(file, after);
  console.log(after === before ? 'docs/api.md: endpoint index already current' : 'docs/api.md: endpoint index updated');
  await app.close();
  await backend.close();
  await store.close();
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
