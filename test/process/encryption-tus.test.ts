// Encrypted tus uploads (CONTRACT "Encryption at rest": tus uploads resume after a restart), against
// the real binary on local disk and on S3: bytes are encrypted as they arrive, PATCHes that end
// mid-chunk leave no plaintext in staging, a SIGKILL and restart between PATCHes resumes at exactly
// the recorded offset, and the file reads back byte for byte.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { bearer, login } from '../helpers/client.js';
import { ADMIN_PASSWORD, runCli, s3ServerOptions, startServer, type ServerProcess } from '../helpers/server.js';
import { s3Client, skipReason } from '../helpers/services.js';
import { CHUNK_SIZE } from '../../src/lib/encryption/format.js';

const MARK = 'PLAINTEXT-MARKER-tus51';
const TUS = { 'tus-resumable': '1.0.0' };

/** Every stored byte of a data dir's storage and staging (local: storage/ and tmp/; S3: the whole prefix). */
async function everythingStored(dataDir: string, s3?: { bucket: string; prefix: string }): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  if (!s3) {
    for (const sub of ['storage', 'tmp']) {
      const root = join(dataDir, sub);
      for (const e of await readdir(root, { recursive: true, withFileTypes: true }).catch(() => [])) {
        if (e.isFile()) out.set(join(e.parentPath, e.name).slice(dataDir.length), await readFile(join(e.parentPath, e.name)));
      }
    }
    return out;
  }
  let token: string | undefined;
  do {
    const r = await s3Client().send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: s3.prefix, ContinuationToken: token }));
    for (const o of r.Contents ?? []) out.set(o.Key!, Buffer.from(await (await s3Client().send(new GetObjectCommand({ Bucket: s3.bucket, Key: o.Key }))).Body!.transformToByteArray()));
    token = r.NextContinuationToken;
  } while (token);
  return out;
}

const plaintextIn = async (dataDir: string, s3?: { bucket: string; prefix: string }) => [...(await everythingStored(dataDir, s3))].filter(([, b]) => b.includes(MARK)).map(([k]) => k);

