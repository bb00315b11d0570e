import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startApp } from '../helpers/app.js';
import { postJson } from '../helpers/client.js';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { storeRateLimiter, type RateLimiter } from '../../src/store/rate-limiter.js';
import { openRedis, redisRateLimiter } from '../../src/cluster/redis.js';
import { openSqliteStore } from '../../src/store/sqlite.js';
import { redisService, skipReason } from '../helpers/services.js';

const attempt = (url: string, headers: Record<string, string> = {}) => postJson(`${url}/auth/login`, { username: 'alice', password: 'wrong-password' }, headers);

test('the 11th login within a minute gets 429 with Retry-After and the contract body', async () => {
  const t = await startApp({ flags: { dev: false }, users: ['alice'] });
  try {
    for (let i = 0; i < 10; i++) assert.equal((await attempt(t.url)).status, 401, `attempt ${i + 1}`);
    const res = await attempt(t.url);
    assert.equal(res.status, 429);
    const retry = Number(res.headers.get('retry-after'));
    assert.ok(retry >= 1 && retry <= 60, `Retry-After ${retry}`);
    const body = (await res.json()) as { error: string; message: string };
    assert.equal(body.error, 'rate_limited');
    // A correct password does not get through the throttle either.
    assert.equal((await postJson(`${t.url}/auth/login`, { username: 'alice', password: 'alice-password' })).status, 429);
  } finally {
    await t.close();
  }
});

test('--dev lifts the login throttle', async () => {
  const t = await startApp({ flags: { dev: true }, users: ['alice'] });
  try {
    for (let i = 0; i < 15; i++) assert.equal((await attempt(t.url)).status, 401, `attempt ${i + 1}`);
    assert.equal((await postJson(`${t.url}/auth/login`, { username: 'alice', password: 'alice-password' })).status, 200);
  } finally {
    await t.close();
  }
});

test('--login-rate-limit sets the number of attempts', async () => {
  const t = await startApp({ flags: { dev: false, loginRateLimit: '3' }, users: ['alice'] });
  try {
    for (let i = 0; i < 3; i++) assert.equal((await attempt(t.url)).status, 401);
    assert.equal((await attempt(t.url)).status, 429);
  } finally {
    await t.close();
  }
});

test('a forged X-Forwarded-For does not bypass the throttle without --trust-proxy', async () => {
  const t = await startApp({ flags: { dev: false }, users: ['alice'] });
  try {
    for (let i = 0; i < 10; i++) assert.equal((await attempt(t.url, { 'x-forwarded-for': `10.0.0.${i}` })).status, 401);
    assert.equal((await attempt(t.url, { 'x-forwarded-for': '10.0.1.1' })).status, 429);
  } finally {
    await t.close();
  }
});

test('with --trust-proxy the nearest proxy entry is the client, and a forged leftmost entry does not help', async () => {
  const t = await startApp({ flags: { dev: false, trustProxy: true }, users: ['alice'] });
  try {
    // The proxy appends the real client (203.0.113.7); the client forged the entries before it.
    for (let i = 0; i < 10; i++) assert.equal((await attempt(t.url, { 'x-forwarded-for': `198.51.100.${i}, 203.0.113.7` })).status, 401);
    assert.equal((await attempt(t.url, { 'x-forwarded-for': '198.51.100.99, 203.0.113.7' })).status, 429);
    // Another real client behind the same proxy is not affected.
    assert.equal((await attempt(t.url, { 'x-forwarded-for': '203.0.113.8' })).status, 401);
  } finally {
    await t.close();
  }
});

/** The same window rules for every RateLimiter: the metadata store (default) and Redis. */
const limiters: [string, string | undefined, () => Promise<{ limiter: RateLimiter; close(): Promise<void> }>][] = [
  [
    'store',
    undefined,
    async () => {
      const dir = await mkdtemp(join(tmpdir(), 'fc-rate-'));
      const store = await openSqliteStore(join(dir, 'db'));
      return { limiter: storeRateLimiter(store.rates, 2), close: async () => (await store.close(), await rm(dir, { recursive: true, force: true })) };
    },
  ],
  [
    'redis',
    skipReason('Redis'),
    async () => {
      const redis = openRedis(redisService() as string);
      return { limiter: redisRateLimiter(redis, 2, 60_000), close: async () => void redis.disconnect() };
    },
  ],
];

