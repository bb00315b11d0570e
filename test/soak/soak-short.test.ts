import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runSoak } from '../../soak/soak.js';

/**
 * The 20-second form of `npm run soak` that CI runs with every `npm test`:
 * 64 connections of mixed traffic against the real binary, zero 5xx and
 * socket errors, RSS flat after warm-up, every uploaded file intact.
 */
test('20-second soak at 64 connections: no 5xx, no socket error, flat memory, every uploaded file intact', async (t) => {
  const report = await runSoak({ durationMs: 20_000, concurrency: 64, reportEveryMs: 2000, log: (line) => t.diagnostic(line) });
  assert.deepEqual(report.failures, []);
  assert.equal(report.status5xx, 0);
  assert.equal(report.socketErrors, 0);
  assert.equal(report.filesCorrupt, 0);
  assert.equal(report.filesChecked, report.filesUploaded);
  assert.ok(report.filesUploaded > 80, `${report.filesUploaded} files uploaded`);
  assert.ok(report.requests > 1000, `${report.requests} requests`);
  assert.ok(report.ok);
});
