/**
 * Preloaded into a File Cloud process (`node --import <this file>`) by tests
 * of its memory: appends the size of V8's young generation (MiB) every
 * 100 ms to the file FC_TEST_HEAP_LOG names. Reads V8's own statistics
 * only; nothing of File Cloud is changed.
 */
import { appendFileSync } from 'node:fs';
import v8 from 'node:v8';

const log = process.env.FC_TEST_HEAP_LOG;
if (log) {
  setInterval(() => {
    const young = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
    appendFileSync(log, `${Date.now()} ${((young?.space_size ?? 0) / 1048576).toFixed(2)}\n`);
  }, 100).unref();
}
