#!/usr/bin/env node
// Runs every compiled *.test.js under dist/ with node's test runner.
// Arguments filter test files by substring: `npm run test:only -- storage-path`.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

const filters = process.argv.slice(2);
const files = [];
(function walk(dir) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p);
    else if (name.endsWith('.test.js')) files.push(p);
  }
})('dist');
const chosen = files.filter((f) => filters.length === 0 || filters.some((x) => f.includes(x))).sort();
if (chosen.length === 0) {
  console.error('run-tests: no test files matched');
  process.exit(1);
}
const r = spawnSync(process.execPath, ['--enable-source-maps', '--test', '--test-concurrency=2', ...chosen], { stdio: 'inherit' });
process.exit(r.status ?? 1);
