import assert from 'node:assert/strict';
import { storeTest, type OpenStore } from './support.test-suite.js';
import { LastAdminError } from '../users.js';
import type { MetadataStore } from '../metadata-store.js';

/**
 * Store conformance for the account features (migration 0009_accounts): session metadata,
 * own-session revocation, password change keeping one session, the last-admin rule, TOTP
 * replay protection and recovery codes. Run by every MetadataStore implementation.
 */
export function runAccountsConformance(name: string, open: OpenStore): void {
  const withStore = storeTest(`${name}`, open);
  const NOW = 1_700_000_000_000;
  const newUser = (store: MetadataStore, username: string, isAdmin = false) => store.users.create({ username, passwordHash: 'scrypt$x', isAdmin, authEpoch: 'e1', now: NOW });

  withStore('sessions keep client and address; list is the user\'s live ones; deleteOwned only the owner\'s', async (store) => {
    const a = await newUser(store, 'alice');
    const b = await newUser(store, 'bob');
    const s1 = await store.sessions.create({ userId: a.id, refreshHash: 'r1', now: NOW, expiresAt: NOW + 1000, client: 'curl/8', address: '10.0.0.1' });
    const s2 = await store.sessions.create({ userId: a.id, refreshHash: 'r2', now: NOW + 5, expiresAt: NOW + 1000 });
    await store.sessions.create({ userId: a.id, refreshHash: 'r3', now: NOW, expiresAt: NOW + 1 });
    const sb = await store.sessions.create({ userId: b.id, refreshHash: 'rb', now: NOW, expiresAt: NOW + 1000 });
    assert.equal(s1.client, 'curl/8');
    assert.equal(s2.client, null);
    const listed = await store.sessions.listByUser(a.id, NOW + 10);
    assert.deepEqual(listed.map((s) => s.id), [s2.id, s1.id], 'live ones, most recently used first');
    assert.deepEqual(listed[1], s1);
    assert.equal(await store.sessions.deleteOwned(sb.id, a.id), false, "another user's session");
    assert.ok(await store.sessions.findByRefreshHash('rb', NOW));
    await store.sessions.addAccessToken({ tokenHash: 'a1', sessionId: s1.id, expiresAt: NOW + 1000 });
    assert.equal(await store.sessions.deleteOwned(s1.id, a.id), true);
    assert.equal(await store.sessions.findAccess('a1', NOW), undefined);
    assert.equal(await store.sessions.deleteOwned(s1.id, a.id), false);
  });

  withStore('markUsed writes at most once per interval; touch records the address', async (store) => {
    const a = await newUser(store, 'alice');
    const s = await store.sessions.create({ userId: a.id, refreshHash: 'r', now: NOW, expiresAt: NOW + 100_000, address: '10.0.0.1' });
    await store.sessions.markUsed(s.id, NOW + 30_000, '10.0.0.2', 60_000);
    let [now] = await store.sessions.listByUser(a.id, NOW);
    assert.equal(now?.lastUsedAt, NOW, 'within the interval: no write');
    await store.sessions.markUsed(s.id, NOW + 60_000, '10.0.0.3', 60_000);
    [now] = await store.sessions.listByUser(a.id, NOW);
    assert.deepEqual([now?.lastUsedAt, now?.address], [NOW + 60_000, '10.0.0.3']);
    await store.sessions.touch(s.id, NOW + 70_000, NOW + 170_000, '10.0.0.4');
    [now] = await store.sessions.listByUser(a.id, NOW);
    assert.deepEqual([now?.lastUsedAt, now?.address, now?.expiresAt], [NOW + 70_000, '10.0.0.4', NOW + 170_000]);
  });

  withStore('setPassword with a session to keep ends every other session only', async (store) => {
    const a = await newUser(store, 'alice');
    const keep = await store.sessions.create({ userId: a.id, refreshHash: 'keep', now: NOW, expiresAt: NOW + 1000 });
    await store.sessions.create({ userId: a.id, refreshHash: 'other', now: NOW, expiresAt: NOW + 1000 });
    await store.sessions.addAccessToken({ tokenHash: 'keep-a', sessionId: keep.id, expiresAt: NOW + 1000 });
    assert.equal(await store.users.setPassword('alice', 'scrypt$y', 'e2', keep.id), true);
    assert.ok(await store.sessions.findAccess('keep-a', NOW));
    assert.ok(await store.sessions.findByRefreshHash('keep', NOW));
    assert.equal(await store.sessions.findByRefreshHash('other', NOW), undefined);
    assert.equal((await store.users.getByName('alice'))?.authEpoch, 'e2');
  });

  withStore('the last administrator cannot be demoted or removed (keepAnAdmin); others can', async (store) => {
    await newUser(store, 'root', true);
    await newUser(store, 'alice', true);
    await newUser(store, 'bob');
    assert.equal(await store.users.setAdmin('alice', false), true);
    await assert.rejects(store.users.setAdmin('root', false), LastAdminError);
    await assert.rejects(store.users.delete('root', { keepAnAdmin: true }), LastAdminError);
    assert.equal((await store.users.getByName('root'))?.isAdmin, true);
    assert.equal(await store.users.setAdmin('bob', true), true);
    assert.equal(await store.users.delete('root', { keepAnAdmin: true }), true);
    assert.equal(await store.users.setAdmin('nobody', true), false);
    assert.equal(await store.users.delete('nobody', { keepAnAdmin: true }), false);
    assert.equal(await store.users.setAdmin('bob', false).catch((e: unknown) => e instanceof LastAdminError), true);
  });

  withStore('concurrent demotions of the last two administrators: exactly one succeeds', async (store) => {
    for (let round = 0; round < 5; round++) {
      await newUser(store, `a${round}`, true);
      await newUser(store, `b${round}`, true);
      if (round > 0) {
        await store.users.delete(`a${round - 1}`);
        await store.users.delete(`b${round - 1}`);
      }
      const results = await Promise.allSettled([store.users.setAdmin(`a${round}`, false), store.users.setAdmin(`b${round}`, false)]);
      assert.deepEqual(results.map((r) => r.status).sort(), ['fulfilled', 'rejected'], `round ${round}`);
      const admins = (await store.users.list()).filter((u) => u.isAdmin);
      assert.equal(admins.length, 1);
      for (const u of admins) await store.users.setAdmin(u.username, true);
    }
  });

  withStore('TOTP: pending until enabled with its own secret; a step is claimed once and never an earlier one; recovery codes once', async (store) => {
    const a = await newUser(store, 'alice');
    assert.equal((await store.users.getByName('alice'))?.totpEnabled, false);
    assert.equal(await store.totp.claimStep(a.id, 5), false, 'TOTP off: nothing to claim');
    assert.equal(await store.totp.setPending(a.id, 'SECRET1'), true);
    assert.equal(await store.totp.setPending(a.id, 'SECRET2'), true, 'a pending secret is replaced');
    assert.equal(await store.totp.enable(a.id, 'SECRET1', 10, ['h1']), false, 'not the pending one');
    assert.equal(await store.totp.enable(a.id, 'SECRET2', 10, ['h1', 'h2']), true);
    assert.deepEqual(await store.totp.get(a.id), { secret: 'SECRET2', pending: null, lastStep: 10 });
    assert.equal((await store.users.getByName('alice'))?.totpEnabled, true);
    assert.equal(await store.totp.setPending(a.id, 'SECRET3'), false, 'on: no new setup');
    assert.equal(await store.totp.claimStep(a.id, 10), false, 'the confirming step is used');
    assert.equal(await store.totp.claimStep(a.id, 9), false);
    assert.equal(await store.totp.claimStep(a.id, 11), true);
    assert.equal(await store.totp.claimStep(a.id, 11), false);
    const both = await Promise.all([store.totp.claimStep(a.id, 12), store.totp.claimStep(a.id, 12)]);
    assert.deepEqual(both.sort(), [false, true], 'two claims at once: one wins');
    assert.equal(await store.totp.recoveryCodesLeft(a.id), 2);
    assert.equal(await store.totp.useRecoveryCode(a.id, 'h1'), true);
    assert.equal(await store.totp.useRecoveryCode(a.id, 'h1'), false);
    assert.equal(await store.totp.recoveryCodesLeft(a.id), 1);
    await store.totp.disable(a.id);
    assert.deepEqual(await store.totp.get(a.id), { secret: null, pending: null, lastStep: null });
    assert.equal(await store.totp.recoveryCodesLeft(a.id), 0);
    assert.equal(await store.totp.useRecoveryCode(a.id, 'h2'), false);
  });

  withStore('removing a user removes their recovery codes', async (store) => {
    const a = await newUser(store, 'alice');
    await store.totp.setPending(a.id, 'S');
    await store.totp.enable(a.id, 'S', 1, ['h1']);
    assert.equal(await store.users.delete('alice'), true);
    assert.equal(await store.totp.recoveryCodesLeft(a.id), 0);
  });
}
