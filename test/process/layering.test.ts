// The layers of src/ are enforced by the lint (eslint.config.js, docs/architecture.md "Layers"): this
// lints one line of source as if it sat in each layer and checks that an upward import fails and a
// downward one passes, so the rule cannot quietly stop applying (a renamed folder, a changed glob).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ESLint } from 'eslint';
import { repoRoot } from '../helpers/services.js';

const CASES: { file: string; imports: string; allowed: boolean }[] = [
  { file: 'src/domain/x.ts', imports: '../store/metadata-store.js', allowed: false },
  { file: 'src/domain/x.ts', imports: '../lib/clock.js', allowed: true },
  { file: 'src/lib/x.ts', imports: '../http/url.js', allowed: false },
  { file: 'src/store/x.ts', imports: '../services/files.js', allowed: false },
  { file: 'src/store/x.ts', imports: '../http/schemas.js', allowed: false },
  { file: 'src/store/x.ts', imports: '../domain/errors.js', allowed: true },
  { file: 'src/storage/s3/x.ts', imports: '../../http/mime.js', allowed: false },
  { file: 'src/storage/s3/x.ts', imports: '../../lib/mime.js', allowed: true },
  { file: 'src/services/x.ts', imports: '../routes/storage.js', allowed: false },
  { file: 'src/services/x.ts', imports: '../app/build-app.js', allowed: false },
  { file: 'src/services/x.ts', imports: '../dav/paths.js', allowed: false },
  { file: 'src/services/x.ts', imports: '../store/metadata-store.js', allowed: true },
  { file: 'src/routes/x.ts', imports: '../app/build-app.js', allowed: false },
  { file: 'src/routes/x.ts', imports: '../services/files.js', allowed: true },
  { file: 'src/app/x.ts', imports: '../cli/serve.js', allowed: false },
  { file: 'src/app/x.ts', imports: '../main.js', allowed: false },
  { file: 'src/cli/x.ts', imports: '../main.js', allowed: true },
  // The sync client is a client: its own modules and Node's, never the server's.
  { file: 'packages/sync/src/x.ts', imports: '../../../src/services/files.js', allowed: false },
  { file: 'packages/sync/src/x.ts', imports: '../../src/lib/clock.js', allowed: false },
  { file: 'packages/sync/src/x.ts', imports: './planner.js', allowed: true },
];

test('the lint refuses an import from a layer above and allows one from below', async () => {
  const eslint = new ESLint({ cwd: repoRoot });
  for (const c of CASES) {
    const [result] = await eslint.lintText(`import type { X } from '${c.imports}';\nexport type Y = X;\n`, { filePath: join(repoRoot, c.file) });
    const layered = (result?.messages ?? []).filter((m) => m.ruleId === 'no-restricted-imports');
    assert.equal(layered.length === 0, c.allowed, `${c.file} importing ${c.imports}: ${layered.map((m) => m.message).join('; ') || 'no layering error'}`);
  }
});

// docs/architecture.md: "No route module passes 300 lines" — a route that grows moves its schemas or
// its presentation out (routes/*-schemas.ts, src/basic/, src/share-pages/) instead of piling up.
test('no route module passes 300 lines', async () => {
  const dir = join(repoRoot, 'src', 'routes');
  const long: string[] = [];
  for (const name of await readdir(dir)) {
    if (!name.endsWith('.ts') || name.endsWith('.test.ts') || name.endsWith('-schemas.ts')) continue;
    const lines = (await readFile(join(dir, name), 'utf8')).split('\n').length - 1;
    if (lines > 300) long.push(`${name}: ${lines} lines`);
  }
  assert.deepEqual(long, []);
});
