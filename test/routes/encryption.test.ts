// Encryption at rest through every front end (CONTRACT "Encryption at rest"), on every backend:
// uploads by raw PUT, multipart, WebDAV and a share link's drop box leave no byte of plaintext in
// storage, and GET, Range, WebDAV, a share link and a zip give exactly the bytes uploaded; an
// altered stored file is never served and the log names it.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { bearer, postJson } from '../helpers/client.js';
import { multipartBody } from '../helpers/multipart.js';
import { s3Client } from '../helpers/services.js';
import { readZip } from '../helpers/zip-reader.js';
import * as img from '../helpers/images.js';
import { writeNewKeyFile } from '../../src/storage/encrypted/key-file.js';
import { CHUNK_SIZE, HEADER_SIZE } from '../../src/lib/encryption/format.js';

const MARK = 'PLAINTEXT-MARKER-e51';
/** Contents with the marker all through, so any stored run of plaintext would show. */
const contents = (seed: string, n: number): Buffer => {
  const unit = Buffer.from(`${MARK} ${seed} `);
  return Buffer.alloc(n, unit);
};

/** Every stored object or file of the app's storage, by its storage path. */
async function stored(t: TestApp): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  if (t.config.storage.kind !== 's3') {
    for (const root of [t.paths.storage, t.paths.tmp]) {
      const all = await readdir(root, { recursive: true, withFileTypes: true }).catch(() => []);
      for (const e of all) if (e.isFile()) out.set(join(e.parentPath, e.name).slice(root.length + 1), await readFile(join(e.parentPath, e.name)));
    }
    return out;
  }
  const { bucket, prefix } = t.config.storage;
  let token: string | undefined;
  do {
    const r = await s3Client().send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }));
    for (const o of r.Contents ?? []) out.set(o.Key!.slice(prefix.length), Buffer.from(await (await s3Client().send(new GetObjectCommand({ Bucket: bucket, Key: o.Key }))).Body!.transformToByteArray()));
    token = r.NextContinuationToken;
  } while (token);
  return out;
}

async function putStored(t: TestApp, path: string, bytes: Buffer): Promise<void> {
  if (t.config.storage.kind !== 's3') return writeFile(join(t.paths.storage, path), bytes);
  const { bucket, prefix } = t.config.storage;
  await s3Client().send(new PutObjectCommand({ Bucket: bucket, Key: prefix + path, Body: bytes }));
}

