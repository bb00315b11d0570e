import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { spawnFileCloud } from './file-cloud-process.js';
import { alive, descendantsOf, descendantsOfSync, processTree } from './process-tree.js';

const dirs: string[] = [];
const dataDir = async () => {
  const d = await mkdtemp(join(tmpdir(), 'fc-kit-'));
  dirs.push(d);
  return d;
};
after(async () => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));
const env = { FILE_CLOUD_ADMIN_PASSWORD: 'kit-admin-password', FILE_CLOUD_LOG_LEVEL: 'warn' };

test('spawnFileCloud serves on the printed URL; stop ends the primary and every worker, by pid', async () => {
  const fc = await spawnFileCloud({ dataDir: await dataDir(), args: ['--workers', '2'], env });
  const tree = await processTree(fc.proc.pid as number);
  assert.equal((await fetch(`${fc.url}/api/health`)).status, 200);
  assert.match(fc.output().stdout, /File Cloud listening on http:\/\/127\.0\.0\.1:\d+/);
  assert.ok(tree.length >= 3, `a primary and two workers, saw ${tree.length} processes`);
  const sync = descendantsOfSync(fc.proc.pid as number);
  assert.deepEqual(sync, await descendantsOf(fc.proc.pid as number), 'the synchronous walk (used right before a signal) sees the same workers');
  assert.deepEqual(sync.map((p) => p.pid), tree.slice(1));
  assert.deepEqual(await fc.stop('SIGTERM', 15_000), { code: 0, leftovers: 0 });
  for (const pid of tree) assert.equal(await alive(pid), false, `process ${pid} still runs`);
});

test('a SIGKILLed primary leaves no worker behind once stop returns', async () => {
  const fc = await spawnFileCloud({ dataDir: await dataDir(), args: ['--workers', '2'], env });
  const tree = await processTree(fc.proc.pid as number);
  const { code } = await fc.stop('SIGKILL');
  assert.equal(code, null, 'a signal ended the primary');
  for (const pid of tree) assert.equal(await alive(pid), false, `process ${pid} outlived stop`);
});

test('with a log file and without the caller\'s FILE_CLOUD_* variables, File Cloud runs as shipped (info log in the file)', async () => {
  const dir = await dataDir();
  const logFile = join(dir, 'server.log');
  process.env.FILE_CLOUD_LOG_LEVEL = 'error';
  try {
    const fc = await spawnFileCloud({ dataDir: join(dir, 'data'), args: ['--workers', '1'], env: { FILE_CLOUD_ADMIN_PASSWORD: 'kit-admin-password' }, inheritFileCloudEnv: false, logFile });
    await fetch(`${fc.url}/api/health`);
    assert.equal((await fc.stop()).code, 0);
    const log = await readFile(logFile, 'utf8');
    assert.match(log, /File Cloud listening on/);
    assert.match(log, /request completed/, 'the default info level, not the caller\'s "error"');
    assert.equal(fc.output().stdout, log);
  } finally {
    delete process.env.FILE_CLOUD_LOG_LEVEL;
  }
});

test('a server that cannot start rejects with its exit code and what it printed', async () => {
  await assert.rejects(spawnFileCloud({ dataDir: await dataDir(), args: ['--workers', 'many'], env }), (e: Error) => {
    assert.match(e.message, /exited with 2 before listening/);
    assert.match(e.message, /--workers/);
    return true;
  });
});
