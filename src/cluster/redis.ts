import { createRequire } from 'node:module';
import type { Redis } from 'ioredis';
import type { RateLimiter } from '../store/rate-limiter.js';
import { DependencyError } from '../lib/dependency-error.js';
import { serviceCall } from '../lib/progress.js';
import type { LeaseRepo } from '../store/leases.js';
import { holdsOf } from '../lib/process-id.js';

/**
 * What moves to Redis when `--redis` is given: the login throttle and leases
 * (locks). Every operation is one Lua script, so each is atomic on the Redis
 * server however many nodes call it at once.
 */
export function openRedis(url: string, opts: { timeoutMs?: number } = {}): Redis {
  const timeoutMs = opts.timeoutMs ?? 4000;
  // Every command has an answer or an error within commandTimeout, whether Redis is gone (the command
  // waits in the offline queue) or hung (a paused server keeps the socket open and never answers).
  // A Redis command takes a millisecond, so its bound is short: the database fallback (below) starts soon.
  // Loaded here, on first use: a deployment without --redis never holds the client's memory
  // (docs/performance.md, "Figures behind the code").
  const { Redis: Client } = createRequire(import.meta.url)('ioredis') as typeof import('ioredis');
  return new Client(url, { lazyConnect: false, maxRetriesPerRequest: 1, enableOfflineQueue: true, connectTimeout: timeoutMs, commandTimeout: Math.min(timeoutMs, REDIS_COMMAND_MS) });
}

/** The longest a Redis command may take (less when --service-timeout is shorter). */
export const REDIS_COMMAND_MS = 1500;

/** Runs one Redis call; its failure (down, hung, refused) is the coordination service's, for the error mapping. */
async function redisCall<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await serviceCall(fn);
  } catch (e) {
    throw new DependencyError('coordination', `Redis did not answer: ${(e as Error)?.message ?? String(e)}`, { cause: e });
  }
}

