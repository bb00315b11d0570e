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
