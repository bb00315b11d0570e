import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile, symlink, readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { bearer } from '../helpers/client.js';
import { rawGet, rawRequest } from '../helpers/raw-http.js';
import { s3Client } from '../helpers/services.js';

/**
 * Something outside every user's storage, to check nothing reaches it: a
 * file next to storage/ in the data dir on disk, an object at the top of
 * the app's prefix (where no user's keys are) on S3.
 */
function outside(t: TestApp): { write(text: string): Promise<void>; read(): Promise<string> } {
  const where = t.config.storage;
  if (where.kind !== 's3') {
    const file = join(t.paths.root, 'outside.txt');
    return { write: (text) => writeFile(file, text), read: () => readFile(file, 'utf8') };
  }
  const Key = `${where.prefix}outside.txt`;
  return {
    write: async (text) => void (await withS3((s3) => s3.send(new PutObjectCommand({ Bucket: where.bucket, Key, Body: text })))),
    read: () => withS3(async (s3) => (await s3.send(new GetObjectCommand({ Bucket: where.bucket, Key }))).Body?.transformToString() ?? ''),
  };
}

/** Every object key under an S3 app's prefix (relative to it), sorted. */
async function objectKeys(t: TestApp): Promise<string[]> {
  const where = t.config.storage;
  if (where.kind !== 's3') throw new Error('objectKeys is for S3 apps');
  return withS3(async (s3) => {
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const r = await s3.send(new ListObjectsV2Command({ Bucket: where.bucket, Prefix: where.prefix, ContinuationToken: token }));
      for (const o of r.Contents ?? []) keys.push((o.Key ?? '').slice(where.prefix.length));
      token = r.IsTruncated ? r.NextContinuationToken : undefined;
    } while (token);
    return keys.sort();
  });
}

async function withS3<T>(fn: (s3: ReturnType<typeof s3Client>) => Promise<T>): Promise<T> {
  const s3 = s3Client();
  try {
    return await fn(s3);
  } finally {
    s3.destroy();
  }
}

// Raw request lines: nothing between the test and the server normalizes these paths.
const HOSTILE: [string, number][] = [
  ['/storage/alice/../bob/secret.txt', 400],
  ['/storage/alice/./ok.txt', 400],
  ['/storage/alice/%2e%2e/bob/secret.txt', 400],
  ['/storage/alice/%2E%2e/bob/secret.txt', 400],
  ['/storage/alice/..%2fbob/secret.txt', 400],
  ['/storage/alice/..%2Fbob%2Fsecret.txt', 400],
  ['/storage/alice/%2e%2e%2f%2e%2e%2foutside.txt', 400],
  ['/storage/alice/..%5cbob%5csecret.txt', 400],
  ['/storage/alice/..\\bob\\secret.txt', 400],
  ['/storage/alice/a%00.txt', 400],
  ['/storage/alice/%c0%ae%c0%ae/bob/secret.txt', 400],
  ['/storage/alice/%ff%fe', 400],
  ['/storage/alice/%zz', 400],
  ['/storage/alice//ok.txt', 400],
  ['/storage/alice/ok.txt//', 400],
  ['/storage/../storage/bob/secret.txt', 400],
  ['/storage/%2e%2e/alice/ok.txt', 400],
  ['/storage/alice/%2e', 400],
  ['/storage/bob/secret.txt', 401],
  ['/storage/bob%2fsecret.txt', 401],
  ['/storage/alice/ok.txt', 200],
  ['/storage/alice/%6fk.txt', 200],
];

