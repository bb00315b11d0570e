import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { get } from 'node:http';
import { HEARTBEAT_MS, STREAMS_PER_USER } from '../../src/services/change-streams.js';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { bearer, encodePath, postJson } from '../helpers/client.js';
import { openEventStream, type EventStreamClient, type SseEvent } from '../helpers/event-stream.js';
import { sample } from '../helpers/metrics.js';

type Change = { cursor: string; type: string; path: string };
type Page = { changes: Change[]; cursor: string; more: boolean };
type Auth = Record<string, string>;

/** A change reaches every stream within 1 s (docs/api.md); a test on this busy machine allows this much more before it calls a bound broken. */
const WAKE_MS = 1000;
const SLACK_MS = 5000;

/** The paths of the entries a stream delivered. */
const paths = (events: readonly SseEvent[]) => events.filter((e) => e.data !== undefined).map((e) => (JSON.parse(e.data as string) as Change).path);
const show = (events: readonly SseEvent[]) => JSON.stringify(events);

/** One scrape of /metrics over a connection of its own (in a cluster: the next worker in turn). */
const scrape = (url: string) =>
  new Promise<string>((resolve, reject) => {
    get(`${url}/metrics`, { agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => (res.statusCode === 200 ? resolve(text) : reject(new Error(`/metrics: ${res.statusCode} ${text}`))));
    }).on('error', reject);
  });

/**
 * Hostile users of the change feed (issue 49, findings 3–5): a stream that
 * outlives its credential, the feed as a side channel on other users'
 * activity, and unlimited streams that make every write wake them all.
 */