for (const [storage, skip] of [['file', undefined], ['s3', skipReason('S3')]] as const) {
  test(`an encrypted tus upload on ${storage}: PATCHes ending mid-chunk leave no plaintext in staging, a SIGKILL and restart resume exactly, the file reads back byte for byte`, { skip }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fc-enc-tus-'));
    const dataDir = join(dir, 'data');
    const s3 = storage === 's3' ? await s3ServerOptions() : undefined;
    const keyFile = join(dir, 'key');
    assert.equal((await runCli(['encryption', 'keygen', keyFile])).code, 0);
    const start = () => startServer({ dataDir, args: [...(s3?.args ?? []), '--encryption-key-file', keyFile], env: s3?.env ?? {} });
    let server: ServerProcess | undefined;
    try {
      server = await start();
      const auth = bearer((await login(server.url, 'admin', ADMIN_PASSWORD)).access_token);
      const data = Buffer.alloc(3 * CHUNK_SIZE + 5000, `${MARK} `);
      // Each PATCH ends inside a chunk; the second crosses a chunk edge; the last completes the file.
      const cuts = [0, 100_000, 150_000, data.length];
      const created = await fetch(`${server.url}/tus/`, {
        method: 'POST',
        headers: { ...auth, ...TUS, 'upload-length': String(data.length), 'upload-metadata': `filename ${Buffer.from('resumed.bin').toString('base64')}` },
      });
      assert.equal(created.status, 201, await created.text());
      const path = created.headers.get('location')!;
      const patch = (url: string, from: number, to: number) =>
        fetch(`${url}${path}`, { method: 'PATCH', headers: { ...auth, ...TUS, 'content-type': 'application/offset+octet-stream', 'upload-offset': String(from) }, body: data.subarray(from, to) });

      const first = await patch(server.url, cuts[0]!, cuts[1]!);
      assert.equal(first.status, 204, await first.text());
      assert.equal(first.headers.get('upload-offset'), String(cuts[1]));
      assert.deepEqual(await plaintextIn(dataDir, s3), [], 'no plaintext in staging after a PATCH that ended mid-chunk');

      await server.stop('SIGKILL');
      server = await start();
      Object.assign(auth, bearer((await login(server.url, 'admin', ADMIN_PASSWORD)).access_token));
      const head = await fetch(`${server.url}${path}`, { method: 'HEAD', headers: { ...auth, ...TUS } });
      assert.equal(head.headers.get('upload-offset'), String(cuts[1]), 'the restarted server resumes at the recorded offset');

      for (let i = 1; i < cuts.length - 1; i++) {
        const r = await patch(server.url, cuts[i]!, cuts[i + 1]!);
        assert.equal(r.status, 204, await r.text());
        assert.equal(r.headers.get('upload-offset'), String(cuts[i + 1]));
        if (i < cuts.length - 2) assert.deepEqual(await plaintextIn(dataDir, s3), [], `no plaintext in staging after PATCH ${i + 1}`);
      }
      const got = await fetch(`${server.url}/storage/admin/resumed.bin`, { headers: auth });
      assert.equal(got.status, 200);
      assert.equal(got.headers.get('content-length'), String(data.length));
      assert.ok(Buffer.from(await got.arrayBuffer()).equals(data), 'exact bytes back');
      const edge = await fetch(`${server.url}/storage/admin/resumed.bin`, { headers: { ...auth, range: `bytes=${CHUNK_SIZE - 10}-${CHUNK_SIZE + 9}` } });
      assert.equal(edge.status, 206);
      assert.ok(Buffer.from(await edge.arrayBuffer()).equals(data.subarray(CHUNK_SIZE - 10, CHUNK_SIZE + 10)), 'a range across a chunk edge');
      assert.deepEqual(await plaintextIn(dataDir, s3), [], 'no plaintext anywhere in storage');
    } finally {
      await server?.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
}

for (const [storage, skip] of [['file', undefined], ['s3', skipReason('S3')]] as const) {
  test(`a tus upload open across a rotate on ${storage} finishes readable with the new key; the next rotate re-wraps it`, { skip }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fc-enc-tus-rot-'));
    const dataDir = join(dir, 'data');
    const s3 = storage === 's3' ? await s3ServerOptions() : undefined;
    const [k1, k2, k3] = [join(dir, 'k1'), join(dir, 'k2'), join(dir, 'k3')];
    for (const k of [k1, k2, k3]) assert.equal((await runCli(['encryption', 'keygen', k])).code, 0);
    const start = (key: string) => startServer({ dataDir, args: [...(s3?.args ?? []), '--encryption-key-file', key], env: s3?.env ?? {} });
    const rotate = (from: string, to: string) => runCli(['encryption', 'rotate', '--data-dir', dataDir, '--encryption-key-file', from, '--new-key-file', to, ...(s3?.args ?? [])], { env: s3?.env });
    let server: ServerProcess | undefined;
    try {
      server = await start(k1);
      let auth = bearer((await login(server.url, 'admin', ADMIN_PASSWORD)).access_token);
      const data = Buffer.alloc(2 * CHUNK_SIZE + 777, `${MARK} rotate `);
      const created = await fetch(`${server.url}/tus/`, {
        method: 'POST',
        headers: { ...auth, ...TUS, 'upload-length': String(data.length), 'upload-metadata': `filename ${Buffer.from('across.bin').toString('base64')}` },
      });
      assert.equal(created.status, 201, await created.text());
      const path = created.headers.get('location')!;
      const patch = (from: number, to: number) =>
        fetch(`${server!.url}${path}`, { method: 'PATCH', headers: { ...auth, ...TUS, 'content-type': 'application/offset+octet-stream', 'upload-offset': String(from) }, body: data.subarray(from, to) });
      assert.equal((await patch(0, 100_000)).status, 204);
      await server.stop();
      server = undefined;

      // The open upload's staging stays under k1 (its header is not a file's); the keyring keeps k1 for it.
      const r1 = await rotate(k1, k2);
      assert.equal(r1.code, 0, r1.stderr);
      server = await start(k2);
      auth = bearer((await login(server.url, 'admin', ADMIN_PASSWORD)).access_token);
      const head = await fetch(`${server.url}${path}`, { method: 'HEAD', headers: { ...auth, ...TUS } });
      assert.equal(head.headers.get('upload-offset'), '100000');
      const last = await patch(100_000, data.length);
      assert.equal(last.status, 204, await last.text());
      const got = await fetch(`${server.url}/storage/admin/across.bin`, { headers: auth });
      assert.equal(got.status, 200);
      assert.ok(Buffer.from(await got.arrayBuffer()).equals(data), 'exact bytes back after the rotate');
      await server.stop();
      server = undefined;

      // The file it made still names k1 in its header, read through the keyring; the next rotate re-wraps it.
      const r2 = await rotate(k2, k3);
      assert.equal(r2.code, 0, r2.stderr);
      assert.match(r2.stderr, /admin: 1 re-wrapped, 0 already under the new key/);
      server = await start(k3);
      auth = bearer((await login(server.url, 'admin', ADMIN_PASSWORD)).access_token);
      const again = await fetch(`${server.url}/storage/admin/across.bin`, { headers: auth });
      assert.ok(Buffer.from(await again.arrayBuffer()).equals(data), 'exact bytes back after the second rotate');
      assert.deepEqual(await plaintextIn(dataDir, s3), [], 'no plaintext anywhere in storage');
    } finally {
      await server?.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
}
