// Encryption at rest shows plaintext sizes everywhere (CONTRACT "Encryption at rest": "sizes are the
// plaintext sizes"), on every backend: listings, PROPFIND, usage and the quota (refused at the exact
// plaintext boundary), the change feed, search, trash and versions, and after `file-cloud index`. A
// stored file is 80 bytes and 16 per 64 KiB larger, so every figure below would be off by that.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { bearer } from '../helpers/client.js';
import { cliBeside } from '../helpers/cli-beside.js';
import { s3Client } from '../helpers/services.js';
import { writeNewKeyFile } from '../../src/storage/encrypted/key-file.js';
import { CHUNK_SIZE, storedSize } from '../../src/lib/encryption/format.js';

/** A plain file as another tool (or File Cloud before the key) left it, of a size an encrypted file could have. */
async function putPlain(t: TestApp, path: string, bytes: Buffer): Promise<void> {
  if (t.config.storage.kind !== 's3') return writeFile(join(t.paths.storage, path), bytes);
  const { bucket, prefix } = t.config.storage;
  await s3Client().send(new PutObjectCommand({ Bucket: bucket, Key: prefix + path, Body: bytes }));
}

for (const [storage, skip] of BACKENDS) {
  describe(`encryption at rest shows plaintext sizes on ${storage}`, { skip }, () => {
    let t: TestApp;
    let keyDir: string;
    let keyFile: string;
    let auth: Record<string, string>;
    before(async () => {
      keyDir = await mkdtemp(join(tmpdir(), 'fc-key-'));
      keyFile = join(keyDir, 'key');
      await writeNewKeyFile(keyFile);
      t = await startApp({ users: ['alice'], storage, flags: { encryptionKeyFile: keyFile, versions: true, trashDays: '7' } });
      auth = bearer((await t.login('alice')).access_token);
    });
    after(async () => {
      await t?.close();
      await rm(keyDir, { recursive: true, force: true });
    });

    const put = (path: string, body: Buffer, headers: Record<string, string> = {}) => fetch(`${t.url}/storage/alice/${path}`, { method: 'PUT', headers: { ...auth, ...headers }, body });
    const used = async () => ((await (await fetch(`${t.url}/api/usage`, { headers: auth })).json()) as { used: number }).used;
    const listed = async (folder: string) => ((await (await fetch(`${t.url}/storage/alice/${folder}/`, { headers: auth })).json()) as { entries: { name: string; size: number }[] }).entries;
    const searched = async (q: string) => ((await (await fetch(`${t.url}/api/search?q=${q}`, { headers: auth })).json()) as { results: { path: string; size: number }[] }).results;

    const small = Buffer.alloc(1000, 's');
    const big = Buffer.alloc(2 * CHUNK_SIZE + 77, 'b');

    test('listing, PROPFIND, search, usage and the change feed give the plaintext size', async () => {
      const cursor = ((await (await fetch(`${t.url}/api/changes?cursor=now`, { headers: auth })).json()) as { cursor: string }).cursor;
      assert.equal((await put('sz/small.txt', small)).status, 201);
      assert.equal((await put('sz/big.bin', big)).status, 201);
      const entries = await listed('sz');
      assert.deepEqual(entries.map((e) => [e.name, e.size]), [['big.bin', big.length], ['small.txt', small.length]]);
      const dav = await fetch(`${t.url}/dav/alice/sz/`, { method: 'PROPFIND', headers: { ...auth, depth: '1' } });
      const xml = await dav.text();
      assert.equal(dav.status, 207);
      assert.match(xml, new RegExp(`<d:getcontentlength>${big.length}</d:getcontentlength>`, 'i'));
      assert.match(xml, new RegExp(`<d:getcontentlength>${small.length}</d:getcontentlength>`, 'i'));
      const head = await fetch(`${t.url}/storage/alice/sz/big.bin`, { method: 'HEAD', headers: auth });
      assert.equal(head.headers.get('content-length'), String(big.length));
      assert.deepEqual((await searched('big.bin')).map((r) => [r.path, r.size]), [['/alice/sz/big.bin', big.length]]);
      assert.equal(await used(), small.length + big.length);
      const feed = (await (await fetch(`${t.url}/api/changes?cursor=${cursor}`, { headers: auth })).json()) as { changes: { path: string; size?: number; is_file: boolean }[] };
      const sizes = Object.fromEntries(feed.changes.filter((c) => c.is_file).map((c) => [c.path, c.size]));
      assert.deepEqual(sizes, { '/alice/sz/small.txt': small.length, '/alice/sz/big.bin': big.length });
    });

    // Before any version or trash item exists: the owner's own upload would make room by deleting them.
    test('the quota refuses at the exact plaintext boundary', async () => {
      const now = await used();
      await t.store.usage.setQuota('alice', now + 5000);
      try {
        assert.equal((await put('q/fits.bin', Buffer.alloc(5000, 'f'))).status, 201);
        assert.equal(await used(), now + 5000);
        assert.equal((await put('q/one-more.bin', Buffer.alloc(1, 'x'))).status, 507);
        assert.equal((await put('q/empty.bin', Buffer.alloc(0))).status, 201);
        assert.equal(await used(), now + 5000);
      } finally {
        await t.store.usage.setQuota('alice', null);
      }
    });

    test('replace, version, copy, move, trash and purge keep usage in plaintext bytes', async () => {
      const base = await used();
      const grown = Buffer.alloc(CHUNK_SIZE + 5, 'g');
      assert.ok((await put('sz/small.txt', grown)).ok);
      const versions = ((await (await fetch(`${t.url}/storage/alice/sz/small.txt?versions`, { headers: auth })).json()) as { versions: { size: number }[] }).versions;
      assert.deepEqual(versions.map((v) => v.size), [small.length]);
      // The version is the old bytes, which count against the quota too.
      assert.equal(await used(), base + grown.length);
      const copy = await fetch(`${t.url}/storage/alice/sz`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ action: 'Copy', new_path: '/alice/sz2' }) });
      assert.equal(copy.status, 204, await copy.text());
      assert.equal(await used(), base + grown.length + grown.length + big.length);
      assert.deepEqual((await listed('sz2')).map((e) => [e.name, e.size]), [['big.bin', big.length], ['small.txt', grown.length]]);
      // A folder into the trash still counts; purged, exactly its plaintext leaves usage.
      assert.equal((await fetch(`${t.url}/storage/alice/sz2`, { method: 'DELETE', headers: auth })).status, 204);
      const items = ((await (await fetch(`${t.url}/api/trash`, { headers: auth })).json()) as { items: { id: string; size: number }[] }).items;
      assert.deepEqual(items.map((i) => i.size), [grown.length + big.length]);
      assert.equal(await used(), base + grown.length + grown.length + big.length);
      assert.equal((await fetch(`${t.url}/api/trash/${items[0]!.id}`, { method: 'DELETE', headers: auth })).status, 204);
      assert.equal(await used(), base + grown.length);
      const move = await fetch(`${t.url}/storage/alice/sz/big.bin`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ action: 'Move', new_path: '/alice/sz/small.txt', overwrite: true }) });
      assert.ok(move.status < 300, `move: ${move.status}`);
      // What the move replaced became a version: nothing left usage.
      assert.equal(await used(), base + grown.length);
    });

    test('after `file-cloud index` search, listings and usage still give plaintext sizes; a plain file from before keeps its own', async () => {
      // Plain and of a size an encrypted file could have (storedSize(n) for some n): told apart by its first bytes.
      const plain = Buffer.alloc(storedSize(300), 'p');
      await putPlain(t, 'alice/sz/plain-before.bin', plain);
      const r = await cliBeside(t, ['index', '--encryption-key-file', keyFile]);
      assert.equal(r.code, 0, r.stderr);
      const entries = Object.fromEntries((await listed('sz')).map((e) => [e.name, e.size]));
      assert.deepEqual(entries, { 'plain-before.bin': plain.length, 'small.txt': big.length });
      assert.deepEqual((await searched('small.txt')).map((x) => x.size), [big.length]);
      assert.deepEqual((await searched('plain-before')).map((x) => x.size), [plain.length]);
      assert.deepEqual((await searched('fits.bin')).map((x) => x.size), [5000]);
      // The recount counts the tree, the versions and the trash (as without encryption), each in plaintext bytes:
      // the versions are small.txt's first bytes and what the move replaced; the trash was purged.
      assert.equal(await used(), big.length + plain.length + 5000 + small.length + CHUNK_SIZE + 5);
    });
  });
}