for (const [storage, skip] of BACKENDS) {
  describe(`change stream rules on ${storage}`, { skip }, () => {
    let t: TestApp;
    const open: EventStreamClient[] = [];
    before(async () => {
      // Round robin between the cluster's two workers: two scrapes of /metrics on new connections reach both.
      t = await startApp({ storage, flags: { indexInterval: '0', metrics: true }, env: { NODE_CLUSTER_SCHED_POLICY: 'rr' } });
    });
    afterEach(() => {
      for (const s of open.splice(0)) s.close();
    });
    after(() => t.close());

    const user = async (name: string, o: { admin?: boolean } = {}) => {
      await t.addUser(name, o);
      return t.login(name);
    };
    const put = async (auth: Auth, owner: string, path: string) => {
      const res = await fetch(`${t.url}/storage/${owner}/${encodePath(path)}`, { method: 'PUT', headers: { ...auth, 'content-type': 'application/octet-stream' }, body: path });
      assert.equal(res.status, 201, await res.text());
    };
    const expect = async (res: Promise<Response>, status: number) => {
      const r = await res;
      assert.equal(r.status, status, await r.clone().text());
      return r;
    };
    const changes = async (auth: Auth, query: Record<string, string>): Promise<Page> => (await (await expect(fetch(`${t.url}/api/changes?${new URLSearchParams(query)}`, { headers: auth }), 200)).json()) as Page;
    const stream = (auth: Auth) => openEventStream(`${t.url}/api/changes/stream`, auth);
    const follow = async (auth: Auth) => {
      const s = await stream(auth);
      open.push(s);
      assert.equal(s.status, 200, s.body);
      return s;
    };
    /** Change-stream figures summed over every process of the app: in a cluster, both workers (round robin). */
    const figures = async () => {
      const texts = storage === 'cluster' ? [await scrape(t.url), await scrape(t.url)] : [await scrape(t.url)];
      const sum = (name: string) => texts.reduce((n, text) => n + (sample(text, name) ?? NaN), 0);
      return { open: sum('file_cloud_change_streams_open'), wakeups: sum('file_cloud_change_stream_wakeups_total') };
    };

    test('a stream sends nothing more once its credential is gone, and ends: logout, password change, revoked app password (at the next change), disabled user (within the heartbeat)', async () => {
      const root = bearer((await user('root3', { admin: true })).access_token);
      const bound = HEARTBEAT_MS + SLACK_MS;
      const cases: Record<string, () => Promise<EventStreamClient>> = {
        async logout() {
          const [a, b] = [await user('out3'), await t.login('out3')];
          const s = await follow(bearer(a.access_token));
          await expect(postJson(`${t.url}/auth/logout`, { username: 'out3', refresh_token: a.refresh_token }), 204);
          await put(bearer(b.access_token), 'out3', 'after.txt');
          return s;
        },
        async password() {
          const [a, b] = [await user('pw3'), await t.login('pw3')];
          const s = await follow(bearer(a.access_token));
          await expect(postJson(`${t.url}/api/me/password`, { current_password: 'pw3-password', new_password: 'another-long-password' }, bearer(b.access_token)), 204);
          await put(bearer(b.access_token), 'pw3', 'after.txt');
          return s;
        },
        async key() {
          const a = bearer((await user('key3')).access_token);
          const k = (await (await expect(postJson(`${t.url}/api/keys`, { name: 'sync' }, a), 201)).json()) as { id: string; key: string };
          const s = await follow(bearer(k.key));
          await expect(fetch(`${t.url}/api/keys/${k.id}`, { method: 'DELETE', headers: a }), 204);
          await put(a, 'key3', 'after.txt');
          return s;
        },
        async disabled() {
          const a = await user('off3');
          const s = await follow(bearer(a.access_token));
          await expect(fetch(`${t.url}/api/admin/users/off3`, { method: 'PATCH', headers: { ...root, 'content-type': 'application/json' }, body: JSON.stringify({ disabled: true }) }), 200);
          return s;
        },
      };
      const results = await Promise.all(Object.entries(cases).map(async ([name, run]) => ({ name, s: await run() })));
      for (const { name, s } of results) {
        assert.ok(await s.end(bound), `${name}: the stream ended within ${bound} ms: ${show(s.events)}`);
        assert.deepEqual(paths(s.events), [], `${name}: nothing was sent after the credential went`);
      }
    });

    test('a user without grants gets no event for other users\' writes: ids come only on connecting and with each heartbeat', async () => {
      const eve = bearer((await user('eve4')).access_token);
      const bob = bearer((await user('bob4')).access_token);
      const watching = await follow(eve);
      const bobs = await follow(bob);
      for (const n of [1, 2, 3]) await put(bob, 'bob4', `b${n}.txt`);
      // Bob's own stream has them: the wake-ups of these writes went out.
      assert.ok(await bobs.until((e) => paths(e).length === 3, WAKE_MS + SLACK_MS), show(bobs.events));
      await put(eve, 'eve4', 'mine.txt');
      assert.ok(await watching.until((e) => paths(e).includes('/eve4/mine.txt'), WAKE_MS + SLACK_MS), show(watching.events));
      const extra = watching.events.filter((e) => e.data === undefined && !e.comments.includes('connected') && !e.comments.includes('heartbeat'));
      assert.deepEqual(extra, [], `events that only others' writes caused: ${show(watching.events)}`);
      assert.deepEqual(paths(watching.events), ['/eve4/mine.txt']);
    });

    test('cursors tell nothing of other users\' writes: none is a number, one place reads differently each time, `more` only for the caller\'s entries; they resume exactly; another user\'s or an old numeric one is 410', async () => {
      const eve = bearer((await user('eve5')).access_token);
      const bob = bearer((await user('bob5')).access_token);
      const c0 = (await changes(eve, {})).cursor;
      const again = (await changes(eve, { cursor: 'now' })).cursor;
      assert.notEqual(again, c0, 'the same place, read twice with nothing written, gives two values: a new one says nothing');
      await put(eve, 'eve5', 'e1.txt');
      for (const n of [1, 2, 3]) await put(bob, 'bob5', `b${n}.txt`);
      await put(eve, 'eve5', 'e2.txt');
      await put(bob, 'bob5', 'b4.txt');
      const p1 = await changes(eve, { cursor: c0, limit: '1' });
      assert.deepEqual([p1.changes.map((c) => c.path), p1.more], [['/eve5/e1.txt'], true]);
      const p2 = await changes(eve, { cursor: p1.cursor, limit: '1' });
      assert.deepEqual([p2.changes.map((c) => c.path), p2.more], [['/eve5/e2.txt'], false], 'bob\'s later write makes no `more` for eve');
      const whole = await changes(eve, { cursor: c0 });
      assert.deepEqual(whole.changes.map((c) => c.path), ['/eve5/e1.txt', '/eve5/e2.txt']);
      for (const c of [c0, again, p1.cursor, p2.cursor, whole.cursor, ...whole.changes.map((x) => x.cursor)]) {
        assert.ok(Number.isNaN(Number(c)), `${c} is no count of the journal's entries`);
      }
      assert.deepEqual((await changes(eve, { cursor: (whole.changes[0] as Change).cursor })).changes.map((c) => c.path), ['/eve5/e2.txt'], 'an entry\'s cursor resumes after it');
      assert.deepEqual((await changes(eve, { cursor: p2.cursor })).changes, [], 'and a page\'s after it');
      for (const [who, cursor] of [[bob, c0], [eve, '1']] as const) {
        const res = await fetch(`${t.url}/api/changes?cursor=${encodeURIComponent(cursor)}`, { headers: who });
        assert.deepEqual([res.status, ((await res.json()) as { error: string }).error], [410, 'cursor_expired'], cursor);
      }
    });

    test('a folder\'s ETag tells nothing of other users\' writes: it stays while they write, changes with the folder, and is no journal position', async () => {
      const eve = bearer((await user('eve9')).access_token);
      const bob = bearer((await user('bob9')).access_token);
      const tag = async () => {
        const res = await expect(fetch(`${t.url}/storage/eve9/`, { headers: eve }), 200);
        await res.arrayBuffer();
        return res.headers.get('etag') ?? '';
      };
      await put(eve, 'eve9', 'a.txt');
      const before = await tag();
      for (const n of [1, 2, 3]) await put(bob, 'bob9', `b${n}.txt`);
      assert.equal(await tag(), before, 'others\' writes change nothing');
      await put(eve, 'eve9', 'b.txt');
      const after = await tag();
      assert.notEqual(after, before);
      for (const etag of [before, after]) assert.doesNotMatch(etag, /^"t-[0-9a-z]{1,11}"$/, `${etag} is no journal position in base 36`);
    });

    test('a stream shows a granted tree from the grant on, stops when the grant ends, and never shows the owner\'s other folders', async () => {
      const owner = bearer((await user('own6')).access_token);
      const rec = bearer((await user('rec6')).access_token);
      await put(owner, 'own6', 'team/seed.txt');
      await put(owner, 'own6', 'private/seed.txt');
      const s = await follow(rec);
      const grant = (await (await expect(postJson(`${t.url}/api/grants`, { path: '/own6/team', to: 'user:rec6', permission: 'read' }, owner), 201)).json()) as { id: string };
      await put(owner, 'own6', 'private/p.txt');
      await put(owner, 'own6', 'team/a.txt');
      assert.ok(await s.until((e) => paths(e).includes('/own6/team/a.txt'), WAKE_MS + SLACK_MS), show(s.events));
      await expect(fetch(`${t.url}/api/grants/${grant.id}`, { method: 'DELETE', headers: owner }), 204);
      await put(owner, 'own6', 'team/b.txt');
      await put(rec, 'rec6', 'marker.txt');
      assert.ok(await s.until((e) => paths(e).includes('/rec6/marker.txt'), WAKE_MS + SLACK_MS), show(s.events));
      assert.deepEqual(paths(s.events), ['/own6/team/a.txt', '/rec6/marker.txt']);
    });

    test(`a user may keep ${STREAMS_PER_USER} streams open: the next is refused with 429 too_many_streams, other users are not, and closing one frees its place`, async () => {
      const eve = bearer((await user('eve7')).access_token);
      const bob = bearer((await user('bob7')).access_token);
      const mine: EventStreamClient[] = [];
      for (let i = 0; i < STREAMS_PER_USER; i++) mine.push(await follow(eve));
      const refused = await stream(eve);
      open.push(refused);
      assert.equal(refused.status, 429, refused.body);
      assert.equal((JSON.parse(refused.body) as { error: string }).error, 'too_many_streams');
      await follow(bob);
      (mine[0] as EventStreamClient).close();
      // Its place is free once the server sees the connection close.
      const deadline = Date.now() + SLACK_MS;
      for (;;) {
        const next = await stream(eve);
        open.push(next);
        if (next.status === 200) break;
        assert.equal(next.status, 429, next.body);
        assert.ok(Date.now() < deadline, `a closed stream's place was not free within ${SLACK_MS} ms`);
        await new Promise((r) => setTimeout(r, 100));
      }
    });

    test('a write wakes only the streams that may see it: nine idle streams of another user cost it nothing', async (tc) => {
      const eve = bearer((await user('eve8')).access_token);
      const bob = bearer((await user('bob8')).access_token);
      for (let i = 0; i < 9; i++) await follow(eve);
      const bobs = [await follow(bob), await follow(bob)];
      // Eleven open, an odd number: two scrapes that reached the same worker twice could not add up to it.
      // Streams of the tests before end once the server sees their connections close.
      const deadline = Date.now() + SLACK_MS;
      let before = await figures();
      while (before.open !== 11 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100));
        before = await figures();
      }
      assert.equal(before.open, 11, 'every process scraped, no stream of another test left');
      const writes = 3;
      for (let n = 0; n < writes; n++) await put(bob, 'bob8', `w${n}.txt`);
      for (const s of bobs) assert.ok(await s.until((e) => paths(e).length === writes, WAKE_MS + SLACK_MS), show(s.events));
      const woken = (await figures()).wakeups - before.wakeups;
      tc.diagnostic(`${woken} wake-ups for ${writes} writes`);
      assert.ok(woken <= bobs.length * writes, `${woken} wake-ups for ${writes} writes, with ${bobs.length} streams that see them and 9 that do not`);
    });
  });
}