for (const [name, skip, make] of limiters) {
  test(`${name} rate limiter: the window slides and Retry-After counts down to the oldest attempt`, { skip }, async () => {
    const { limiter, close } = await make();
    // Distinct keys per run: Redis is shared by the whole test run.
    const a = `a-${randomUUID()}`;
    const T = Date.now();
    try {
      assert.equal(await limiter.hit(a, T), 0);
      assert.equal(await limiter.hit(a, T + 10_000), 0);
      assert.equal(await limiter.hit(a, T + 20_000), 40);
      assert.equal(await limiter.hit(`b-${a}`, T + 20_000), 0, 'other addresses are independent');
      assert.equal(await limiter.hit(a, T + 60_001), 0, 'the first attempt left the window');
      assert.equal(await limiter.hit(a, T + 60_002), 10);
    } finally {
      await close();
    }
  });

  test(`${name} rate limiter: a released attempt no longer counts`, { skip }, async () => {
    const { limiter, close } = await make();
    const key = `release-${randomUUID()}`;
    const T = Date.now();
    try {
      assert.equal(await limiter.hit(key, T), 0);
      assert.equal(await limiter.hit(key, T + 1), 0);
      assert.ok((await limiter.hit(key, T + 2)) > 0, 'full');
      await limiter.release(key, T + 1);
      assert.equal(await limiter.hit(key, T + 3), 0, 'the released place is free');
      assert.ok((await limiter.hit(key, T + 4)) > 0);
      await limiter.release(`other-${key}`, T);
      assert.ok((await limiter.hit(key, T + 5)) > 0, 'a release of another key gives nothing back');
    } finally {
      await close();
    }
  });

  test(`${name} rate limiter: of 30 concurrent attempts exactly the limit pass`, { skip }, async () => {
    const { limiter, close } = await make();
    try {
      const key = `burst-${randomUUID()}`;
      const waits = await Promise.all(Array.from({ length: 30 }, () => limiter.hit(key, Date.now())));
      assert.equal(waits.filter((w) => w === 0).length, 2);
    } finally {
      await close();
    }
  });
}

test('Redis: deployments sharing one Redis count sign-ins apart; the nodes of one deployment together', { skip: skipReason('Redis') }, async () => {
  const redis = openRedis(redisService() as string);
  try {
    const [one, other] = [randomUUID(), randomUUID()];
    const nodeA = redisRateLimiter(redis, 2, 60_000, one);
    const nodeB = redisRateLimiter(redis, 2, 60_000, one);
    const elsewhere = redisRateLimiter(redis, 2, 60_000, other);
    const address = '127.0.0.1';
    const T = Date.now();
    assert.equal(await nodeA.hit(address, T), 0);
    assert.equal(await nodeB.hit(address, T + 1), 0);
    assert.ok((await nodeA.hit(address, T + 2)) > 0, 'the third attempt on either node of the deployment is refused');
    assert.equal(await elsewhere.hit(address, T + 3), 0, 'another deployment on the same Redis has its own count');
    assert.equal(await elsewhere.hit(address, T + 4), 0);
  } finally {
    redis.disconnect();
  }
});

