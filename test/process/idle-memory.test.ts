import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ADMIN_PASSWORD, runCli, startServer, type ServerProcess } from '../helpers/server.js';

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
