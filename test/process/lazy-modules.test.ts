import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { bearer, login } from '../helpers/client.js';
import * as img from '../helpers/images.js';
import { ADMIN_PASSWORD, s3ServerOptions } from '../helpers/server.js';
import { newDatabase, redisService, skipReason } from '../helpers/services.js';
import { spawnFileCloud } from '../kit/file-cloud-process.js';
import { MODULE_LOG_NODE_ARGS, packagesLoaded } from '../kit/module-log.js';

/**
 * A deployment loads only what it uses (issue 53): each of these packages costs every serving
 * process memory (docs/performance.md "Memory"), and is loaded when its option is set or, for
 * libvips, with the first thumbnail.
 */
const BY_OPTION = { s3: '@aws-sdk/client-s3', postgres: 'pg', redis: 'ioredis', oidc: 'openid-client', tracing: '@opentelemetry/sdk-trace', tracingApi: '@opentelemetry/api', metrics: 'prom-client' } as const;
const LIBVIPS = 'sharp';

/** Runs the real binary with the module log, signs in, stores and reads an image and lists its folder; then `more` (with the log). */
async function serveAndUse(args: string[], env: Record<string, string>, more: (url: string, auth: Record<string, string>, loaded: () => Promise<Set<string>>) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'fc-lazy-'));
  const log = join(dir, 'modules.log');
  const fc = await spawnFileCloud({ dataDir: join(dir, 'data'), args, env: { ...env, FILE_CLOUD_ADMIN_PASSWORD: ADMIN_PASSWORD, FILE_CLOUD_LOG_LEVEL: 'warn', FC_TEST_MODULE_LOG: log }, nodeArgs: MODULE_LOG_NODE_ARGS });
  try {
    const auth = bearer((await login(fc.url, 'admin', ADMIN_PASSWORD)).access_token);
    assert.equal((await fetch(`${fc.url}/storage/admin/photos/red.jpg`, { method: 'PUT', headers: auth, body: await img.jpeg(640, 480) })).status, 201);
    const got = await fetch(`${fc.url}/storage/admin/photos/red.jpg`, { headers: auth });
    assert.equal(got.status, 200);
    assert.equal((await got.arrayBuffer()).byteLength > 0, true);
    assert.equal((await fetch(`${fc.url}/storage/admin/photos/`, { headers: auth })).status, 200);
    await more(fc.url, auth, () => packagesLoaded(log));
  } finally {
    assert.equal((await fc.stop('SIGTERM', 15_000)).code, 0);
    await rm(dir, { recursive: true, force: true });
  }
}

const notLoaded = (loaded: Set<string>, names: readonly string[]) => names.filter((n) => loaded.has(n));

test('the defaults (local disk + SQLite) load no S3, PostgreSQL, Redis, OpenID, tracing or metrics package, and libvips only with the first thumbnail', async () => {
  await serveAndUse([], {}, async (url, auth, loaded) => {
    const before = await loaded();
    assert.ok(before.has('fastify') && before.has('better-sqlite3'), `the log records what is loaded: ${[...before].join(', ')}`);
    assert.deepEqual(notLoaded(before, [...Object.values(BY_OPTION), LIBVIPS]), [], 'loaded though the deployment does not use it');
    assert.equal((await fetch(`${url}/storage/admin/photos/red.jpg?thumbnail=64`, { headers: auth })).status, 200);
    assert.ok((await loaded()).has(LIBVIPS), 'libvips is loaded for the first thumbnail');
  });
});

test('on S3 + PostgreSQL + Redis a node loads the SDK, pg and ioredis, and still no OpenID, tracing or metrics package nor libvips before a thumbnail', { skip: skipReason('S3') ?? skipReason('PostgreSQL') ?? skipReason('Redis') }, async () => {
  const s3 = await s3ServerOptions();
  const args = [...s3.args, '--database', await newDatabase('lazy'), '--redis', redisService() as string];
  await serveAndUse(args, s3.env, async (_url, _auth, loaded) => {
    const now = await loaded();
    for (const used of [BY_OPTION.s3, BY_OPTION.postgres, BY_OPTION.redis]) assert.ok(now.has(used), `${used} is loaded for the option that names it`);
    assert.deepEqual(notLoaded(now, [BY_OPTION.oidc, BY_OPTION.tracing, BY_OPTION.tracingApi, BY_OPTION.metrics, LIBVIPS]), []);
  });
});
