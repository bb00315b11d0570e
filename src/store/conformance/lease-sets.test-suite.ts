import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { LeaseRepo } from '../leases.js';

/**
 * LeaseRepo.acquireAll and releaseAll, the same on every lease store (the database's, Redis's):
 * all of a set or none of it, and none while a name around is held. `p` keeps the names of one
 * run apart from another's on a shared store; `now` is the store's clock (Redis keeps its own).
 */
export async function checkLeaseSets(leases: LeaseRepo, p: string, now: number): Promise<void> {
  const ttl = 60_000;
  const n = (s: string) => `${p}${s}`;
  const take = (names: string[], owner: string, around: string[] = [], at = now) => leases.acquireAll(names.map(n), owner, at, at + ttl, around.map(n));
  const heldBy = async (names: string[]) => (await leases.heldOf(names.map(n), now)).map((x) => x.slice(p.length)).sort();

  const cases: { what: string; before: [name: string, owner: string, expires: number][]; names: string[]; around?: string[]; taken: boolean }[] = [
    { what: 'all free', before: [], names: ['f1', 'f2'], taken: true },
    { what: 'one already own', before: [['o1', 'me', now + ttl]], names: ['o1', 'o2'], taken: true },
    { what: 'one held by another (partial overlap)', before: [['a2', 'other', now + ttl]], names: ['a1', 'a2', 'a3'], taken: false },
    { what: 'one expired', before: [['e1', 'other', now - 1]], names: ['e1', 'e2'], taken: true },
    { what: 'a name around held', before: [['r0', 'other', now + ttl]], names: ['r1', 'r2'], around: ['r0'], taken: false },
    { what: 'the names around free or expired', before: [['x0', 'other', now - 1]], names: ['x1'], around: ['x0', 'xnone'], taken: true },
  ];
  for (const c of cases) {
    // An expired lease is one taken 10 ms long that ran out (the database keeps its row; Redis forgets the key).
    for (const [name, owner, expires] of c.before) assert.equal(await leases.acquire(n(name), owner, Math.min(now, expires - 10), expires), true, c.what);
    // Redis counts an expiry on its own clock: the lease taken 10 ms long has run out there too.
    if (c.before.some(([, , expires]) => expires <= now)) await new Promise((r) => setTimeout(r, 30));
    assert.equal(await take(c.names, 'me', c.around), c.taken, c.what);
    const others = c.before.filter(([name, owner, expires]) => c.names.includes(name) && owner !== 'me' && expires > now).map(([name]) => name);
    assert.deepEqual(await heldBy(c.names), (c.taken ? c.names : others).sort(), `${c.what}: ${c.taken ? 'all taken' : 'none taken'}`);
    if (c.taken) {
      assert.equal(await leases.acquire(n(c.names[0] as string), 'third', now, now + ttl), false, `${c.what}: held against another`);
      await leases.releaseAll(c.names.map(n), 'me');
      assert.deepEqual(await heldBy(c.names), [], `${c.what}: all let go in one turn`);
    }
  }

  // A release by a non-holder frees nothing; the holder's renew of each name still works.
  assert.equal(await take(['k1', 'k2'], 'me'), true);
  await leases.releaseAll([n('k1'), n('k2')], 'other');
  assert.deepEqual(await heldBy(['k1', 'k2']), ['k1', 'k2']);
  assert.equal(await leases.renew(n('k2'), 'me', now + ttl), true);
  await leases.releaseAll([n('k1'), n('k2')], 'me');

  // Takers of overlapping sets at once: exactly one wins, and the losers hold nothing.
  const wins = await Promise.all(Array.from({ length: 8 }, (_, i) => take(i % 2 === 0 ? ['s1', 's2'] : ['s2', 's3'], `o${i}`)));
  assert.equal(wins.filter(Boolean).length, 1, JSON.stringify(wins));
  const winner = `o${wins.indexOf(true)}`;
  const won = wins.indexOf(true) % 2 === 0 ? ['s1', 's2'] : ['s2', 's3'];
  assert.deepEqual(await heldBy(['s1', 's2', 's3']), won);
  await leases.releaseAll(won.map(n), winner);
  assert.equal(await take([], 'me', ['s1']), true, 'an empty set is taken at once');
}

/**
 * LeaseRepo.releaseHeldBy, the same on every lease store: frees every lease whose owner is a hold of
 * the dead process (`<process>/…`, src/lib/process-id.ts), single or taken as a set, and nobody
 * else's: not another process's whose id merely begins the same, nor the process's own name (its
 * liveness lease, which the leader takes by itself). Ids unique per run: the store may be shared.
 */
export async function checkReleaseHeldBy(leases: LeaseRepo, p: string, now: number): Promise<void> {
  const ttl = 60_000;
  const n = (s: string) => `${p}${s}`;
  const dead = `dead-${randomUUID()}`;
  const taken: [name: string, owner: string][] = [
    ['d1', `${dead}/1`],
    ['a1', `alive-${randomUUID()}/1`],
    ['a2', `${dead}x/1`],
    ['a3', dead],
  ];
  for (const [name, owner] of taken) assert.equal(await leases.acquire(n(name), owner, now, now + ttl), true, name);
  assert.equal(await leases.acquireAll([n('d2'), n('d3')], `${dead}/2`, now, now + ttl, []), true);
  assert.equal(await leases.releaseHeldBy(dead), 3, 'the three holds of the dead process freed');
  const names = ['a1', 'a2', 'a3', 'd1', 'd2', 'd3'];
  assert.deepEqual((await leases.heldOf(names.map(n), now)).map((x) => x.slice(p.length)).sort(), ['a1', 'a2', 'a3']);
  assert.equal(await leases.acquire(n('d1'), 'next', now, now + ttl), true, 'a freed name is free to take');
  assert.equal(await leases.releaseHeldBy(dead), 0, 'nothing left to free');
  for (const [name, owner] of [...taken.slice(1), ['d1', 'next'] as const]) await leases.release(n(name), owner);
}
