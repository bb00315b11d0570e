import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { StorageKey } from '../../src/domain/storage-path.js';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { bearer } from '../helpers/client.js';

/**
 * A request's cost is linear in its path's depth (docs/security.md, "Deep
 * paths"). Measured without a clock: every backend call walks or names its
 * key from the user root (the local backend resolves it one segment at a
 * time; an object store sends the whole key), so the sum of the depths of
 * the keys of all backend calls a request makes is the work it asks of
 * storage. A raw PUT whose parents are all new once cost a stat of every
 * parent (search indexing them): n(n+1)/2 segments, 23 s at depth 1,000.
 */
for (const [storage, skip] of BACKENDS) {
  // The cluster's backend runs in the server's own processes, where nothing can count its calls;
  // its code is the in-process `s3` backend's, and its database only sees the same linear batch.
  describe(`deep paths cost linearly (${storage})`, { skip: storage === 'cluster' ? 'the backend runs in other processes (same code as s3)' : skip }, () => {
    let t: TestApp;
    let token: string;
    let segments = 0;
    const restore: (() => void)[] = [];

    before(async () => {
      t = await startApp({ storage, users: ['alice'] });
      token = (await t.login('alice')).access_token;
      // Counts on the very object the app's services call: every method that takes a key adds that key's depth.
      const b = t.backend as unknown as Record<string, unknown>;
      for (const name of ['stat', 'parents', 'list', 'listSorted', 'walk', 'read', 'stage', 'write', 'mkdir', 'delete', 'move', 'copy'] as const) {
        const original = b[name];
        if (typeof original !== 'function') continue;
        b[name] = (...args: unknown[]) => {
          for (const a of args) if (isKey(a)) segments += a.segments.length;
          return (original as (...a: unknown[]) => unknown).apply(t.backend, args);
        };
        restore.push(() => (b[name] = original));
      }
    });
    after(async () => {
      for (const r of restore) r();
      await t?.close();
    });

    /** Segments the backend walked for one raw PUT whose `depth` parents are all new. */
    async function putDeep(top: string, depth: number): Promise<number> {
      const path = `${top}/${Array.from({ length: depth - 1 }, () => 'd').join('/')}/f.txt`;
      segments = 0;
      const res = await fetch(`${t.url}/storage/alice/${path}`, { method: 'PUT', headers: { ...bearer(token), 'content-type': 'text/plain' }, body: 'x' });
      assert.equal(res.status, 201, await res.text());
      const walked = segments;
      // Every parent made on the way is searchable (the index learned them from the one walk).
      const found = await fetch(`${t.url}/api/search?q=${top}&type=folder`, { headers: bearer(token) });
      assert.deepEqual(((await found.json()) as { results: { path: string }[] }).results.map((r) => r.path), [`/alice/${top}`]);
      return walked;
    }

    test('a raw PUT under 200 and 400 new parents: storage work grows in proportion', async () => {
      const at200 = await putDeep('shallow', 200);
      const at400 = await putDeep('deeper', 400);
      // Linear: twice the depth, about twice the work; quadratic would be four times. And a small
      // constant per level (a handful of calls see each key), never a walk from the root per level.
      assert.ok(at400 < 2.5 * at200, `depth 400 walked ${at400} segments, depth 200 ${at200}: more than linear`);
      assert.ok(at400 <= 20 * 400, `depth 400 walked ${at400} segments: more than a few walks of the path`);
    });
  });
}

function isKey(v: unknown): v is StorageKey {
  return typeof v === 'object' && v !== null && typeof (v as StorageKey).user === 'string' && Array.isArray((v as StorageKey).segments);
}
