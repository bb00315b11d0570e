import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ADMIN_PASSWORD, runCli, startServer, type ServerProcess } from '../helpers/server.js';
import { spawnFileCloud } from '../kit/file-cloud-process.js';
import { IDLE_SAMPLE_MS } from '../../src/app/idle-reducer.js';

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

test('a server that falls idle gives its young generation back: start-up and a burst of requests grow it, and within two samples of the event loop going quiet it is back at its smallest', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'fc-idle-young-'));
  const log = join(dir, 'heap.log');
  const fc = await spawnFileCloud({
    dataDir: join(dir, 'data'),
    args: ['--index-interval', '0'],
    env: { FILE_CLOUD_ADMIN_PASSWORD: ADMIN_PASSWORD, FILE_CLOUD_LOG_LEVEL: 'warn', FC_TEST_HEAP_LOG: log },
    // --trace-gc: the collections it runs (the `gc` extension's, "testing") are counted below.
    nodeArgs: ['--trace-gc', '--import', new URL('../kit/heap-log-hook.js', import.meta.url).href],
  });
  try {
    // Busy: requests back to back, 8 at a time, for a few seconds (longer than a sample, so one is busy).
    const until = Date.now() + 2.5 * IDLE_SAMPLE_MS;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (Date.now() < until) await (await fetch(`${fc.url}/api/health`)).arrayBuffer();
      }),
    );
    const quietFrom = Date.now();
    const grown = Math.max(...(await youngSizes(log)).map((s) => s.mib));
    assert.ok(grown >= 4, `the young generation grew to ${grown} MiB only: nothing to give back`);
    // The promise: the first sample that finds the loop idle collects. Two samples, and one more for
    // a busy machine's timers to come round; the young generation's smallest size is 1 MiB.
    const deadline = quietFrom + 3 * IDLE_SAMPLE_MS;
    let small: { at: number; mib: number } | undefined;
    while (!small && Date.now() < deadline + 500) {
      await new Promise((r) => setTimeout(r, 100));
      small = (await youngSizes(log)).find((s) => s.at >= quietFrom && s.mib <= 1.5);
    }
    const after = (await youngSizes(log)).filter((s) => s.at >= quietFrom).map((s) => s.mib);
    assert.ok(small && small.at <= deadline, `young generation after the burst (MiB, every 100 ms): ${after.join(' ')}`);
    // Only growth owes a collection: the work right after one (recompiling what it flushed) does not start the next.
    const reductions = () => fc.output().stdout.split('\n').filter((l) => l.includes('Mark-Compact (reduce)') && l.includes('testing')).length;
    await new Promise((r) => setTimeout(r, IDLE_SAMPLE_MS)); // the collection that shrank it is over, and logged
    const first = reductions();
    await new Promise((r) => setTimeout(r, 3 * IDLE_SAMPLE_MS));
    assert.equal(reductions(), first, 'a quiet process collected again with no work between');
  } finally {
    await fc.stop();
    await rm(dir, { recursive: true, force: true });
  }
});
