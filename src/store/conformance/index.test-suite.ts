import assert from 'node:assert/strict';
import { storeTest, type OpenStore } from './support.test-suite.js';
import { checkLeaseSets, checkReleaseHeldBy } from './lease-sets.test-suite.js';
import type { Share } from '../../domain/share.js';
import { StoreConflictError, type MetadataStore } from '../metadata-store.js';
import type { DavLock } from '../dav-locks.js';
import { MAX_DOWNLOAD_LIMIT, ROUNDING_ALLOWANCE, UNITS_PER_DOWNLOAD } from '../../domain/download-units.js';

export { runAccountsConformance } from './accounts.test-suite.js';
export { runOidcConformance } from './oidc.test-suite.js';
export { runSearchConformance } from './search.test-suite.js';
export type { OpenStore } from './support.test-suite.js';

/**
 * The metadata store conformance suite. Every MetadataStore implementation
 * (SQLite, PostgreSQL) runs exactly these tests, and the groups beside them
 * (accounts, oidc, search), which this entry exports too.
 */
export function runStoreConformance(name: string, open: OpenStore): void {
  const withStore = storeTest(`${name}`, open);

  const NOW = 1_700_000_000_000;
  const newUser = (store: MetadataStore, username = 'alice', isAdmin = false) =>
    store.users.create({ username, passwordHash: 'scrypt$x', isAdmin, authEpoch: 'e1', now: NOW });

  withStore('grants: the users any grant of some owners reaches, directly or through a group, each once', async (store) => {
    const [alice, bob, carol, dave, erin] = await Promise.all(['alice', 'bob', 'carol', 'dave', 'erin'].map((n) => newUser(store, n)));
    assert.ok(alice && bob && carol && dave && erin);
    assert.equal(await store.groups.create('g1', 'team', NOW), true);
    await store.groups.changeMembers('team', ['carol', 'bob'], []);
    const grant = (id: string, owner: typeof alice, path: string, toKind: 'user' | 'group', toId: string) =>
      store.grants.create({ id, ownerId: owner.id, owner: owner.username, path, isFile: false, toKind, toId, permission: 'read', createdAt: NOW });
    await grant('a1', alice, 'x', 'user', bob.id);
    await grant('a2', alice, 'y', 'group', 'g1');
    await grant('d1', dave, 'z', 'user', erin.id);
    const of = async (owners: string[]) => (await store.grants.recipientsOf(owners)).sort();
    assert.deepEqual(await of(['alice']), ['bob', 'carol']);
    assert.deepEqual(await of(['alice', 'dave']), ['bob', 'carol', 'erin']);
    assert.deepEqual(await of(['bob']), []);
    assert.deepEqual(await of([]), []);
  });

  withStore('creates a user and finds it by name', async (store) => {
    const u = await newUser(store, 'alice', true);
    const found = await store.users.getByName('alice');
    assert.deepEqual(found, u);
    assert.equal(found?.isAdmin, true);
    assert.equal(found?.createdAt, NOW);
    assert.equal(await store.users.getByName('bob'), undefined);
  });

  withStore('refuses a second user with the same name', async (store) => {
    await newUser(store);
    await assert.rejects(newUser(store), StoreConflictError);
    assert.equal(await store.users.count(), 1);
  });

  withStore('user names are case-sensitive', async (store) => {
    await newUser(store, 'alice');
    await newUser(store, 'Alice');
    assert.equal(await store.users.count(), 2);
  });

  withStore('lists users by name', async (store) => {
    await newUser(store, 'carol');
    await newUser(store, 'alice');
    await newUser(store, 'bob');
    assert.deepEqual((await store.users.list()).map((u) => u.username), ['alice', 'bob', 'carol']);
  });

  withStore('setPassword changes hash and epoch and ends every session of that user only', async (store) => {
    const a = await newUser(store, 'alice');
    const b = await newUser(store, 'bob');
    const sa = await store.sessions.create({ userId: a.id, refreshHash: 'ra', now: NOW, expiresAt: NOW + 1000 });
    await store.sessions.addAccessToken({ tokenHash: 'aa', sessionId: sa.id, expiresAt: NOW + 1000 });
    const sb = await store.sessions.create({ userId: b.id, refreshHash: 'rb', now: NOW, expiresAt: NOW + 1000 });
    await store.sessions.addAccessToken({ tokenHash: 'ab', sessionId: sb.id, expiresAt: NOW + 1000 });
    assert.equal(await store.users.setPassword('alice', 'scrypt$y', 'e2'), true);
    const after = await store.users.getByName('alice');
    assert.equal(after?.passwordHash, 'scrypt$y');
    assert.equal(after?.authEpoch, 'e2');
    assert.equal(await store.sessions.findByRefreshHash('ra', NOW), undefined);
    assert.equal(await store.sessions.findAccess('aa', NOW), undefined);
    assert.ok(await store.sessions.findAccess('ab', NOW));
    assert.equal(await store.users.setPassword('nobody', 'h', 'e'), false);
  });

  withStore('deleting a user ends their sessions and access tokens', async (store) => {
    const a = await newUser(store);
    const s = await store.sessions.create({ userId: a.id, refreshHash: 'r', now: NOW, expiresAt: NOW + 1000 });
    await store.sessions.addAccessToken({ tokenHash: 'a', sessionId: s.id, expiresAt: NOW + 1000 });
    assert.equal(await store.users.delete('alice'), true);
    assert.equal(await store.users.getByName('alice'), undefined);
    assert.equal(await store.sessions.findByRefreshHash('r', NOW), undefined);
    assert.equal(await store.sessions.findAccess('a', NOW), undefined);
    assert.equal(await store.users.delete('alice'), false);
  });

  withStore('finds a live session by refresh hash and not an expired one', async (store) => {
    const a = await newUser(store);
    const s = await store.sessions.create({ userId: a.id, refreshHash: 'r', now: NOW, expiresAt: NOW + 1000 });
    assert.deepEqual(await store.sessions.findByRefreshHash('r', NOW + 999), s);
    assert.equal(await store.sessions.findByRefreshHash('r', NOW + 1000), undefined);
    assert.equal(await store.sessions.findByRefreshHash('other', NOW), undefined);
  });

  withStore('touch slides the session expiry forward', async (store) => {
    const a = await newUser(store);
    const s = await store.sessions.create({ userId: a.id, refreshHash: 'r', now: NOW, expiresAt: NOW + 1000 });
    await store.sessions.touch(s.id, NOW + 900, NOW + 1900);
    const t = await store.sessions.findByRefreshHash('r', NOW + 1500);
    assert.equal(t?.lastUsedAt, NOW + 900);
    assert.equal(t?.expiresAt, NOW + 1900);
  });

  withStore('findAccess returns session and user for a live token only', async (store) => {
    const a = await newUser(store, 'alice', true);
    const s = await store.sessions.create({ userId: a.id, refreshHash: 'r', now: NOW, expiresAt: NOW + 10_000 });
    await store.sessions.addAccessToken({ tokenHash: 'a1', sessionId: s.id, expiresAt: NOW + 100 });
    const found = await store.sessions.findAccess('a1', NOW + 99);
    assert.equal(found?.user.username, 'alice');
    assert.equal(found?.user.isAdmin, true);
    assert.equal(found?.session.id, s.id);
    assert.equal(await store.sessions.findAccess('a1', NOW + 100), undefined);
    assert.equal(await store.sessions.findAccess('r', NOW), undefined, 'a refresh hash is not an access token');
  });

  withStore('deleting a session revokes its access tokens and leaves others', async (store) => {
    const a = await newUser(store);
    const s1 = await store.sessions.create({ userId: a.id, refreshHash: 'r1', now: NOW, expiresAt: NOW + 1000 });
    const s2 = await store.sessions.create({ userId: a.id, refreshHash: 'r2', now: NOW, expiresAt: NOW + 1000 });
    await store.sessions.addAccessToken({ tokenHash: 'a1', sessionId: s1.id, expiresAt: NOW + 1000 });
    await store.sessions.addAccessToken({ tokenHash: 'a2', sessionId: s2.id, expiresAt: NOW + 1000 });
    await store.sessions.delete(s1.id);
    assert.equal(await store.sessions.findAccess('a1', NOW), undefined);
    assert.equal(await store.sessions.findByRefreshHash('r1', NOW), undefined);
    assert.ok(await store.sessions.findAccess('a2', NOW));
  });

  withStore('deleteExpired removes expired sessions, their tokens and expired tokens only', async (store) => {
    const a = await newUser(store);
    const old = await store.sessions.create({ userId: a.id, refreshHash: 'old', now: NOW, expiresAt: NOW + 10 });
    const live = await store.sessions.create({ userId: a.id, refreshHash: 'live', now: NOW, expiresAt: NOW + 1000 });
    await store.sessions.addAccessToken({ tokenHash: 'in-old', sessionId: old.id, expiresAt: NOW + 500 });
    await store.sessions.addAccessToken({ tokenHash: 'expired', sessionId: live.id, expiresAt: NOW + 10 });
    await store.sessions.addAccessToken({ tokenHash: 'fresh', sessionId: live.id, expiresAt: NOW + 500 });
    assert.equal(await store.sessions.deleteExpired(NOW + 20), 3);
    assert.ok(await store.sessions.findAccess('fresh', NOW + 20));
    assert.ok(await store.sessions.findByRefreshHash('live', NOW + 20));
  });

  withStore('a lease has one holder until it expires or is released', async (store) => {
    assert.equal(await store.leases.acquire('n', 'a', NOW, NOW + 1000), true);
    assert.equal(await store.leases.acquire('n', 'b', NOW + 500, NOW + 1500), false, 'held by a');
    assert.equal(await store.leases.acquire('n', 'a', NOW + 500, NOW + 1500), true, 'the holder may take it again');
    assert.equal(await store.leases.renew('n', 'b', NOW + 9000), false, 'only the holder renews');
    assert.equal(await store.leases.renew('n', 'a', NOW + 2000), true);
    assert.equal(await store.leases.acquire('n', 'b', NOW + 1999, NOW + 3000), false, 'renewed until NOW + 2000');
    assert.equal(await store.leases.acquire('n', 'b', NOW + 2000, NOW + 3000), true, 'expired: taken over');
    assert.equal(await store.leases.renew('n', 'a', NOW + 9000), false, 'a lost it');
    await store.leases.release('n', 'a');
    assert.equal(await store.leases.acquire('n', 'c', NOW + 2100, NOW + 3000), false, 'release by a non-holder changes nothing');
    await store.leases.release('n', 'b');
    assert.equal(await store.leases.acquire('n', 'c', NOW + 2100, NOW + 3000), true);
    assert.equal(await store.leases.acquire('other', 'b', NOW, NOW + 10), true, 'names are independent');
  });

  withStore('concurrent acquires of one lease: exactly one wins', async (store) => {
    const wins = await Promise.all(Array.from({ length: 20 }, (_, i) => store.leases.acquire('race', `o${i}`, NOW, NOW + 1000)));
    assert.equal(wins.filter(Boolean).length, 1);
  });

  withStore('expired leases of a prefix are taken once each, the live ones and other names stay', async (store) => {
    await store.leases.acquire('alive:a', 'a', NOW, NOW + 100);
    await store.leases.acquire('alive:b', 'b', NOW, NOW + 300);
    await store.leases.acquire('alive-not:c', 'c', NOW, NOW + 100);
    await store.leases.acquire('leader', 'd', NOW, NOW + 100);
    assert.deepEqual(await store.leases.takeExpired('alive:', NOW + 99), [], 'none has run out yet');
    // Two leaders at once (a handover): each expired lease goes to one of them.
    const [x, y] = await Promise.all([store.leases.takeExpired('alive:', NOW + 100), store.leases.takeExpired('alive:', NOW + 100)]);
    assert.deepEqual([...(x ?? []), ...(y ?? [])], [{ name: 'alive:a', owner: 'a', expiresAt: NOW + 100 }]);
    assert.deepEqual(await store.leases.takeExpired('alive:', NOW + 200), [], 'taken already');
    assert.equal(await store.leases.acquire('alive-not:c', 'e', NOW + 200, NOW + 900), true, 'another prefix is left alone (and expired)');
    assert.equal(await store.leases.acquire('leader', 'e', NOW + 200, NOW + 900), true);
    assert.equal(await store.leases.renew('alive:b', 'b', NOW + 1000), true, 'a live one stays');
    assert.equal(await store.leases.acquire('alive:a', 'a', NOW + 200, NOW + 1000), true, 'a process counted dead takes its name again');
    await assert.rejects(store.leases.takeExpired('alive_', NOW), /LIKE wildcard/);
  });

  withStore('heldOf names the leases among those asked about that are held: not the expired, released or unknown ones', async (store) => {
    await store.leases.acquire('edit:a', 'x', NOW, NOW + 100);
    await store.leases.acquire('edit:b', 'y', NOW, NOW + 300);
    await store.leases.acquire('edit:c', 'z', NOW, NOW + 300);
    await store.leases.release('edit:c', 'z');
    assert.deepEqual((await store.leases.heldOf(['edit:a', 'edit:b', 'edit:c', 'edit:none'], NOW + 50)).sort(), ['edit:a', 'edit:b']);
    assert.deepEqual(await store.leases.heldOf(['edit:a', 'edit:b'], NOW + 100), ['edit:b'], 'run out at its expiry');
    assert.deepEqual(await store.leases.heldOf([], NOW), []);
    // More names than one statement asks about (a page of a thousand objects and their folders).
    const many = Array.from({ length: 1200 }, (_, i) => `edit:many/${i}`);
    await store.leases.acquire('edit:many/1111', 'w', NOW, NOW + 300);
    assert.deepEqual(await store.leases.heldOf(many, NOW), ['edit:many/1111']);
  });

  withStore('acquireAll takes a set of leases in one turn, all or none, and none while a name around is held; releaseAll lets them go', async (store) => {
    await checkLeaseSets(store.leases, 'set:', NOW);
  });

  withStore('releaseHeldBy frees every lease a dead process held for its changes, and nobody else\'s', async (store) => {
    await checkReleaseHeldBy(store.leases, 'dead:', NOW);
  });

  withStore('heldWithin names the held leases that start with a prefix, which may hold LIKE wildcards and letters of either case', async (store) => {
    const cases: [name: string, expires: number][] = [
      ['edit:u/box', NOW + 300],
      ['edit:u/box/a.bin', NOW + 300],
      ['edit:u/box/sub/c_1%.bin', NOW + 300],
      ['edit:u/box/gone', NOW + 100],
      ['edit:u/boxes/x', NOW + 300],
      ['edit:u/Box/y', NOW + 300],
      ['edit:u/b_x/z', NOW + 300],
      ['edit:u/b%x/w', NOW + 300],
    ];
    for (const [name, expires] of cases) await store.leases.acquire(name, 'o', NOW, expires);
    const table: [prefix: string, held: string[]][] = [
      ['edit:u/box/', ['edit:u/box/a.bin', 'edit:u/box/sub/c_1%.bin']],
      ['edit:u/box', ['edit:u/box', 'edit:u/box/a.bin', 'edit:u/box/sub/c_1%.bin', 'edit:u/boxes/x']],
      ['edit:u/box/sub/c_1%', ['edit:u/box/sub/c_1%.bin']],
      ['edit:u/b_x/', ['edit:u/b_x/z']],
      ['edit:u/b%x/', ['edit:u/b%x/w']],
      ['edit:u/BOX/', []],
      ['edit:v/', []],
    ];
    for (const [prefix, held] of table) assert.deepEqual((await store.leases.heldWithin(prefix, NOW + 150)).sort(), held, prefix);
  });

  withStore('the held leases of a prefix: not the expired ones, not another prefix\'s', async (store) => {
    await store.leases.acquire('slot:u1:0', 'a', NOW, NOW + 100);
    await store.leases.acquire('slot:u1:1', 'b', NOW, NOW + 300);
    await store.leases.acquire('slot:u10:0', 'c', NOW, NOW + 300);
    await store.leases.acquire('slot:u2:0', 'd', NOW, NOW + 300);
    assert.deepEqual((await store.leases.held('slot:u1:', NOW + 50)).sort(), ['slot:u1:0', 'slot:u1:1']);
    assert.deepEqual(await store.leases.held('slot:u1:', NOW + 100), ['slot:u1:1'], 'run out at its expiry');
    await store.leases.release('slot:u1:1', 'b');
    assert.deepEqual(await store.leases.held('slot:u1:', NOW + 100), []);
    await assert.rejects(store.leases.held('slot_', NOW), /LIKE wildcard/);
  });

  withStore('journal records are written, updated, listed by age and deleted', async (store) => {
    await store.journal.put({ id: 'j1', kind: 'move', data: '{"step":1}', now: NOW });
    await store.journal.put({ id: 'j2', kind: 'move', data: '{}', now: NOW + 10 });
    await store.journal.put({ id: 'j3', kind: 'upload', data: '{}', now: NOW });
    assert.deepEqual((await store.journal.list('move', NOW + 100, 10)).map((r) => r.id), ['j1', 'j2']);
    assert.deepEqual((await store.journal.list('move', NOW + 5, 10)).map((r) => r.id), ['j1']);
    assert.equal(await store.journal.update('j1', '{"step":2}', NOW + 20), true);
    assert.deepEqual((await store.journal.list('move', NOW + 15, 10)).map((r) => r.id), ['j2'], 'an update makes it fresh');
    const j1 = await store.journal.get('j1');
    assert.deepEqual(j1, { id: 'j1', kind: 'move', data: '{"step":2}', createdAt: NOW, updatedAt: NOW + 20 });
    await store.journal.delete('j1');
    assert.equal(await store.journal.get('j1'), undefined);
    assert.equal(await store.journal.update('j1', '{}', NOW), false);
  });

  withStore('a setting keeps the first value stored', async (store) => {
    assert.equal(await store.settings.getOrCreate('k', () => 'first'), 'first');
    assert.equal(await store.settings.getOrCreate('k', () => 'second'), 'first');
    const all = await Promise.all(Array.from({ length: 10 }, (_, i) => store.settings.getOrCreate('race', () => `v${i}`)));
    assert.equal(new Set(all).size, 1);
  });

  withStore('the rate log allows `limit` attempts per window, then answers the wait', async (store) => {
    for (let i = 0; i < 3; i++) assert.equal(await store.rates.hit('ip:a', NOW + i * 1000, 60_000, 3), 0);
    assert.equal(await store.rates.hit('ip:a', NOW + 10_000, 60_000, 3), 50, 'the first attempt leaves the window at NOW + 60 s');
    assert.equal(await store.rates.hit('ip:b', NOW + 10_000, 60_000, 3), 0, 'buckets are independent');
    assert.equal(await store.rates.hit('ip:a', NOW + 59_999, 60_000, 3), 1, 'a refused attempt is not counted');
    assert.equal(await store.rates.hit('ip:a', NOW + 60_000, 60_000, 3), 0, 'the oldest has left the window');
  });

  withStore('the rate log gives back a released attempt, one per release, and only of its own bucket and time', async (store) => {
    for (let i = 0; i < 3; i++) assert.equal(await store.rates.hit('grant:a', NOW, 60_000, 3), 0);
    assert.ok((await store.rates.hit('grant:a', NOW + 1, 60_000, 3)) > 0, 'full');
    await store.rates.release('grant:b', NOW);
    await store.rates.release('grant:a', NOW + 5);
    assert.ok((await store.rates.hit('grant:a', NOW + 10, 60_000, 3)) > 0, 'another bucket\'s or another time\'s release gives nothing back');
    await store.rates.release('grant:a', NOW);
    assert.equal(await store.rates.hit('grant:a', NOW + 20, 60_000, 3), 0, 'one place given back');
    assert.ok((await store.rates.hit('grant:a', NOW + 21, 60_000, 3)) > 0, 'and only one');
    await Promise.all(Array.from({ length: 5 }, () => store.rates.release('grant:a', NOW)));
    const waits = await Promise.all(Array.from({ length: 5 }, () => store.rates.hit('grant:a', NOW + 30, 60_000, 3)));
    assert.equal(waits.filter((w) => w === 0).length, 2, 'five releases at once give back the two attempts left at that time, no more');
  });

  withStore('zip CRCs: unsigned 32-bit values round-trip, the first value of a key stays', async (store) => {
    assert.deepEqual(await store.zipCrcs.getMany([]), new Map());
    await store.zipCrcs.putMany([{ key: 'a', crc: 0xffffffff }, { key: 'b', crc: 0 }, { key: 'a', crc: 0xffffffff }], NOW);
    await Promise.all([store.zipCrcs.putMany([{ key: 'c', crc: 7 }], NOW), store.zipCrcs.putMany([{ key: 'c', crc: 7 }, { key: 'b', crc: 5 }], NOW)]);
    assert.deepEqual(await store.zipCrcs.getMany(['a', 'b', 'c', 'missing']), new Map([['a', 0xffffffff], ['b', 0], ['c', 7]]));
  });

  withStore('concurrent attempts: exactly `limit` are allowed', async (store) => {
    // Several buckets at once, so an attempt counted before an earlier one committed (PostgreSQL) shows.
    const buckets = await Promise.all(Array.from({ length: 12 }, (_, b) => Promise.all(Array.from({ length: 25 }, () => store.rates.hit(`burst-${b}`, NOW, 60_000, 10)))));
    for (const [b, waits] of buckets.entries()) {
      assert.equal(waits.filter((w) => w === 0).length, 10, `bucket ${b}: ${waits.join(' ')}`);
      assert.ok(waits.filter((w) => w > 0).every((w) => w === 60));
    }
  });

  const lock = (over: Partial<DavLock> & { token: string; path: string }): DavLock => ({
    user: 'alice',
    depth: 0,
    scope: 'exclusive',
    owner: '',
    principal: 'alice',
    timeoutSeconds: 60,
    createdAt: NOW,
    expiresAt: NOW + 60_000,
    ...over,
  });
  const tokens = (locks: readonly DavLock[]) => locks.map((l) => l.token).sort();

  withStore('WebDAV locks: conflicts by scope, depth and path', async (store) => {
    const { davLocks: locks } = store;
    assert.deepEqual(await locks.create(lock({ token: 't-a', path: 'a', depth: 'infinity' }), NOW), { created: true });
    // (path, depth, scope) → created?
    const table: [string, 0 | 'infinity', 'exclusive' | 'shared', boolean][] = [
      ['a', 0, 'exclusive', false],
      ['a/b/c.txt', 0, 'exclusive', false],
      ['a/b', 0, 'shared', false],
      ['', 'infinity', 'shared', false],
      ['', 0, 'exclusive', true],
      ['ab', 'infinity', 'exclusive', true],
      ['b', 0, 'exclusive', true],
    ];
    for (const [i, [path, depth, scope, created]] of table.entries()) {
      const r = await locks.create(lock({ token: `t${i}`, path, depth, scope }), NOW);
      assert.equal(r.created, created, `${path} ${depth} ${scope}`);
      if (!r.created) assert.equal('conflict' in r ? r.conflict.token : undefined, 't-a');
    }
    assert.equal((await locks.create(lock({ token: 'other-user', user: 'bob', path: 'a' }), NOW)).created, true, 'locks are per user tree');
    assert.equal((await locks.create(lock({ token: 'after-expiry', path: 'a/x' }), NOW + 60_000)).created, true, 'an expired lock is no conflict');
  });

  withStore('WebDAV locks: shared locks stack; an exclusive one does not join them', async (store) => {
    const { davLocks: locks } = store;
    assert.equal((await locks.create(lock({ token: 's1', path: 'f', scope: 'shared' }), NOW)).created, true);
    assert.equal((await locks.create(lock({ token: 's2', path: 'f', scope: 'shared' }), NOW)).created, true);
    assert.equal((await locks.create(lock({ token: 'x', path: 'f' }), NOW)).created, false);
    assert.equal((await locks.create(lock({ token: 'x2', path: '', depth: 'infinity' }), NOW)).created, false, 'a depth-infinity exclusive lock above shared ones');
    assert.deepEqual(tokens(await locks.covering('alice', 'f', NOW)), ['s1', 's2']);
    assert.equal(await locks.get('x', NOW), undefined, 'a refused lock leaves no row');
  });

  withStore('WebDAV locks: concurrent conflicting creations, at most one wins', async (store) => {
    for (let round = 0; round < 5; round++) {
      const results = await Promise.all(Array.from({ length: 8 }, (_, i) => store.davLocks.create(lock({ token: `r${round}-${i}`, path: `p${round}` }), NOW)));
      assert.ok(results.filter((r) => r.created).length <= 1);
      assert.ok((await store.davLocks.covering('alice', `p${round}`, NOW)).length <= 1);
    }
  });

  withStore('WebDAV locks: covering, within, refresh, delete, expiry', async (store) => {
    const { davLocks: locks } = store;
    await locks.create(lock({ token: 'root0', path: '', depth: 0 }), NOW);
    await locks.create(lock({ token: 'dir', path: 'd 1', depth: 'infinity' }), NOW);
    await locks.create(lock({ token: 'deep', path: 'e/f%_/g.txt' }), NOW);
    await locks.create(lock({ token: 'short', path: 'e/h', timeoutSeconds: 1, expiresAt: NOW + 1000 }), NOW);
    assert.deepEqual(tokens(await locks.covering('alice', 'd 1/x/y', NOW)), ['dir']);
    assert.deepEqual(tokens(await locks.covering('alice', 'x', NOW)), [], 'a depth-0 lock on the root covers only the root');
    assert.deepEqual(tokens(await locks.covering('alice', '', NOW)), ['root0']);
    assert.deepEqual(tokens(await locks.within('alice', 'e', NOW)), ['deep', 'short']);
    assert.deepEqual(tokens(await locks.within('alice', 'e/f', NOW)), [], 'a prefix of a name is not an ancestor');
    assert.deepEqual(tokens(await locks.within('alice', '', NOW)), ['deep', 'dir', 'root0', 'short']);
    assert.deepEqual(tokens(await locks.within('alice', 'e', NOW + 1000)), ['deep'], 'expired locks are gone');
    const refreshed = await locks.refresh('short', 600, NOW + 500);
    assert.equal(refreshed?.expiresAt, NOW + 500 + 600_000);
    assert.equal(refreshed?.timeoutSeconds, 600);
    assert.equal(await locks.refresh('short', 600, NOW + 10_000_000), undefined, 'an expired lock cannot be refreshed');
    assert.equal(await locks.delete('dir'), true);
    assert.equal(await locks.delete('dir'), false);
    assert.equal(await locks.deleteWithin('alice', 'e'), 2);
    assert.equal(await locks.deleteExpired(NOW + 60_000), 1, 'root0 expired');
    assert.equal(await locks.get('root0', NOW), undefined);
  });

  withStore('WebDAV locks: the locks a user holds in other users\' trees', async (store) => {
    const { davLocks: locks } = store;
    await locks.create(lock({ token: 'own', path: 'a', principal: 'alice' }), NOW);
    await locks.create(lock({ token: 'in-bob', user: 'bob', path: 'x', principal: 'alice' }), NOW);
    await locks.create(lock({ token: 'in-bob-old', user: 'bob', path: 'y', principal: 'alice', expiresAt: NOW + 1 }), NOW);
    await locks.create(lock({ token: 'in-carol', user: 'carol', path: '', principal: 'alice' }), NOW);
    await locks.create(lock({ token: 'bobs', user: 'bob', path: 'z', principal: 'bob' }), NOW);
    assert.deepEqual(tokens(await locks.heldElsewhere('alice')), ['in-bob', 'in-bob-old', 'in-carol']);
    assert.deepEqual(tokens(await locks.heldElsewhere('alice', 'bob')), ['in-bob', 'in-bob-old']);
    assert.deepEqual(tokens(await locks.heldElsewhere('alice', 'alice')), [], 'never the holder\'s own tree');
    assert.deepEqual(tokens(await locks.heldElsewhere('bob')), []);
  });

  withStore('WebDAV dead properties: totals, and a patch past a limit changes nothing unless it shrinks', async (store) => {
    const props = store.davProperties;
    const p = (name: string, v = 'v') => ({ ns: 'urn:x', name, xml: `<x:${name} xmlns:x="urn:x">${v}</x:${name}>` });
    const limit = { count: 3, size: 200 };
    assert.deepEqual(await props.totals('alice'), { count: 0, size: 0 });
    assert.equal(await props.patch('alice', 'a', [{ op: 'set', prop: p('a') }, { op: 'set', prop: p('b') }], limit), true);
    assert.equal(await props.patch('alice', 'a/b', [{ op: 'set', prop: p('c') }], limit), true);
    assert.deepEqual(await props.totals('alice'), { count: 3, size: 3 * p('a').xml.length });
    assert.deepEqual(await props.totals('alice', 'a/b'), { count: 1, size: p('c').xml.length });
    // All or nothing: the remove (of nothing at z) does not make room, and the set does not stay.
    assert.equal(await props.patch('alice', 'z', [{ op: 'remove', ns: 'urn:x', name: 'a' }, { op: 'set', prop: p('d') }], limit), false, 'a fourth property');
    assert.deepEqual(await props.list('alice', 'z'), []);
    assert.equal((await props.totals('alice')).count, 3);
    // Replacing a value adds no property.
    assert.equal(await props.patch('alice', 'a', [{ op: 'set', prop: p('a', 'w') }], limit), true);
    const before = await props.totals('alice');
    assert.equal(await props.patch('alice', 'a', [{ op: 'set', prop: p('a', 'x'.repeat(300)) }], limit), false, 'over the size');
    assert.deepEqual(await props.totals('alice'), before, 'nothing changed');
    assert.equal(await props.patch('alice', 'a', [{ op: 'remove', ns: 'urn:x', name: 'a' }], limit), true, 'shrinking is always allowed');
    assert.deepEqual(await props.totals('bob'), { count: 0, size: 0 }, 'per user');
  });

  withStore('WebDAV locks: a user holds at most maxLive live locks', async (store) => {
    const { davLocks: locks } = store;
    for (const i of [1, 2]) assert.equal((await locks.create(lock({ token: `m${i}`, path: `f${i}` }), NOW, 2)).created, true);
    const third = await locks.create(lock({ token: 'm3', path: 'f3' }), NOW, 2);
    assert.ok(!third.created && 'tooMany' in third);
    assert.equal(await locks.get('m3', NOW), undefined, 'the refused lock is not kept');
    assert.equal((await locks.create(lock({ token: 'b1', user: 'bob', path: 'f1' }), NOW, 2)).created, true, 'per user');
    assert.equal((await locks.create(lock({ token: 'm4', path: 'f4' }), NOW + 3_600_000, 2)).created, true, 'expired locks do not count');
  });

  withStore('WebDAV dead properties: patch in order, children, copy, move, delete', async (store) => {
    const props = store.davProperties;
    const p = (name: string, xml = `<x:${name} xmlns:x="urn:x">v</x:${name}>`) => ({ ns: 'urn:x', name, xml });
    await props.patch('alice', 'd', [{ op: 'set', prop: p('a') }, { op: 'set', prop: p('b') }, { op: 'remove', ns: 'urn:x', name: 'a' }, { op: 'set', prop: p('b', '<x:b xmlns:x="urn:x">2</x:b>') }]);
    assert.deepEqual(await props.list('alice', 'd'), [p('b', '<x:b xmlns:x="urn:x">2</x:b>')]);
    await props.patch('alice', 'd/f 1.txt', [{ op: 'set', prop: p('c') }]);
    await props.patch('alice', 'd/sub/deep', [{ op: 'set', prop: p('e') }]);
    await props.patch('alice', 'd%', [{ op: 'set', prop: p('f') }]);
    await props.patch('bob', 'd/g', [{ op: 'set', prop: p('g') }]);
    assert.deepEqual((await props.listChildren('alice', 'd')).map((r) => `${r.path}:${r.name}`), ['d/f 1.txt:c']);
    assert.deepEqual((await props.listChildren('alice', '')).map((r) => `${r.path}:${r.name}`), ['d:b', 'd%:f']);
    await props.copyTree('alice', 'd', 'c');
    assert.deepEqual((await props.listChildren('alice', 'c')).map((r) => r.path), ['c/f 1.txt']);
    assert.deepEqual((await props.list('alice', 'c/sub/deep')).map((r) => r.name), ['e']);
    assert.equal((await props.list('alice', 'd')).length, 1, 'the source keeps its properties');
    await props.patch('alice', 'm/old', [{ op: 'set', prop: p('old') }]);
    await props.moveTree('alice', 'd', 'm');
    assert.deepEqual(await props.list('alice', 'd'), []);
    assert.deepEqual(await props.list('alice', 'm/old'), [], 'the destination tree was replaced');
    assert.deepEqual((await props.list('alice', 'm/sub/deep')).map((r) => r.name), ['e']);
    assert.deepEqual((await props.list('alice', 'd%')).map((r) => r.name), ['f'], 'a sibling with a longer name did not move');
    await props.deleteTree('alice', 'm');
    assert.deepEqual(await props.listChildren('alice', 'm'), []);
    assert.deepEqual(await props.list('alice', 'm/sub/deep'), []);
    assert.deepEqual((await props.list('bob', 'd/g')).map((r) => r.name), ['g'], 'other users are untouched');
  });

  withStore('tus uploads: create, get, advance by compare-and-set, deferred length, finish, expiry, delete', async (store) => {
    await newUser(store, 'alice');
    const { tusUploads: tus } = store;
    const base = { user: 'alice', offset: 0, metadata: 'filename YS50eHQ=', folder: 'd/ü x', filename: 'a.txt', overwrite: false, finalPath: undefined, createdAt: NOW };
    assert.equal(await tus.create({ ...base, id: 'u1', length: 5_000_000_000, expiresAt: NOW + 1000 }, { maxOpen: 10 }), 'created');
    assert.equal(await tus.create({ ...base, id: 'u2', length: undefined, overwrite: true, expiresAt: NOW + 500 }, { maxOpen: 10 }), 'created');
    assert.deepEqual(await tus.get('u1'), { ...base, id: 'u1', length: 5_000_000_000, expiresAt: NOW + 1000 });
    assert.equal((await tus.get('u2'))?.length, undefined);
    assert.equal((await tus.get('u2'))?.overwrite, true);
    // Sent through a grant (0017_tus_uploader): the owner's upload, its sender kept.
    assert.equal(await tus.create({ ...base, id: 'u3', uploader: 'bob', length: 1, expiresAt: NOW + 1000 }, { maxOpen: 10 }), 'created');
    assert.deepEqual(await tus.get('u3'), { ...base, id: 'u3', uploader: 'bob', length: 1, expiresAt: NOW + 1000 });
    assert.equal(await tus.delete('u3'), true);
    assert.equal(await tus.get('nope'), undefined);
    assert.equal(await tus.advance('u1', 0, 4_294_967_296, NOW + 2000), true, 'offsets beyond 32 bits');
    assert.equal(await tus.advance('u1', 0, 10, NOW + 3000), false, 'a stale writer cannot move the offset');
    const u1 = await tus.get('u1');
    assert.equal(u1?.offset, 4_294_967_296);
    assert.equal(u1?.expiresAt, NOW + 2000);
    assert.equal(await tus.advance('nope', 0, 1, NOW), false);
    assert.equal(await tus.setLength('u2', 42, 1), 'gone', 'not at that offset');
    assert.equal(await tus.setLength('u2', 42, 0), 'set');
    assert.equal(await tus.setLength('u2', 43, 0), 'gone', 'a length is set once');
    assert.equal((await tus.get('u2'))?.length, 42);
    assert.equal(await tus.setLength('u1', 1, 4_294_967_296), 'gone', 'not deferred');
    await tus.finish('u1', '/alice/d/ü x/a (1).txt');
    assert.equal((await tus.get('u1'))?.finalPath, '/alice/d/ü x/a (1).txt');
    assert.deepEqual((await tus.listExpired(NOW + 600, 10)).map((u) => u.id), ['u2']);
    assert.deepEqual((await tus.listExpired(NOW + 5000, 10)).map((u) => u.id), ['u2', 'u1']);
    assert.deepEqual((await tus.listExpired(NOW + 5000, 1)).map((u) => u.id), ['u2']);
    assert.equal(await tus.delete('u2'), true);
    assert.equal(await tus.delete('u2'), false);
    assert.equal(await tus.get('u2'), undefined);
  });

  withStore('tus uploads hold their bytes against the quota until finished or deleted; the open cap counts concurrent creations one by one', async (store) => {
    await newUser(store, 'alice');
    const { tusUploads: tus } = store;
    const base = { user: 'alice', offset: 0, metadata: '', folder: '', filename: 'a.bin', overwrite: false, finalPath: undefined, createdAt: NOW, expiresAt: NOW + 1000 };
    const staged = async () => (await store.usage.get('alice'))?.staged;
    await store.usage.setQuota('alice', 1000);
    await store.usage.add('alice', 100);
    assert.equal(await tus.create({ ...base, id: 'k1', length: 600 }, { maxOpen: 10 }), 'created');
    assert.equal(await tus.create({ ...base, id: 'k2', length: 301 }, { maxOpen: 10 }), 'quota_exceeded');
    assert.equal(await tus.get('k2'), undefined, 'nothing recorded when refused');
    assert.equal(await store.usage.reserve('alice', 301), 'refused', 'an upload\'s reservation sees the held bytes');
    assert.equal(await tus.create({ ...base, id: 'd1', length: undefined }, { maxOpen: 10 }), 'created');
    assert.equal(await store.usage.reserve('alice', 50), 'reserved');
    assert.equal(await tus.advance('d1', 0, 40, NOW + 1000, { fromReserved: 40 }), true);
    assert.deepEqual(await store.usage.get('alice'), { used: 100, reserved: 10, staged: 640, quota: 1000 }, 'a deferred upload\'s staged bytes move from the reservation to the upload');
    assert.equal(await tus.setLength('d1', 400, 40), 'quota_exceeded', '600 + 400 held');
    assert.equal((await tus.get('d1'))?.length, undefined, 'nothing changed');
    assert.equal(await tus.setLength('d1', 290, 40), 'set');
    assert.equal(await staged(), 890);
    await tus.finish('k1', '/alice/a.bin');
    await tus.finish('k1', '/alice/a.bin');
    assert.equal(await staged(), 290, 'finished once, given back once');
    assert.equal(await tus.delete('d1'), true);
    assert.equal(await staged(), 0);
    assert.equal(await tus.delete('k1'), true, 'a finished upload');
    assert.equal(await staged(), 0, 'gives nothing back twice');
    await store.usage.setQuota('alice', null);
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => tus.create({ ...base, id: `c${i}`, length: 10 }, { maxOpen: 5 })));
    assert.equal(results.filter((r) => r === 'created').length, 5, 'concurrent creations never pass the cap');
    assert.equal(results.filter((r) => r === 'too_many_uploads').length, 7);
    assert.equal(await staged(), 50, 'held without a quota too, so a quota set later sees them');
    assert.equal(await tus.create({ ...base, id: 'late', length: 1, createdAt: NOW + 2000, expiresAt: NOW + 3000 }, { maxOpen: 5 }), 'created', 'expired uploads do not count towards the cap');
    assert.equal(await store.usage.setUsed('alice', 7), true);
    assert.deepEqual(await store.usage.get('alice'), { used: 7, reserved: 0, staged: 51, quota: undefined }, 'a recount sets staged bytes from the open uploads');
  });

  const newShare = (ownerId: string, over: Partial<Share> = {}): Share => ({
    id: 'S1',
    ownerId,
    owner: 'alice',
    path: 'd/a.txt',
    isFile: true,
    uploadOnly: false,
    passwordHash: undefined,
    maxDownloads: undefined,
    downloadUnits: 0,
    expiresAt: undefined,
    createdAt: NOW,
    ...over,
  });

  withStore('shares: create, get, list newest first, delete by owner only', async (store) => {
    const a = await newUser(store, 'alice');
    const b = await newUser(store, 'bob');
    const s1 = newShare(a.id, { passwordHash: 'scrypt$p', maxDownloads: 5_000_000_000, expiresAt: NOW + 1000 });
    await store.shares.create(s1);
    await store.shares.create(newShare(a.id, { id: 'S2', path: '', isFile: false, uploadOnly: true, createdAt: NOW + 1 }));
    await store.shares.create(newShare(b.id, { id: 'S3', owner: 'bob' }));
    assert.deepEqual(await store.shares.get('S1'), { ...s1, ownerDisabled: false });
    assert.equal((await store.shares.get('S2'))?.uploadOnly, true);
    assert.equal((await store.shares.get('S2'))?.expiresAt, undefined);
    assert.equal(await store.shares.get('nope'), undefined);
    assert.deepEqual((await store.shares.listByOwner(a.id)).map((s) => s.id), ['S2', 'S1']);
    assert.equal(await store.shares.delete('S3', a.id), false, "another user's share is not deleted");
    assert.ok(await store.shares.get('S3'));
    assert.equal(await store.shares.delete('S1', a.id), true);
    assert.equal(await store.shares.delete('S1', a.id), false);
    assert.equal(await store.shares.get('S1'), undefined);
  });

  withStore('shares: claimUnits counts exactly up to the limit (fractions of downloads), also when called concurrently', async (store) => {
    const U = UNITS_PER_DOWNLOAD;
    const a = await newUser(store, 'alice');
    await store.shares.create(newShare(a.id, { maxDownloads: 5 }));
    await store.shares.create(newShare(a.id, { id: 'S2' }));
    const results = await Promise.all(Array.from({ length: 20 }, () => store.shares.claimUnits('S1', U)));
    assert.equal(results.filter(Boolean).length, 5);
    assert.equal((await store.shares.get('S1'))?.downloadUnits, 5 * U);
    for (let i = 0; i < 7; i++) assert.equal(await store.shares.claimUnits('S2', U), true, 'no limit');
    assert.equal((await store.shares.get('S2'))?.downloadUnits, 7 * U);
    assert.equal(await store.shares.claimUnits('nope', 1), false);
    await store.shares.addUnits('S2', 3 * U);
    assert.equal((await store.shares.get('S2'))?.downloadUnits, 10 * U);
    await store.shares.addUnits('nope', 3);
    // Pieces: halves of a limit-1 link, concurrently: exactly two of ten fit; a refund makes room again.
    await store.shares.create(newShare(a.id, { id: 'S4', maxDownloads: 1 }));
    const halves = await Promise.all(Array.from({ length: 10 }, () => store.shares.claimUnits('S4', U / 2)));
    assert.equal(halves.filter(Boolean).length, 2);
    assert.equal(await store.shares.claimUnits('S4', 1 + ROUNDING_ALLOWANCE), false, 'past the limit and its rounding allowance');
    assert.equal(await store.shares.claimUnits('S4', ROUNDING_ALLOWANCE), true, 'rounding of pieces fits');
    await store.shares.refundUnits('S4', U / 4 + ROUNDING_ALLOWANCE);
    assert.equal((await store.shares.get('S4'))?.downloadUnits, U - U / 4);
    assert.equal(await store.shares.claimUnits('S4', U / 4), true);
    await store.shares.refundUnits('S4', 2 * U);
    assert.equal((await store.shares.get('S4'))?.downloadUnits, 0, 'never below 0');
    // The largest limit: its arithmetic stays in 64 bits on both dialects.
    await store.shares.create(newShare(a.id, { id: 'S5', maxDownloads: MAX_DOWNLOAD_LIMIT }));
    assert.equal(await store.shares.claimUnits('S5', U), true);
  });

  withStore('shares: deleteWithin ends the target and what is below it, nothing else; deleteExpired', async (store) => {
    const a = await newUser(store, 'alice');
    const b = await newUser(store, 'bob');
    await store.shares.create(newShare(a.id, { id: 'd', path: 'd', isFile: false }));
    await store.shares.create(newShare(a.id, { id: 'dfile', path: 'd/a.txt' }));
    await store.shares.create(newShare(a.id, { id: 'dsib', path: 'd%', isFile: false }));
    await store.shares.create(newShare(a.id, { id: 'dsib2', path: 'dx/a.txt' }));
    await store.shares.create(newShare(b.id, { id: 'bob', owner: 'bob', path: 'd/a.txt' }));
    await store.shares.create(newShare(a.id, { id: 'old', path: 'e', expiresAt: NOW }));
    assert.equal(await store.shares.deleteWithin('alice', 'd'), 2);
    const left = async () => (await store.shares.listByOwner(a.id)).map((s) => s.id).sort();
    assert.deepEqual(await left(), ['dsib', 'dsib2', 'old']);
    assert.ok(await store.shares.get('bob'), "other users' shares stay");
    assert.equal(await store.shares.deleteExpired(NOW - 1), 0);
    assert.equal(await store.shares.deleteExpired(NOW), 1);
    assert.deepEqual(await left(), ['dsib', 'dsib2']);
    assert.equal(await store.shares.deleteWithin('alice', ''), 2, 'the root holds everything');
  });

  withStore('shares: removing the owner removes their shares', async (store) => {
    const a = await newUser(store, 'alice');
    const b = await newUser(store, 'bob');
    await store.shares.create(newShare(a.id));
    await store.shares.create(newShare(b.id, { id: 'S2', owner: 'bob' }));
    assert.equal(await store.users.delete('alice'), true);
    assert.equal(await store.shares.get('S1'), undefined);
    assert.ok(await store.shares.get('S2'));
  });

  withStore('users: setDisabled flips the flag of that user only; new users are enabled; sessions and shares see it', async (store) => {
    const a = await newUser(store, 'alice');
    const b = await newUser(store, 'bob');
    assert.equal(a.disabled, false);
    const s = await store.sessions.create({ userId: a.id, refreshHash: 'r', now: NOW, expiresAt: NOW + 1000 });
    await store.sessions.addAccessToken({ tokenHash: 'a', sessionId: s.id, expiresAt: NOW + 1000 });
    await store.shares.create(newShare(a.id));
    assert.equal(await store.users.setDisabled('alice', true), true);
    assert.equal((await store.users.getByName('alice'))?.disabled, true);
    assert.equal((await store.users.getByName('bob'))?.disabled, false);
    assert.equal((await store.sessions.findAccess('a', NOW))?.user.disabled, true);
    assert.equal((await store.shares.get('S1'))?.ownerDisabled, true);
    assert.equal(await store.users.setDisabled('alice', false), true);
    assert.equal((await store.users.getByName('alice'))?.disabled, false);
    assert.equal((await store.shares.get('S1'))?.ownerDisabled, false);
    assert.equal(await store.users.setDisabled('nobody', true), false);
    assert.equal(b.disabled, false);
  });

  withStore('ssh keys: create, find by user and fingerprint, one fingerprint per user, list oldest first, delete by owner only, touch, gone with the user', async (store) => {
    const a = await newUser(store, 'alice');
    const b = await newUser(store, 'bob');
    const key = (id: string, userId: string, fingerprint: string, createdAt: number) => ({ id, userId, name: id, algorithm: 'ssh-ed25519', publicKey: `blob-${fingerprint}`, fingerprint, createdAt, lastUsedAt: undefined });
    await store.sshKeys.create(key('S2', a.id, 'SHA256:two', NOW + 1));
    await store.sshKeys.create(key('S1', a.id, 'SHA256:one', NOW));
    await store.sshKeys.create(key('S3', b.id, 'SHA256:one', NOW));
    await assert.rejects(store.sshKeys.create(key('S4', a.id, 'SHA256:one', NOW + 2)), 'the same key twice for one user');
    assert.deepEqual((await store.sshKeys.listByUser(a.id)).map((k) => k.id), ['S1', 'S2']);
    assert.deepEqual(await store.sshKeys.find(a.id, 'SHA256:one'), key('S1', a.id, 'SHA256:one', NOW));
    assert.equal((await store.sshKeys.find(b.id, 'SHA256:one'))?.id, 'S3');
    assert.equal(await store.sshKeys.find(b.id, 'SHA256:two'), undefined);
    assert.equal(await store.sshKeys.delete('S3', a.id), false, "another user's key");
    await store.sshKeys.touch('S1', NOW + 100, NOW + 100 - 60_000);
    await store.sshKeys.touch('S1', NOW + 200, NOW + 200 - 60_000);
    assert.equal((await store.sshKeys.find(a.id, 'SHA256:one'))?.lastUsedAt, NOW + 100, 'within the window: not written again');
    assert.equal(await store.sshKeys.delete('S2', a.id), true);
    assert.equal(await store.users.delete('alice'), true);
    assert.deepEqual(await store.sshKeys.listByUser(a.id), []);
    assert.equal((await store.sshKeys.listByUser(b.id)).length, 1);
  });

  withStore('api keys: create, find by hash with the user, expiry, list newest first, delete by owner only, touch at most once per window', async (store) => {
    const a = await newUser(store, 'alice');
    const b = await newUser(store, 'bob');
    const base = { userId: a.id, readOnly: false, expiresAt: undefined, lastUsedAt: undefined };
    await store.apiKeys.create({ ...base, id: 'K1', name: 'laptop', keyHash: 'h1', createdAt: NOW });
    await store.apiKeys.create({ ...base, id: 'K2', name: 'backup', keyHash: 'h2', readOnly: true, createdAt: NOW + 1, expiresAt: NOW + 5_000_000_000 });
    await store.apiKeys.create({ ...base, id: 'K3', name: 'old', keyHash: 'h3', createdAt: NOW + 2, expiresAt: NOW + 10 });
    await store.apiKeys.create({ ...base, userId: b.id, id: 'K4', name: 'bob', keyHash: 'h4', createdAt: NOW });
    await assert.rejects(store.apiKeys.create({ ...base, id: 'K5', name: 'dup', keyHash: 'h1', createdAt: NOW }));
    const found = await store.apiKeys.findByHash('h2', NOW);
    assert.deepEqual(found?.key, { id: 'K2', userId: a.id, name: 'backup', readOnly: true, createdAt: NOW + 1, expiresAt: NOW + 5_000_000_000, lastUsedAt: undefined });
    assert.equal(found?.user.username, 'alice');
    assert.equal(found?.user.disabled, false);
    assert.ok(await store.apiKeys.findByHash('h3', NOW + 9));
    assert.equal(await store.apiKeys.findByHash('h3', NOW + 10), undefined, 'expired at its expiry');
    assert.equal(await store.apiKeys.findByHash('nope', NOW), undefined);
    assert.deepEqual((await store.apiKeys.listByUser(a.id)).map((k) => k.id), ['K3', 'K2', 'K1']);
    assert.equal(await store.apiKeys.delete('K4', a.id), false, "another user's key");
    assert.ok(await store.apiKeys.findByHash('h4', NOW));
    assert.equal(await store.apiKeys.delete('K1', a.id), true);
    assert.equal(await store.apiKeys.findByHash('h1', NOW), undefined);
    await store.apiKeys.touch('K2', NOW + 100, NOW + 100 - 60_000);
    assert.equal((await store.apiKeys.findByHash('h2', NOW))?.key.lastUsedAt, NOW + 100);
    await store.apiKeys.touch('K2', NOW + 200, NOW + 200 - 60_000);
    assert.equal((await store.apiKeys.findByHash('h2', NOW))?.key.lastUsedAt, NOW + 100, 'within the window: not written again');
    await store.apiKeys.touch('K2', NOW + 70_000, NOW + 70_000 - 60_000);
    assert.equal((await store.apiKeys.findByHash('h2', NOW))?.key.lastUsedAt, NOW + 70_000);
    assert.equal(await store.users.delete('alice'), true);
    assert.deepEqual(await store.apiKeys.listByUser(a.id), []);
    assert.equal(await store.apiKeys.findByHash('h2', NOW), undefined);
  });

  withStore('usage: figures per user, quota set and removed, unknown users answered as such', async (store) => {
    await newUser(store, 'alice');
    await newUser(store, 'bob');
    assert.deepEqual(await store.usage.get('alice'), { used: 0, reserved: 0, staged: 0, quota: undefined });
    assert.equal(await store.usage.get('nobody'), undefined);
    await store.usage.add('alice', 5000);
    await store.usage.add('alice', -1200);
    await store.usage.add('nobody', 10);
    assert.equal(await store.usage.setQuota('alice', 10 * 1024 ** 4), true, 'quotas beyond 32 bits');
    assert.deepEqual(await store.usage.get('alice'), { used: 3800, reserved: 0, staged: 0, quota: 10 * 1024 ** 4 });
    assert.deepEqual(await store.usage.get('bob'), { used: 0, reserved: 0, staged: 0, quota: undefined });
    assert.equal(await store.usage.setQuota('alice', null), true);
    assert.equal((await store.usage.get('alice'))?.quota, undefined);
    assert.equal(await store.usage.setQuota('nobody', 5), false);
    assert.equal(await store.usage.setUsed('alice', 42), true);
    assert.equal((await store.usage.get('alice'))?.used, 42);
    assert.equal(await store.usage.setUsed('nobody', 1), false);
  });

  withStore('usage: the bytes of an owner\'s versions and trashed items, as a recount adds them (beyond 32 bits; moving items not yet)', async (store) => {
    await newUser(store, 'alice');
    await newUser(store, 'bob');
    assert.equal(await store.versions.bytesOf('alice'), 0);
    assert.equal(await store.trash.bytesOf('alice'), 0);
    const big = 5 * 1024 ** 3;
    await store.versions.add({ id: 'v1', owner: 'alice', path: 'a.txt', size: big, createdAt: NOW });
    await store.versions.add({ id: 'v2', owner: 'alice', path: 'b/c.txt', size: 7, createdAt: NOW });
    await store.versions.add({ id: 'v3', owner: 'bob', path: 'a.txt', size: 100, createdAt: NOW });
    const item = { owner: 'alice', path: 'x', name: 'x', isFile: true, deletedAt: NOW } as const;
    await store.trash.add({ ...item, id: 't1', size: big, state: 'trashed' });
    await store.trash.add({ ...item, id: 't2', size: 0, state: 'moving' });
    await store.trash.add({ ...item, id: 't3', owner: 'bob', size: 9, state: 'trashed' });
    assert.equal(await store.versions.bytesOf('alice'), big + 7);
    assert.equal(await store.trash.bytesOf('alice'), big);
    await store.trash.settle('t2', { isFile: false, size: 30 });
    assert.equal(await store.trash.bytesOf('alice'), big + 30);
    assert.equal(await store.versions.bytesOf('bob'), 100);
    assert.equal(await store.trash.bytesOf('bob'), 9);
  });

  withStore('usage: reserve fits or is refused against used + reserved; unlimited without a quota; release never goes below zero', async (store) => {
    await newUser(store, 'alice');
    assert.equal(await store.usage.reserve('alice', 100), 'unlimited');
    assert.equal((await store.usage.get('alice'))?.reserved, 0);
    await store.usage.setQuota('alice', 1000);
    await store.usage.add('alice', 600);
    assert.equal(await store.usage.reserve('alice', 300), 'reserved');
    assert.equal(await store.usage.reserve('alice', 101), 'refused');
    assert.equal(await store.usage.reserve('alice', 100), 'reserved', 'exactly the rest fits');
    assert.deepEqual(await store.usage.get('alice'), { used: 600, reserved: 400, staged: 0, quota: 1000 });
    await store.usage.release('alice', 300);
    await store.usage.release('alice', 500);
    assert.equal((await store.usage.get('alice'))?.reserved, 0);
    assert.equal(await store.usage.reserve('nobody', 1), 'refused');
  });

  withStore('usage: concurrent changes lose no update, and concurrent reservations never pass the quota', async (store) => {
    await newUser(store, 'alice');
    await Promise.all(Array.from({ length: 50 }, (_, i) => store.usage.add('alice', i % 2 ? 7 : -3)));
    assert.equal((await store.usage.get('alice'))?.used, 25 * 7 - 25 * 3);
    await store.usage.setQuota('alice', 100 + 10 * 64);
    const results = await Promise.all(Array.from({ length: 20 }, () => store.usage.reserve('alice', 64)));
    assert.equal(results.filter((r) => r === 'reserved').length, 10);
    assert.equal(results.filter((r) => r === 'refused').length, 10);
    assert.equal((await store.usage.get('alice'))?.reserved, 640);
  });
}
