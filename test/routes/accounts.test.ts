// Accounts (CONTRACT "Accounts and API"): /api/me, own password change, own sessions, TOTP, on
// every backend. TOTP timing (window edges, reuse) runs on a controllable clock in-process; the
// cluster runs on the system clock, with codes computed from the real time. The admin users API
// is in accounts-admin.test.ts.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { bearer, postJson } from '../helpers/client.js';
import { base32Decode, hotp, timeStep, totp, TOTP_PERIOD_SECONDS } from '../../src/domain/totp.js';

type Me = { username: string; admin: boolean; used: number; quota: number | null; totp: boolean; groups: string[]; trash_days: number; versions: boolean };
type SessionView = { id: string; created_at: string; last_used_at: string; client: string | null; address: string | null; current: boolean };
type Tokens = { access_token: string; refresh_token: string };

/** In-process apps read this clock; `fixed` pins it to one moment (TOTP window tests). */
const clock = { fixed: undefined as number | undefined, now: () => clock.fixed ?? Date.now() };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

for (const [storage, skip] of BACKENDS) {
  describe(`accounts on ${storage}`, { skip }, () => {
    let t: TestApp;
    before(async () => {
      t = await startApp({ storage, users: ['alice', 'bob', 'carol', 'dave', 'erin', 'fay'], ...(storage === 'cluster' ? {} : { clock }) });
    });
    after(() => t?.close());

    const req = (method: string, path: string, opts: { token?: string; body?: unknown; headers?: Record<string, string> } = {}) =>
      fetch(`${t.url}${path}`, {
        method,
        headers: { ...(opts.token ? bearer(opts.token) : {}), ...(opts.body === undefined ? {} : { 'content-type': 'application/json' }), ...opts.headers },
        body: opts.body === undefined ? undefined : typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body),
      });
    const json = async <T>(res: Response, status: number): Promise<T> => {
      const text = await res.text();
      assert.equal(res.status, status, text);
      return JSON.parse(text) as T;
    };
    const errorOf = async (res: Response, status: number) => (await json<{ error: string; message: string }>(res, status)).error;
    const login = async (username: string, password: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
      postJson(`${t.url}/auth/login`, { username, password, ...extra }, headers);
    const loginOk = async (username: string, password = `${username}-password`, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
      json<Tokens>(await login(username, password, extra, headers), 200);
    const refresh = (username: string, refreshToken: string) => postJson(`${t.url}/auth/refresh`, { username, refresh_token: refreshToken });
    const pathToken = async (token: string, path: string) => (await json<{ token: string }>(await postJson(`${t.url}/storage/${path}`, { action: 'MakePathToken' }, bearer(token)), 200)).token;

    test('every account route refuses a missing or invalid token with 401', async () => {
      const routes: [string, string, unknown?][] = [
        ['GET', '/api/me'],
        ['POST', '/api/me/password', { current_password: 'x', new_password: 'long-enough' }],
        ['GET', '/api/sessions'],
        ['DELETE', '/api/sessions/some-id'],
        ['POST', '/api/me/totp'],
        ['POST', '/api/me/totp/confirm', { code: '123456' }],
        ['DELETE', '/api/me/totp', { code: '123456' }],
      ];
      for (const [method, path, body] of routes) {
        for (const token of [undefined, 'garbage', 'fca_not-a-real-token']) {
          const res = await req(method, path, { token, body });
          assert.equal(await errorOf(res, 401), 'unauthorized', `${method} ${path} with ${token ?? 'no token'}`);
        }
      }
    });

    test('GET /api/me: name, admin flag, bytes used (kept from uploads), no quota, TOTP off', async () => {
      const { access_token } = await loginOk('bob');
      // Through the server: usage is kept from its writes (files put behind its back wait for file-cloud index).
      const upload = async (path: string, body: string) => assert.equal((await req('PUT', `/storage/bob/${path}`, { token: access_token, body, headers: { 'content-type': 'application/octet-stream' } })).status, 201);
      await upload('a.txt', 'hello world');
      await upload('docs/b.txt', 'abc');
      assert.equal((await postJson(`${t.url}/storage/bob/empty`, { action: 'CreateFolder' }, bearer(access_token))).status, 201);
      const me = await json<Me>(await req('GET', '/api/me', { token: access_token }), 200);
      assert.deepEqual(me, { username: 'bob', admin: false, used: 14, quota: null, totp: false, groups: [], trash_days: 0, versions: false });
      await upload('c.bin', 'x'.repeat(1000));
      assert.equal((await json<Me>(await req('GET', '/api/me', { token: access_token }), 200)).used, 1014, 'used follows the files');
    });

    test('password change: the caller keeps their session; other sessions and every path token end; rules as the CLI', async () => {
      await t.fs.put('p.txt', 'path token target', 'alice');
      const mine = await loginOk('alice');
      const other = await loginOk('alice');
      const token = await pathToken(other.access_token, 'alice/p.txt');
      assert.equal((await fetch(`${t.url}/storage/alice/p.txt?token=${encodeURIComponent(token)}`)).status, 200);

      // Refusals change nothing.
      const cases: [unknown, number, string][] = [
        [{ current_password: 'wrong-password', new_password: 'a-new-password' }, 401, 'invalid_credentials'],
        [{ current_password: 'alice-password', new_password: 'short' }, 400, 'bad_request'],
        [{ current_password: 'alice-password', new_password: 'x'.repeat(1025) }, 400, 'bad_request'],
        [{ current_password: 'alice-password' }, 400, 'bad_request'],
        [{ new_password: 'a-new-password' }, 400, 'bad_request'],
        [{ current_password: 'alice-password', new_password: ['a-new-password'] }, 400, 'bad_request'],
        ['{"current_password":', 400, 'invalid_json'],
      ];
      for (const [body, status, code] of cases) assert.equal(await errorOf(await req('POST', '/api/me/password', { token: mine.access_token, body }), status), code, JSON.stringify(body));
      assert.equal((await req('GET', '/api/me', { token: other.access_token })).status, 200, 'refused changes end nothing');

      const res = await req('POST', '/api/me/password', { token: mine.access_token, body: { current_password: 'alice-password', new_password: 'a-new-password' } });
      assert.equal(res.status, 204, await res.text());
      assert.equal((await req('GET', '/api/me', { token: mine.access_token })).status, 200, "the caller's access token keeps working");
      assert.equal((await refresh('alice', mine.refresh_token)).status, 200, "the caller's refresh token keeps working");
      assert.equal((await req('GET', '/api/me', { token: other.access_token })).status, 401, 'another session ends');
      assert.equal((await refresh('alice', other.refresh_token)).status, 401, "another session's refresh token ends");
      assert.equal((await fetch(`${t.url}/storage/alice/p.txt?token=${encodeURIComponent(token)}`)).status, 401, 'path tokens end');
      assert.equal((await login('alice', 'alice-password')).status, 401, 'the old password is refused');
      await loginOk('alice', 'a-new-password');
    });

    test('sessions: own list with client, address and current; revoke ends one at once; another user\'s is 404', async () => {
      const first = await loginOk('carol', 'carol-password', {}, { 'user-agent': 'AccountsTest/1.0 (first)' });
      const second = await loginOk('carol', 'carol-password', {}, { 'user-agent': 'AccountsTest/2.0 (second)' });
      const bobs = await loginOk('bob');
      const list = (await json<{ sessions: SessionView[] }>(await req('GET', '/api/sessions', { token: first.access_token }), 200)).sessions;
      assert.equal(list.length, 2, JSON.stringify(list));
      const byClient = new Map(list.map((s) => [s.client, s]));
      const a = byClient.get('AccountsTest/1.0 (first)');
      const b = byClient.get('AccountsTest/2.0 (second)');
      assert.ok(a && b, JSON.stringify(list));
      assert.equal(a.current, true);
      assert.equal(b.current, false);
      assert.match(a.address ?? '', /^(::ffff:)?127\.0\.0\.1$|^::1$/);
      assert.ok(Math.abs(Date.parse(a.created_at) - Date.now()) < 60_000, a.created_at);
      assert.ok(Date.parse(a.last_used_at) >= Date.parse(a.created_at));
      assert.deepEqual(Object.keys(a).sort(), ['address', 'client', 'created_at', 'current', 'id', 'last_used_at']);
      const fromSecond = (await json<{ sessions: SessionView[] }>(await req('GET', '/api/sessions', { token: second.access_token }), 200)).sessions;
      assert.equal(fromSecond.find((s) => s.current)?.id, b.id, 'current is the session of the token asking');

      // Bob's session id is not carol's to end: 404, and it keeps working.
      const bobId = (await json<{ sessions: SessionView[] }>(await req('GET', '/api/sessions', { token: bobs.access_token }), 200)).sessions[0]?.id as string;
      assert.equal(await errorOf(await req('DELETE', `/api/sessions/${bobId}`, { token: first.access_token }), 404), 'not_found');
      assert.equal((await req('GET', '/api/me', { token: bobs.access_token })).status, 200);
      assert.equal(await errorOf(await req('DELETE', '/api/sessions/no-such-session', { token: first.access_token }), 404), 'not_found');

      assert.equal((await req('DELETE', `/api/sessions/${b.id}`, { token: first.access_token })).status, 204);
      assert.equal((await req('GET', '/api/me', { token: second.access_token })).status, 401, 'the revoked session\'s access token stops at once');
      assert.equal((await refresh('carol', second.refresh_token)).status, 401, 'and its refresh token');
      const after = (await json<{ sessions: SessionView[] }>(await req('GET', '/api/sessions', { token: first.access_token }), 200)).sessions;
      assert.deepEqual(after.map((s) => s.id), [a.id]);
      // Ending the current session is a logout.
      assert.equal((await req('DELETE', `/api/sessions/${a.id}`, { token: first.access_token })).status, 204);
      assert.equal((await req('GET', '/api/me', { token: first.access_token })).status, 401);
    });

    /** Sets up TOTP for `user` and returns the secret and recovery codes. */
    const enableTotp = async (user: string, token: string, now: () => number) => {
      const setup = await json<{ secret: string; otpauth_url: string }>(await req('POST', '/api/me/totp', { token }), 200);
      assert.match(setup.secret, /^[A-Z2-7]{32}$/, '160-bit base32 secret');
      const url = new URL(setup.otpauth_url);
      assert.equal(url.protocol, 'otpauth:');
      assert.equal(url.searchParams.get('secret'), setup.secret);
      assert.ok(decodeURIComponent(url.pathname).endsWith(`:${user}`), setup.otpauth_url);
      const key = base32Decode(setup.secret) as Buffer;
      assert.equal((await json<Me>(await req('GET', '/api/me', { token }), 200)).totp, false, 'pending until confirmed');
      const wrong = String((Number(totp(key, now())) + 1) % 1_000_000).padStart(6, '0');
      assert.equal(await errorOf(await req('POST', '/api/me/totp/confirm', { token, body: { code: wrong } }), 401), 'invalid_credentials');
      assert.equal(await errorOf(await req('POST', '/api/me/totp/confirm', { token, body: {} }), 400), 'bad_request');
      const confirmed = await json<{ recovery_codes: string[] }>(await req('POST', '/api/me/totp/confirm', { token, body: { code: totp(key, now()) } }), 200);
      assert.equal(confirmed.recovery_codes.length, 10);
      assert.equal(new Set(confirmed.recovery_codes).size, 10);
      for (const c of confirmed.recovery_codes) assert.match(c, /^[A-Z2-7]{4}(-[A-Z2-7]{4}){3}$/);
      assert.equal((await json<Me>(await req('GET', '/api/me', { token }), 200)).totp, true);
      assert.equal(await errorOf(await req('POST', '/api/me/totp', { token }), 409), 'already_exists', 'no second setup while on');
      return { key, recovery: confirmed.recovery_codes };
    };

    /** Waits until the system clock is at least 3 s away from the next step boundary (cluster: real time). */
    const awayFromBoundary = async () => {
      const into = Date.now() % (TOTP_PERIOD_SECONDS * 1000);
      if (into > (TOTP_PERIOD_SECONDS - 3) * 1000) await sleep(TOTP_PERIOD_SECONDS * 1000 - into + 200);
    };

    test('TOTP: setup, sign-in needs a code, a code is never accepted twice, recovery codes once, WebDAV refuses the account password, off again', async () => {
      if (storage !== 'cluster') clock.fixed = undefined;
      await awayFromBoundary();
      const session = await loginOk('dave');
      const { key, recovery } = await enableTotp('dave', session.access_token, () => Date.now());
      assert.equal((await req('GET', '/api/me', { token: session.access_token })).status, 200, 'turning TOTP on keeps the session');

      assert.equal(await errorOf(await login('dave', 'dave-password'), 401), 'totp_required');
      assert.equal(await errorOf(await login('dave', 'dave-password', { totp: '' }), 401), 'totp_required');
      assert.equal(await errorOf(await login('dave', 'wrong-password'), 401), 'invalid_credentials', 'a wrong password says nothing about TOTP');
      assert.equal(await errorOf(await login('dave', 'wrong-password', { totp: totp(key, Date.now()) }), 401), 'invalid_credentials');
      assert.equal(await errorOf(await login('dave', 'dave-password', { totp: 123456 }), 400), 'bad_request', 'totp must be a string');
      // The code that confirmed the setup is used: it cannot sign in.
      assert.equal(await errorOf(await login('dave', 'dave-password', { totp: totp(key, Date.now()) }), 401), 'invalid_credentials', 'the confirming code is spent');
      // The next step's code (within the window) signs in, once.
      const next = hotp(key, timeStep(Date.now()) + 1);
      await loginOk('dave', 'dave-password', { totp: next });
      assert.equal(await errorOf(await login('dave', 'dave-password', { totp: next }), 401), 'invalid_credentials', 'a code is never accepted twice');
      // Recovery codes: in place of a code, each once, in any case and with or without dashes.
      await loginOk('dave', 'dave-password', { totp: (recovery[0] as string).toLowerCase() });
      assert.equal(await errorOf(await login('dave', 'dave-password', { totp: recovery[0] }), 401), 'invalid_credentials', 'a recovery code works once');
      await loginOk('dave', 'dave-password', { totp: (recovery[1] as string).replace(/-/g, '') });

      // WebDAV cannot ask for a code: the account password alone is refused (after proving right).
      const basic = `Basic ${Buffer.from('dave:dave-password').toString('base64')}`;
      const dav = await fetch(`${t.url}/dav/dave/`, { method: 'PROPFIND', headers: { authorization: basic, depth: '0' } });
      assert.equal(dav.status, 401);
      assert.match((await dav.json() as { message: string }).message, /app password/);
      // /basic/ sign-in asks for the code too.
      const basicLogin = (fields: Record<string, string>) =>
        fetch(`${t.url}/basic/login`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded', origin: new URL(t.url).origin }, body: new URLSearchParams(fields).toString() });
      const noCode = await basicLogin({ username: 'dave', password: 'dave-password' });
      assert.equal(noCode.status, 401);
      assert.match(await noCode.text(), /two-factor sign-in/);
      assert.equal(noCode.headers.get('set-cookie'), null);
      const withCode = await basicLogin({ username: 'dave', password: 'dave-password', totp: recovery[2] as string });
      assert.equal(withCode.status, 303, await withCode.text());
      assert.match(withCode.headers.get('set-cookie') ?? '', /^fc_basic=dave:/);

      // Off: needs a valid code; then the password alone signs in again and WebDAV accepts it.
      assert.equal(await errorOf(await req('DELETE', '/api/me/totp', { token: session.access_token, body: { code: recovery[0] } }), 401), 'invalid_credentials', 'a spent recovery code does not turn TOTP off');
      assert.equal(await errorOf(await req('DELETE', '/api/me/totp', { token: session.access_token, body: {} }), 400), 'bad_request');
      assert.equal((await req('DELETE', '/api/me/totp', { token: session.access_token, body: { code: recovery[3] } })).status, 204);
      assert.equal((await json<Me>(await req('GET', '/api/me', { token: session.access_token }), 200)).totp, false);
      await loginOk('dave');
      const davAgain = await fetch(`${t.url}/dav/dave/`, { method: 'PROPFIND', headers: { authorization: basic, depth: '0' } });
      assert.equal(davAgain.status, 207);
      assert.equal(await errorOf(await req('DELETE', '/api/me/totp', { token: session.access_token, body: { code: '123456' } }), 400), 'bad_request', 'TOTP is not on');
      const dave = await t.store.users.getByName('dave');
      assert.equal(await t.store.totp.recoveryCodesLeft(dave?.id as string), 0, 'the recovery codes went with it');
    });

    test('TOTP window on the system clock, on every backend (the cluster\'s processes take no injected clock): ±2 refused, +1 accepted once, no step at or before the last one used', async () => {
      // Everything below happens within one time step: start early in a step with 10 s to spare.
      const into = () => (Date.now() / 1000) % TOTP_PERIOD_SECONDS;
      while (into() < 1 || into() > TOTP_PERIOD_SECONDS - 10) await new Promise((r) => setTimeout(r, 250));
      const session = await loginOk('fay');
      const { key } = await enableTotp('fay', session.access_token, Date.now);
      const now = timeStep(Date.now());
      const at = (delta: number) => hotp(key, now + delta);
      assert.equal(await errorOf(await login('fay', 'fay-password', { totp: at(-2) }), 401), 'invalid_credentials', '-2 refused');
      assert.equal(await errorOf(await login('fay', 'fay-password', { totp: at(2) }), 401), 'invalid_credentials', '+2 refused');
      assert.equal(await errorOf(await login('fay', 'fay-password', { totp: at(0) }), 401), 'invalid_credentials', 'the confirming step is used up');
      await loginOk('fay', 'fay-password', { totp: at(1) });
      assert.equal(await errorOf(await login('fay', 'fay-password', { totp: at(1) }), 401), 'invalid_credentials', 'reuse refused, on any node');
      assert.equal(await errorOf(await login('fay', 'fay-password', { totp: at(-1) }), 401), 'invalid_credentials', 'a step before the last used one is refused');
      assert.ok(timeStep(Date.now()) === now, 'the test stayed within one step');
    });

    test('TOTP window on a controllable clock: steps -1, 0, +1 accepted, ±2 refused, and no step at or before the last one used', { skip: storage === 'cluster' ? 'the cluster runs on the system clock (its processes take no injected clock); the system-clock test above covers it' : undefined }, async () => {
      // The middle of a step, an hour from now: tokens issued at this moment stay valid for the test.
      const base = (timeStep(Date.now() + 3600_000) + 0.5) * TOTP_PERIOD_SECONDS * 1000;
      clock.fixed = base;
      try {
        const session = await loginOk('erin');
        const { key } = await enableTotp('erin', session.access_token, clock.now);
        // Ten steps on: the confirming code's step is long past.
        clock.fixed = base + 10 * TOTP_PERIOD_SECONDS * 1000;
        const now = timeStep(clock.fixed);
        const at = (delta: number) => hotp(key, now + delta);
        assert.equal(await errorOf(await login('erin', 'erin-password', { totp: at(-2) }), 401), 'invalid_credentials', '-2 refused');
        assert.equal(await errorOf(await login('erin', 'erin-password', { totp: at(2) }), 401), 'invalid_credentials', '+2 refused');
        await loginOk('erin', 'erin-password', { totp: at(-1) });
        await loginOk('erin', 'erin-password', { totp: at(0) });
        assert.equal(await errorOf(await login('erin', 'erin-password', { totp: at(-1) }), 401), 'invalid_credentials', '-1 again refused');
        await loginOk('erin', 'erin-password', { totp: at(1) });
        assert.equal(await errorOf(await login('erin', 'erin-password', { totp: at(0) }), 401), 'invalid_credentials', 'a step before the last used one is refused');
        assert.equal(await errorOf(await login('erin', 'erin-password', { totp: at(1) }), 401), 'invalid_credentials', 'reuse refused');
        // The edges of a step: its first millisecond still takes the previous step's code; its last
        // takes the next step's and not the one after.
        clock.fixed = (now + 5) * TOTP_PERIOD_SECONDS * 1000;
        await loginOk('erin', 'erin-password', { totp: hotp(key, now + 4) });
        clock.fixed = (now + 11) * TOTP_PERIOD_SECONDS * 1000 - 1;
        assert.equal(await errorOf(await login('erin', 'erin-password', { totp: hotp(key, now + 12) }), 401), 'invalid_credentials', '+2 at the last millisecond of a step');
        await loginOk('erin', 'erin-password', { totp: hotp(key, now + 11) });
      } finally {
        clock.fixed = undefined;
      }
    });
  });
}

test('wrong current passwords and TOTP codes count towards the login throttle', async () => {
  const t = await startApp({ flags: { dev: false, loginRateLimit: '4' }, users: ['alice'] });
  try {
    const { access_token } = await (await postJson(`${t.url}/auth/login`, { username: 'alice', password: 'alice-password' })).json() as Tokens;
    for (let i = 0; i < 3; i++) {
      const res = await postJson(`${t.url}/api/me/password`, { current_password: `wrong-${i}-password`, new_password: 'a-new-password' }, bearer(access_token));
      assert.equal(res.status, 401, `attempt ${i + 2}`);
    }
    const throttled = await postJson(`${t.url}/api/me/password`, { current_password: 'alice-password', new_password: 'a-new-password' }, bearer(access_token));
    assert.equal(throttled.status, 429);
    assert.ok(Number(throttled.headers.get('retry-after')) >= 1);
    assert.equal((await postJson(`${t.url}/auth/login`, { username: 'alice', password: 'alice-password' })).status, 429, 'the same counter as /auth/login');
    const code = await postJson(`${t.url}/api/me/totp/confirm`, { code: '000000' }, bearer(access_token));
    assert.equal(code.status, 429, 'TOTP codes too');
  } finally {
    await t.close();
  }
});
