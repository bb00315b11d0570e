// `file-cloud user quota NAME SIZE|none` and `file-cloud index` (CONTRACT "Command line") against
// the real binary: a quota set beside a running server applies at once; index recounts usage from
// what storage really holds (files put there behind the server's back), on local disk and on S3.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { bearer, login } from '../helpers/client.js';
import { runCli, s3ServerOptions, startServer } from '../helpers/server.js';
import { s3Client, skipReason } from '../helpers/services.js';

const usageOf = async (url: string, auth: Record<string, string>) => (await (await fetch(`${url}/api/usage`, { headers: auth })).json()) as { used: number; quota: number | null };

test('user quota: sizes with units or none, applied at once by a running server; bad input → exit 2, unknown user → exit 1', async () => {
  const server = await startServer();
  try {
    const dir = ['--data-dir', server.dataDir];
    const auth = bearer((await login(server.url, 'admin', server.adminPassword)).access_token);
    let r = await runCli(['user', 'quota', 'admin', '1K', ...dir]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /1 KiB \(1024 bytes\)/);
    assert.deepEqual(await usageOf(server.url, auth), { used: 0, quota: 1024 });
    const put = (body: Buffer) => fetch(`${server.url}/storage/admin/f.bin`, { method: 'PUT', headers: auth, body });
    const refused = await put(Buffer.alloc(1025));
    assert.equal(refused.status, 507);
    assert.equal(((await refused.json()) as { error: string }).error, 'quota_exceeded');
    assert.equal((await put(Buffer.alloc(1024))).status, 201);
    r = await runCli(['user', 'quota', 'admin', 'none', ...dir]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(await usageOf(server.url, auth), { used: 1024, quota: null });
    assert.equal((await put(Buffer.alloc(4096))).status, 201, 'no quota, no limit');

    for (const bad of ['10X', 'lots', '', '1.5']) {
      r = await runCli(['user', 'quota', 'admin', bad, ...dir]);
      assert.equal(r.code, 2, `${bad}: ${r.stderr}`);
      assert.match(r.stderr, /is not a size/);
    }
    r = await runCli(['user', 'quota', 'admin', '-1G', ...dir]);
    assert.equal(r.code, 2, 'a negative size reads as an unknown option: a usage error too');
    assert.deepEqual(await usageOf(server.url, auth), { used: 4096, quota: null }, 'f.bin was replaced; refused input changed nothing');
    r = await runCli(['user', 'quota', 'admin', ...dir]);
    assert.equal(r.code, 2, 'SIZE is required');
    r = await runCli(['user', 'quota', 'nobody', '5G', ...dir]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /No user "nobody"/);
    assert.equal((await runCli(['user', 'quota', '--help'])).code, 0);
  } finally {
    await server.dispose();
  }
});

for (const [storage, skip] of [['file', undefined], ['s3', skipReason('S3')]] as const) {
  describe(`index on ${storage}`, { skip }, () => {
    test('recounts usage from what storage holds, including files put there behind the server\'s back, versions and trash', async () => {
      const s3 = storage === 's3' ? await s3ServerOptions() : undefined;
      // Versions and trash on: their bytes count against the quota, so the recount keeps them in usage.
      const server = await startServer({ args: [...(s3?.args ?? []), '--versions', '--trash-days', '7'], env: s3?.env ?? {} });
      try {
        const auth = bearer((await login(server.url, 'admin', server.adminPassword)).access_token);
        const put = async (path: string, body: Buffer) => (await fetch(`${server.url}/storage/admin/${path}`, { method: 'PUT', headers: auth, body })).status;
        assert.equal(await put('docs/via-api.bin', Buffer.alloc(3000, 1)), 201);
        // Replaced (the first content, 3000 bytes, kept as a version), and a file deleted into the trash (1000).
        assert.equal(await put('docs/via-api.bin', Buffer.alloc(3000, 3)), 201);
        assert.equal(await put('docs/gone.bin', Buffer.alloc(1000, 4)), 201);
        assert.equal((await fetch(`${server.url}/storage/admin/docs/gone.bin`, { method: 'DELETE', headers: auth })).status, 204);
        // Another tool writes into the user's storage: the server's figures cannot know.
        if (s3) {
          const client = s3Client();
          try {
            await client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: `${s3.prefix}/admin/docs/behind.bin`, Body: Buffer.alloc(5000, 2) }));
            await client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: `${s3.prefix}/admin/deep/er/behind.txt`, Body: 'x'.repeat(700) }));
          } finally {
            client.destroy();
          }
        } else {
          await writeFile(join(server.dataDir, 'storage', 'admin', 'docs', 'behind.bin'), Buffer.alloc(5000, 2));
          await mkdir(join(server.dataDir, 'storage', 'admin', 'deep', 'er'), { recursive: true });
          await writeFile(join(server.dataDir, 'storage', 'admin', 'deep', 'er', 'behind.txt'), 'x'.repeat(700));
        }
        assert.equal((await usageOf(server.url, auth)).used, 7000, 'the file, its version and the trashed file');
        const r = await runCli(['index', '--data-dir', server.dataDir, ...(s3?.args ?? [])], { env: s3?.env });
        assert.equal(r.code, 0, r.stderr);
        assert.match(r.stderr, /usage: admin uses/);
        assert.equal((await usageOf(server.url, auth)).used, 12700, 'the running server sees the recount at once: the tree, the version and the trash');
        assert.equal(await put('docs/more.bin', Buffer.alloc(500, 5)), 201);
        assert.equal((await usageOf(server.url, auth)).used, 13200, 'and keeps counting from there');
      } finally {
        await server.dispose();
      }
    });
  });
}
