// Webhooks (issue 33, docs/operations.md "Webhooks") on every backend: the admin API; deliveries
// signed per Standard Webhooks and checked by a real receiver with the `standardwebhooks` package;
// at-least-once, in order, through an outage of the receiver; each event once per hook however many
// processes run (the cluster app: two workers, each in the leader election); a hung endpoint slowing
// neither requests nor other hooks; redirects not followed.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { bearer } from '../helpers/client.js';
import { startReceiver, until, type Receiver } from '../helpers/webhook-receiver.js';

type Hook = { id: string; url: string; events: string[]; path_prefix: string | null; enabled: boolean; disabled_reason: string | null; secret?: string; next_attempt_at: string | null };
type Delivery = { event_id: string; event_type: string; attempt: number; status: number | null; duration_ms: number; error: string | null; next_retry_at: string | null };

/** A delivery needs the leader's next round (1 s) and a retry's backoff; this bounds both with room for a busy machine. */
const DELIVERY_MS = 15_000;

for (const [storage, skip] of BACKENDS) {
  describe(`webhooks on ${storage}`, { skip }, () => {
    let t: TestApp;
    let root: string;
    let alice: string;
    const receivers: Receiver[] = [];
    before(async () => {
      t = await startApp({ storage, users: ['alice', 'bob'], flags: { webhooksAllowPrivate: true } });
      await t.addUser('root', { admin: true });
      root = (await t.login('root')).access_token;
      alice = (await t.login('alice')).access_token;
      await t.fs.put('a.txt', 'a');
    });
    after(async () => {
      for (const r of receivers) await r.stop();
      await t?.close();
    });
    const receiver = async (...args: Parameters<typeof startReceiver>) => {
      const r = await startReceiver(...args);
      receivers.push(r);
      return r;
    };
    const req = (method: string, path: string, token: string | undefined, body?: unknown) =>
      fetch(`${t.url}${path}`, { method, headers: { ...(token ? bearer(token) : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body) });
    const json = async <T>(res: Response, status: number): Promise<T> => {
      const text = await res.text();
      assert.equal(res.status, status, text);
      return text === '' ? (undefined as T) : (JSON.parse(text) as T);
    };
    const hook = async (r: Receiver, events: string[], extra: Record<string, unknown> = {}) => {
      const h = await json<Hook>(await req('POST', '/api/admin/webhooks', root, { url: r.url, events, ...extra }), 201);
      r.setSecret(h.secret!);
      return h;
    };
    const deliveries = async (id: string) => (await json<{ deliveries: Delivery[] }>(await req('GET', `/api/admin/webhooks/${id}/deliveries`, root), 200)).deliveries;
    const share = async () => (await json<{ id: string }>(await req('POST', '/api/shares', alice, { path: '/alice/a.txt' }), 201)).id;

    test('admin API: create (secret shown once), list, get, change, delete; refused for non-admins; bad input is 400', async () => {
      const body = { url: 'https://hooks.example.com/in', events: ['share.created', 'login.failed'] };
      assert.equal((await req('POST', '/api/admin/webhooks', alice, body)).status, 403);
      assert.equal((await req('GET', '/api/admin/webhooks', undefined)).status, 401);
      const made = await json<Hook>(await req('POST', '/api/admin/webhooks', root, body), 201);
      assert.match(made.secret!, /^whsec_[A-Za-z0-9+/]+={0,2}$/);
      assert.deepEqual([made.url, made.events, made.enabled, made.path_prefix], [body.url, body.events, true, null]);
      const listed = (await json<{ webhooks: Hook[] }>(await req('GET', '/api/admin/webhooks', root), 200)).webhooks;
      assert.equal(listed.find((h) => h.id === made.id)?.secret, undefined, 'never shown again');
      assert.equal((await json<Hook>(await req('GET', `/api/admin/webhooks/${made.id}`, root), 200)).secret, undefined);
      const changed = await json<Hook>(await req('PATCH', `/api/admin/webhooks/${made.id}`, root, { events: ['user.created'], path_prefix: '/alice/photos', enabled: false }), 200);
      assert.deepEqual([changed.events, changed.path_prefix, changed.enabled, changed.disabled_reason], [['user.created'], '/alice/photos', false, 'Disabled by an administrator.']);
      const own = await json<Hook>(await req('POST', '/api/admin/webhooks', root, { ...body, secret: `whsec_${Buffer.alloc(32, 7).toString('base64')}` }), 201);
      assert.equal(own.secret, `whsec_${Buffer.alloc(32, 7).toString('base64')}`);
      for (const bad of [
        { url: 'ftp://example.com/x', events: ['share.created'] },
        { url: 'file:///etc/passwd', events: ['share.created'] },
        { url: 'not a url', events: ['share.created'] },
        { url: 'https://example.com/', events: [] },
        { url: 'https://example.com/', events: ['file.exploded'] },
        { url: 'https://example.com/', events: ['share.created'], secret: 'hunter2' },
        { url: 'https://user:pw@example.com/', events: ['share.created'] },
        { events: ['share.created'] },
      ]) assert.equal((await req('POST', '/api/admin/webhooks', root, bad)).status, 400, JSON.stringify(bad));
      await json(await req('DELETE', `/api/admin/webhooks/${made.id}`, root), 204);
      await json(await req('DELETE', `/api/admin/webhooks/${own.id}`, root), 204);
      assert.equal((await req('GET', `/api/admin/webhooks/${made.id}`, root)).status, 404);
      assert.equal((await req('DELETE', `/api/admin/webhooks/${made.id}`, root)).status, 404);
      const audit = (await json<{ events: { type: string; target: string }[] }>(await req('GET', '/api/admin/audit?type=webhook.*&limit=100', root), 200)).events;
      assert.deepEqual(new Set(audit.map((e) => e.type)), new Set(['webhook.created', 'webhook.changed', 'webhook.removed']));
    });

    test('events arrive signed (verified by standardwebhooks), once each, in order, with their data; deliveries are listed', async () => {
      const r = await receiver();
      const h = await hook(r, ['share.created', 'share.revoked', 'grant.created', 'grant.revoked', 'user.created', 'user.disabled', 'user.removed', 'login.failed']);
      const s1 = await share();
      await json(await req('DELETE', `/api/shares/${s1}`, alice), 204);
      const g = await json<{ id: string }>(await req('POST', '/api/grants', alice, { path: '/alice/a.txt', to: 'user:bob', permission: 'read' }), 201);
      await json(await req('DELETE', `/api/grants/${g.id}`, alice), 204);
      await json(await req('POST', '/api/admin/users', root, { username: 'dora', password: 'dora-password' }), 201);
      await json(await req('PATCH', '/api/admin/users/dora', root, { disabled: true }), 200);
      await json(await req('DELETE', '/api/admin/users/dora', root), 204);
      assert.equal((await req('POST', '/auth/login', undefined, { username: 'bob', password: 'wrong-password' })).status, 401);
      // Not asked for, or not done: never sent.
      assert.equal((await req('POST', '/api/admin/users', alice, { username: 'eve', password: 'eve-password' })).status, 403);
      await json(await req('POST', '/api/admin/groups', root, { name: 'nobody-cares' }), 201);
      const expected = ['share.created', 'share.revoked', 'grant.created', 'grant.revoked', 'user.created', 'user.disabled', 'user.removed', 'login.failed'];
      await until(() => r.received.length >= expected.length, DELIVERY_MS, `${expected.length} events (got ${JSON.stringify(r.received.map((e) => e.type))})`);
      await new Promise((res) => setTimeout(res, 1500));
      assert.deepEqual(r.received.map((e) => e.type), expected);
      assert.deepEqual(r.rejected, []);
      assert.equal(new Set(r.received.map((e) => e.id)).size, expected.length, 'each once');
      assert.equal(r.received[0]!.data.actor, 'alice');
      assert.equal(r.received[0]!.data.target, '/alice/a.txt');
      assert.equal(r.received[0]!.data.id, s1);
      assert.equal(r.received[4]!.data.target, 'dora');
      assert.equal(r.received[7]!.data.actor, 'bob');
      assert.equal(r.received[7]!.data.reason, 'invalid_credentials');
      assert.ok(!Number.isNaN(Date.parse(r.received[0]!.timestamp)));
      const ds = await deliveries(h.id);
      assert.equal(ds.length, expected.length);
      assert.ok(ds.every((d) => d.status === 204 && d.error === null && d.attempt === 1));
      // The test button: a webhook.test event, answered at once.
      const tried = await json<Delivery>(await req('POST', `/api/admin/webhooks/${h.id}/test`, root), 200);
      assert.equal(tried.status, 204);
      assert.equal(r.received.at(-1)!.type, 'webhook.test');
      await json(await req('DELETE', `/api/admin/webhooks/${h.id}`, root), 204);
    });

    test('file events come from the change journal: created, modified, moved, deleted, through the API and WebDAV, under the hook\'s path_prefix only', async () => {
      // Through the API, so their own entries come before the hook's first cursor.
      for (const folder of ['photos', 'docs']) await json(await req('POST', `/storage/alice/${folder}`, alice, { action: 'CreateFolder' }), 201);
      const r = await receiver();
      const h = await hook(r, ['file.created', 'file.modified', 'file.moved', 'file.deleted'], { path_prefix: '/alice/photos' });
      const put = (path: string, body: string) => fetch(`${t.url}/storage/alice/${path}`, { method: 'PUT', headers: { ...bearer(alice), 'content-type': 'application/octet-stream' }, body });
      assert.equal((await put('photos/cat.jpg', 'meow')).status, 201);
      assert.equal((await put('docs/elsewhere.txt', 'not under the prefix')).status, 201);
      assert.equal((await fetch(`${t.url}/dav/alice/photos/cat.jpg`, { method: 'PUT', headers: bearer(alice), body: 'meow!' })).status, 204);
      await json(await req('POST', '/storage/alice/photos/cat.jpg', alice, { action: 'Move', new_path: '/alice/photos/kitten.jpg' }), 204);
      await json(await req('DELETE', '/storage/alice/photos/kitten.jpg', alice), 204);
      const expected = [
        ['file.created', '/alice/photos/cat.jpg'],
        ['file.modified', '/alice/photos/cat.jpg'],
        ['file.moved', '/alice/photos/kitten.jpg'],
        ['file.deleted', '/alice/photos/kitten.jpg'],
      ];
      await until(() => r.received.length >= expected.length, DELIVERY_MS, `${expected.length} file events (got ${JSON.stringify(r.received.map((e) => [e.type, e.data.path]))})`);
      await new Promise((res) => setTimeout(res, 1500));
      assert.deepEqual(r.received.map((e) => [e.type, e.data.path]), expected);
      assert.deepEqual(r.rejected, []);
      assert.equal(r.received[0]!.data.size, 4);
      assert.equal(r.received[0]!.data.is_file, true);
      assert.equal(r.received[1]!.data.size, 5);
      assert.equal(r.received[2]!.data.from, '/alice/photos/cat.jpg');
      await json(await req('DELETE', `/api/admin/webhooks/${h.id}`, root), 204);
    });

    test('receiver down for a while: every event arrives once it is back, in order, at least once; requests stay fast meanwhile', async () => {
      const r = await receiver();
      const h = await hook(r, ['share.created']);
      const first = await share();
      await until(() => r.received.length === 1, DELIVERY_MS, 'the first event');
      await r.stop();
      const ids = [first];
      for (let i = 0; i < 6; i++) {
        const t0 = performance.now();
        ids.push(await share());
        assert.ok(performance.now() - t0 < 2000, 'a request does not wait for a dead endpoint');
      }
      await until(async () => (await deliveries(h.id)).filter((d) => d.error !== null).length >= 2, DELIVERY_MS, 'failed attempts recorded');
      const failing = (await deliveries(h.id)).find((d) => d.error !== null)!;
      assert.equal(failing.status, null);
      assert.ok(failing.next_retry_at, 'a retry is scheduled');
      assert.ok((await json<Hook>(await req('GET', `/api/admin/webhooks/${h.id}`, root), 200)).next_attempt_at);
      await new Promise((res) => setTimeout(res, 2000));
      await r.start();
      await until(() => new Set(r.received.map((e) => e.data.id)).size === ids.length, 40_000, 'every event after the outage');
      // At least once: a repeat may only be of the event just before (the answer lost); first arrivals are in order.
      const firsts: unknown[] = [];
      for (const e of r.received) if (!firsts.includes(e.data.id)) firsts.push(e.data.id);
      assert.deepEqual(firsts, ids);
      assert.deepEqual(r.rejected, []);
      await json(await req('DELETE', `/api/admin/webhooks/${h.id}`, root), 204);
    });

    test('a hung endpoint holds up neither requests nor other hooks; a redirect is not followed', async () => {
      const hung = await receiver('', { answer: () => 'hang' });
      const healthy = await receiver();
      const other = await receiver();
      const redirecting = await receiver('', { answer: () => ({ status: 302, headers: { location: other.url } }) });
      const h1 = await hook(hung, ['share.created']);
      const h2 = await hook(healthy, ['share.created']);
      const h3 = await hook(redirecting, ['share.created']);
      const t0 = performance.now();
      const id = await share();
      assert.ok(performance.now() - t0 < 2000);
      await until(() => healthy.received.some((e) => e.data.id === id), DELIVERY_MS, 'the healthy hook gets its event while another hangs');
      await until(async () => (await deliveries(h3.id)).length > 0, DELIVERY_MS, 'the redirect answered');
      const d = (await deliveries(h3.id))[0]!;
      assert.equal(d.status, 302);
      assert.match(d.error!, /redirects are not followed/);
      assert.equal(other.hits, 0, 'the redirect target is never called');
      assert.equal(redirecting.received.length, 1);
      for (const h of [h1, h2, h3]) await json(await req('DELETE', `/api/admin/webhooks/${h.id}`, root), 204);
    });
  });
}

describe('webhooks: disabled after 24 hours of failures (clock moved; file backend, where the clock can be injected)', () => {
  let t: TestApp;
  let offset = 0;
  before(async () => {
    t = await startApp({ users: ['alice'], flags: { webhooksAllowPrivate: true }, clock: { now: () => Date.now() + offset } });
    await t.addUser('root', { admin: true });
    await t.fs.put('a.txt', 'a');
  });
  after(() => t?.close());

  test('failing deliveries back off, then the hook is disabled with a reason (and an audit entry); enabled again it delivers what waited', async () => {
    let root = (await t.login('root')).access_token;
    const alice = (await t.login('alice')).access_token;
    const r = await startReceiver();
    try {
      await r.stop();
      const made = (await (await fetch(`${t.url}/api/admin/webhooks`, { method: 'POST', headers: { ...bearer(root), 'content-type': 'application/json' }, body: JSON.stringify({ url: r.url, events: ['share.created'] }) })).json()) as Hook;
      r.setSecret(made.secret!);
      const shareRes = await fetch(`${t.url}/api/shares`, { method: 'POST', headers: { ...bearer(alice), 'content-type': 'application/json' }, body: JSON.stringify({ path: '/alice/a.txt' }) });
      assert.equal(shareRes.status, 201);
      const get = async () => {
        const res = await fetch(`${t.url}/api/admin/webhooks/${made.id}`, { headers: bearer(root) });
        assert.equal(res.status, 200);
        return (await res.json()) as Hook;
      };
      await until(async () => (await get()).next_attempt_at !== null, DELIVERY_MS, 'a first failure');
      assert.equal((await get()).enabled, true);
      offset += 25 * 3600_000;
      root = (await t.login('root')).access_token;
      await until(async () => !(await get()).enabled, DELIVERY_MS, 'disabled after 24 hours');
      assert.match((await get()).disabled_reason!, /failed for 24 hours/);
      const audit = (await (await fetch(`${t.url}/api/admin/audit?type=webhook.disabled`, { headers: bearer(root) })).json()) as { events: { target: string }[] };
      assert.equal(audit.events[0]?.target, made.id);
      await r.start();
      // Back to real time: the receiver's library refuses a signature timestamp 25 h ahead of its clock.
      offset = 0;
      await fetch(`${t.url}/api/admin/webhooks/${made.id}`, { method: 'PATCH', headers: { ...bearer(root), 'content-type': 'application/json' }, body: JSON.stringify({ enabled: true }) });
      await until(() => r.received.length === 1, DELIVERY_MS, 'the waiting event, once enabled again');
      assert.equal(r.received[0]!.type, 'share.created');
    } finally {
      await r.stop();
    }
  });
});

for (const [storage, skip] of BACKENDS) {
  describe(`webhooks refuse private targets by default (SSRF) on ${storage}`, { skip }, () => {
    let t: TestApp;
    let root: string;
    let alice: string;
    before(async () => {
      t = await startApp({ storage, users: ['alice'] });
      await t.addUser('root', { admin: true });
      root = (await t.login('root')).access_token;
      alice = (await t.login('alice')).access_token;
      await t.fs.put('a.txt', 'a');
    });
    after(() => t?.close());
    const post = (path: string, token: string, body: unknown) => fetch(`${t.url}${path}`, { method: 'POST', headers: { ...bearer(token), 'content-type': 'application/json' }, body: JSON.stringify(body) });

    test('127.0.0.1, [::1], 169.254.169.254, 10/8, 192.168/16 and a mapped loopback are refused at creation and on change', async () => {
      for (const url of ['http://127.0.0.1:8080/hook', 'http://[::1]:8080/hook', 'http://169.254.169.254/latest/meta-data/', 'http://10.0.0.5/hook', 'http://192.168.1.10/hook', 'http://[::ffff:127.0.0.1]/hook']) {
        const res = await post('/api/admin/webhooks', root, { url, events: ['share.created'] });
        assert.equal(res.status, 400, url);
        assert.equal(((await res.json()) as { error: string }).error, 'bad_request');
      }
      const ok = (await (await post('/api/admin/webhooks', root, { url: 'https://hooks.example.com/in', events: ['share.created'] })).json()) as Hook;
      const patched = await fetch(`${t.url}/api/admin/webhooks/${ok.id}`, { method: 'PATCH', headers: { ...bearer(root), 'content-type': 'application/json' }, body: JSON.stringify({ url: 'http://127.0.0.1/x' }) });
      assert.equal(patched.status, 400);
      await fetch(`${t.url}/api/admin/webhooks/${ok.id}`, { method: 'DELETE', headers: bearer(root) });
    });

    test('a host name resolving to loopback (localhost) is accepted as a name but never delivered to', async () => {
      const r = await startReceiver();
      try {
        const made = await post('/api/admin/webhooks', root, { url: `http://localhost:${r.port}/hook`, events: ['share.created'] });
        assert.equal(made.status, 201);
        const h = (await made.json()) as Hook;
        r.setSecret(h.secret!);
        const tried = (await (await post(`/api/admin/webhooks/${h.id}/test`, root, {})).json()) as Delivery;
        assert.equal(tried.status, null);
        assert.match(tried.error!, /resolves to (127\.0\.0\.1|::1)/);
        assert.equal((await post('/api/shares', alice, { path: '/alice/a.txt' })).status, 201);
        await until(async () => ((await (await fetch(`${t.url}/api/admin/webhooks/${h.id}/deliveries`, { headers: bearer(root) })).json()) as { deliveries: Delivery[] }).deliveries.some((d) => d.event_type === 'share.created'), DELIVERY_MS, 'the event\'s refused attempt');
        const ds = ((await (await fetch(`${t.url}/api/admin/webhooks/${h.id}/deliveries`, { headers: bearer(root) })).json()) as { deliveries: Delivery[] }).deliveries;
        assert.match(ds.find((d) => d.event_type === 'share.created')!.error!, /private/);
        assert.equal(r.hits, 0, 'nothing reached the loopback receiver');
        await fetch(`${t.url}/api/admin/webhooks/${h.id}`, { method: 'DELETE', headers: bearer(root) });
      } finally {
        await r.stop();
      }
    });
  });
}
