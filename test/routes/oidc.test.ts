import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { bearer, postJson } from '../helpers/client.js';
import { authorize, finishCallback, ssoSignIn, startIdp, type TestIdp } from '../helpers/oidc-idp.js';

/**
 * Single sign-on against a real OpenID provider (oidc-provider, test/helpers/oidc-idp.ts): the
 * whole code flow with fetch, and each way a callback or an ID token can be wrong, on every backend.
 */
for (const [storage, skip] of BACKENDS) {
  describe(`single sign-on on ${storage}`, { skip }, () => {
    let idp: TestIdp;
    let t: TestApp;

    before(async () => {
      idp = await startIdp();
      const add = (login: string, sub: string, claims: Record<string, unknown>) => idp.accounts.set(login, { login, sub, password: `${login}-secret`, claims });
      add('alice', 'sub-alice', { preferred_username: 'alice', groups: ['staff'] });
      add('boss', 'sub-boss', { preferred_username: 'boss', groups: ['staff', 'fc-admins'] });
      add('spacey', 'sub-spacey', { preferred_username: 'Not A Name!' });
      add('mallory', 'sub-mallory', { preferred_username: 'alice' });
      add('pat-at-idp', 'sub-pat', { preferred_username: 'pat' });
      for (const n of ['eve', 'finn', 'gus', 'hal', 'ivy', 'jo', 'kim']) add(n, `sub-${n}`, { preferred_username: n });
      t = await startApp({
        storage,
        users: ['pat'],
        flags: { oidcIssuer: idp.issuer, oidcClientId: idp.clientId, oidcClientSecret: idp.clientSecret, oidcScopes: 'openid profile groups', oidcAdminGroup: 'fc-admins', oidcButtonLabel: 'Test IdP' },
      });
      // Another administrator: the group never takes the right from the last one.
      await t.addUser('root', { admin: true });
    });
    after(async () => {
      await t?.close();
      await idp?.stop();
    });

    const signedIn = async (login: string) => {
      const r = await ssoSignIn(t.url, login, `${login}-secret`);
      assert.equal(r.status, 200, r.body);
      return r.tokens!;
    };
    const me = async (token: string) => (await (await fetch(`${t.url}/api/me`, { headers: bearer(token) })).json()) as { username: string; admin: boolean; groups: string[] };
    /** The callback's HTML error page: its status and the sentence it shows. */
    const refused = async (callback: string, status: number, pattern: RegExp) => {
      const r = await finishCallback(t.url, callback);
      assert.equal(r.status, status, r.body);
      assert.match(r.body, /<h1>Sign-in failed<\/h1>/);
      assert.match(r.body, pattern);
    };

    test('the status tells the web UI the button and that the provider is there', async () => {
      const s = (await (await fetch(`${t.url}/auth/oidc/status`)).json()) as { enabled: boolean; label: string; available: boolean };
      assert.deepEqual({ enabled: s.enabled, label: s.label, available: s.available }, { enabled: true, label: 'Test IdP', available: true });
    });

    test('the first sign-in creates the account; the session is a normal one (me, sessions, refresh, logout)', async () => {
      const tokens = await signedIn('alice');
      assert.equal(tokens.username, 'alice');
      assert.deepEqual(await me(tokens.access_token), { ...(await me(tokens.access_token)), username: 'alice', admin: false });
      const sessions = (await (await fetch(`${t.url}/api/sessions`, { headers: bearer(tokens.access_token) })).json()) as { sessions: unknown[] };
      assert.equal(sessions.sessions.length, 1);
      const refreshed = await postJson(`${t.url}/auth/refresh`, { username: 'alice', refresh_token: tokens.refresh_token });
      assert.equal(refreshed.status, 200);
      // Files: the new account has its root.
      assert.equal((await fetch(`${t.url}/storage/alice/`, { headers: bearer(tokens.access_token) })).status, 200);
      assert.equal((await postJson(`${t.url}/auth/logout`, { username: 'alice', refresh_token: tokens.refresh_token })).status, 204);
      assert.equal((await fetch(`${t.url}/api/me`, { headers: bearer(tokens.access_token) })).status, 401);
      // Signing in again finds the same account (no second one, no error).
      assert.equal((await signedIn('alice')).username, 'alice');
    });

    test('the account has no password: password login fails, as for a wrong one', async () => {
      await signedIn('eve');
      for (const password of ['', '!none', 'eve-secret']) {
        const res = await postJson(`${t.url}/auth/login`, { username: 'eve', password });
        assert.equal(res.status, 401);
      }
    });

    test('--oidc-admin-group: members are administrators, and stop being when they leave the group', async () => {
      const first = await signedIn('boss');
      assert.equal((await me(first.access_token)).admin, true);
      const users = (await (await fetch(`${t.url}/api/admin/users`, { headers: bearer(first.access_token) })).json()) as { users: { username: string; sign_in: string }[] };
      assert.equal(users.users.find((u) => u.username === 'boss')?.sign_in, 'sso');
      assert.equal(users.users.find((u) => u.username === 'pat')?.sign_in, 'password');
      const boss = idp.accounts.get('boss')!;
      idp.accounts.set('boss', { ...boss, claims: { ...boss.claims, groups: ['staff'] } });
      try {
        const second = await signedIn('boss');
        assert.equal((await me(second.access_token)).admin, false);
      } finally {
        idp.accounts.set('boss', boss);
      }
    });

    test('the groups claim decides membership of File Cloud groups on each sign-in (existing groups only)', async () => {
      const admin = await signedIn('boss');
      const adminAuth = { ...bearer(admin.access_token), 'content-type': 'application/json' };
      for (const name of ['staff', 'finance']) {
        const made = await fetch(`${t.url}/api/admin/groups`, { method: 'POST', headers: adminAuth, body: JSON.stringify({ name }) });
        assert.ok(made.status === 201 || made.status === 409, `group ${name}: ${made.status}`);
      }
      // An administrator put gwen in finance; her claim says staff and a group File Cloud does not have.
      idp.accounts.set('gwen', { login: 'gwen', sub: 'sub-gwen', password: 'gwen-secret', claims: { preferred_username: 'gwen', groups: ['staff', 'no-such-group'] } });
      await signedIn('gwen');
      const added = await fetch(`${t.url}/api/admin/groups/finance`, { method: 'PATCH', headers: adminAuth, body: JSON.stringify({ add: ['gwen'] }) });
      assert.equal(added.status, 200, await added.text());
      const tokens = await signedIn('gwen');
      assert.deepEqual((await me(tokens.access_token)).groups, ['staff'], 'joined staff, left finance, no group made from the claim');
      const groups = (await (await fetch(`${t.url}/api/admin/groups`, { headers: bearer(admin.access_token) })).json()) as { groups: { name: string }[] };
      assert.ok(!groups.groups.some((g) => g.name === 'no-such-group'));
      idp.accounts.set('gwen', { login: 'gwen', sub: 'sub-gwen', password: 'gwen-secret', claims: { preferred_username: 'gwen', groups: [] } });
      assert.deepEqual((await me((await signedIn('gwen')).access_token)).groups, [], 'left staff with the claim');
    });

    test('a username claim that is no valid name: a clear error page, no account', async () => {
      await refused(await authorize(t.url, 'spacey', 'spacey-secret'), 400, /preferred_username claim \(&quot;Not A Name!&quot;\) is not a valid File Cloud username/);
      const admin = await signedIn('boss');
      const users = (await (await fetch(`${t.url}/api/admin/users`, { headers: bearer(admin.access_token) })).json()) as { users: { username: string }[] };
      assert.ok(!users.users.some((u) => /not/i.test(u.username)));
    });

    test('another sub with the name of a linked account cannot take it over; nor an existing password account', async () => {
      await signedIn('alice');
      await refused(await authorize(t.url, 'mallory', 'mallory-secret'), 403, /belongs to another identity/);
      await refused(await authorize(t.url, 'pat-at-idp', 'pat-at-idp-secret'), 403, /exists already and signs in with a password/);
    });

    test('an administrator opens a password account to single sign-on (user sso NAME on): the next sign-in links it, once', async () => {
      const pat = (await t.store.users.getByName('pat'))!;
      await t.store.oidc.setLinkPending(pat.id, true);
      const linked = await signedIn('pat-at-idp');
      assert.equal(linked.username, 'pat');
      assert.equal((await t.login('pat')).valid_for_seconds > 0, true, 'the password still works');
      // Linked to that sub now: another identity carrying the name "pat" is refused.
      idp.accounts.set('pat-impostor', { login: 'pat-impostor', sub: 'sub-pat-impostor', password: 'pat-impostor-secret', claims: { preferred_username: 'pat' } });
      await refused(await authorize(t.url, 'pat-impostor', 'pat-impostor-secret'), 403, /belongs to another identity/);
    });

    test('a renamed user at the provider keeps their account: found by sub, not by name', async () => {
      await signedIn('finn');
      const finn = idp.accounts.get('finn')!;
      idp.accounts.set('finn', { ...finn, claims: { ...finn.claims, preferred_username: 'finn-renamed' } });
      try {
        assert.equal((await signedIn('finn')).username, 'finn');
      } finally {
        idp.accounts.set('finn', finn);
      }
    });

    test('a wrong state is refused, and the right one still works after it', async () => {
      const callback = await authorize(t.url, 'gus', 'gus-secret');
      const forged = new URL(callback);
      forged.searchParams.set('state', 'forged-state');
      await refused(forged.href, 401, /unknown, was used already or took too long/);
      const none = new URL(callback);
      none.searchParams.delete('state');
      const r = await finishCallback(t.url, none.href);
      assert.equal(r.status, 400);
      // Not a browser (no Accept: text/html): the contract's JSON body.
      const api = await fetch(forged.href, { redirect: 'manual' });
      assert.equal(api.status, 401);
      assert.equal(((await api.json()) as { error: string }).error, 'unauthorized');
      assert.equal((await finishCallback(t.url, callback)).status, 200);
    });

    test('a replayed callback, and a used code under a new state, are refused', async () => {
      const callback = await authorize(t.url, 'hal', 'hal-secret');
      assert.equal((await finishCallback(t.url, callback)).status, 200);
      await refused(callback, 401, /unknown, was used already/);
      // The same code with the state of a fresh sign-in: the provider refuses the used code (and the PKCE verifier differs).
      const fresh = new URL(await authorize(t.url, 'hal', 'hal-secret'));
      const replay = new URL(callback);
      replay.searchParams.set('state', fresh.searchParams.get('state')!);
      await refused(replay.href, 401, /did not check out/);
    });

    test('the hand-off code is good once', async () => {
      const callback = await authorize(t.url, 'ivy', 'ivy-secret');
      const res = await fetch(callback, { redirect: 'manual' });
      const code = decodeURIComponent(/#sso=(.+)$/.exec(res.headers.get('location') ?? '')![1]!);
      assert.equal((await postJson(`${t.url}/auth/oidc/session`, { code })).status, 200);
      const again = await postJson(`${t.url}/auth/oidc/session`, { code });
      assert.equal(again.status, 401);
      assert.equal(((await again.json()) as { error: string }).error, 'unauthorized');
      assert.equal((await postJson(`${t.url}/auth/oidc/session`, {})).status, 400);
      // In the audit log (docs/operations.md "Audit log"): the sign-in, then the refused replay.
      const root = (await t.login('root')).access_token;
      const events = ((await (await fetch(`${t.url}/api/admin/audit?type=login.*&limit=10`, { headers: bearer(root) })).json()) as { events: { type: string; actor: string | null; detail: Record<string, unknown> }[] }).events;
      const sso = events.filter((e) => e.detail.method === 'sso');
      assert.deepEqual(sso.slice(0, 3).map((e) => [e.type, e.actor, e.detail.reason]), [['login.failed', null, 'bad_request'], ['login.failed', null, 'unauthorized'], ['login.succeeded', 'ivy', undefined]]);
    });

    describe('ID tokens that do not check out', () => {
      const now = () => Math.floor(Date.now() / 1000);
      const cases: [string, NonNullable<TestIdp['tamper']>][] = [
        ['another audience', ({ header, claims }) => ({ header, claims: { ...claims, aud: 'some-other-client' }, sign: 'current' })],
        ['expired', ({ header, claims }) => ({ header, claims: { ...claims, iat: now() - 7200, exp: now() - 3600 }, sign: 'current' })],
        ['unsigned (alg none)', ({ header, claims }) => ({ header, claims, sign: 'none' })],
        ['signed with a key the provider never published', ({ header, claims }) => ({ header, claims: { ...claims }, sign: 'foreign' })],
        ['another issuer', ({ header, claims }) => ({ header, claims: { ...claims, iss: 'https://evil.example' }, sign: 'current' })],
        ['a wrong nonce', ({ header, claims }) => ({ header, claims: { ...claims, nonce: 'not-the-nonce' }, sign: 'current' })],
      ];
      for (const [what, tamper] of cases) {
        test(`an ID token ${what} is refused`, async () => {
          const callback = await authorize(t.url, 'jo', 'jo-secret');
          idp.tamper = tamper;
          try {
            await refused(callback, 401, /did not check out/);
          } finally {
            idp.tamper = undefined;
          }
        });
      }
      test('the untampered token of the same provider signs in (the cases above fail for their own reason)', async () => {
        assert.equal((await signedIn('jo')).username, 'jo');
      });
    });

    test('key rotation: after the provider signs with a new key, the next sign-in is accepted', async () => {
      await signedIn('kim');
      const before = idp.signingKid;
      await idp.stop();
      idp.rotateKey();
      await idp.start();
      assert.notEqual(idp.signingKid, before);
      assert.equal((await signedIn('kim')).username, 'kim');
    });
  });
}

describe('single sign-on while the provider is down', () => {
  let idp: TestIdp;
  let t: TestApp;
  before(async () => {
    idp = await startIdp({ down: true });
    idp.accounts.set('lee', { login: 'lee', sub: 'sub-lee', password: 'lee-secret', claims: { preferred_username: 'lee' } });
    t = await startApp({ users: ['pat'], flags: { oidcIssuer: idp.issuer, oidcClientId: idp.clientId, oidcClientSecret: idp.clientSecret } });
  });
  after(async () => {
    await t?.close();
    await idp?.stop();
  });

  test('File Cloud starts and password sign-in works; the button says why SSO is away; the provider coming back is used at once', async () => {
    assert.equal((await t.login('pat')).valid_for_seconds > 0, true);
    const status = (await (await fetch(`${t.url}/auth/oidc/status`)).json()) as { available: boolean; problem: string };
    assert.equal(status.available, false);
    assert.match(status.problem, new RegExp(`the provider at ${idp.issuer.replace(/[.]/g, '\\.')} cannot be used`));
    const down = await fetch(`${t.url}/auth/oidc/login`, { redirect: 'manual', headers: { accept: 'text/html' } });
    assert.equal(down.status, 503);
    assert.ok(down.headers.get('retry-after'));
    assert.match(await down.text(), /Single sign-on is unavailable: the provider at .* cannot be used/);
    // /api/health is about storage and database only.
    assert.equal((await fetch(`${t.url}/api/health`)).status, 200);
    await idp.start();
    // A sign-in attempt discovers at once: no waiting for the background retry.
    const r = await ssoSignIn(t.url, 'lee', 'lee-secret');
    assert.equal(r.status, 200, r.body);
    assert.equal(r.tokens?.username, 'lee');
    assert.equal(((await (await fetch(`${t.url}/auth/oidc/status`)).json()) as { available: boolean }).available, true);
  });
});

describe('--oidc-only', () => {
  let idp: TestIdp;
  let t: TestApp;
  before(async () => {
    idp = await startIdp();
    idp.accounts.set('max', { login: 'max', sub: 'sub-max', password: 'max-secret', claims: { preferred_username: 'max' } });
    t = await startApp({ users: ['pat', 'breakglass'], flags: { oidcIssuer: idp.issuer, oidcClientId: idp.clientId, oidcClientSecret: idp.clientSecret, oidcOnly: true } });
    await t.store.oidc.setLocal((await t.store.users.getByName('breakglass'))!.id, true);
  });
  after(async () => {
    await t?.close();
    await idp?.stop();
  });

  test('password sign-in works only for local accounts (API, WebDAV); single sign-on works', async () => {
    const pat = await postJson(`${t.url}/auth/login`, { username: 'pat', password: 'pat-password' });
    assert.equal(pat.status, 401);
    assert.equal(((await pat.json()) as { error: string }).error, 'invalid_credentials');
    assert.equal((await postJson(`${t.url}/auth/login`, { username: 'breakglass', password: 'breakglass-password' })).status, 200);
    const dav = (user: string) => fetch(`${t.url}/dav/${user}/`, { method: 'PROPFIND', headers: { depth: '0', authorization: `Basic ${Buffer.from(`${user}:${user}-password`).toString('base64')}` } });
    assert.equal((await dav('pat')).status, 401);
    assert.equal((await dav('breakglass')).status, 207);
    const status = (await (await fetch(`${t.url}/auth/oidc/status`)).json()) as { only: boolean };
    assert.equal(status.only, true);
    assert.equal((await ssoSignIn(t.url, 'max', 'max-secret')).status, 200);
  });
});

describe('single sign-on and the login throttle', () => {
  let idp: TestIdp;
  let t: TestApp;
  before(async () => {
    idp = await startIdp();
    idp.accounts.set('rae', { login: 'rae', sub: 'sub-rae', password: 'rae-secret', claims: { preferred_username: 'rae' } });
    t = await startApp({ flags: { dev: false, loginRateLimit: '2', oidcIssuer: idp.issuer, oidcClientId: idp.clientId, oidcClientSecret: idp.clientSecret } });
  });
  after(async () => {
    await t?.close();
    await idp?.stop();
  });

  test('each sign-in counts once (the callback); past the limit the callback answers 429', async () => {
    assert.equal((await ssoSignIn(t.url, 'rae', 'rae-secret')).status, 200);
    assert.equal((await ssoSignIn(t.url, 'rae', 'rae-secret')).status, 200);
    const third = await ssoSignIn(t.url, 'rae', 'rae-secret');
    assert.equal(third.status, 429, third.body);
    assert.equal((await postJson(`${t.url}/auth/login`, { username: 'rae', password: 'x' })).status, 429, 'the same counter as password sign-in');
  });
});
