import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadWebModule } from '../helpers/web-module.js';

/**
 * web/src/lib/coalesce.ts, compiled here: how the file list and the storage figure refresh while
 * changes keep coming (a batch of uploads landing, a busy change feed). No browser.
 */
type Rules = { coalesce(fn: () => void, ms: number): { request(): void; cancel(): void } };

const INTERVAL_MS = 200;

test('a steady stream of requests gets a call every interval while it lasts, not none until it stops', async () => {
  const { coalesce } = await loadWebModule<Rules>('lib/coalesce.ts');
  let calls = 0;
  const refresh = coalesce(() => calls++, INTERVAL_MS);
  try {
    // Requests every ~10 ms for 1.5 s: never a quiet moment of INTERVAL_MS (a debounce would call nothing yet).
    const started = Date.now();
    while (Date.now() - started < 1500) {
      refresh.request();
      await sleep(10);
    }
    const during = calls;
    // Seven intervals fit; a machine under load fires timers late, so fewer may come, but never none.
    assert.ok(during >= 2, `${during} calls while the requests kept coming`);
    await sleep(INTERVAL_MS * 2);
    assert.ok(calls <= during + 1, 'at most one more call after the last request');
  } finally {
    refresh.cancel();
  }
});

test('a burst makes one call, after the interval; cancel drops a pending call', async () => {
  const { coalesce } = await loadWebModule<Rules>('lib/coalesce.ts');
  let calls = 0;
  const refresh = coalesce(() => calls++, INTERVAL_MS);
  for (let i = 0; i < 20; i++) refresh.request();
  assert.equal(calls, 0, 'not at once');
  await sleep(INTERVAL_MS * 3);
  assert.equal(calls, 1, 'one call for the burst');
  refresh.request();
  refresh.cancel();
  await sleep(INTERVAL_MS * 2);
  assert.equal(calls, 1, 'a cancelled request makes no call');
});
