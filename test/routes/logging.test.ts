import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { startApp } from '../helpers/app.js';
import { bearer, postJson } from '../helpers/client.js';

test('request logs never contain tokens, passwords or the Authorization header', async () => {
  let log = '';
  const sink = new Writable({ write: (chunk, _enc, cb) => ((log += chunk.toString()), cb()) });
  const t = await startApp({ users: ['alice'], logTo: sink });
  try {
    const tokens = await t.login('alice');
    await postJson(`${t.url}/auth/refresh`, { username: 'alice', refresh_token: tokens.refresh_token });
    await fetch(`${t.url}/storage/alice/`, { headers: bearer(tokens.access_token) });
    const made = await postJson(`${t.url}/storage/alice/`, { action: 'MakePathToken' }, bearer(tokens.access_token));
    const { token } = (await made.json()) as { token: string };
    await fetch(`${t.url}/storage/alice/?token=${token}`);
    await fetch(`${t.url}/storage/alice/?download=1&token=${token}&x=1`);
    await postJson(`${t.url}/auth/login`, { username: 'alice', password: 'wrong-password-xyz' });
    await postJson(`${t.url}/auth/logout`, { username: 'alice', refresh_token: tokens.refresh_token });
    assert.ok(log.includes('/storage/alice/?token=[redacted]'), 'request URLs are logged, redacted');
    for (const secret of [tokens.access_token, tokens.refresh_token, token, 'alice-password', 'wrong-password-xyz']) {
      assert.ok(!log.includes(secret), `the log contains ${secret.slice(0, 8)}…`);
    }
    assert.doesNotMatch(log, /authorization/i);
  } finally {
    await t.close();
  }
});
