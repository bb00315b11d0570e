// Hostile grant creation (issue 49, finding 7; docs/security.md "Grants"), on every backend: POST /api/grants
// answers an unknown user, an unknown group, a disabled user and the caller alike (no account oracle); failed
// creations are throttled per caller (a success does not count; while throttled every creation is 429), and
// the throttle's refusals are not written into the audit chain. With the login throttle on (no --dev).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { bearer } from '../helpers/client.js';

type AuditEvent = { type: string; actor: string | null; outcome: string; detail: { reason?: string; to?: string } | null };

/** Failed grant creations a caller may make in a minute: --login-rate-limit, 10 by default. */
const LIMIT = 10;

for (const [storage, skip] of BACKENDS) {
  describe(`grant refusals on ${storage}`, { skip }, () => {
    let t: TestApp;
    const tokens: Record<string, string> = {};
    before(async () => {
      t = await startApp({ storage, users: ['alice', 'bob', 'carol', 'erin'], flags: { dev: false } });
      await t.addUser('root', { admin: true });
      for (const u of ['alice', 'bob', 'erin', 'root']) tokens[u] = (await t.login(u)).access_token;
      await t.store.users.setDisabled('carol', true);
      await t.fs.put('doc.txt', 'a', 'alice');
      for (let i = 0; i < 3; i++) await t.fs.put(`f${i}.txt`, 'b', 'bob');
    });
    after(() => t?.close());

    const grant = async (who: string, path: string, to: string) => {
      const res = await fetch(`${t.url}/api/grants`, { method: 'POST', headers: { ...bearer(tokens[who]!), 'content-type': 'application/json' }, body: JSON.stringify({ path, to, permission: 'read' }) });
      return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as { error?: string; message?: string; id?: string } };
    };
    const audit = async (actor: string) => {
      const res = await fetch(`${t.url}/api/admin/audit?type=grant.created&user=${actor}&limit=1000`, { headers: bearer(tokens.root!) });
      assert.equal(res.status, 200);
      return ((await res.json()) as { events: AuditEvent[] }).events;
    };

    test('an unknown user, an unknown group, a disabled user and oneself get the very same answer', async () => {
      const answers = [];
      for (const to of ['user:nobody', 'group:nogroup', 'user:carol', 'user:alice']) {
        const { status, body } = await grant('alice', '/alice/doc.txt', to);
        answers.push({ to, status, body });
      }
      const [first] = answers;
      assert.equal(first!.status, 400);
      assert.equal(first!.body.error, 'bad_request');
      for (const a of answers) assert.deepEqual({ status: a.status, body: a.body }, { status: first!.status, body: first!.body }, a.to);
      assert.doesNotMatch(first!.body.message ?? '', /nobody|nogroup|carol|alice/, 'the message does not echo the name');
      const given = (await (await fetch(`${t.url}/api/grants`, { headers: bearer(tokens.alice!) })).json()) as { grants: unknown[] };
      assert.deepEqual(given.grants, [], 'nothing was shared, not with the disabled user either');
      assert.equal((await grant('alice', '/alice/doc.txt', 'user:bob')).status, 201, 'a user one can share with');
    });

    test(`after ${LIMIT} failed creations in a minute every creation is 429 (a success too); successes do not count; the throttle's refusals are not audited`, async () => {
      for (let i = 0; i < 3; i++) assert.equal((await grant('bob', `/bob/f${i}.txt`, 'user:erin')).status, 201, `success ${i + 1}`);
      for (let i = 0; i < LIMIT; i++) {
        const r = await grant('bob', '/bob/f0.txt', `user:guess-${i}`);
        assert.equal(r.status, 400, `failure ${i + 1}: ${JSON.stringify(r.body)}`);
      }
      for (const to of ['user:guess-next', 'group:guess', 'user:alice']) {
        const r = await grant('bob', '/bob/f1.txt', to);
        assert.equal(r.status, 429, `${to}: ${JSON.stringify(r.body)}`);
        assert.equal(r.body.error, 'rate_limited');
        const retry = Number(r.retryAfter);
        assert.ok(retry >= 1 && retry <= 60, `Retry-After ${r.retryAfter}`);
      }
      const received = (await (await fetch(`${t.url}/api/grants/received`, { headers: bearer(tokens.alice!) })).json()) as { grants: { owner: string }[] };
      assert.equal(received.grants.filter((g) => g.owner === 'bob').length, 0, 'the throttled creation that would have worked made nothing');
      assert.equal((await grant('erin', '/erin/none.txt', 'user:bob')).status, 404, 'another caller is not throttled');

      const events = await audit('bob');
      assert.equal(events.filter((e) => e.outcome === 'success').length, 3);
      assert.deepEqual(events.filter((e) => e.outcome !== 'success').map((e) => e.detail?.reason), Array.from({ length: LIMIT }, () => 'bad_request'), 'each failure before the throttle, none of its refusals');
    });
  });
}
