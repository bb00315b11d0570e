import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ADMIN_PASSWORD, runCli, startServer, type ServerProcess } from '../helpers/server.js';
import { spawnFileCloud } from '../kit/file-cloud-process.js';
import { IDLE_SAMPLE_MS, QUIET_SAMPLES } from '../../src/app/idle-reducer.js';

const MiB = 1024 * 1024;
const rssOf = async (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(await readFile(`/proc/${pid}/status`, 'utf8'))?.[1]) * 1024;

/** The server's RSS once it has been idle a while after start: its start-up work is over by then. */
async function idleRss(server: ServerProcess): Promise<number> {
  await new Promise((r) => setTimeout(r, 3000));
  return rssOf(server.proc.pid as number);
}

test('on SQLite, a server at idle after start holds no more memory with 100,000 names in its search index than with none (the check at open reads the file through a small page cache)', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'fc-idle-'));
  const big = join(dir, 'big');
  const empty = join(dir, 'empty');
  const servers: ServerProcess[] = [];
  try {
    // 100,000 files put on the disk by another tool, then taken into the index by `file-cloud index`.
    const root = join(big, 'storage', 'admin');
    for (let d = 0; d < 100; d++) {
      const folder = join(root, `folder-${d}`);
      await mkdir(folder, { recursive: true });
      await Promise.all(Array.from({ length: 1000 }, (_, i) => writeFile(join(folder, `name-${d}-${i}.txt`), '')));
    }
    const add = await runCli(['user', 'add', 'admin', '--password', ADMIN_PASSWORD, '--admin', '--data-dir', big]);
    assert.equal(add.code, 0, add.stderr);
    const indexed = await runCli(['index', '--data-dir', big]);
    assert.equal(indexed.code, 0, indexed.stderr);
    assert.ok(Number(/Search index: (\d+) entries/.exec(indexed.stdout + indexed.stderr)?.[1]) >= 100_000, indexed.stdout + indexed.stderr);
    // Both with their default settings, side by side; no rescan to keep either busy.
    servers.push(await startServer({ dataDir: big, args: ['--index-interval', '0'] }));
    servers.push(await startServer({ dataDir: empty, args: ['--index-interval', '0'] }));
    const [withIndex, without] = await Promise.all(servers.map(idleRss));
    assert.ok((withIndex as number) - (without as number) <= 6 * MiB, `${((withIndex as number) / MiB).toFixed(1)} MiB with the index, ${((without as number) / MiB).toFixed(1)} MiB without`);
  } finally {
    for (const s of servers) await s.dispose();
    await rm(dir, { recursive: true, force: true });
  }
});

/** The young generation's size (MiB) as the heap-log hook recorded it, oldest first, with the time of each sample. */
async function youngSizes(file: string): Promise<{ at: number; mib: number }[]> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text.split('\n').filter(Boolean).map((l) => {
    const [at, mib] = l.split(' ').map(Number);
    return { at: at as number, mib: mib as number };
  });
}

test('a server that falls idle gives its young generation back: start-up\'s growth at the first quiet sample; a burst\'s not collected in the next few seconds (the next burst would grow it again), but back at its smallest once the server has stayed quiet for QUIET_SAMPLES samples; never collected twice with no work between', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'fc-idle-young-'));
  const log = join(dir, 'heap.log');
  const fc = await spawnFileCloud({
    dataDir: join(dir, 'data'),
    args: ['--index-interval', '0'],
    env: { FILE_CLOUD_ADMIN_PASSWORD: ADMIN_PASSWORD, FILE_CLOUD_LOG_LEVEL: 'warn', FC_TEST_HEAP_LOG: log },
    // --trace-gc: the collections it runs (the `gc` extension's, "testing") are counted below.
    nodeArgs: ['--trace-gc', '--import', new URL('../kit/heap-log-hook.js', import.meta.url).href],
  });
  // One reducing collection is logged as one or more "Mark-Compact (reduce) … testing" lines, within a few ms.
  const reductions = () => fc.output().stdout.split('\n').filter((l) => l.includes('Mark-Compact (reduce)') && l.includes('testing'));
  const collections = () => {
    const times = reductions().map((l) => Number(/\s(\d+) ms: Mark-Compact/.exec(l)?.[1]));
    return times.filter((t, i) => i === 0 || t - (times[i - 1] as number) > 1000).length;
  };
  const until = async (what: string, ms: number, done: () => Promise<boolean> | boolean) => {
    const deadline = Date.now() + ms;
    while (!(await done())) {
      if (Date.now() > deadline) assert.fail(`${what}: not within ${ms} ms; young generation (MiB, every 100 ms): ${(await youngSizes(log)).slice(-40).map((s) => s.mib).join(' ')}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  try {
    // Start-up: its growth is given back at the first quiet sample (and one more for a busy machine's timers).
    await until("start-up's collection", 3 * IDLE_SAMPLE_MS, () => collections() >= 1);
    const afterStart = collections();

    // Busy: requests back to back, 8 at a time, for a few seconds (longer than a sample, so one is busy).
    const busyUntil = Date.now() + 2.5 * IDLE_SAMPLE_MS;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (Date.now() < busyUntil) await (await fetch(`${fc.url}/api/health`)).arrayBuffer();
      }),
    );
    const quietFrom = Date.now();
    const grown = Math.max(...(await youngSizes(log)).filter((s) => s.at >= quietFrom - 2.5 * IDLE_SAMPLE_MS).map((s) => s.mib));
    assert.ok(grown >= 4, `the young generation grew to ${grown} MiB only: nothing to give back`);

    // A few samples after the burst: nothing collected yet (the next burst would pay for it).
    await new Promise((r) => setTimeout(r, 3 * IDLE_SAMPLE_MS));
    assert.equal(collections(), afterStart, 'collected within three samples of a burst');

    // Quiet for QUIET_SAMPLES samples: given back, by this collection or by V8's own reducer if it
    // acted first (then none is owed); two samples more for a busy machine's timers.
    const small = async () => (await youngSizes(log)).some((s) => s.at >= quietFrom && s.mib <= 1.5);
    await until('the young generation at its smallest', (QUIET_SAMPLES + 1) * IDLE_SAMPLE_MS, small);

    // Only growth owes a collection: the work right after one (recompiling what it flushed) does not start the next.
    const first = collections();
    await new Promise((r) => setTimeout(r, 3 * IDLE_SAMPLE_MS));
    assert.equal(collections(), first, 'a quiet process collected again with no work between');
  } finally {
    await fc.stop();
    await rm(dir, { recursive: true, force: true });
  }
});
