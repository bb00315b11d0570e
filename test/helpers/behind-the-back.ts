import assert from 'node:assert/strict';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { DeleteObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import type { TestApp } from './app.js';
import { s3Client, s3Service } from './services.js';
import { runCli } from './server.js';

/**
 * Writes (or, with `data` undefined, removes) a file of alice's in storage without the server
 * knowing, as another tool would: the disk itself, or the bucket through S3.
 */
export async function behindTheBack(t: TestApp, path: string, data: string | undefined): Promise<void> {
  const storage = t.config.storage;
  if (storage.kind === 'file') {
    const file = join(t.paths.storage, 'alice', ...path.split('/'));
    if (data === undefined) return rm(file, { force: true });
    await mkdir(dirname(file), { recursive: true });
    return writeFile(file, data);
  }
  const s3 = s3Client();
  try {
    const Key = `${storage.prefix}alice/${path}`;
    if (data === undefined) await s3.send(new DeleteObjectCommand({ Bucket: storage.bucket, Key }));
    else await s3.send(new PutObjectCommand({ Bucket: storage.bucket, Key, Body: data }));
  } finally {
    s3.destroy();
  }
}

/** `file-cloud index` (the real binary) against the test app's data dir, storage and database; its stderr. */
export async function indexCommand(t: TestApp): Promise<string> {
  const args = ['index', '--data-dir', t.dataDir];
  const env: Record<string, string> = {};
  const storage = t.config.storage;
  if (storage.kind === 's3') {
    const s = s3Service()!;
    const prefix = storage.prefix.replace(/\/$/, '');
    args.push('--storage', `s3://${storage.bucket}/${prefix}?endpoint=${encodeURIComponent(storage.endpoint ?? '')}&region=${storage.region}&path_style=true`);
    Object.assign(env, { AWS_ACCESS_KEY_ID: s.accessKeyId, AWS_SECRET_ACCESS_KEY: s.secretAccessKey, AWS_REGION: s.region });
  }
  if (t.config.database.kind === 'postgres') args.push('--database', t.config.database.url);
  const r = await runCli(args, { env });
  assert.equal(r.code, 0, r.stderr);
  return r.stderr;
}
