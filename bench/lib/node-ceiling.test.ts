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

for (const [index, dir] of [[true, 'node-ceiling-put-index'], ['group', 'node-ceiling-put-index-group']] as const) {
  test(`the PUT ceiling with an index (${index === 'group' ? 'group commit' : 'a commit a file'}) commits each entry, its change and its folder stamp before the 201, and refuses a taken name`, async () => {
    const tmp = await mkdtemp(join(tmpdir(), 'fc-ceiling-'));
    let server: Awaited<ReturnType<typeof startNodeCeiling>> | undefined;
    try {
      const root = join(tmp, 'root');
      await mkdir(join(root, USER, 'in'), { recursive: true });
      server = await startNodeCeiling(tmp, 'put', root, 1, { index });
      const put = (name: string) => fetch(`${server?.base}${server?.path(`in/${name}`)}`, { method: 'PUT', headers: { ...server?.headers, 'content-length': '5' }, body: 'hello' });
      // Several at once: a group commit takes the ones that finish in one turn together.
      const names = ['a.bin', 'b.bin', 'c.bin', 'd.bin', 'e.bin', 'f.bin'];
      const answers = await Promise.all(names.map(put));
      const ids = new Map<string, string>();
      for (const [i, r] of answers.entries()) {
        assert.equal(r.status, 201);
        const { id } = (await r.json()) as { id: string };
        assert.match(id, /^[0-9a-f]{32}$/);
        ids.set(`in/${names[i]}`, id);
      }
      const again = await put('a.bin');
      await again.arrayBuffer();
      assert.equal(again.status, 409);
      assert.equal(await readFile(join(root, USER, 'in', 'a.bin'), 'utf8'), 'hello');
      const db = new Database(join(tmp, dir, 'index.db'), { readonly: true });
      try {
        for (const [path, id] of ids) assert.deepEqual(db.prepare('SELECT path, is_file, size, file_id FROM entries WHERE path = ?').get(path), { path, is_file: 1, size: 5, file_id: id });
        const changes = db.prepare('SELECT cursor, type, path, file_id FROM changes ORDER BY cursor').all() as { cursor: number; path: string }[];
        const byPath = (x: { path: string }, y: { path: string }) => (x.path < y.path ? -1 : x.path > y.path ? 1 : 0);
        assert.deepEqual(changes.map(({ cursor: _, ...c }) => c).sort(byPath), [...ids].map(([path, id]) => ({ type: 'created', path, file_id: id })).sort(byPath));
        assert.equal(changes.length, names.length);
        assert.equal(db.prepare('SELECT tree_cursor FROM entries WHERE path = ?').pluck().get('in'), changes.at(-1)?.cursor, 'the folder stamped with its latest change');
        assert.equal(db.prepare('SELECT count(*) FROM entries WHERE path = ?').pluck().get('in'), 1, 'the folder indexed once');
      } finally {
        db.close();
      }
    } finally {
      if (server?.proc) await stopChild(server.proc);
      await rm(tmp, { recursive: true, force: true });
    }
  });
}
