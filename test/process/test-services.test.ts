// The run's backing services (scripts/test-services.sh via scripts/run-tests.mjs) really answer:
// S3 through the SDK, PostgreSQL through psql, Redis through redis-cli, and extra radosgw
// gateways for fault tests start, serve the same buckets, die by SIGKILL and come back on their port.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { promisify } from 'node:util';
import { GetObjectCommand, ListBucketsCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { newBucket, pgService, redisService, rgwStart, rgwStop, s3Client, s3Service, skipReason } from '../helpers/services.js';

const execFileP = promisify(execFile);

/** Resolves 'refused' when nothing listens on 127.0.0.1:port, 'open' when something accepts. */
function probe(port: number): Promise<'open' | 'refused'> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.destroy();
      resolve('open');
    });
    s.once('error', (e: NodeJS.ErrnoException) => (e.code === 'ECONNREFUSED' ? resolve('refused') : reject(e)));
  });
}

test('S3: a new bucket takes an object and gives the same bytes back', { skip: skipReason('S3') }, async () => {
  const s3 = s3Client();
  try {
    const bucket = await newBucket('fc-selftest');
    assert.match(bucket, /^fc-selftest-[0-9a-f]{16}$/);
    const body = randomBytes(100_000);
    const put = await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'dir/ü file.bin', Body: body }));
    assert.ok(put.ETag, 'PutObject returns an ETag');
    const got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'dir/ü file.bin' }));
    assert.ok(Buffer.from(await got.Body!.transformToByteArray()).equals(body));
    const list = await s3.send(new ListObjectsV2Command({ Bucket: bucket }));
    assert.deepEqual(list.Contents?.map((o) => [o.Key, o.Size]), [['dir/ü file.bin', body.length]]);
    // every bucket is new and empty
    const other = await newBucket();
    assert.notEqual(other, bucket);
    assert.equal((await s3.send(new ListObjectsV2Command({ Bucket: other }))).KeyCount, 0);
  } finally {
    s3.destroy();
  }
});

test('S3 credentials reach the tests only as FC_TEST_* variables', { skip: skipReason('S3') }, () => {
  const key = s3Service()!.accessKeyId;
  for (const [k, v] of Object.entries(process.env)) {
    if (v === key) assert.ok(k.startsWith('FC_TEST_'), `${k} carries the test S3 access key`);
  }
});

test('PostgreSQL answers SELECT 1 and takes a table', { skip: skipReason('PostgreSQL') }, async () => {
  const psql = existsSync('/usr/lib/postgresql/15/bin/psql') ? '/usr/lib/postgresql/15/bin/psql' : 'psql';
  const url = pgService()!;
  const sql = 'SELECT 1; CREATE TEMP TABLE t (x int); INSERT INTO t VALUES (41), (1); SELECT sum(x) FROM t; SHOW server_version_num;';
  const { stdout } = await execFileP(psql, [url, '-X', '-q', '-At', '-v', 'ON_ERROR_STOP=1', '-c', sql], { timeout: 30_000 });
  const lines = stdout.trim().split('\n');
  assert.equal(lines[0], '1');
  assert.equal(lines[1], '42');
  assert.match(lines[2] ?? '', /^15\d{4}$/, 'PostgreSQL 15');
});

test('Redis answers PING, SET and GET', { skip: skipReason('Redis') }, async () => {
  const url = redisService()!;
  const cli = (...args: string[]) => execFileP('redis-cli', ['-u', url, ...args], { timeout: 30_000 }).then((r) => r.stdout.trim());
  assert.equal(await cli('ping'), 'PONG');
  const key = `selftest:${randomBytes(4).toString('hex')}`;
  assert.equal(await cli('set', key, 'v1', 'EX', '60'), 'OK');
  assert.equal(await cli('get', key), 'v1');
  assert.match(await cli('info', 'server'), /redis_version:7\./);
});

test('an extra radosgw gateway serves the same buckets, dies by SIGKILL and restarts on its port', { skip: skipReason('S3') }, async () => {
  const name = `selftest_${randomBytes(3).toString('hex')}`;
  const bucket = await newBucket('fc-gw');
  const gw = await rgwStart(name);
  let stopped = false;
  try {
    assert.notEqual(gw.endpoint, s3Service()!.endpoint);
    assert.match(gw.endpoint, /^http:\/\/127\.0\.0\.1:\d+$/);
    let s3 = s3Client(gw.endpoint);
    try {
      const buckets = await s3.send(new ListBucketsCommand({}));
      assert.ok(buckets.Buckets?.some((b) => b.Name === bucket), 'the extra gateway lists a bucket made through the main one');
      await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'via-gw', Body: 'hello' }));
    } finally {
      s3.destroy();
    }
    const main = s3Client();
    try {
      const got = await main.send(new GetObjectCommand({ Bucket: bucket, Key: 'via-gw' }));
      assert.equal(await got.Body!.transformToString(), 'hello');
    } finally {
      main.destroy();
    }

    assert.equal(await probe(gw.port), 'open');
    await rgwStop(name, 'KILL');
    assert.equal(await probe(gw.port), 'refused', 'the killed gateway no longer accepts connections');
    await assert.rejects(rgwStop(name), 'no pid file once stopped');

    const again = await rgwStart(name, gw.port);
    assert.equal(again.endpoint, gw.endpoint);
    s3 = s3Client(again.endpoint);
    try {
      const got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'via-gw' }));
      assert.equal(await got.Body!.transformToString(), 'hello');
    } finally {
      s3.destroy();
    }
    await assert.rejects(rgwStart(name), 'a running gateway is not started twice');
    await rgwStop(name);
    stopped = true;
    assert.equal(await probe(gw.port), 'refused');
  } finally {
    if (!stopped) await rgwStop(name, 'KILL').catch(() => {});
  }
});
