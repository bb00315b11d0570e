#!/usr/bin/env node
// Regenerates the screenshots in docs/screenshots/ from the current build:
// `npm run docs:screenshots` (builds first).
//
// Every image the README and docs/*.md show (`screenshots/<name>.png`) is taken
// by a browser test (test/browser/*.test.ts, `screenshot(page, '<name>')` or
// `screenshotAll(page, '<base>')` for `<base>-{desktop,phone}-{light,dark}`) into
// test-output/screenshots/. This runs just the tests that take them, then copies
// those files over the committed ones. It fails when a test fails, or when a
// document shows an image that no test takes (so a picture cannot go stale
// unnoticed: rename it in the test and in the docs together).
import { copyFileSync, existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const SHOTS = join(ROOT, 'test-output', 'screenshots');
const DOCS_SHOTS = join(ROOT, 'docs', 'screenshots');

const docs = [join(ROOT, 'README.md'), ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => join(ROOT, 'docs', f))];
const wanted = new Set();
for (const f of docs) for (const m of readFileSync(f, 'utf8').matchAll(/screenshots\/([\w.-]+)\.png/g)) wanted.add(m[1]);

// Which test file takes which picture.
const testDir = join(ROOT, 'test', 'browser');
const takers = new Map(); // name -> test file (compiled path under dist/)
for (const f of readdirSync(testDir).filter((n) => n.endsWith('.test.ts'))) {
  const src = readFileSync(join(testDir, f), 'utf8');
  const compiled = join('dist', 'test', 'browser', f.replace(/\.ts$/, '.js'));
  for (const m of src.matchAll(/\bscreenshot\(\s*page\s*,\s*'([\w.-]+)'/g)) takers.set(m[1], compiled);
  for (const m of src.matchAll(/\bscreenshotAll\(\s*page\s*,\s*'([\w.-]+)'/g)) {
    for (const size of ['desktop', 'phone']) for (const scheme of ['light', 'dark']) takers.set(`${m[1]}-${size}-${scheme}`, compiled);
  }
}
const orphans = [...wanted].filter((n) => !takers.has(n));
if (orphans.length) {
  console.error(`docs-screenshots: no browser test takes ${orphans.map((n) => `${n}.png`).join(', ')}`);
  process.exit(1);
}

const files = [...new Set([...wanted].map((n) => takers.get(n)))].sort();
for (const n of wanted) rmSync(join(SHOTS, `${n}.png`), { force: true });
console.error(`docs-screenshots: ${wanted.size} pictures from ${files.length} test files`);
// CI=1: a missing Chromium fails instead of skipping; the S3/PostgreSQL/Redis services are not needed.
const r = spawnSync(process.execPath, [join(ROOT, 'scripts', 'run-tests.mjs'), ...files], { cwd: ROOT, stdio: 'inherit', env: { ...process.env, CI: '1', FC_TEST_SERVICES: '0' } });
if (r.status !== 0) {
  console.error('docs-screenshots: the tests failed; docs/screenshots/ left as it was');
  process.exit(1);
}
const missing = [...wanted].filter((n) => !existsSync(join(SHOTS, `${n}.png`)));
if (missing.length) {
  console.error(`docs-screenshots: the tests did not save ${missing.join(', ')}`);
  process.exit(1);
}
for (const n of wanted) copyFileSync(join(SHOTS, `${n}.png`), join(DOCS_SHOTS, `${n}.png`));
console.error(`docs-screenshots: copied ${wanted.size} pictures into docs/screenshots/`);