test('Redis: heldOf names the held leases among those asked about, not the released or unknown ones', { skip: skipReason('Redis') }, async () => {
  const { redisLeaseRepo } = await import('../../src/cluster/redis.js');
  const redis = openRedis(redisService() as string);
  try {
    const leases = redisLeaseRepo(redis);
    const [a, b, gone] = [randomUUID(), randomUUID(), randomUUID()];
    const T = Date.now();
    assert.equal(await leases.acquire(a, 'x', T, T + 30_000), true);
    assert.equal(await leases.acquire(b, 'y', T, T + 30_000), true);
    assert.equal(await leases.acquire(gone, 'z', T, T + 30_000), true);
    await leases.release(gone, 'z');
    assert.deepEqual(await leases.heldOf([a, gone, randomUUID(), b], T), [a, b]);
    assert.deepEqual(await leases.heldOf([], T), []);
    // heldWithin: a prefix with glob characters of its own matches them as they are.
    const base = `within-${randomUUID()}/`;
    const names = [`${base}box`, `${base}box/a*b`, `${base}box/[x]?`, `${base}boxes/y`, `${base}b\\ox/z`];
    for (const n of names) assert.equal(await leases.acquire(n, 'w', T, T + 30_000), true);
    assert.deepEqual((await leases.heldWithin(`${base}box/`, T)).sort(), [`${base}box/[x]?`, `${base}box/a*b`]);
    assert.deepEqual((await leases.heldWithin(`${base}box/a*`, T)).sort(), [`${base}box/a*b`]);
    assert.deepEqual((await leases.heldWithin(`${base}b\\ox/`, T)).sort(), [`${base}b\\ox/z`]);
    assert.deepEqual(await leases.heldWithin(`${base}box/[`, T), [`${base}box/[x]?`]);
    for (const n of names) await leases.release(n, 'w');
    assert.deepEqual(await leases.heldWithin(base, T), []);
    await leases.release(a, 'x');
    await leases.release(b, 'y');
  } finally {
    redis.disconnect();
  }
});

test('Redis unreachable: the throttle and leases fall back to the database, never open, and answer within the Redis bound', async () => {
  const { fallbackLeaseRepo, fallbackRateLimiter, redisBreaker, redisLeaseRepo, REDIS_COMMAND_MS } = await import('../../src/cluster/redis.js');
  const { freePort } = await import('../helpers/private-services.js');
  const dir = await mkdtemp(join(tmpdir(), 'fc-rate-'));
  const store = await openSqliteStore(join(dir, 'db'));
  // Nothing listens there: every command fails (after its retry or its timeout).
  const redis = openRedis(`redis://127.0.0.1:${await freePort()}/0`, { timeoutMs: 1000 });
  redis.on('error', () => undefined);
  let trips = 0;
  const breaker = redisBreaker(() => trips++);
  try {
    const limiter = fallbackRateLimiter(redisRateLimiter(redis, 2, 60_000), storeRateLimiter(store.rates, 2), breaker);
    const key = `down-${randomUUID()}`;
    const T = Date.now();
    const started = performance.now();
    assert.equal(await limiter.hit(key, T), 0);
    assert.ok(performance.now() - started < REDIS_COMMAND_MS + 1000, `the first attempt took ${performance.now() - started} ms`);
    assert.equal(await limiter.hit(key, T + 1), 0);
    assert.ok((await limiter.hit(key, T + 2)) > 0, 'the third attempt is refused: counted in the database');
    assert.equal(trips, 1, 'one outage reported once');

    const leases = fallbackLeaseRepo(redisLeaseRepo(redis), store.leases, breaker);
    assert.equal(await leases.acquire('name', 'a', T, T + 30_000), true);
    assert.equal(await leases.acquire('name', 'b', T, T + 30_000), false, 'the database lease excludes another holder');
    assert.equal(await store.leases.acquire('name', 'c', T, T + 30_000), false, 'it lives in the database');
    await leases.release('name', 'a');
    assert.equal(await leases.acquire('name', 'b', T, T + 30_000), true);
    assert.deepEqual(await leases.heldOf(['name', 'other'], T), ['name'], 'asked which are held, the database answers');
    assert.deepEqual(await leases.heldWithin('na', T), ['name'], 'asked by prefix, the database answers');
    // A dead process's holds (taken here during the outage) are freed in the database, Redis being down.
    assert.equal(await leases.acquire('held', 'gone/1', T, T + 30_000), true);
    assert.equal(await leases.releaseHeldBy('gone'), 1, 'the hold of the dead process, freed in the database');
    assert.deepEqual(await store.leases.heldOf(['held', 'name'], T), ['name']);
  } finally {
    redis.disconnect();
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
});
