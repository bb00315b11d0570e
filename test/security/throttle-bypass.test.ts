import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startApp } from '../helpers/app.js';
import { postJson } from '../helpers/client.js';

/**
 * The login throttle counts the socket's address (or, behind --trust-proxy,
 * the nearest proxy's entry): no header a client controls, no change of
 * username and no malformed body resets or splits it.
 * (The basic X-Forwarded-For cases live in test/routes/login-throttle.test.ts.)
 */

const attempt = (url: string, headers: Record<string, string> = {}, username = 'alice') =>
  postJson(`${url}/auth/login`, { username, password: 'wrong-password' }, headers);

test('client-address headers of every common spelling do not bypass the throttle', async () => {
  const t = await startApp({ flags: { dev: false }, users: ['alice'] });
  try {
    const forged = (i: number): Record<string, string> => ({
      'x-forwarded-for': `10.1.0.${i}`,
      'x-real-ip': `10.2.0.${i}`,
      forwarded: `for=10.3.0.${i}`,
      'true-client-ip': `10.4.0.${i}`,
      'cf-connecting-ip': `10.5.0.${i}`,
      'x-client-ip': `10.6.0.${i}`,
    });
    for (let i = 0; i < 10; i++) assert.equal((await attempt(t.url, forged(i))).status, 401, `attempt ${i + 1}`);
    assert.equal((await attempt(t.url, forged(99))).status, 429);
  } finally {
    await t.close();
  }
});

test('malformed and oversized login bodies count against the throttle too, and changing the username does not reset it (regression)', async () => {
  const t = await startApp({ flags: { dev: false }, users: ['alice'] });
  try {
    for (let i = 0; i < 5; i++) assert.equal((await attempt(t.url, {}, `user${i}`)).status, 401);
    for (let i = 0; i < 4; i++) assert.equal((await postJson(`${t.url}/auth/login`, '{"broken')).status, 400);
    assert.equal((await postJson(`${t.url}/auth/login`, JSON.stringify({ username: 'alice', password: 'x'.repeat(100_000) }))).status, 413);
    const res = await attempt(t.url, {}, 'alice');
    assert.equal(res.status, 429);
    assert.ok(Number(res.headers.get('retry-after')) >= 1);
  } finally {
    await t.close();
  }
});

test('with --trust-proxy, rotating forged entries before the proxy\'s own one does not bypass the throttle', async () => {
  const t = await startApp({ flags: { dev: false, trustProxy: true }, users: ['alice'] });
  try {
    for (let i = 0; i < 10; i++) {
      const chain = Array.from({ length: 1 + (i % 4) }, (_, k) => `192.0.2.${i * 4 + k}`).join(', ');
      assert.equal((await attempt(t.url, { 'x-forwarded-for': `${chain}, 203.0.113.9`, 'x-real-ip': `10.0.0.${i}` })).status, 401);
    }
    assert.equal((await attempt(t.url, { 'x-forwarded-for': '1.2.3.4, 203.0.113.9' })).status, 429);
  } finally {
    await t.close();
  }
});
