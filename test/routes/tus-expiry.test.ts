// tus uploads that are left unfinished expire after --upload-expiry: the leader's storage sweep
// removes them with their staged bytes, and they answer 404 afterwards. And a PATCH that began
// with a valid token finishes although the token expires while its bytes flow.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { BACKENDS, startApp, s3Credentials, type TestApp } from '../helpers/app.js';
import { bearer } from '../helpers/client.js';
import { createS3Client } from '../../src/storage/s3/client.js';
import { storageSweepIntervalMs } from '../../src/app/build-app.js';
import { LEADER_HANDOVER_MS } from '../../src/cluster/leader.js';

const TUS = { 'tus-resumable': '1.0.0' };
const meta = (name: string) => `filename ${Buffer.from(name).toString('base64')}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What is left of resumable staging: the files in data/tmp/tus, or the objects of the reserved S3 area. */
async function stagingLeft(t: TestApp): Promise<string[]> {
  const storage = t.config.storage;
  if (storage.kind === 'file') return readdir(join(t.paths.tmp, 'tus')).catch(() => []);
  const s3 = createS3Client(storage, s3Credentials());
  try {
    const r = await s3.send(new ListObjectsV2Command({ Bucket: storage.bucket, Prefix: `${storage.prefix}.file-cloud/tus/` }));
    return (r.Contents ?? []).map((o) => o.Key as string);
  } finally {
    s3.destroy();
  }
}

/**
 * How long an expired upload may stay, as the product states it (docs/operations.md "Background
 * upkeep"): its expiry, then one sweep interval; on a cluster the sweep runs on the leader, which
 * a deployment has again within the hand-over bound (in-process apps always lead). A sweep also
 * takes time to run, and may still be running one that began before the expiry: SWEEP_RUN_MS
 * allows for two, on a busy machine.
 */
const SWEEP_RUN_MS = 10_000;
const sweptWithin = (t: TestApp) => t.config.uploadExpiry * 1000 + storageSweepIntervalMs(t.config) + (t.storage === 'cluster' ? LEADER_HANDOVER_MS : 0) + 2 * SWEEP_RUN_MS;

/** Polls until the staging is gone, for as long as the product's bound allows; what is left then. */
async function stagingAfterSweep(t: TestApp): Promise<string[]> {
  const deadline = Date.now() + sweptWithin(t);
  let left = await stagingLeft(t);
  while (left.length > 0 && Date.now() < deadline) {
    await sleep(200);
    left = await stagingLeft(t);
  }
  return left;
}

for (const [storage, skip] of BACKENDS) {
  describe(`tus expiry on ${storage}`, { skip }, () => {
    let t: TestApp;
    let auth: Record<string, string>;
    before(async () => {
      // Expiry of 2 s: the sweep then runs every second (storageSweepIntervalMs).
      t = await startApp({ storage, users: ['alice'], flags: { uploadExpiry: '2' } });
      auth = bearer((await t.login('alice')).access_token);
    });
    after(async () => t?.close());

    test('an unfinished upload expires: swept with its staging, 404 afterwards, nothing visible', async () => {
      const created = await fetch(`${t.url}/tus/`, { method: 'POST', headers: { ...auth, ...TUS, 'upload-length': String(10 * 1024 * 1024), 'upload-metadata': meta('never.bin') } });
      assert.equal(created.status, 201);
      const location = created.headers.get('location') as string;
      const expires = Date.parse(created.headers.get('upload-expires') ?? '');
      assert.ok(expires > Date.now() && expires <= Date.now() + 3000, 'Upload-Expires is --upload-expiry ahead');
      const p = await fetch(`${t.origin}${location}`, { method: 'PATCH', headers: { ...auth, ...TUS, 'content-type': 'application/offset+octet-stream', 'upload-offset': '0' }, body: Buffer.alloc(9 * 1024 * 1024, 7) });
      assert.equal(p.status, 204);
      assert.ok((await stagingLeft(t)).length > 0, 'staged bytes exist while the upload lives');
      assert.deepEqual(await stagingAfterSweep(t), [], `the sweep removed the staging within ${sweptWithin(t)} ms`);
      assert.equal((await fetch(`${t.origin}${location}`, { method: 'HEAD', headers: { ...auth, ...TUS } })).status, 404);
      const late = await fetch(`${t.origin}${location}`, { method: 'PATCH', headers: { ...auth, ...TUS, 'content-type': 'application/offset+octet-stream', 'upload-offset': String(9 * 1024 * 1024) }, body: 'x' });
      assert.equal(late.status, 404);
      assert.deepEqual(await t.fs.names(''), []);
    });

    test('an unfinished upload holds its length against the quota until it expires and is swept, then gives it back', async () => {
      await t.store.usage.setQuota('alice', ((await t.store.usage.get('alice'))?.used ?? 0) + 10 * 1024);
      try {
        const created = await fetch(`${t.url}/tus/`, { method: 'POST', headers: { ...auth, ...TUS, 'upload-length': String(8 * 1024), 'upload-metadata': meta('held.bin') } });
        assert.equal(created.status, 201);
        const put = () => fetch(`${t.url}/storage/alice/after.bin`, { method: 'PUT', headers: auth, body: Buffer.alloc(5 * 1024, 1) });
        assert.equal((await put()).status, 507, 'the open upload holds 8 of the 10 KiB');
        // Given back when the sweep removes it: within the product's bound, as the staging above.
        const deadline = Date.now() + sweptWithin(t);
        let staged = (await t.store.usage.get('alice'))?.staged;
        while (staged !== 0 && Date.now() < deadline) {
          await sleep(200);
          staged = (await t.store.usage.get('alice'))?.staged;
        }
        assert.equal(staged, 0, `the sweep gave the bytes back within ${sweptWithin(t)} ms`);
        assert.equal((await put()).status, 201);
        assert.equal((await fetch(`${t.url}/storage/alice/after.bin`, { method: 'DELETE', headers: auth })).status, 204);
      } finally {
        await t.store.usage.setQuota('alice', null);
      }
    });

    test('staging whose upload record is gone (a crash between the two) is swept once it is older than the expiry', async () => {
      const orphan = '7d1e0c3a-5b2f-4e8d-9c6a-1f2e3d4c5b6a';
      await t.backend.resumable.create(orphan);
      await t.backend.resumable.append(orphan, 0, Readable.from([Buffer.from('orphaned bytes')]), { maxBytes: 100 });
      assert.ok((await stagingLeft(t)).length > 0);
      assert.deepEqual(await stagingAfterSweep(t), [], `swept within ${sweptWithin(t)} ms`);
    });

    test('another deployment on the same Redis does not stop this one\'s sweep: each has its own leader', { skip: storage !== 'cluster' && 'only a cluster deployment shares a Redis' }, async () => {
      // Started after t, whose leader already holds its lease: a lease both shared would leave this one without a leader for as long as t lives.
      const other = await startApp({ storage, users: ['bob'], flags: { uploadExpiry: '2' } });
      try {
        const bob = bearer((await other.login('bob')).access_token);
        const created = await fetch(`${other.url}/tus/`, { method: 'POST', headers: { ...bob, ...TUS, 'upload-length': '100', 'upload-metadata': meta('left.bin') } });
        assert.equal(created.status, 201);
        const location = created.headers.get('location') as string;
        const p = await fetch(`${other.origin}${location}`, { method: 'PATCH', headers: { ...bob, ...TUS, 'content-type': 'application/offset+octet-stream', 'upload-offset': '0' }, body: Buffer.alloc(50, 1) });
        assert.equal(p.status, 204);
        assert.ok((await stagingLeft(other)).length > 0);
        assert.deepEqual(await stagingAfterSweep(other), [], `the other deployment swept its own upload within ${sweptWithin(other)} ms`);
      } finally {
        await other.close();
      }
    });
  });
}

describe('tus and token expiry', () => {
  let t: TestApp;
  before(async () => {
    t = await startApp({ users: ['alice'], flags: { accessTokenTtl: '2' } });
  });
  after(async () => t?.close());

  test('a PATCH that began with a valid token finishes although the token expires meanwhile', async () => {
    const auth = bearer((await t.login('alice')).access_token);
    const created = await fetch(`${t.url}/tus/`, { method: 'POST', headers: { ...auth, ...TUS, 'upload-length': '8', 'upload-metadata': meta('slow.txt') } });
    const location = created.headers.get('location') as string;
    const body = new ReadableStream<Uint8Array>({
      async start(controller) {
        controller.enqueue(Buffer.from('1234'));
        await sleep(3000);
        controller.enqueue(Buffer.from('5678'));
        controller.close();
      },
    });
    const r = await fetch(`${t.origin}${location}`, { method: 'PATCH', headers: { ...auth, ...TUS, 'content-type': 'application/offset+octet-stream', 'upload-offset': '0' }, body, duplex: 'half' } as RequestInit);
    assert.equal(r.status, 204);
    assert.equal(r.headers.get('file-cloud-path'), '/alice/slow.txt');
    assert.equal(await t.fs.text('slow.txt'), '12345678');
    assert.equal((await fetch(`${t.origin}${location}`, { method: 'HEAD', headers: { ...auth, ...TUS } })).status, 404, 'the token has expired by now');
  });
});
