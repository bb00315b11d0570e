// The storage API's Copy action (POST /storage/<user>/<path> {"action":"Copy","new_path","overwrite"?},
// docs/api.md "Actions") on every backend: Move's rules with the source kept — parents created, a taken
// destination only with overwrite, never onto or into itself, never the root; the destination owner's
// quota (507, nothing of the copy kept); through grants, a read grant is enough to copy out and a write
// grant is needed to copy in; with --versions a file replaced by a copy is kept as a version.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { usersApi } from '../helpers/client.js';
import { stagingLeft } from '../helpers/stored.js';

for (const [storage, skip] of BACKENDS) {
  describe(`Copy on ${storage}`, { skip }, () => {
    let t: TestApp;
    const tokens: Record<string, string> = {};
    before(async () => {
      t = await startApp({ storage, users: ['alice', 'bob'], flags: { versions: true } });
      for (const u of ['alice', 'bob']) tokens[u] = (await t.login(u)).access_token;
    });
    after(() => t?.close());

    const { req } = usersApi(() => t.url, tokens);
    const copy = (who: string, path: string, body: Record<string, unknown>) => req(who, 'POST', `/storage/${path}`, { action: 'Copy', ...body });
    const usedBy = async (who: string) => ((await (await req(who, 'GET', '/api/usage')).json()) as { used: number }).used;
    const answer = async (res: Response) => ({ status: res.status, error: res.status === 204 ? undefined : ((await res.json()) as { error: string }).error });

    test('a file is copied, with the destination\'s parents made; the source stays: 204', async () => {
      await t.fs.put('report.txt', 'figures', 'alice');
      assert.deepEqual(await answer(await copy('alice', 'alice/report.txt', { new_path: '/alice/archive/2026/report copy.txt' })), { status: 204, error: undefined });
      assert.equal(await t.fs.text('archive/2026/report copy.txt', 'alice'), 'figures');
      assert.equal(await t.fs.text('report.txt', 'alice'), 'figures');
      // The leading slash is optional, as for Move.
      assert.equal((await copy('alice', 'alice/report.txt', { new_path: 'alice/report (2).txt' })).status, 204);
      assert.equal(await t.fs.text('report (2).txt', 'alice'), 'figures');
    });

    test('a folder is copied with everything in it, empty folders too', async () => {
      await t.fs.put('Project/a.txt', 'a', 'alice');
      await t.fs.put('Project/src/b.txt', 'bb', 'alice');
      await t.fs.mkdir('Project/empty', 'alice');
      assert.equal((await copy('alice', 'alice/Project', { new_path: '/alice/Project copy' })).status, 204);
      assert.deepEqual(await t.fs.names('Project copy', 'alice'), ['a.txt', 'empty', 'src']);
      assert.equal(await t.fs.text('Project copy/src/b.txt', 'alice'), 'bb');
      assert.deepEqual(await t.fs.names('Project', 'alice'), ['a.txt', 'empty', 'src']);
      assert.deepEqual(await stagingLeft(t), []);
    });

    test('onto a taken name: 409 already_exists unless overwrite, which replaces it (a replaced file is kept as a version)', async () => {
      await t.fs.put('new.txt', 'new', 'alice');
      await t.fs.put('old.txt', 'old', 'alice');
      assert.deepEqual(await answer(await copy('alice', 'alice/new.txt', { new_path: '/alice/old.txt' })), { status: 409, error: 'already_exists' });
      assert.equal(await t.fs.text('old.txt', 'alice'), 'old');
      assert.equal((await copy('alice', 'alice/new.txt', { new_path: '/alice/old.txt', overwrite: true })).status, 204);
      assert.equal(await t.fs.text('old.txt', 'alice'), 'new');
      assert.equal(await t.fs.text('new.txt', 'alice'), 'new');
      const versions = ((await (await req('alice', 'GET', '/storage/alice/old.txt?versions')).json()) as { versions: { id: string }[] }).versions;
      assert.equal(versions.length, 1);
      const kept = await req('alice', 'GET', `/storage/alice/old.txt?version=${versions[0]!.id}`);
      assert.equal(await kept.text(), 'old');
      // A folder onto a folder: replaced whole.
      await t.fs.put('fa/a.txt', 'a', 'alice');
      await t.fs.put('fb/b.txt', 'b', 'alice');
      assert.equal((await copy('alice', 'alice/fa', { new_path: '/alice/fb', overwrite: true })).status, 204);
      assert.deepEqual(await t.fs.names('fb', 'alice'), ['a.txt']);
    });

    test('refusals: onto or into itself 400, a missing source 404, another user\'s tree 401, the root 400, bad fields 400', async () => {
      await t.fs.mkdir('self/child', 'alice');
      const rows: [string, Record<string, unknown>, number, string][] = [
        ['alice/self', { new_path: '/alice/self/child/self' }, 400, 'into_itself'],
        ['alice/self', { new_path: '/alice/self' }, 400, 'into_itself'],
        ['alice/nothing', { new_path: '/alice/x' }, 404, 'not_found'],
        ['alice/self', { new_path: '/bob/stolen' }, 401, 'unauthorized'],
        ['alice/self', { new_path: '/nobody/x' }, 401, 'unauthorized'],
        ['alice/self', { new_path: '/alice/' }, 400, 'bad_request'],
        ['alice/', { new_path: '/alice/rootcopy' }, 400, 'bad_request'],
        ['bob/', { new_path: '/alice/bobs' }, 401, 'unauthorized'],
        ['alice/self', {}, 400, 'bad_request'],
        ['alice/self', { new_path: 42 }, 400, 'bad_request'],
        ['alice/self', { new_path: '/alice/x', overwrite: 'yes' }, 400, 'bad_request'],
      ];
      for (const [path, body, status, error] of rows) assert.deepEqual(await answer(await copy('alice', path, body)), { status, error }, `${path} ${JSON.stringify(body)}`);
      assert.deepEqual(await t.fs.names('self', 'alice'), ['child']);
      assert.deepEqual(await t.fs.names('', 'bob'), []);
    });

    test('the copy counts against the quota: past it 507 quota_exceeded and nothing of the copy is kept', async () => {
      await t.fs.put('big/one.bin', Buffer.alloc(4000, 1), 'alice');
      await t.fs.put('big/two.bin', Buffer.alloc(4000, 2), 'alice');
      const used = await usedBy('alice');
      await t.store.usage.setQuota('alice', used + 6000);
      try {
        assert.deepEqual(await answer(await copy('alice', 'alice/big', { new_path: '/alice/big copy' })), { status: 507, error: 'quota_exceeded' });
        assert.equal(await t.fs.kind('big copy', 'alice'), undefined);
        // Nothing of the copy stays (the quota may have made room by dropping old versions first).
        assert.ok((await usedBy('alice')) <= used, 'no byte of the refused copy is counted');
        // One file fits.
        assert.equal((await copy('alice', 'alice/big/one.bin', { new_path: '/alice/one copy.bin' })).status, 204);
      } finally {
        await t.store.usage.setQuota('alice', null);
      }
    });

    test('through grants: a read grant lets the recipient copy out into their own tree; copying in needs a write grant, never onto the shared item', async () => {
      await t.fs.put('team/notes.txt', 'shared notes', 'alice');
      const grant = async (permission: 'read' | 'write') => {
        const res = await req('alice', 'POST', '/api/grants', { path: '/alice/team', to: 'user:bob', permission });
        const body = await res.text();
        assert.equal(res.status, 201, body);
        return (JSON.parse(body) as { id: string }).id;
      };
      const readId = await grant('read');
      assert.equal((await copy('bob', 'alice/team/notes.txt', { new_path: '/bob/my notes.txt' })).status, 204);
      assert.equal(await t.fs.text('my notes.txt', 'bob'), 'shared notes');
      assert.deepEqual(await answer(await copy('bob', 'bob/my notes.txt', { new_path: '/alice/team/back.txt' })), { status: 403, error: 'forbidden' });
      assert.deepEqual(await answer(await copy('bob', 'alice/team/notes.txt', { new_path: '/alice/elsewhere.txt' })), { status: 401, error: 'unauthorized' });
      assert.equal((await req('alice', 'DELETE', `/api/grants/${readId}`)).status, 204);
      await grant('write');
      assert.equal((await copy('bob', 'bob/my notes.txt', { new_path: '/alice/team/from bob.txt' })).status, 204);
      assert.equal(await t.fs.text('team/from bob.txt', 'alice'), 'shared notes');
      assert.deepEqual(await answer(await copy('bob', 'bob/my notes.txt', { new_path: '/alice/team', overwrite: true })), { status: 403, error: 'forbidden' });
      assert.equal(await t.fs.text('team/notes.txt', 'alice'), 'shared notes');
    });
  });
}
