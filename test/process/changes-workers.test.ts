import assert from 'node:assert/strict';
import { test } from 'node:test';
import { withServer } from '../helpers/server.js';

/**
 * Found by the change-feed bench (npm run bench -- --only changes): with two workers on one
 * SQLite file, an index write whose transaction read before it wrote lost the race to the other
 * worker's commit (SQLITE_BUSY_SNAPSHOT: a read snapshot cannot become a write, and busy_timeout
 * does not wait for that), so a stored file was neither indexed nor journaled.
 */
test('--workers 2 on SQLite: concurrent PUTs are each indexed and journaled, none lost to SQLITE_BUSY', async () => {
  await withServer(
    async (server, token) => {
      const auth = { authorization: `Bearer ${token}` };
      const made = await fetch(`${server.url}/storage/admin/race`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ action: 'CreateFolder' }) });
      assert.equal(made.status, 201);
      const start = ((await (await fetch(`${server.url}/api/changes`, { headers: auth })).json()) as { cursor: string }).cursor;
      const count = 400;
      let next = 0;
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          while (next < count) {
            const i = next++;
            const res = await fetch(`${server.url}/storage/admin/race/f${i}.bin`, { method: 'PUT', headers: { ...auth, 'content-type': 'application/octet-stream' }, body: 'x'.repeat(4096) });
            assert.equal(res.status, 201);
          }
        }),
      );
      // The 201 of a PUT comes after its index write and journal entry: everything is there now.
      const seen = new Set<string>();
      let cursor = start;
      for (;;) {
        const page = (await (await fetch(`${server.url}/api/changes?cursor=${cursor}`, { headers: auth })).json()) as { changes: { path: string }[]; cursor: string; more: boolean };
        for (const c of page.changes) seen.add(c.path);
        cursor = page.cursor;
        if (!page.more) break;
      }
      assert.equal(seen.size, count, `journaled ${seen.size} of ${count} writes`);
      const found = (await (await fetch(`${server.url}/api/search?q=f&path=/admin/race&limit=1000`, { headers: auth })).json()) as { results: unknown[] };
      assert.equal(found.results.length, count, 'and each is in the search index');
      assert.doesNotMatch(server.output().stdout + server.output().stderr, /SQLITE_BUSY/);
    },
    { args: ['--workers', '2'] },
  );
});