for (const [storage, skip] of BACKENDS) {
  describe(`storage traversal on ${storage}`, { skip }, () => {
    let t: TestApp;
    let token: string;
    before(async () => {
      t = await startApp({ users: ['alice', 'bob'], storage });
      token = (await t.login('alice')).access_token;
      await t.fs.put('ok.txt', 'fine');
      await t.fs.put('secret.txt', 'bob secret', 'bob');
      await outside(t).write('outside the storage');
    });
    after(() => t.close());

    test('traversal attempts sent raw over a socket never leave the user\'s storage', async () => {
      for (const [path, status] of HOSTILE) {
        for (const method of ['GET', 'HEAD', 'DELETE']) {
          if (method === 'DELETE' && status === 200) continue; // keep ok.txt for the other cases
          const res = await rawRequest(t.url, rawGet(path, token, method));
          assert.equal(res.status, status, `${method} ${path}`);
          assert.ok(!res.body.includes('bob secret') && !res.body.includes('outside the storage'), `${method} ${path} leaked`);
        }
      }
      assert.equal(await t.fs.text('secret.txt', 'bob'), 'bob secret');
      assert.equal(await outside(t).read(), 'outside the storage');
    });

    test('raw PUT and POST with traversal paths write nothing anywhere', async () => {
      const objectsBefore = storage === 'file' ? [] : await objectKeys(t);
      for (const [path] of HOSTILE.filter(([, s]) => s === 400)) {
        const put = await rawRequest(t.url, `PUT ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Length: 4\r\nConnection: close\r\n\r\npwnd`);
        assert.equal(put.status, 400, `PUT ${path}`);
        const body = '{"action":"CreateFolder"}';
        const post = await rawRequest(t.url, `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`);
        assert.equal(post.status, 400, `POST ${path}`);
      }
      assert.deepEqual(await t.fs.names('', 'bob'), ['secret.txt']);
      if (storage === 'file') assert.deepEqual((await readdir(t.paths.root)).filter((n) => !n.startsWith('file-cloud.db')).sort(), ['outside.txt', 'secret', 'storage', 'tmp']);
      else assert.deepEqual(await objectKeys(t), objectsBefore, 'no object was added or removed under the prefix');
      assert.equal(await outside(t).read(), 'outside the storage');
    });

    test('errors for hostile paths use the contract body', async () => {
      const res = await rawRequest(t.url, rawGet('/storage/alice/%2e%2e/x', token));
      const body = JSON.parse(res.body) as { error: string; message: string };
      assert.equal(body.error, 'invalid_path');
      assert.equal(typeof body.message, 'string');
    });

    // Symbolic links exist only on local disk.
    if (storage === 'file') {
      test('symbolic links planted on disk never lead outside the user\'s storage', async () => {
        const alice = join(t.paths.storage, 'alice');
        await symlink('/etc', join(alice, 'etc-link'));
        await symlink(join(t.paths.storage, 'bob'), join(alice, 'bob-link'));
        await symlink('../bob/secret.txt', join(alice, 'rel-link.txt'));
        await symlink(join(t.paths.root, 'outside.txt'), join(alice, 'outside-link.txt'));
        await mkdir(join(alice, 'inner'), { recursive: true });
        await writeFile(join(alice, 'inner', 'target.txt'), 'inside');
        await symlink('inner/target.txt', join(alice, 'good-link.txt'));
        const auth = bearer(token);
        for (const p of ['etc-link/passwd', 'etc-link/', 'bob-link/secret.txt', 'bob-link/', 'rel-link.txt', 'outside-link.txt']) {
          const res = await fetch(`${t.url}/storage/alice/${p}`, { headers: auth });
          assert.ok([400, 404].includes(res.status), `GET ${p}: ${res.status}`);
          const text = await res.text();
          assert.ok(!text.includes('root:') && !text.includes('bob secret') && !text.includes('outside the storage'), `GET ${p} leaked`);
        }
        for (const p of ['etc-link/evil.txt', 'bob-link/evil.txt']) {
          const res = await fetch(`${t.url}/storage/alice/${p}`, { method: 'PUT', headers: auth, body: 'evil' });
          assert.ok([400, 404, 409].includes(res.status), `PUT ${p}: ${res.status}`);
        }
        assert.deepEqual((await readdir(join(t.paths.storage, 'bob'))).sort(), ['secret.txt']);
        const del = await fetch(`${t.url}/storage/alice/bob-link/secret.txt`, { method: 'DELETE', headers: auth });
        assert.ok([400, 404].includes(del.status));
        assert.equal(await readFile(join(t.paths.storage, 'bob', 'secret.txt'), 'utf8'), 'bob secret');
        // A link that stays inside the user's own storage is followed.
        assert.equal(await (await fetch(`${t.url}/storage/alice/good-link.txt`, { headers: auth })).text(), 'inside');
        // Listings do not show links that lead outside.
        const { entries } = (await (await fetch(`${t.url}/storage/alice/`, { headers: auth })).json()) as { entries: { name: string }[] };
        const names = entries.map((e) => e.name);
        for (const n of ['etc-link', 'bob-link', 'rel-link.txt', 'outside-link.txt']) assert.ok(!names.includes(n), `listing shows ${n}`);
        assert.ok(names.includes('good-link.txt'));
      });
    }
  });
}
