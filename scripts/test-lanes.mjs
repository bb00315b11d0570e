#!/usr/bin/env node
// Runs test files in the order given, N at a time, with the spec reporter:
//   node --enable-source-maps scripts/test-lanes.mjs N file...
// `node --test` sorts its files by name whatever order they come in; node:test's run() keeps it, so
// scripts/run-tests.mjs can start the longest suites first. Exits 1 when a test fails.
import { run } from 'node:test';
import { spec } from 'node:test/reporters';
import { resolve } from 'node:path';

const [n, ...files] = process.argv.slice(2);
const concurrency = Number(n);
if (!Number.isInteger(concurrency) || concurrency < 1 || files.length === 0) {
  console.error('usage: test-lanes.mjs N file...');
  process.exit(2);
}
const stream = run({ files: files.map((f) => resolve(f)), concurrency });
stream.on('test:fail', (event) => {
  if (!event.todo) process.exitCode = 1;
});
stream.compose(spec).pipe(process.stdout);
