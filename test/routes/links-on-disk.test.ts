// Symbolic links and hostile names that other tools put in a user's tree on the local disk (issue 27,
// docs/security.md "Symbolic links"): a share never follows a link out of its folder, a copy treats
// links as the quota check does (never follows them), a link loop copies nothing endless, and a zip
// carries only names that pass the name rules. Local disk only: S3 has no links.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startApp, type TestApp } from '../helpers/app.js';
import { bearer, postJson } from '../helpers/client.js';
import { multipartBody } from '../helpers/multipart.js';
import { readZip } from '../helpers/zip-reader.js';

describe('links and names put on the local disk by other tools', () => {
  let t: TestApp;
  let alice: Record<string, string>;
  let root: string;
  before(async () => {
    t = await startApp({ users: ['alice'], flags: { shareRateLimit: '0' } });
    alice = bearer((await t.login('alice')).access_token);
    root = join(t.paths.storage, 'alice');
    await t.fs.put('private/secret.txt', 'owner only');
    await t.fs.put('shared/public.txt', 'for everyone');
    await t.fs.put('shared/inner/deep.txt', 'deep');
    await symlink('../private', join(root, 'shared', 'link'));
    await symlink('../private/secret.txt', join(root, 'shared', 'secret-link.txt'));
    await symlink('inner', join(root, 'shared', 'inner-link'));
  });
  after(() => t?.close());

  const share = async (body: Record<string, unknown>): Promise<string> => {
    const res = await postJson(`${t.url}/api/shares`, body, alice);
    assert.equal(res.status, 201, await res.clone().text());
    return ((await res.json()) as { id: string }).id;
  };

  test('a share never follows a link out of its folder (GET, HEAD, listing, zip, thumbnail, page)', async () => {
    const id = await share({ path: '/alice/shared' });
    for (const path of ['link/secret.txt', 'secret-link.txt']) {
      const res = await fetch(`${t.url}/share/${id}/${path}`);
      assert.equal(res.status, 404, path);
      assert.ok(!(await res.text()).includes('owner only'));
      assert.equal((await fetch(`${t.url}/share/${id}/${path}`, { method: 'HEAD' })).status, 404, `HEAD ${path}`);
      assert.equal((await fetch(`${t.url}/s/${id}/${path}`)).status, 404, `page ${path}`);
    }
    assert.equal((await fetch(`${t.url}/share/${id}/link/`)).status, 404, 'the leaving link lists nothing');
    const listing = (await (await fetch(`${t.url}/share/${id}/`)).json()) as { entries: { name: string }[] };
    assert.deepEqual(listing.entries.map((e) => e.name).sort(), ['inner', 'inner-link', 'public.txt'], 'only what stays inside is shown');
    assert.equal(await (await fetch(`${t.url}/share/${id}/inner-link/deep.txt`)).text(), 'deep', 'a link inside the shared folder still works');
    const zip = Buffer.from(await (await fetch(`${t.url}/share/${id}/?zip=1`)).arrayBuffer());
    assert.ok(!zip.includes('owner only'));
    const named = await fetch(`${t.url}/share/${id}/?zip=1&name=link`);
    assert.equal(named.status, 404, 'nor through a zip of named entries');
    // The owner, inside their own root, still follows it.
    assert.equal(await (await fetch(`${t.url}/storage/alice/shared/link/secret.txt`, { headers: alice })).text(), 'owner only');
  });

  test('an upload through an upload-only link never writes through a link out of its folder', async () => {
    await mkdir(join(root, 'dropbox'));
    await symlink('../private', join(root, 'dropbox', 'out'));
    const id = await share({ path: '/alice/dropbox', upload_only: true });
    const { body, contentType } = multipartBody([{ filename: 'planted.txt', content: 'x' }]);
    const res = await fetch(`${t.url}/share/${id}/out/`, { method: 'PUT', headers: { 'content-type': contentType }, body });
    assert.equal(res.status, 201);
    assert.deepEqual((await readdir(join(root, 'private'))).sort(), ['secret.txt'], 'nothing lands in the private folder');
  });

  test('WebDAV COPY of a folder holding links copies no link target: within the quota, and a `loop -> .` ends', async () => {
    await t.fs.put('big/blob.bin', Buffer.alloc(300_000, 1));
    await t.fs.put('src/small.txt', 'small');
    await symlink('../big', join(root, 'src', 'to-big'));
    await symlink('.', join(root, 'src', 'loop'));
    const used = ((await (await fetch(`${t.url}/api/usage`, { headers: alice })).json()) as { used: number }).used;
    await t.store.usage.setQuota('alice', used + 1000);
    try {
      const res = await fetch(`${t.url}/dav/alice/src/`, { method: 'COPY', headers: { ...alice, destination: `${t.url}/dav/alice/copy/` } });
      assert.equal(res.status, 201);
      assert.deepEqual((await readdir(join(root, 'copy'))).sort(), ['small.txt'], 'the links are left out, as the quota check counted');
      const after = ((await (await fetch(`${t.url}/api/usage`, { headers: alice })).json()) as { used: number }).used;
      assert.ok(after <= used + 1000, `usage ${after} within the quota`);
      // The loop itself as the source: its real folder holds the destination.
      const loop = await fetch(`${t.url}/dav/alice/src/loop/`, { method: 'COPY', headers: { ...alice, destination: `${t.url}/dav/alice/src/looped/` } });
      assert.notEqual(loop.status, 201);
      assert.deepEqual((await readdir(join(root, 'src'))).sort(), ['loop', 'small.txt', 'to-big']);
    } finally {
      await t.store.usage.setQuota('alice', null);
    }
  });

  test('zip entries carry only names that pass the name rules; others are skipped', async () => {
    const dir = join(root, 'zipme');
    await mkdir(join(dir, 'bad\\folder'), { recursive: true });
    await writeFile(join(dir, '..\\..\\x.bat'), 'evil');
    await writeFile(join(dir, 'bad\\folder', 'inside.txt'), 'inside');
    await writeFile(join(dir, 'good.txt'), 'good');
    const res = await fetch(`${t.url}/storage/alice/zipme/?zip=1`, { headers: alice });
    assert.equal(res.status, 200);
    const zip = Buffer.from(await res.arrayBuffer());
    assert.deepEqual(readZip(zip).map((e) => e.name).sort(), ['zipme/', 'zipme/good.txt']);
    assert.ok(!zip.includes('x.bat') && !zip.includes('inside'));
  });
});
