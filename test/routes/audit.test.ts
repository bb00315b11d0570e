// The audit log (issue 33, docs/operations.md "Audit log") on every backend: each security event type
// recorded by performing its action over HTTP, with actor, client address, user agent, target and
// outcome; the admin API's filters and pages; the hash chain, whose verification (`file-cloud audit
// verify`) catches a row edited or deleted directly in SQLite or PostgreSQL; retention keeps it verifiable.
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import pg from 'pg';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { bearer } from '../helpers/client.js';
import { runCli } from '../helpers/server.js';
import { newDatabase, skipReason } from '../helpers/services.js';
import { base32Decode, totp } from '../../src/domain/totp.js';
import { createAuditService } from '../../src/services/audit.js';

type Event = { id: number; time: string; type: string; actor: string | null; address: string | null; user_agent: string | null; target: string | null; outcome: string; detail: Record<string, unknown> | null; prev_hash: string; hash: string };
const UA = 'audit-test/1.0 (file-cloud)';

for (const [storage, skip] of BACKENDS) {
  describe(`audit log on ${storage}`, { skip }, () => {
    let t: TestApp;
    let root: string;
    let exportDir: string;
    before(async () => {
      exportDir = await mkdtemp(join(tmpdir(), 'fc-audit-export-'));
      t = await startApp({ storage, users: ['alice', 'bob'], flags: { auditLog: join(exportDir, 'audit.jsonl') } });
      await t.addUser('root', { admin: true });
      root = (await t.login('root')).access_token;
    });
    after(async () => {
      await t?.close();
      await rm(exportDir, { recursive: true, force: true });
    });

    const req = (method: string, path: string, token: string | undefined, body?: unknown) =>
      fetch(`${t.url}${path}`, {
        method,
        headers: { 'user-agent': UA, ...(token ? bearer(token) : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    const json = async <T>(res: Response, status: number): Promise<T> => {
      const text = await res.text();
      assert.equal(res.status, status, text);
      return text === '' ? (undefined as T) : (JSON.parse(text) as T);
    };
    const page = (query: string) => req('GET', `/api/admin/audit?${query}`, root).then((r) => json<{ events: Event[]; cursor: string | null }>(r, 200));
    const all = async () => (await page('limit=1000')).events;
    const signIn = async (username: string, password: string) => json<{ access_token: string; refresh_token: string }>(await req('POST', '/auth/login', undefined, { username, password }), 200);

    /** The database, edited behind the server's back as an intruder with database access would. */
    const sqlExec = async (statement: string, params: unknown[] = []) => {
      if (t.config.database.kind === 'postgres') {
        const c = new pg.Client({ connectionString: t.config.database.url });
        await c.connect();
        try {
          await c.query(statement.replace(/\?/g, (() => { let i = 0; return () => `$${++i}`; })()), params);
        } finally {
          await c.end();
        }
      } else {
        const db = new Database(t.paths.db);
        try {
          db.prepare(statement).run(...params);
        } finally {
          db.close();
        }
      }
    };
    const verify = () => runCli(['audit', 'verify', '--data-dir', t.dataDir, ...(t.config.database.kind === 'postgres' ? ['--database', t.config.database.url] : [])]);

    test('every security action is recorded, with actor, address, user agent, target and outcome; no password or secret in it', async () => {
      // Sign-in: ok, a wrong password, an unknown user; sign-out.
      const alice = await signIn('alice', 'alice-password');
      assert.equal((await req('POST', '/auth/login', undefined, { username: 'alice', password: 'not-her-password' })).status, 401);
      assert.equal((await req('POST', '/auth/login', undefined, { username: 'nobody', password: 'whatever-password' })).status, 401);
      // The no-JavaScript pages' sign-in form too.
      assert.equal((await fetch(`${t.url}/basic/login`, { method: 'POST', headers: { 'user-agent': UA, 'content-type': 'application/x-www-form-urlencoded' }, body: 'username=bob&password=wrong-basic-password' })).status, 401);
      // WebDAV Basic with a wrong password.
      assert.equal((await fetch(`${t.url}/dav/bob/`, { method: 'PROPFIND', headers: { depth: '0', authorization: `Basic ${Buffer.from('bob:wrong-dav-password').toString('base64')}` } })).status, 401);
      const spare = await signIn('alice', 'alice-password');
      await json(await req('POST', '/auth/logout', undefined, { username: 'alice', refresh_token: spare.refresh_token }), 204);
      // Account: password, TOTP on and off, app password made and revoked, a session revoked.
      await json(await req('POST', '/api/me/password', alice.access_token, { current_password: 'alice-password', new_password: 'alice-password-2' }), 204);
      const setup = await json<{ secret: string }>(await req('POST', '/api/me/totp', alice.access_token), 200);
      const confirmed = await json<{ recovery_codes: string[] }>(await req('POST', '/api/me/totp/confirm', alice.access_token, { code: totp(base32Decode(setup.secret) as Buffer, Date.now()) }), 200);
      await json(await req('DELETE', '/api/me/totp', alice.access_token, { code: confirmed.recovery_codes[0] }), 204);
      const key = await json<{ id: string }>(await req('POST', '/api/keys', alice.access_token, { name: 'backup script' }), 201);
      await json(await req('DELETE', `/api/keys/${key.id}`, alice.access_token), 204);
      const other = await signIn('alice', 'alice-password-2');
      const sessions = await json<{ sessions: { id: string; current: boolean }[] }>(await req('GET', '/api/sessions', alice.access_token), 200);
      const otherId = sessions.sessions.find((s) => !s.current)!.id;
      await json(await req('DELETE', `/api/sessions/${otherId}`, alice.access_token), 204);
      assert.ok(other.access_token);
      // Sharing: a link, a grant, a path token.
      await t.fs.put('report.txt', 'numbers');
      const share = await json<{ id: string }>(await req('POST', '/api/shares', alice.access_token, { path: '/alice/report.txt', password: 'share-secret-pw' }), 201);
      await json(await req('DELETE', `/api/shares/${share.id}`, alice.access_token), 204);
      const grant = await json<{ id: string }>(await req('POST', '/api/grants', alice.access_token, { path: '/alice/report.txt', to: 'user:bob', permission: 'read' }), 201);
      await json(await req('PATCH', `/api/grants/${grant.id}`, alice.access_token, { permission: 'write' }), 200);
      await json(await req('DELETE', `/api/grants/${grant.id}`, alice.access_token), 204);
      await json(await req('POST', '/storage/alice/report.txt', alice.access_token, { action: 'MakePathToken' }), 200);
      // Admin: users (create, each change, remove), groups, a quota; one refused attempt by a non-admin.
      await json(await req('POST', '/api/admin/users', root, { username: 'carol', password: 'carol-password' }), 201);
      await json(await req('PATCH', '/api/admin/users/carol', root, { password: 'carol-password-2', admin: true, quota: 1_000_000 }), 200);
      await json(await req('PATCH', '/api/admin/users/carol', root, { admin: false, disabled: true }), 200);
      await json(await req('PATCH', '/api/admin/users/carol', root, { disabled: false }), 200);
      await json(await req('DELETE', '/api/admin/users/carol', root), 204);
      await json(await req('POST', '/api/admin/groups', root, { name: 'team', members: ['alice'] }), 201);
      await json(await req('PATCH', '/api/admin/groups/team', root, { add: ['bob'] }), 200);
      await json(await req('DELETE', '/api/admin/groups/team', root), 204);
      assert.equal((await req('POST', '/api/admin/users', alice.access_token, { username: 'mallory', password: 'mallory-password' })).status, 403);

      const events = await all();
      const of = (type: string) => events.filter((e) => e.type === type);
      const one = (type: string, match: Partial<Event> = {}) => {
        const found = of(type).filter((e) => Object.entries(match).every(([k, v]) => (e as Record<string, unknown>)[k] === v));
        assert.ok(found.length >= 1, `${type} ${JSON.stringify(match)} among ${JSON.stringify(events.map((e) => [e.type, e.actor, e.target, e.outcome]))}`);
        return found[0]!;
      };
      const ok = one('login.succeeded', { actor: 'alice', outcome: 'success' });
      assert.equal(ok.user_agent, UA);
      assert.equal(ok.address, '127.0.0.1');
      assert.ok(!Number.isNaN(Date.parse(ok.time)));
      assert.equal(one('login.failed', { actor: 'alice' }).detail?.reason, 'invalid_credentials');
      assert.equal(one('login.failed', { actor: 'nobody' }).outcome, 'failure');
      assert.deepEqual(of('login.failed').filter((e) => e.actor === 'bob').map((e) => e.detail).reverse(), [{ method: 'basic', reason: 'invalid_credentials' }, { method: 'webdav', reason: 'invalid_credentials' }]);
      one('logout', { actor: 'alice', outcome: 'success' });
      one('password.changed', { actor: 'alice' });
      one('totp.setup_started', { actor: 'alice' });
      one('totp.enabled', { actor: 'alice' });
      one('totp.disabled', { actor: 'alice' });
      one('app_password.created', { actor: 'alice', target: key.id });
      one('app_password.revoked', { actor: 'alice', target: key.id });
      one('session.revoked', { actor: 'alice', target: otherId });
      assert.equal(one('share.created', { actor: 'alice', target: '/alice/report.txt' }).detail?.id, share.id);
      one('share.revoked', { actor: 'alice', target: share.id });
      assert.equal(one('grant.created', { actor: 'alice', target: '/alice/report.txt' }).detail?.to, 'user:bob');
      one('grant.changed', { actor: 'alice', target: grant.id });
      one('grant.revoked', { actor: 'alice', target: grant.id });
      one('path_token.created', { actor: 'alice', target: '/alice/report.txt' });
      one('user.created', { actor: 'root', target: 'carol', outcome: 'success' });
      for (const type of ['user.password_reset', 'user.admin_changed', 'user.quota_changed', 'user.disabled', 'user.enabled', 'user.removed']) one(type, { actor: 'root', target: 'carol' });
      assert.equal(one('user.quota_changed', { target: 'carol' }).detail?.quota, 1_000_000);
      one('group.created', { actor: 'root', target: 'team' });
      one('group.changed', { actor: 'root', target: 'team' });
      one('group.removed', { actor: 'root', target: 'team' });
      // Refused before its body is read (the rule is checked first), so the attempt names no target.
      const refused = one('user.created', { actor: 'alice', target: null });
      assert.equal(refused.outcome, 'denied');
      assert.equal(refused.detail?.reason, 'forbidden');
      const text = JSON.stringify(events);
      for (const secret of ['alice-password', 'not-her-password', 'wrong-basic-password', 'wrong-dav-password', 'whatever-password', 'carol-password', 'share-secret-pw', confirmed.recovery_codes[0]!, setup.secret]) assert.equal(text.includes(secret), false, `"${secret}" is in the log`);
      // One chain, newest first: each entry seals the one before.
      for (let i = 0; i + 1 < events.length; i++) {
        assert.equal(events[i]!.id, events[i + 1]!.id + 1);
        assert.equal(events[i]!.prev_hash, events[i + 1]!.hash);
      }
    });

    test('filters (user, type, family, since/until) and pages by cursor; bad parameters are 400; not for non-admins', async () => {
      const alice = await signIn('alice', 'alice-password-2');
      assert.equal((await req('GET', '/api/admin/audit', alice.access_token)).status, 403);
      assert.equal((await req('GET', '/api/admin/audit', undefined)).status, 401);
      for (const q of ['limit=0', 'limit=1001', 'limit=x', 'since=yesterday', 'cursor=-1']) assert.equal((await req('GET', `/api/admin/audit?${q}`, root)).status, 400, q);
      const byAlice = (await page('user=alice&limit=1000')).events;
      assert.ok(byAlice.length > 5 && byAlice.every((e) => e.actor === 'alice'));
      const grants = (await page('type=grant.*&limit=1000')).events;
      assert.deepEqual([...new Set(grants.map((e) => e.type))].sort(), ['grant.changed', 'grant.created', 'grant.revoked']);
      assert.ok((await page('type=login.failed')).events.every((e) => e.type === 'login.failed'));
      const everything = await all();
      const newest = everything[0]!;
      assert.deepEqual((await page(`since=${encodeURIComponent(newest.time)}&limit=1000`)).events.every((e) => Date.parse(e.time) >= Date.parse(newest.time)), true);
      assert.deepEqual((await page(`until=${encodeURIComponent(new Date(Date.parse(everything.at(-1)!.time)).toISOString())}`)).events, []);
      const seen: number[] = [];
      let cursor: string | null = null;
      do {
        const p: { events: Event[]; cursor: string | null } = await page(`limit=7${cursor ? `&cursor=${cursor}` : ''}`);
        assert.ok(p.events.length <= 7);
        seen.push(...p.events.map((e) => e.id));
        cursor = p.cursor;
      } while (cursor);
      assert.deepEqual(seen, everything.map((e) => e.id).filter((id) => id <= seen[0]!));
    });

    test('many appends at once (cluster: from two workers) form one unbroken chain, and --audit-log has each as a JSON line', async () => {
      await Promise.all(Array.from({ length: 24 }, (_, i) => req('POST', '/auth/login', undefined, { username: `ghost${i}`, password: 'wrong-password' })));
      const events = await all();
      assert.equal(events.filter((e) => e.type === 'login.failed' && e.actor?.startsWith('ghost')).length, 24);
      assert.deepEqual(events.map((e) => e.id), Array.from({ length: events.length }, (_, i) => events.length - i));
      const r = await verify();
      assert.equal(r.code, 0, r.stderr);
      const lines = (await readFile(join(exportDir, 'audit.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Event);
      assert.deepEqual(lines.map((e) => [e.id, e.hash]).sort((a, b) => (a[0] as number) - (b[0] as number)), [...events].reverse().map((e) => [e.id, e.hash]));
    });

    test('admin actions with the CLI are recorded too (via: cli), into the same chain', { skip: storage !== 'file' && 'the CLI reaches S3 storage only with the run\'s credentials; the chain code is the same' }, async () => {
      const cli = (...args: string[]) => runCli([...args, '--data-dir', t.dataDir]);
      for (const args of [['user', 'add', 'erin', '--password', 'erin-password'], ['user', 'quota', 'erin', '10M'], ['user', 'admin', 'erin', 'on'], ['user', 'admin', 'erin', 'off'], ['user', 'passwd', 'erin', '--password', 'erin-password-2'], ['group', 'add', 'crew'], ['group', 'member', 'crew', 'add', 'erin'], ['group', 'remove', 'crew'], ['user', 'remove', 'erin']]) {
        const r = await cli(...args);
        assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
      }
      const events = (await all()).filter((e) => e.detail?.via === 'cli');
      assert.deepEqual(events.map((e) => [e.type, e.target]).reverse(), [
        ['user.created', 'erin'], ['user.quota_changed', 'erin'], ['user.admin_changed', 'erin'], ['user.admin_changed', 'erin'], ['user.password_reset', 'erin'],
        ['group.created', 'crew'], ['group.changed', 'crew'], ['group.removed', 'crew'], ['user.removed', 'erin'],
      ]);
      assert.ok(events.every((e) => e.actor === null && e.user_agent === 'file-cloud CLI' && e.outcome === 'success'));
      assert.equal(JSON.stringify(events).includes('erin-password'), false);
      const r = await verify();
      assert.equal(r.code, 0, r.stderr);
    });

    test('audit verify: a whole chain passes; an edited row and a deleted row are found by position (exit 1)', async () => {
      const whole = await verify();
      assert.equal(whole.code, 0, whole.stderr);
      assert.match(whole.stdout, /intact/);
      const events = await all();
      const victim = events[Math.floor(events.length / 2)]!;
      // Edited: the outcome of one entry rewritten.
      await sqlExec('UPDATE audit_events SET outcome = ? WHERE seq = ?', ['success', victim.id]);
      await sqlExec('UPDATE audit_events SET actor = ? WHERE seq = ?', ['someone-else', victim.id]);
      const edited = await verify();
      assert.equal(edited.code, 1, edited.stdout);
      assert.match(edited.stderr, new RegExp(`entry ${victim.id} was altered`));
      await sqlExec('UPDATE audit_events SET outcome = ?, actor = ? WHERE seq = ?', [victim.outcome, victim.actor, victim.id]);
      assert.equal((await verify()).code, 0, 'restored');
      // Edited with its hash recomputed: the next entry still sealed the old one.
      const hashed = createHashOf(victim, { target: 'forged' });
      await sqlExec('UPDATE audit_events SET target = ?, hash = ? WHERE seq = ?', ['forged', hashed, victim.id]);
      const forged = await verify();
      assert.equal(forged.code, 1);
      assert.match(forged.stderr, new RegExp(`entry ${victim.id} was altered`));
      await sqlExec('UPDATE audit_events SET target = ?, hash = ? WHERE seq = ?', [victim.target, victim.hash, victim.id]);
      // Deleted: one row gone from the middle, then the newest.
      await sqlExec('DELETE FROM audit_events WHERE seq = ?', [victim.id]);
      const deleted = await verify();
      assert.equal(deleted.code, 1);
      assert.match(deleted.stderr, new RegExp(`entry ${victim.id} is missing`));
      await sqlExec('DELETE FROM audit_events WHERE seq > ?', [victim.id]);
      assert.match((await verify()).stderr, new RegExp(`entries ${victim.id} to \\d+ are missing`), 'the newest entries removed too');
      await sqlExec('DELETE FROM audit_events WHERE seq >= 0');
      const emptied = await verify();
      assert.equal(emptied.code, 1, 'emptying the table is caught too: the head remembers');
      assert.match(emptied.stderr, /entries 1 to \d+ are missing/);
    });

    test('retention purges old entries and moves the anchor: what remains verifies, and new entries chain on', async () => {
      // A fresh chain of its own: the previous test broke this one on purpose.
      await sqlExec('DELETE FROM audit_events WHERE seq >= 0');
      await sqlExec('UPDATE audit_head SET seq = 0, hash = ?, anchor_seq = 0, anchor_hash = ?', ['0'.repeat(64), '0'.repeat(64)]);
      for (let i = 0; i < 4; i++) await signIn('bob', 'bob-password');
      const cutoff = Date.now() + 1;
      await new Promise((r) => setTimeout(r, 5));
      for (let i = 0; i < 2; i++) await signIn('bob', 'bob-password');
      // The service with a clock one day past the cutoff and a retention of one day purges exactly the first four.
      const audit = createAuditService({ repo: t.store.audit, clock: { now: () => cutoff + 86_400_000 }, retentionDays: 1, onError: (e) => assert.fail(String(e)) });
      assert.equal(await audit.purge(), 4);
      const left = await all();
      assert.deepEqual(left.map((e) => e.id), [6, 5]);
      const r = await verify();
      assert.equal(r.code, 0, r.stderr);
      await signIn('bob', 'bob-password');
      assert.equal((await verify()).code, 0);
      await sqlExec('DELETE FROM audit_events WHERE seq = 5');
      assert.match((await verify()).stderr, /entry 5 is missing/, 'the anchor still tells a removed first entry');
    });
  });
}

// A sign-in is recorded in onSend, once its answer is known: there the request waits for the
// database. The request deadline (docs/operations.md) must not answer it a second time: before, a
// slow audit append past the deadline gave the client a 503 on top of its 401, and the chain two
// entries for one attempt (a webhook sent both).
test('a sign-in whose audit entry waits past the request deadline is answered once, and recorded once', { skip: skipReason('PostgreSQL'), timeout: 120_000 }, async () => {
  const t = await startApp({ flags: { database: await newDatabase('audit_deadline'), requestDeadline: '1' } });
  const db = t.config.database;
  assert.ok(db.kind === 'postgres');
  const hold = new pg.Client({ connectionString: db.url });
  await hold.connect();
  try {
    // The audit head's row locked, as a long transaction of another node would hold it: every append waits.
    await hold.query('BEGIN');
    await hold.query('SELECT seq FROM audit_head WHERE id = 1 FOR UPDATE');
    const started = Date.now();
    const answer = fetch(`${t.url}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'nobody', password: 'wrong-password' }) });
    // Three deadlines long: a second answer would have been sent by now.
    await new Promise((r) => setTimeout(r, 3000));
    await hold.query('COMMIT');
    const res = await answer;
    assert.equal(res.status, 401, await res.text());
    assert.ok(Date.now() - started >= 3000, 'the answer waited for its audit entry');
    const rows = await hold.query("SELECT detail FROM audit_events WHERE type = 'login.failed' AND target = 'nobody'");
    assert.deepEqual(rows.rows.map((r: { detail: string }) => JSON.parse(r.detail).reason), ['invalid_credentials']);
  } finally {
    await hold.end().catch(() => undefined);
    await t.close();
  }
});

/** An entry's hash after `change`, as an intruder who knows the scheme would recompute it. */
function createHashOf(e: Event, change: Partial<Event>): string {
  const x = { ...e, ...change };
  return sha256(JSON.stringify([x.id, Date.parse(x.time), x.type, x.actor, x.address, x.user_agent, x.target, x.outcome, x.detail === null ? null : JSON.stringify(x.detail), x.prev_hash]));
}
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