for (const [storage, skip] of BACKENDS) {
  describe(`encryption at rest on ${storage}`, { skip }, () => {
    let t: TestApp;
    let keyDir: string;
    let auth: Record<string, string>;
    const log = new PassThrough();
    let logged = '';
    log.on('data', (d: Buffer) => (logged += d.toString()));
    before(async () => {
      keyDir = await mkdtemp(join(tmpdir(), 'fc-key-'));
      await writeNewKeyFile(join(keyDir, 'key'));
      t = await startApp({ users: ['alice'], storage, flags: { encryptionKeyFile: join(keyDir, 'key') }, logTo: log });
      auth = bearer((await t.login('alice')).access_token);
    });
    after(async () => {
      await t.close();
      await rm(keyDir, { recursive: true, force: true });
    });

    const big = contents('big', 3 * CHUNK_SIZE + 1234);
    const files: Record<string, Buffer> = {
      'proj/raw.bin': big,
      'proj/mp.txt': contents('multipart', 70_000),
      'proj/dav.txt': contents('webdav', 5000),
      'drop/visitor.txt': contents('visitor', 100_000),
    };

    test('uploads by raw PUT, multipart, WebDAV and a drop box link are stored without a byte of plaintext', async () => {
      assert.equal((await fetch(`${t.url}/storage/alice/proj/raw.bin`, { method: 'PUT', headers: auth, body: files['proj/raw.bin'] })).status, 201);
      const mp = multipartBody([{ filename: 'mp.txt', content: files['proj/mp.txt']! }]);
      assert.equal((await fetch(`${t.url}/storage/alice/proj/`, { method: 'PUT', headers: { ...auth, 'content-type': mp.contentType }, body: mp.body })).status, 201);
      assert.equal((await fetch(`${t.url}/dav/alice/proj/dav.txt`, { method: 'PUT', headers: auth, body: files['proj/dav.txt'] })).status, 201);
      await t.fs.mkdir('drop');
      const drop = (await (await postJson(`${t.url}/api/shares`, { path: '/alice/drop', upload_only: true }, auth)).json()) as { id: string };
      const dropped = multipartBody([{ filename: 'visitor.txt', content: files['drop/visitor.txt']! }]);
      assert.equal((await fetch(`${t.url}/share/${drop.id}/`, { method: 'PUT', headers: { 'content-type': dropped.contentType }, body: dropped.body })).status, 201);
      const all = await stored(t);
      for (const path of Object.keys(files)) assert.ok(all.has(`alice/${path}`), `alice/${path} is stored`);
      for (const [path, bytes] of all) assert.ok(!bytes.includes(MARK), `${path} holds no plaintext`);
      const listing = (await (await fetch(`${t.url}/storage/alice/proj/`, { headers: { ...auth, accept: 'application/json' } })).json()) as { entries: { name: string; size: number }[] };
      for (const e of listing.entries) assert.equal(e.size, files[`proj/${e.name}`]?.length, `${e.name}: the listing shows the plaintext size`);
    });

    test('GET, Range (first, middle, suffix, across a chunk edge), WebDAV, a share link and a zip give the exact bytes', async () => {
      for (const [path, bytes] of Object.entries(files)) {
        const r = await fetch(`${t.url}/storage/alice/${path}`, { headers: auth });
        assert.equal(r.headers.get('content-length'), String(bytes.length), path);
        assert.deepEqual(Buffer.from(await r.arrayBuffer()), bytes, path);
      }
      const n = big.length;
      const ranges: [string, number, number][] = [
        ['bytes=0-99', 0, 99],
        [`bytes=${CHUNK_SIZE + 10}-${CHUNK_SIZE + 5000}`, CHUNK_SIZE + 10, CHUNK_SIZE + 5000],
        [`bytes=${CHUNK_SIZE - 3}-${CHUNK_SIZE + 2}`, CHUNK_SIZE - 3, CHUNK_SIZE + 2],
        ['bytes=-700', n - 700, n - 1],
      ];
      for (const [range, start, end] of ranges) {
        const r = await fetch(`${t.url}/storage/alice/proj/raw.bin`, { headers: { ...auth, range } });
        assert.equal(r.status, 206, range);
        assert.equal(r.headers.get('content-range'), `bytes ${start}-${end}/${n}`);
        assert.deepEqual(Buffer.from(await r.arrayBuffer()), big.subarray(start, end + 1), range);
      }
      const dav = await fetch(`${t.url}/dav/alice/proj/raw.bin`, { headers: { ...auth, range: `bytes=${CHUNK_SIZE}-` } });
      assert.deepEqual(Buffer.from(await dav.arrayBuffer()), big.subarray(CHUNK_SIZE));
      const link = (await (await postJson(`${t.url}/api/shares`, { path: '/alice/proj' }, auth)).json()) as { id: string };
      const shared = await fetch(`${t.url}/share/${link.id}/raw.bin`);
      assert.deepEqual(Buffer.from(await shared.arrayBuffer()), big);
      const zip = readZip(Buffer.from(await (await fetch(`${t.url}/storage/alice/proj/?zip=1`, { headers: auth })).arrayBuffer()));
      for (const name of ['raw.bin', 'mp.txt', 'dav.txt']) {
        const entry = zip.find((e) => e.name === `proj/${name}` || e.name === name);
        assert.ok(entry, `${name} in the zip (${zip.map((e) => e.name).join(', ')})`);
        assert.deepEqual(entry.data, files[`proj/${name}`], name);
      }
    });

    test('tus uploads in PATCHes that end inside a chunk, at a chunk edge and with a checksum, on whichever node takes them: no plaintext in staging, the exact bytes back', async () => {
      const TUS = { 'tus-resumable': '1.0.0' };
      const sha1 = (b: Buffer) => `sha1 ${createHash('sha1').update(b).digest('base64')}`;
      // Lengths: one ending inside a chunk, one a whole number of chunks (its last chunk was staged whole).
      for (const [name, data, cuts] of [
        ['tus/odd.bin', contents('tus-odd', 2 * CHUNK_SIZE + 777), [0, 1000, CHUNK_SIZE, CHUNK_SIZE + 5, 2 * CHUNK_SIZE + 777]],
        ['tus/even.bin', contents('tus-even', 2 * CHUNK_SIZE), [0, 70_000, 2 * CHUNK_SIZE]],
      ] as const) {
        const created = await fetch(`${t.url}/tus/`, {
          method: 'POST',
          headers: { ...auth, ...TUS, 'upload-length': String(data.length), 'upload-metadata': `filename ${Buffer.from(name.split('/')[1]!).toString('base64')},folder ${Buffer.from('/alice/tus').toString('base64')}` },
        });
        assert.equal(created.status, 201, await created.text());
        const path = created.headers.get('location')!;
        for (let i = 0; i + 1 < cuts.length; i++) {
          const chunk = data.subarray(cuts[i], cuts[i + 1]);
          const patch = (checksum?: string) =>
            fetch(`${t.origin}${path}`, { method: 'PATCH', headers: { ...auth, ...TUS, 'content-type': 'application/offset+octet-stream', 'upload-offset': String(cuts[i]), ...(checksum ? { 'upload-checksum': checksum } : {}) }, body: chunk });
          if (i === 1) assert.equal((await patch(sha1(Buffer.from('not this')))).status, 460, 'a mismatched checksum discards the chunk');
          const r = await patch(i === 1 ? sha1(chunk) : undefined);
          assert.equal(r.status, 204, await r.text());
          assert.equal(r.headers.get('upload-offset'), String(cuts[i + 1]), name);
          for (const [stored_, bytes] of await stored(t)) assert.ok(!bytes.includes(MARK), `${stored_} holds no plaintext after PATCH ${i + 1} of ${name}`);
        }
        const got = await fetch(`${t.url}/storage/alice/${name}`, { headers: auth });
        assert.equal(got.headers.get('content-length'), String(data.length), name);
        assert.ok(Buffer.from(await got.arrayBuffer()).equals(data), `${name}: exact bytes back`);
      }
    });

    test('tus uploads of deferred length whose length ends inside a chunk and past an S3 staging segment (8 MiB): committed, the exact bytes back', async () => {
      const TUS = { 'tus-resumable': '1.0.0' };
      const big = 8 * 1024 * 1024 + 100_000;
      // [name, data, PATCHes as [from, to, declare the length with it]]: the length comes with the last
      // bytes, or alone in an empty PATCH after them; either way it ends inside a chunk (and on S3 inside
      // the staging's second segment, or its only one).
      const cases: [string, Buffer, [number, number, boolean][]][] = [
        ['deferred-big.bin', contents('deferred-big', big + 50_001), [[0, big, false], [big, big + 50_001, true]]],
        ['deferred-late.bin', contents('deferred-late', 3 * CHUNK_SIZE + 4321), [[0, 70_000, false], [70_000, 3 * CHUNK_SIZE + 4321, false], [3 * CHUNK_SIZE + 4321, 3 * CHUNK_SIZE + 4321, true]]],
      ];
      for (const [name, data, patches] of cases) {
        const created = await fetch(`${t.url}/tus/`, {
          method: 'POST',
          headers: { ...auth, ...TUS, 'upload-defer-length': '1', 'upload-metadata': `filename ${Buffer.from(name).toString('base64')},folder ${Buffer.from('/alice/tus').toString('base64')}` },
        });
        assert.equal(created.status, 201, await created.text());
        const path = created.headers.get('location')!;
        for (const [from, to, declare] of patches) {
          const r = await fetch(`${t.origin}${path}`, {
            method: 'PATCH',
            headers: { ...auth, ...TUS, 'content-type': 'application/offset+octet-stream', 'upload-offset': String(from), ...(declare ? { 'upload-length': String(data.length) } : {}) },
            body: data.subarray(from, to),
          });
          assert.equal(r.status, 204, `${name} ${from}-${to}: ${await r.text()}`);
          assert.equal(r.headers.get('upload-offset'), String(to), name);
        }
        const got = await fetch(`${t.url}/storage/alice/tus/${name}`, { headers: auth });
        assert.equal(got.status, 200, name);
        assert.equal(got.headers.get('content-length'), String(data.length), name);
        assert.ok(Buffer.from(await got.arrayBuffer()).equals(data), `${name}: exact bytes back`);
        const tail = await fetch(`${t.url}/storage/alice/tus/${name}`, { headers: { ...auth, range: `bytes=${data.length - CHUNK_SIZE - 10}-` } });
        assert.equal(tail.status, 206, name);
        assert.ok(Buffer.from(await tail.arrayBuffer()).equals(data.subarray(data.length - CHUNK_SIZE - 10)), `${name}: the last chunk and the one before`);
      }
      for (const [path, bytes] of await stored(t)) assert.ok(!bytes.includes(MARK), `${path} holds no plaintext`);
    });

    test('a thumbnail is drawn from the decrypted image', async () => {
      const png = await img.pngWithAlpha();
      assert.equal((await fetch(`${t.url}/storage/alice/pics/a.png`, { method: 'PUT', headers: auth, body: png })).status, 201);
      assert.ok(!(await stored(t)).get('alice/pics/a.png')!.includes(png.subarray(0, 64)), 'the image is stored encrypted');
      const thumb = await fetch(`${t.url}/storage/alice/pics/a.png?thumbnail=256`, { headers: auth });
      assert.equal(thumb.status, 200);
      const d = await img.describe(Buffer.from(await thumb.arrayBuffer()));
      assert.deepEqual([d.width, d.height, d.hasAlpha], [256, 256, true]);
    });

    test('an altered stored file is never served: the read fails and the log names the file', { skip: storage === 'cluster' ? 'the cluster logs in its own processes; the in-process backends show it' : undefined }, async () => {
      await t.fs.put('t/victim.bin', big);
      const original = (await stored(t)).get('alice/t/victim.bin')!;
      const altered = Buffer.from(original);
      altered[HEADER_SIZE + 2 * (CHUNK_SIZE + 16) + 100]! ^= 1;
      await putStored(t, 'alice/t/victim.bin', altered);
      logged = '';
      const ranged = await fetch(`${t.url}/storage/alice/t/victim.bin`, { headers: { ...auth, range: `bytes=${2 * CHUNK_SIZE}-${2 * CHUNK_SIZE + 200}` } });
      assert.equal(ranged.status, 502);
      assert.equal(((await ranged.json()) as { error: string }).error, 'storage_failed');
      const whole = await fetch(`${t.url}/storage/alice/t/victim.bin`, { headers: auth });
      const got = await whole.arrayBuffer().then((b) => Buffer.from(b), () => undefined);
      assert.ok(got === undefined || !got.equals(big), 'the whole file is not served');
      assert.ok(got === undefined || got.length <= 2 * CHUNK_SIZE, 'nothing of the altered chunk or after it is sent');
      assert.match(logged, /"file":"alice\/t\/victim.bin"/);
      assert.match(logged, /failed to decrypt/);
    });
  });
}
