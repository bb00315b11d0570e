import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { bearer } from '../helpers/client.js';
import { cliBeside } from '../helpers/cli-beside.js';
import { multipartBody } from '../helpers/multipart.js';
import { s3Client } from '../helpers/services.js';

/**
 * Names on S3 (CONTRACT "Backends and nodes"): the index in the database answers File Cloud's own
 * writes; what other tools put into the bucket is taken in by `file-cloud index` and the rescan.
 */
for (const [storage, skip] of BACKENDS) {
  describe(`names of files on ${storage}`, { skip }, () => {
    let t: TestApp;
    before(async () => {
      t = await startApp({ users: ['alice'], storage, flags: { indexInterval: '0' } });
    });
    after(() => t.close());

    const cli = async (...args: string[]) => {
      const r = await cliBeside(t, args);
      assert.equal(r.code, 0, r.stderr);
      return r.stderr;
    };

    test('an account removed with its files and made again finds every name of the old files free', async () => {
      let auth = bearer((await t.login('alice')).access_token);
      assert.equal((await fetch(`${t.url}/storage/alice/docs/a.txt`, { method: 'PUT', headers: auth, body: 'old' })).status, 201);
      assert.equal((await fetch(`${t.url}/storage/alice/note`, { method: 'PUT', headers: auth, body: 'old' })).status, 201);
      await cli('user', 'remove', 'alice', '--delete-files');
      await cli('user', 'add', 'alice', '--password', 'alice-password');
      auth = bearer((await t.login('alice')).access_token);
      // `docs` was a folder and `note` a file: gone with the account, neither is in the way now.
      const put = await fetch(`${t.url}/storage/alice/docs`, { method: 'PUT', headers: auth, body: 'a file now' });
      assert.equal(put.status, 201, await put.text());
      const { body, contentType } = multipartBody([{ filename: 'note', content: 'new' }]);
      const parts = await fetch(`${t.url}/storage/alice/`, { method: 'PUT', headers: { ...auth, 'content-type': contentType }, body });
      assert.deepEqual(((await parts.json()) as { files_written: string[] }).files_written, ['note']);
    });
  });
}

for (const [storage, skip] of BACKENDS.filter(([s]) => s !== 'file')) {
  describe(`a file and a folder at one name on ${storage}`, { skip }, () => {
    let t: TestApp;
    before(async () => {
      t = await startApp({ users: ['alice'], storage, flags: { indexInterval: '0' } });
    });
    after(() => t.close());

    test('another tool puts both: the listing shows the folder, file-cloud index names the file it hides, and both stay in the bucket', async () => {
      const auth = bearer((await t.login('alice')).access_token);
      const s = t.config.storage;
      assert.ok(s.kind === 's3');
      const s3 = s3Client();
      try {
        await s3.send(new PutObjectCommand({ Bucket: s.bucket, Key: `${s.prefix}alice/box/x`, Body: 'a file' }));
        await s3.send(new PutObjectCommand({ Bucket: s.bucket, Key: `${s.prefix}alice/box/x/inside.txt`, Body: 'inside' }));
        const listing = async (path: string) => ((await (await fetch(`${t.url}/storage/alice/${path}`, { headers: auth })).json()) as { entries: { name: string; is_file: boolean }[] }).entries.map((e) => [e.name, e.is_file]);
        assert.deepEqual(await listing('box/'), [['x', false]]);
        assert.deepEqual(await listing('box/x/'), [['inside.txt', true]]);
        const said = await cliBeside(t, ['index']);
        assert.equal(said.code, 0, said.stderr);
        assert.match(said.stderr, /^hidden: \/alice\/box\/x is a file that the folder of the same name hides/m);
        const search = (await (await fetch(`${t.url}/api/search?q=x`, { headers: auth })).json()) as { results: { path: string; is_file: boolean }[] };
        assert.deepEqual(search.results.filter((r) => r.path === '/alice/box/x').map((r) => r.is_file), [false], 'the index holds the folder');
        const keys = ((await s3.send(new ListObjectsV2Command({ Bucket: s.bucket, Prefix: `${s.prefix}alice/box/` }))).Contents ?? []).map((o) => o.Key?.slice(`${s.prefix}alice/box/`.length));
        assert.deepEqual(keys.sort(), ['x', 'x/inside.txt'], 'both stay in the bucket, untouched');
      } finally {
        s3.destroy();
      }
    });
  });
}
