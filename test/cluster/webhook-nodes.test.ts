// Two File Cloud nodes (two workers each) sharing PostgreSQL, Redis and S3 (issue 33): the audit
// log is one hash chain whatever node appends, and a webhook is told of each event once, in order,
// whichever node the action reached: only the leader delivers.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { bearer, login } from '../helpers/client.js';
import { runCli, s3ServerOptions, startServer, type ServerProcess } from '../helpers/server.js';
import { newDatabase, redisService, skipReason } from '../helpers/services.js';
import { startReceiver, until, type Receiver } from '../helpers/webhook-receiver.js';
import { startAll } from '../helpers/start-all.js';

const skip = skipReason('S3') ?? skipReason('PostgreSQL') ?? skipReason('Redis');

describe('webhooks and the audit log on two nodes', { skip }, () => {
  let a: ServerProcess;
  let b: ServerProcess;
  let database: string;
  let r: Receiver;

  before(async () => {
    const s3 = await s3ServerOptions();
    database = await newDatabase('webhook-nodes');
    const node = { args: [...s3.args, '--database', database, '--redis', redisService() as string, '--workers', '2', '--dev', '--webhooks-allow-private'], env: s3.env };
    [a, b] = await startAll(startServer(node), startServer(node));
    r = await startReceiver();
  });
  after(async () => {
    await r?.stop();
    await Promise.all([a?.dispose(), b?.dispose()]);
  });

  test('events made on both nodes reach the hook once each, in the order of the one audit chain, which verifies', async () => {
    const adminA = (await login(a.url, 'admin', a.adminPassword)).access_token;
    const adminB = (await login(b.url, 'admin', b.adminPassword)).access_token;
    const made = await fetch(`${a.url}/api/admin/webhooks`, { method: 'POST', headers: { ...bearer(adminA), 'content-type': 'application/json' }, body: JSON.stringify({ url: r.url, events: ['user.created', 'login.failed'] }) });
    assert.equal(made.status, 201);
    r.setSecret(((await made.json()) as { secret: string }).secret);
    const names: string[] = [];
    for (let i = 0; i < 12; i++) {
      const [url, token] = i % 2 === 0 ? [a.url, adminA] : [b.url, adminB];
      const name = `user${i}`;
      names.push(name);
      const res = await fetch(`${url}/api/admin/users`, { method: 'POST', headers: { ...bearer(token), 'content-type': 'application/json' }, body: JSON.stringify({ username: name, password: `${name}-password` }) });
      assert.equal(res.status, 201);
    }
    // And some at once, on both nodes: their order is the chain's.
    await Promise.all(Array.from({ length: 10 }, (_, i) => fetch(`${i % 2 ? a.url : b.url}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: `ghost${i}`, password: 'wrong-password' }) })));
    await until(() => r.received.length >= 22, 20_000, `22 events (got ${r.received.length})`);
    // A second node that also delivered would add copies within its own round: give it that long.
    await new Promise((res) => setTimeout(res, 2500));
    // On a failure, say which events came twice and what the nodes logged about leadership and delivery.
    const seen = r.received.map((e) => e.id);
    const twice = seen.filter((id, i) => seen.indexOf(id) !== i);
    const logged = [a, b].flatMap((n) => `${n.output().stdout}\n${n.output().stderr}`.split('\n')).filter((l) => /leader|webhook|Redis/i.test(l));
    assert.equal(r.received.length, 22, `each event once, not once per node or worker; twice: ${twice.join(', ')}; received: ${r.received.map((e) => `${e.id} ${e.type} ${String(e.data.target)}`).join(' | ')}; the nodes logged:\n${logged.slice(-40).join('\n')}`);
    assert.deepEqual(r.received.slice(0, 12).map((e) => e.data.target), names);
    const auditIds = r.received.map((e) => e.data.audit_id as number);
    assert.deepEqual(auditIds, [...auditIds].sort((x, y) => x - y), 'in the chain\'s order');
    assert.deepEqual(r.rejected, []);
    // The one leader holds its lease in PostgreSQL, also with Redis (src/main.ts): a Redis timeout on one process cannot make a second.
    const db = new pg.Client({ connectionString: database });
    await db.connect();
    try {
      assert.equal((await db.query("SELECT owner FROM leases WHERE name = 'leader'")).rowCount, 1, 'the leader lease is in the database');
    } finally {
      await db.end();
    }
    const verify = await runCli(['audit', 'verify', '--data-dir', a.dataDir, '--database', database]);
    assert.equal(verify.code, 0, verify.stderr);
    const page = (await (await fetch(`${b.url}/api/admin/audit?limit=1000`, { headers: bearer(adminB) })).json()) as { events: { id: number }[] };
    assert.deepEqual(page.events.map((e) => e.id), Array.from({ length: page.events.length }, (_, i) => page.events.length - i), 'one gapless chain');
  });
});
