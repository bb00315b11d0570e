import assert from 'node:assert/strict';
import { storeTest, type OpenStore } from './support.test-suite.js';
import { StoreConflictError, type MetadataStore } from '../metadata-store.js';

/**
 * Store conformance for single sign-on (migration 0014_oidc): links by issuer and sub, local
 * marks, and sign-ins under way taken exactly once, also when takers race. Run by every
 * MetadataStore implementation.
 */
export function runOidcConformance(name: string, open: OpenStore): void {
  const withStore = storeTest(`${name}`, open);
  const NOW = 1_700_000_000_000;
  const newUser = (store: MetadataStore, username: string) => store.users.create({ username, passwordHash: '!none', isAdmin: false, authEpoch: 'e1', now: NOW });

  withStore('single sign-on: one link per account and per (issuer, sub); found by sub; gone with the user', async (store) => {
    const a = await newUser(store, 'alice');
    const b = await newUser(store, 'bob');
    await store.oidc.link({ userId: a.id, issuer: 'https://idp', subject: 's-a', groups: ['staff'] }, NOW);
    await assert.rejects(store.oidc.link({ userId: b.id, issuer: 'https://idp', subject: 's-a', groups: [] }, NOW), StoreConflictError);
    await assert.rejects(store.oidc.link({ userId: a.id, issuer: 'https://idp', subject: 's-other', groups: [] }, NOW), StoreConflictError);
    // The same sub at another issuer is another identity.
    await store.oidc.link({ userId: b.id, issuer: 'https://other-idp', subject: 's-a', groups: [] }, NOW);
    const found = await store.oidc.findBySubject('https://idp', 's-a');
    assert.deepEqual({ ...found, lastLoginAt: 0 }, { userId: a.id, username: 'alice', issuer: 'https://idp', subject: 's-a', groups: ['staff'], lastLoginAt: 0 });
    await store.oidc.recordLogin(a.id, ['staff', 'admins'], NOW + 5);
    assert.deepEqual((await store.oidc.linkOf(a.id))?.groups, ['staff', 'admins']);
    assert.deepEqual(await store.oidc.linkedUserIds(), new Set([a.id, b.id]));
    await store.oidc.setLocal(a.id, true);
    await store.oidc.setLocal(a.id, true);
    assert.equal(await store.oidc.isLocal(a.id), true);
    assert.equal(await store.oidc.isLocal(b.id), false);
    assert.equal(await store.users.delete('alice'), true);
    assert.equal(await store.oidc.findBySubject('https://idp', 's-a'), undefined);
    assert.deepEqual(await store.oidc.localUserIds(), new Set());
  });

  withStore('single sign-on: a pending account is linked once, to the first of racing identities', async (store) => {
    const a = await newUser(store, 'alice');
    assert.equal(await store.oidc.linkPending({ userId: a.id, issuer: 'https://idp', subject: 's-1', groups: [] }, NOW), false, 'not pending');
    await store.oidc.setLinkPending(a.id, true);
    const results = await Promise.all(['s-1', 's-2', 's-3', 's-4'].map((subject) => store.oidc.linkPending({ userId: a.id, issuer: 'https://idp', subject, groups: [] }, NOW)));
    assert.equal(results.filter(Boolean).length, 1);
    const link = await store.oidc.linkOf(a.id);
    assert.ok(link && ['s-1', 's-2', 's-3', 's-4'].includes(link.subject));
    assert.equal(await store.oidc.linkPending({ userId: a.id, issuer: 'https://idp', subject: 's-5', groups: [] }, NOW), false, 'pending no more');
  });

  withStore('single sign-on: a request is taken once (of 8 racing takers exactly one), never after expiry or as another kind', async (store) => {
    await store.oidc.putRequest('h1', 'login', '{"x":1}', NOW + 1000);
    const takes = await Promise.all(Array.from({ length: 8 }, () => store.oidc.takeRequest('h1', 'login', NOW)));
    assert.deepEqual(takes.filter((t) => t !== undefined), ['{"x":1}']);
    await store.oidc.putRequest('h2', 'handoff', 'd', NOW + 1000);
    assert.equal(await store.oidc.takeRequest('h2', 'login', NOW), undefined, 'another kind');
    assert.equal(await store.oidc.takeRequest('h2', 'handoff', NOW + 1000), undefined, 'expired');
    await store.oidc.putRequest('h3', 'login', 'd', NOW + 10);
    await store.oidc.deleteExpired(NOW + 10);
    assert.equal(await store.oidc.takeRequest('h3', 'login', NOW), undefined, 'swept');
  });
}
