// The executor's re-checks against a real server: every step acts only on what the plan saw.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { bearer, postJson } from '../helpers/client.js';
import { execute, type ExecContext } from '../../packages/sync/src/executor.js';
import { scanLocal } from '../../packages/sync/src/local-scan.js';
import { RemoteApi } from '../../packages/sync/src/remote-api.js';
import { StateStore } from '../../packages/sync/src/state-store.js';
import { SyncTrash } from '../../packages/sync/src/sync-trash.js';

const sha = (s: string): string => createHash('sha256').update(s).digest('hex');

for (const [storage, skip] of BACKENDS) {
  describe(`sync executor against the server (${storage})`, { skip }, () => {
    let t: TestApp;
    let token: string;
    let key: string;
    let work: string;
    let n = 0;
    before(async () => {
      t = await startApp({ storage, users: ['alice'] });
      token = (await t.login('alice')).access_token;
      key = ((await (await postJson(`${t.url}/api/keys`, { name: 'sync' }, bearer(token))).json()) as { key: string }).key;
      work = await mkdtemp(join(tmpdir(), 'fc-sync-exec-'));
    });
    after(async () => {
      await t?.close();
      if (work) await rm(work, { recursive: true, force: true });
    });

    async function context(): Promise<ExecContext> {
      const id = ++n;
      const root = join(work, `local${id}`);
      await import('node:fs/promises').then((f) => f.mkdir(root));
      const store = new StateStore(join(work, `state${id}`));
      const state = StateStore.fresh(root, t.url, `/alice/E${id}`);
      return { root, api: new RemoteApi(t.url, key, `/alice/E${id}`, state.origin), store, state, trash: new SyncTrash(join(work, `state${id}`, 'trash')) };
    }
    const put = async (ctx: ExecContext, rel: string, body: string): Promise<string> => {
      const res = await fetch(ctx.api.fileUrl(rel), { method: 'PUT', headers: bearer(token), body });
      assert.equal(res.status, 201);
      return res.headers.get('etag') ?? '';
    };
    const serverText = async (ctx: ExecContext, rel: string): Promise<string> => (await fetch(ctx.api.fileUrl(rel), { headers: bearer(token) })).text();

    test('a download never overwrites a local file written after the scan, and leaves no temporary file', async () => {
      const ctx = await context();
      await put(ctx, 'a.txt', 'from the server');
      await writeFile(join(ctx.root, 'a.txt'), 'base');
      const scanned = (await scanLocal(ctx.root, new Map())).get('a.txt');
      assert.ok(scanned);
      await writeFile(join(ctx.root, 'a.txt'), 'written after the scan');
      const outcome = await execute(ctx, { kind: 'download', path: 'a.txt', remote: { sha256: sha('from the server'), size: 15 }, replaces: scanned });
      assert.equal(outcome, 'skipped');
      assert.equal(await readFile(join(ctx.root, 'a.txt'), 'utf8'), 'written after the scan');
      assert.deepEqual(await readdir(ctx.root), ['a.txt']);
    });

    test('an upload with If-Match on a version the server no longer holds writes nothing (412)', async () => {
      const ctx = await context();
      const first = await put(ctx, 'b.txt', 'v1');
      await put(ctx, 'b.txt', 'v2 from another device');
      await writeFile(join(ctx.root, 'b.txt'), 'mine');
      const local = (await scanLocal(ctx.root, new Map())).get('b.txt')!;
      const outcome = await execute(ctx, { kind: 'upload', path: 'b.txt', local, expect: { sha256: sha('v1'), size: 2, etag: first } });
      assert.equal(outcome, 'skipped');
      assert.equal(await serverText(ctx, 'b.txt'), 'v2 from another device');
    });

    test('a new name goes up with If-None-Match: * — a file another device put there first is never overwritten', async () => {
      const ctx = await context();
      await put(ctx, 'c.txt', 'theirs');
      await writeFile(join(ctx.root, 'c.txt'), 'mine');
      const local = (await scanLocal(ctx.root, new Map())).get('c.txt')!;
      assert.equal(await execute(ctx, { kind: 'upload', path: 'c.txt', local }), 'skipped');
      assert.equal(await serverText(ctx, 'c.txt'), 'theirs');
      assert.equal(ctx.state.base.has('c.txt'), false, 'the base does not advance for a step the server refused');
    });

    test('a delete on the server with If-Match never removes a newer version', async () => {
      const ctx = await context();
      const first = await put(ctx, 'd.txt', 'v1');
      await put(ctx, 'd.txt', 'v2');
      assert.equal(await execute(ctx, { kind: 'delete-remote', path: 'd.txt', expect: { sha256: sha('v1'), size: 2, etag: first } }), 'skipped');
      assert.equal(await serverText(ctx, 'd.txt'), 'v2');
    });

    test("an upload answers with the server's sha256 and id, and the base takes them only then", async () => {
      const ctx = await context();
      await writeFile(join(ctx.root, 'e.txt'), 'hello');
      const local = (await scanLocal(ctx.root, new Map())).get('e.txt')!;
      assert.equal(await execute(ctx, { kind: 'upload', path: 'e.txt', local }), 'done');
      const base = ctx.state.base.get('e.txt');
      assert.equal(base?.sha256, sha('hello'));
      assert.equal(typeof base?.id, 'string');
      assert.equal(await serverText(ctx, 'e.txt'), 'hello');
    });
  });
}
