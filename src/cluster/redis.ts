import { Redis } from 'ioredis';
import type { RateLimiter } from '../app/login-throttle.js';
import type { LeaseRepo } from '../store/types.js';

/**
 * What moves to Redis when `--redis` is given: the login throttle and leases
 * (locks). Every operation is one Lua script, so each is atomic on the Redis
 * server however many nodes call it at once.
 */
export function openRedis(url: string): Redis {
  // Fail a command fast when Redis is gone instead of queueing it forever.
  return new Redis(url, { lazyConnect: false, maxRetriesPerRequest: 2, enableOfflineQueue: true, connectTimeout: 3000 });
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

let seq = 0;

export function redisRateLimiter(redis: Redis, limit: number, windowMs: number): RateLimiter {
  return {
    async hit(key, now) {
      // The member must be unique per attempt: two attempts in the same millisecond both count.
      const oldest = Number(await redis.eval(HIT, 1, `fc:login:${key}`, now, windowMs, limit, `${now}:${process.pid}:${seq++}:${Math.random()}`));
      return oldest < 0 ? 0 : Math.max(1, Math.ceil((oldest + windowMs - now) / 1000));
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

/** Leases as Redis keys with an expiry; owner checks in Lua, so only the holder renews or frees one. */
export function redisLeaseRepo(redis: Redis, now: () => number = Date.now): LeaseRepo {
  const ttl = (expiresAt: number, at = now()) => Math.max(1, Math.round(expiresAt - at));
  return {
    acquire: async (name, owner, at, expiresAt) => Number(await redis.eval(ACQUIRE, 1, `fc:lease:${name}`, owner, ttl(expiresAt, at))) === 1,
    renew: async (name, owner, expiresAt) => Number(await redis.eval(RENEW, 1, `fc:lease:${name}`, owner, ttl(expiresAt))) === 1,
    release: async (name, owner) => void (await redis.eval(RELEASE, 1, `fc:lease:${name}`, owner)),
  };
}
