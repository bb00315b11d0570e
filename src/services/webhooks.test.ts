// The webhook dispatcher with two event sources, as it runs once the change journal (issue 31) is
// merged: the audit log and a journal of file changes, each read by the hook's own cursor. The
// journal here is a list standing in for issue 31's table (not on this branch yet); the store,
// the receiver and the signatures are real.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStore } from '../store/sqlite.js';
import { systemClock } from '../lib/clock.js';
import { createAuditService } from './audit.js';
import { auditEventSource, changeJournalSource, createWebhookService, signWebhook, type HookEvent } from './webhooks.js';
import type { ChangeRecord } from '../store/changes.js';
import { startReceiver, type Receiver } from '../../test/helpers/webhook-receiver.js';

/** The body sent for an event: its own record, in the service's names (the receivers' spelling is src/routes/views.ts's, tested through the API). */
const body = (e: Pick<HookEvent, 'type' | 'time' | 'data'>) => JSON.stringify({ type: e.type, timestamp: new Date(e.time).toISOString(), data: e.data });

type Bench = { store: Awaited<ReturnType<typeof openSqliteStore>>; r: Receiver; audit: ReturnType<typeof createAuditService> };

/** A fresh SQLite store with its audit log, and a real receiver; all stopped and removed afterwards. */
async function withHookBench(fn: (b: Bench) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'fc-webhooks-'));
  const store = await openSqliteStore(join(dir, 'db'));
  const r = await startReceiver();
  try {
    await fn({ store, r, audit: createAuditService({ repo: store.audit, clock: systemClock, retentionDays: 0, onError: (e) => assert.fail(String(e)) }) });
  } finally {
    await r.stop();
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
}

test('file.* events from the journal source reach a hook in order, filtered by path_prefix, beside audit events; cursors survive a new dispatcher', () =>
  withHookBench(async ({ store, r, audit }) => {
    const changes: ChangeRecord[] = [];
    const journal = {
      latest: async () => changes.length,
      changesSince: async (cursor: number, limit: number) => changes.slice(cursor, cursor + limit),
    };
    const change = (type: ChangeRecord['type'], path: string) => {
      const [owner, ...rest] = path.slice(1).split('/');
      changes.push({ cursor: changes.length + 1, owner: owner!, type, path: rest.join('/'), isFile: true, size: 1, at: Date.now() });
    };
    const make = () => createWebhookService({ repo: store.webhooks, sources: [auditEventSource(store.audit), changeJournalSource(journal)], clock: systemClock, allowPrivate: true, body, onError: (e) => assert.fail(String(e)) });
    let hooks = make();
    change('created', '/alice/before-the-hook.txt');
    const h = await hooks.create({ url: r.url, events: ['file.created', 'file.moved', 'file.deleted', 'share.created'], pathPrefix: '/alice/photos' });
    r.setSecret(h.secret!);
    change('created', '/alice/photos/a.jpg');
    change('created', '/alice/notes/b.txt');
    change('moved', '/alice/photos/c.jpg');
    change('modified', '/alice/photos/a.jpg');
    change('deleted', '/alice/photos');
    change('created', '/alice/photosynthesis.txt');
    await audit.record({ type: 'share.created', actor: 'alice', target: '/alice/photos/a.jpg', outcome: 'success' });
    await audit.record({ type: 'share.created', actor: 'alice', target: '/alice/elsewhere.txt', outcome: 'success' });
    await hooks.tick();
    await hooks.settle();
    assert.deepEqual(r.received.map((e) => [e.type, e.data.path ?? e.data.target]), [
      ['share.created', '/alice/photos/a.jpg'],
      ['file.created', '/alice/photos/a.jpg'],
      ['file.moved', '/alice/photos/c.jpg'],
      ['file.deleted', '/alice/photos'],
    ]);
    // A new dispatcher (another leader) starts where this one stopped.
    hooks = make();
    change('created', '/alice/photos/d.jpg');
    await hooks.tick();
    await hooks.settle();
    assert.deepEqual(r.received.slice(4).map((e) => [e.type, e.data.path]), [['file.created', '/alice/photos/d.jpg']]);
    assert.deepEqual(r.rejected, []);
  }),
);

test('the signature is the Standard Webhooks one (the spec\'s example)', () => {
  // From the specification's test vectors: secret, msg id, timestamp and payload give this signature.
  const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
  const sig = signWebhook(secret, 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}');
  assert.equal(sig, 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
});

test('a busy audit log (hundreds of entries no hook asked for) does not hold a hook back: one round reaches the event', () =>
  withHookBench(async ({ store, r, audit }) => {
    const hooks = createWebhookService({ repo: store.webhooks, sources: [auditEventSource(store.audit)], clock: systemClock, allowPrivate: true, body, onError: (e) => assert.fail(String(e)) });
    const h = await hooks.create({ url: r.url, events: ['user.created'] });
    r.setSecret(h.secret!);
    for (let i = 0; i < 700; i++) await audit.record({ type: 'login.succeeded', actor: `u${i}`, outcome: 'success' });
    await audit.record({ type: 'user.created', actor: 'root', target: 'newbie', outcome: 'success' });
    await hooks.tick();
    await hooks.settle();
    assert.deepEqual(r.received.map((e) => e.data.target), ['newbie']);
  }),
);

test('a dispatcher that stops leading mid-run sends nothing more; its successor goes on from the saved cursor, each event once', () =>
  withHookBench(async ({ store, r, audit }) => {
    // The first dispatcher loses its lease once the receiver has answered two events.
    const make = (leading: () => boolean) => createWebhookService({ repo: store.webhooks, sources: [auditEventSource(store.audit)], clock: systemClock, allowPrivate: true, body, leading, onError: (e) => assert.fail(String(e)) });
    const old = make(() => r.received.length < 2);
    const h = await old.create({ url: r.url, events: ['user.created'] });
    r.setSecret(h.secret!);
    for (let i = 0; i < 5; i++) await audit.record({ type: 'user.created', actor: 'root', target: `u${i}`, outcome: 'success' });
    await old.tick();
    await old.settle();
    assert.deepEqual(r.received.map((e) => e.data.target), ['u0', 'u1'], 'nothing sent once the lease is gone');
    const successor = make(() => true);
    await successor.tick();
    await successor.settle();
    assert.deepEqual(r.received.map((e) => e.data.target), ['u0', 'u1', 'u2', 'u3', 'u4']);
  }),
);
