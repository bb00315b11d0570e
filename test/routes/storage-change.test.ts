import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { bearer, postJson } from '../helpers/client.js';
import { stagingLeft } from '../helpers/stored.js';

for (const [storage, skip] of BACKENDS) {
  describe(`storage changes on ${storage}`, { skip }, () => {
    let t: TestApp;
    let auth: Record<string, string>;
    const exists = async (p: string) => (await t.fs.kind(p)) !== undefined;
    before(async () => {
      t = await startApp({ users: ['alice', 'bob'], storage });
      auth = bearer((await t.login('alice')).access_token);
    });
    after(() => t.close());

    const action = (path: string, body: unknown) => postJson(`${t.url}/storage/alice/${path}`, body, auth);
    const errorCode = async (res: Response) => ((await res.json()) as { error: string }).error;

    test('DELETE removes a file and, recursively, a folder: 204', async () => {
      await t.fs.mkdir('d/sub/deeper');
      await t.fs.put('d/sub/deeper/f.txt', 'x');
      await t.fs.put('d/g.txt', 'x');
      assert.equal((await fetch(`${t.url}/storage/alice/d/g.txt`, { method: 'DELETE', headers: auth })).status, 204);
      assert.equal(await exists('d/g.txt'), false);
      assert.equal((await fetch(`${t.url}/storage/alice/d/`, { method: 'DELETE', headers: auth })).status, 204);
      assert.equal(await exists('d'), false);
    });

    test('DELETE of a missing path is 404; of the root is 400', async () => {
      const missing = await fetch(`${t.url}/storage/alice/missing`, { method: 'DELETE', headers: auth });
      assert.equal(missing.status, 404);
      const rootRes = await fetch(`${t.url}/storage/alice/`, { method: 'DELETE', headers: auth });
      assert.equal(rootRes.status, 400);
      assert.equal(await t.fs.kind(''), 'folder');
    });

    test('CreateFolder creates parents: 201; existing → 409; a file in the way → 409', async () => {
      assert.equal((await action('p/q/r', { action: 'CreateFolder' })).status, 201);
      assert.equal(await t.fs.kind('p/q/r'), 'folder');
      const again = await action('p/q/r/', { action: 'CreateFolder' });
      assert.equal(again.status, 409);
      assert.equal(await errorCode(again), 'already_exists');
      await t.fs.put('file.txt', 'x');
      assert.equal((await action('file.txt', { action: 'CreateFolder' })).status, 409);
      assert.equal((await action('file.txt/sub', { action: 'CreateFolder' })).status, 409);
      assert.equal((await action('', { action: 'CreateFolder' })).status, 409);
    });

    test('Move renames a file and creates the destination parents: 204', async () => {
      await t.fs.put('m1.txt', 'move me');
      const res = await action('m1.txt', { action: 'Move', new_path: '/alice/moved/deep/m1 renamed.txt' });
      assert.equal(res.status, 204);
      assert.equal(await t.fs.text('moved/deep/m1 renamed.txt'), 'move me');
      assert.equal(await exists('m1.txt'), false);
      // Leading slash optional; names in new_path are literal, not percent-decoded.
      await t.fs.put('m2.txt', 'two');
      assert.equal((await action('m2.txt', { action: 'Move', new_path: 'alice/100%25 sure.txt' })).status, 204);
      assert.equal(await t.fs.text('100%25 sure.txt'), 'two');
    });

    test('Move onto an existing destination is 409 unless overwrite', async () => {
      await t.fs.put('src.txt', 'new');
      await t.fs.put('dst.txt', 'old');
      const res = await action('src.txt', { action: 'Move', new_path: '/alice/dst.txt' });
      assert.equal(res.status, 409);
      assert.equal(await errorCode(res), 'already_exists');
      assert.equal(await t.fs.text('dst.txt'), 'old');
      assert.equal((await action('src.txt', { action: 'Move', new_path: '/alice/dst.txt', overwrite: true })).status, 204);
      assert.equal(await t.fs.text('dst.txt'), 'new');
      assert.equal(await exists('src.txt'), false);
    });

    test('Move of a folder with overwrite replaces a folder destination whole', async () => {
      await t.fs.mkdir('fa');
      await t.fs.put('fa/a.txt', 'a');
      await t.fs.mkdir('fb');
      await t.fs.put('fb/b.txt', 'b');
      assert.equal((await action('fa', { action: 'Move', new_path: '/alice/fb' })).status, 409);
      assert.equal((await action('fa', { action: 'Move', new_path: '/alice/fb', overwrite: true })).status, 204);
      assert.deepEqual(await t.fs.names('fb'), ['a.txt']);
      assert.equal(await t.fs.text('fb/a.txt'), 'a');
      assert.equal(await exists('fa'), false);
      assert.deepEqual(await stagingLeft(t), []);
    });

    test('Move errors: into itself 400, missing source 404, another user 401, root 400', async () => {
      await t.fs.mkdir('self/child');
      const rows: [string, unknown, number][] = [
        ['self', { action: 'Move', new_path: '/alice/self/child/self' }, 400],
        ['self', { action: 'Move', new_path: '/alice/self' }, 400],
        ['nothing', { action: 'Move', new_path: '/alice/x' }, 404],
        ['self', { action: 'Move', new_path: '/bob/stolen' }, 401],
        ['self', { action: 'Move', new_path: '/nobody/x' }, 401],
        ['self', { action: 'Move', new_path: '/alice/' }, 400],
        ['', { action: 'Move', new_path: '/alice/newroot' }, 400],
        ['self', { action: 'Move', new_path: '/alice/../bob/x' }, 400],
        ['self', { action: 'Move' }, 400],
        ['self', { action: 'Move', new_path: 42 }, 400],
        ['self', { action: 'Move', new_path: '/alice/x', overwrite: 'yes' }, 400],
      ];
      for (const [path, body, status] of rows) {
        const res = await action(path, body);
        assert.equal(res.status, status, `${path} ${JSON.stringify(body)}`);
      }
      assert.equal(await t.fs.kind('self/child'), 'folder');
      assert.deepEqual(await t.fs.names('', 'bob'), []);
    });

    test('unknown or missing action, malformed JSON and non-object bodies are 400', async () => {
      const rows: [string, string][] = [
        ['{"action":"Explode"}', 'unknown_action'],
        ['{}', 'unknown_action'],
        ['{"action":', 'invalid_json'],
        ['[1,2]', 'bad_request'],
        ['"MakePathToken"', 'bad_request'],
        ['', 'bad_request'],
      ];
      for (const [body, code] of rows) {
        const res = await fetch(`${t.url}/storage/alice/`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body });
        assert.equal(res.status, 400, body);
        assert.equal(await errorCode(res), code, body);
      }
      const huge = await fetch(`${t.url}/storage/alice/`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ action: 'CreateFolder', pad: 'x'.repeat(100_000) }) });
      assert.equal(huge.status, 413);
    });
  });
}
