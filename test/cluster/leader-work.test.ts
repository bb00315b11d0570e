// Only the leader does the deployment's background work (src/app/leader-work.ts): with several workers,
// the one holding the leader lease rescans storage, sweeps and delivers webhooks, and the others do
// none of it. A worker that wrongly believed it led (src/main.ts once stopped passing `isLeader`)
// would rescan beside the leader; here each worker's rescans are told apart by the process id in
// its log lines.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { startApp } from '../helpers/app.js';
import { skipReason } from '../helpers/services.js';

const skip = skipReason('S3') ?? skipReason('PostgreSQL') ?? skipReason('Redis');
/** Rescans to watch: one a second (--index-interval 1), from the first after about a second. */
const RESCANS = 6;
/** A busy machine's bound on seeing them (the workers start, elect a leader, then rescan an empty tree). */
const WITHIN_MS = 60_000;

test('with two workers, one process rescans: the leader; a lease handed over switches it once, never back and forth', { skip }, async () => {
  const lines: string[] = [];
  let rest = '';
  const logTo = new Writable({
    write(chunk: Buffer, _encoding, done) {
      const text = rest + chunk.toString();
      const parts = text.split('\n');
      rest = parts.pop() ?? '';
      lines.push(...parts);
      done();
    },
  });
  const t = await startApp({ storage: 'cluster', flags: { indexInterval: '1' }, logTo });
  try {
    const rescans = () =>
      lines
        .filter((l) => l.includes('"search index rescanned"'))
        .map((l) => JSON.parse(l) as { pid: number; time: number | string })
        .sort((a, b) => Number(new Date(a.time)) - Number(new Date(b.time)));
    const deadline = Date.now() + WITHIN_MS;
    while (rescans().length < RESCANS && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    const seen = rescans();
    assert.ok(seen.length >= RESCANS, `${RESCANS} rescans within ${WITHIN_MS} ms (saw ${seen.length})`);
    const pids = seen.map((r) => r.pid);
    const switches = pids.filter((pid, i) => i > 0 && pid !== pids[i - 1]).length;
    assert.ok(switches <= 1, `the rescans of one leader at a time (by process: ${pids.join(' ')})`);
  } finally {
    await t.close();
  }
});
