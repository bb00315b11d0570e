import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { startNodeCeiling } from './node-ceiling.js';
import { USER } from './paths.js';
import { stopChild } from './processes.js';

// A random base64url token begins with '-' one time in 32; the ceiling must
// still start and take it as its token (a quick bench in CI died on one).
test('the Node ceiling starts with a token that begins with a dash, and answers only that token', async () => {
  const tmp = await mkdtemp(join(tmpdir(), 'fc-ceiling-'));
  let server: Awaited<ReturnType<typeof startNodeCeiling>> | undefined;
  try {
    const root = join(tmp, 'root');
    await mkdir(join(root, USER), { recursive: true });
    await writeFile(join(root, USER, 'a.txt'), 'hello');
    server = await startNodeCeiling(tmp, 'get', root, 1, '-dash-token_0123456789');
    const ok = await fetch(`${server.base}${server.path('a.txt')}`, { headers: server.headers });
    assert.equal(ok.status, 200);
    assert.equal(await ok.text(), 'hello');
    const other = await fetch(`${server.base}${server.path('a.txt')}`, { headers: { authorization: 'Bearer dash-token_0123456789' } });
    await other.arrayBuffer();
    assert.equal(other.status, 401);
  } finally {
    if (server?.proc) await stopChild(server.proc);
    await rm(tmp, { recursive: true, force: true });
  }
});
