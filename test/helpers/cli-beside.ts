import { s3Service } from './services.js';
import { runCli } from './server.js';
import type { TestApp } from './app.js';

/**
 * A `file-cloud` command (the real binary) beside a running test app, on its data dir, storage and
 * database: as an administrator runs one next to a live server.
 */
export async function cliBeside(t: TestApp, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const all = [...args, '--data-dir', t.dataDir];
  const env: Record<string, string> = {};
  const storage = t.config.storage;
  if (storage.kind === 's3') {
    const s = s3Service();
    if (!s) throw new Error('no test S3 service; guard the test with skipReason("S3")');
    const prefix = storage.prefix.replace(/\/$/, '');
    all.push('--storage', `s3://${storage.bucket}/${prefix}?endpoint=${encodeURIComponent(storage.endpoint ?? '')}&region=${storage.region}&path_style=true`);
    Object.assign(env, { AWS_ACCESS_KEY_ID: s.accessKeyId, AWS_SECRET_ACCESS_KEY: s.secretAccessKey, AWS_REGION: s.region });
  }
  if (t.config.database.kind === 'postgres') all.push('--database', t.config.database.url);
  return runCli(all, { env });
}