/** Sliding-window log in a sorted set: drop old attempts, count, add if under the limit. */
const HIT = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', tonumber(ARGV[1]) - tonumber(ARGV[2]))
local n = redis.call('ZCARD', KEYS[1])
if n < tonumber(ARGV[3]) then
  redis.call('ZADD', KEYS[1], ARGV[1], ARGV[4])
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return -1
end
return tonumber(redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')[2])`;

/** Removes one attempt recorded at the given time (members at one time are alike for the count). */
const RELEASE_HIT = `
local m = redis.call('ZRANGEBYSCORE', KEYS[1], ARGV[1], ARGV[1], 'LIMIT', 0, 1)
if m[1] then redis.call('ZREM', KEYS[1], m[1]) end
return 0`;

let seq = 0;

/** `deployment` keeps the counters of deployments that share one Redis apart (src/main.ts deploymentId). */
export function redisRateLimiter(redis: Redis, limit: number, windowMs: number, deployment?: string): RateLimiter {
  const prefix = deployment ? `fc:login:${deployment}:` : 'fc:login:';
  return {
    async hit(key, now) {
      // The member must be unique per attempt: two attempts in the same millisecond both count.
      const oldest = Number(await redisCall(() => redis.eval(HIT, 1, `${prefix}${key}`, now, windowMs, limit, `${now}:${process.pid}:${seq++}:${Math.random()}`)));
      return oldest < 0 ? 0 : Math.max(1, Math.ceil((oldest + windowMs - now) / 1000));
    },
    async release(key, at) {
      await redisCall(() => redis.eval(RELEASE_HIT, 1, `${prefix}${key}`, at));
    },
  };
}

const ACQUIRE = `
local cur = redis.call('GET', KEYS[1])
if cur == false or cur == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0`;
const RENEW = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0`;
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

/** KEYS: the names, then the names around (ARGV[3] of them); ARGV: owner, ttl, how many names. All or none. */
const ACQUIRE_ALL = `
local n = tonumber(ARGV[3])
for i = n + 1, #KEYS do
  if redis.call('EXISTS', KEYS[i]) == 1 then return 0 end
end
for i = 1, n do
  local cur = redis.call('GET', KEYS[i])
  if cur ~= false and cur ~= ARGV[1] then return 0 end
end
for i = 1, n do redis.call('SET', KEYS[i], ARGV[1], 'PX', ARGV[2]) end
return 1`;
const RELEASE_ALL = `
for i = 1, #KEYS do
  if redis.call('GET', KEYS[i]) == ARGV[1] then redis.call('DEL', KEYS[i]) end
end
return 0`;

/** KEYS: lease keys; ARGV[1]: how the owners to free begin. Each key checked and deleted in one step. */
const RELEASE_HELD_BY = `
local freed = 0
for i = 1, #KEYS do
  local cur = redis.call('GET', KEYS[i])
  if cur ~= false and string.sub(cur, 1, #ARGV[1]) == ARGV[1] then
    redis.call('DEL', KEYS[i])
    freed = freed + 1
  end
end
return freed`;

/** Leases as Redis keys with an expiry; owner checks in Lua, so only the holder renews or frees one. */
export function redisLeaseRepo(redis: Redis, now: () => number = Date.now): LeaseRepo {
  const ttl = (expiresAt: number, at = now()) => Math.max(1, Math.round(expiresAt - at));
  return {
    acquire: async (name, owner, at, expiresAt) => Number(await redisCall(() => redis.eval(ACQUIRE, 1, `fc:lease:${name}`, owner, ttl(expiresAt, at)))) === 1,
    renew: async (name, owner, expiresAt) => Number(await redisCall(() => redis.eval(RENEW, 1, `fc:lease:${name}`, owner, ttl(expiresAt)))) === 1,
    release: async (name, owner) => void (await redisCall(() => redis.eval(RELEASE, 1, `fc:lease:${name}`, owner))),
    // One script: Redis runs it whole before any other command, so the look around and the names taken are one step.
    async acquireAll(names, owner, at, expiresAt, around) {
      const own = [...new Set(names)];
      if (own.length === 0) return true;
      const keys = [...own, ...around].map((n) => `fc:lease:${n}`);
      return Number(await redisCall(() => redis.eval(ACQUIRE_ALL, keys.length, ...keys, owner, ttl(expiresAt, at), own.length))) === 1;
    },
    async releaseAll(names, owner) {
      if (names.length === 0) return;
      await redisCall(() => redis.eval(RELEASE_ALL, names.length, ...names.map((n) => `fc:lease:${n}`), owner));
    },
    // A lease's key lives exactly as long as the lease (PX): present is held.
    async heldOf(names) {
      if (names.length === 0) return [];
      const values = await redisCall(() => redis.mget(names.map((n) => `fc:lease:${n}`)));
      return names.filter((_, i) => values[i] !== null);
    },
    async heldWithin(prefix) {
      // SCAN walks the whole key space, which here holds leases and little else.
      const pattern = `fc:lease:${prefix.replace(/[*?[\]\\]/g, (c) => `\\${c}`)}*`;
      const held: string[] = [];
      let cursor = '0';
      do {
        const [next, keys] = await redisCall(() => redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000));
        cursor = next;
        held.push(...keys.map((k) => k.slice('fc:lease:'.length)));
      } while (cursor !== '0');
      return [...new Set(held)];
    },
    async releaseHeldBy(process) {
      // Rare (a death): a SCAN of every lease, each page's keys checked by owner in one script.
      let freed = 0;
      let cursor = '0';
      do {
        const [next, keys] = await redisCall(() => redis.scan(cursor, 'MATCH', 'fc:lease:*', 'COUNT', 1000));
        cursor = next;
        if (keys.length > 0) freed += Number(await redisCall(() => redis.eval(RELEASE_HELD_BY, keys.length, ...keys, holdsOf(process))));
      } while (cursor !== '0');
      return freed;
    },
  };
}

/**
 * When Redis fails, the login throttle and leases fall back to the database (CONTRACT: "without it
 * they live in the database"), never open. After a failure Redis is left alone for RETRY_MS, so
 * only the first request of an outage waits for its timeout; then it is tried again.
 */
export type RedisBreaker = {
  /** True while Redis is presumed down: go to the database straight away. */
  isOpen(now?: number): boolean;
  /** True while leases taken in the database during a recent outage may still be held. */
  recentlyDown(now?: number): boolean;
  trip(err: unknown, now?: number): void;
};

const RETRY_MS = 5_000;
/** The longest a lease lives without renewal (TTL_MS in src/storage/coordination.ts and src/cluster/leader.ts). */
const LEASE_TTL_MS = 30_000;

export function redisBreaker(onDown: (err: unknown) => void = () => undefined): RedisBreaker {
  let openUntil = 0;
  let downUntil = 0;
  return {
    isOpen: (now = Date.now()) => now < openUntil,
    recentlyDown: (now = Date.now()) => now < downUntil,
    trip(err, now = Date.now()) {
      if (now >= openUntil) onDown(err);
      openUntil = now + RETRY_MS;
      downUntil = openUntil + LEASE_TTL_MS;
    },
  };
}

/** The login throttle in Redis, or in the database while Redis fails (attempts counted either way). */
export function fallbackRateLimiter(primary: RateLimiter, fallback: RateLimiter, breaker: RedisBreaker): RateLimiter {
  async function on<T>(call: (limiter: RateLimiter) => Promise<T>): Promise<T> {
    if (!breaker.isOpen()) {
      try {
        return await call(primary);
      } catch (e) {
        breaker.trip(e);
      }
    }
    return call(fallback);
  }
  return {
    hit: (key, now) => on((l) => l.hit(key, now)),
    // An attempt taken on the other side before a switch stays counted until it leaves the window: never fewer.
    release: (key, at) => on((l) => l.release(key, at)),
  };
}

/**
 * Leases in Redis, or in the database while Redis fails. Each lease is renewed and released where it
 * was taken. For a while after an outage (a lease's lifetime) a lease taken in Redis is also taken
 * in the database, so one that another process took there during the outage still excludes it.
 * Not covered: a lease held in Redis when Redis went down is not seen by a holder that falls back
 * to the database meanwhile (docs/operations.md).
 */
export function fallbackLeaseRepo(primary: LeaseRepo, fallback: LeaseRepo, breaker: RedisBreaker): LeaseRepo {
  const where = new Map<string, 'redis' | 'db' | 'both'>();
  const id = (name: string, owner: string) => `${name}\u0000${owner}`;
  /** Held leases where acquire looks: Redis, and the database while Redis is down or lately was (leases taken there meanwhile). */
  async function heldIn(ask: (repo: LeaseRepo) => Promise<string[]>): Promise<string[]> {
    let held: string[] | undefined;
    if (!breaker.isOpen()) {
      try {
        held = await ask(primary);
      } catch (e) {
        breaker.trip(e);
      }
    }
    if (held !== undefined && !breaker.recentlyDown()) return held;
    return [...new Set([...(held ?? []), ...(await ask(fallback))])];
  }
  return {
    async acquire(name, owner, now, expiresAt) {
      if (!breaker.isOpen()) {
        let got: boolean | undefined;
        try {
          got = await primary.acquire(name, owner, now, expiresAt);
        } catch (e) {
          breaker.trip(e);
        }
        if (got === false) return false;
        if (got === true) {
          if (!breaker.recentlyDown()) {
            where.set(id(name, owner), 'redis');
            return true;
          }
          let also = false;
          try {
            also = await fallback.acquire(name, owner, now, expiresAt);
          } finally {
            if (!also) await primary.release(name, owner).catch(() => undefined);
          }
          if (also) where.set(id(name, owner), 'both');
          return also;
        }
      }
      const got = await fallback.acquire(name, owner, now, expiresAt);
      if (got) where.set(id(name, owner), 'db');
      return got;
    },
    async renew(name, owner, expiresAt) {
      const at = where.get(id(name, owner)) ?? 'redis';
      if (at === 'db') return fallback.renew(name, owner, expiresAt);
      const held = await primary.renew(name, owner, expiresAt).catch((e: unknown) => {
        breaker.trip(e);
        throw e;
      });
      if (at === 'both') return (await fallback.renew(name, owner, expiresAt)) && held;
      return held;
    },
    async acquireAll(names, owner, now, expiresAt, around) {
      const mark = (at: 'redis' | 'db' | 'both') => names.forEach((n) => where.set(id(n, owner), at));
      if (!breaker.isOpen()) {
        let got: boolean | undefined;
        try {
          got = await primary.acquireAll(names, owner, now, expiresAt, around);
        } catch (e) {
          breaker.trip(e);
        }
        if (got === false) return false;
        if (got === true) {
          if (!breaker.recentlyDown()) {
            mark('redis');
            return true;
          }
          let also = false;
          try {
            also = await fallback.acquireAll(names, owner, now, expiresAt, around);
          } finally {
            if (!also) await primary.releaseAll(names, owner).catch(() => undefined);
          }
          if (also) mark('both');
          return also;
        }
      }
      const got = await fallback.acquireAll(names, owner, now, expiresAt, around);
      if (got) mark('db');
      return got;
    },
    async releaseAll(names, owner) {
      const at = names.map((n) => where.get(id(n, owner)) ?? 'redis');
      names.forEach((n) => where.delete(id(n, owner)));
      const inDb = names.filter((_, i) => at[i] !== 'redis');
      const inRedis = names.filter((_, i) => at[i] !== 'db');
      if (inDb.length > 0) await fallback.releaseAll(inDb, owner);
      if (inRedis.length > 0) {
        await primary.releaseAll(inRedis, owner).catch((e: unknown) => {
          breaker.trip(e);
          throw e;
        });
      }
    },
    heldOf: (names, now) => heldIn((repo) => repo.heldOf(names, now)),
    heldWithin: (prefix, now) => heldIn((repo) => repo.heldWithin(prefix, now)),
    // Both stores, whatever the breaker says: the dead process may have taken some in the database during an outage.
    async releaseHeldBy(process) {
      let freed = 0;
      if (!breaker.isOpen()) freed += await primary.releaseHeldBy(process).catch((e: unknown) => (breaker.trip(e), 0));
      return freed + (await fallback.releaseHeldBy(process));
    },
    async release(name, owner) {
      const key = id(name, owner);
      const at = where.get(key) ?? 'redis';
      where.delete(key);
      if (at !== 'redis') await fallback.release(name, owner);
      if (at !== 'db') {
        await primary.release(name, owner).catch((e: unknown) => {
          breaker.trip(e);
          throw e;
        });
      }
    },
  };
}
