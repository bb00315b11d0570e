import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startApp } from '../helpers/app.js';
import { postJson } from '../helpers/client.js';
import { LoginThrottle } from '../../src/app/login-throttle.js';

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

test('LoginThrottle: window slides and Retry-After counts down to the oldest attempt', () => {
  const th = new LoginThrottle(2, 60_000);
  assert.equal(th.hit('a', 0), 0);
  assert.equal(th.hit('a', 10_000), 0);
  assert.equal(th.hit('a', 20_000), 40);
  assert.equal(th.hit('b', 20_000), 0, 'other addresses are independent');
  assert.equal(th.hit('a', 60_001), 0, 'the first attempt left the window');
  assert.equal(th.hit('a', 60_002), 10);
});

test('LoginThrottle: memory is bounded by maxKeys', () => {
  const th = new LoginThrottle(1, 60_000, 3);
  for (const k of ['a', 'b', 'c', 'd']) th.hit(k, 0);
  assert.equal(th.hit('a', 1), 0, 'the oldest key was dropped');
  assert.ok(th.hit('d', 1) > 0);
});
