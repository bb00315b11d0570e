import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { mkdtemp, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
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
    server = await startNodeCeiling(tmp, 'get', root, 1, { token: '-dash-token_0123456789' });
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

test('the PUT ceiling with an index commits the entry, its change and its folder stamp before the 201, and refuses a taken name', async () => {
  const tmp = await mkdtemp(join(tmpdir(), 'fc-ceiling-'));
  let server: Awaited<ReturnType<typeof startNodeCeiling>> | undefined;
  try {
    const root = join(tmp, 'root');
    await mkdir(join(root, USER, 'in'), { recursive: true });
    server = await startNodeCeiling(tmp, 'put', root, 1, { index: true });
    const put = () => fetch(`${server?.base}${server?.path('in/a.bin')}`, { method: 'PUT', headers: { ...server?.headers, 'content-length': '5' }, body: 'hello' });
    const first = await put();
    assert.equal(first.status, 201);
    const { id } = (await first.json()) as { id: string };
    assert.match(id, /^[0-9a-f]{32}$/);
    const again = await put();
    await again.arrayBuffer();
    assert.equal(again.status, 409);
    assert.equal(await readFile(join(root, USER, 'in', 'a.bin'), 'utf8'), 'hello');
    const db = new Database(join(tmp, 'node-ceiling-put-index', 'index.db'), { readonly: true });
    try {
      assert.deepEqual(db.prepare('SELECT path, is_file, size, file_id FROM entries WHERE path = ?').get('in/a.bin'), { path: 'in/a.bin', is_file: 1, size: 5, file_id: id });
      const change = db.prepare('SELECT cursor, type, path, file_id FROM changes').all() as { cursor: number }[];
      assert.deepEqual(change.map(({ cursor: _, ...c }) => c), [{ type: 'created', path: 'in/a.bin', file_id: id }]);
      assert.equal(db.prepare('SELECT tree_cursor FROM entries WHERE path = ?').pluck().get('in'), change[0]?.cursor, 'the folder stamped with the change');
    } finally {
      db.close();
    }
  } finally {
    if (server?.proc) await stopChild(server.proc);
    await rm(tmp, { recursive: true, force: true });
  }
});
