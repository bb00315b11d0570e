import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { DavLock } from '../store/dav-locks.js';
import { allLive, LIVE, propfindRenderer, type Resource } from './props.js';

const modified = new Date(Date.UTC(2026, 10, 24, 20, 30, 5, 123));
const lock: DavLock = { token: 'urn:uuid:1234', user: 'alice', path: 'a', scope: 'exclusive', depth: 'infinity', owner: '<D:owner>me</D:owner>', principal: 'alice', timeoutSeconds: 60, createdAt: 0, expiresAt: 60_000 };
const lockroot = (l: DavLock) => `/dav/${l.user}/${l.path}`;

const resources: [string, Resource][] = [
  ['plain file', { href: '/dav/alice/a.txt', name: 'a.txt', entry: { name: 'a.txt', isFile: true, size: 12, modified, etag: '"e1"' }, locks: [], dead: [], now: 0 }],
  ['folder', { href: '/dav/alice/docs/', name: 'docs', entry: { name: 'docs', isFile: false, size: 0, modified, etag: '"d"' }, locks: [], dead: [], now: 0 }],
  ['names that need escaping', { href: '/dav/alice/a%20%3C%26%3E.md', name: 'a <&>\r.md', entry: { name: 'a <&>\r.md', isFile: true, size: 0, modified, etag: '"x&y"' }, locks: [], dead: [], now: 0 }],
  ['locked, with a dead property', { href: '/dav/alice/a', name: 'a', entry: { name: 'a', isFile: false, size: 0, modified, etag: '"z"' }, locks: [lock], dead: [{ ns: 'urn:x', name: 'colour', xml: '<P:colour xmlns:P="urn:x">blue</P:colour>' }], now: 1000 }],
];

// The one-template allprop equals what iterating LIVE gives, property for property.
for (const [name, r] of resources) {
  test(`allprop fast path equals the LIVE table: ${name}`, () => {
    let expected = '';
    for (const [local, spec] of Object.entries(LIVE)) {
      if (!spec.allprop) continue;
      const v = spec.value(r, lockroot);
      if (v !== undefined) expected += `<D:${local}>${v}</D:${local}>`;
    }
    assert.equal(allLive(r, lockroot), expected);
    // And the general renderer (an include forces it) agrees with the fast one on the whole response.
    const fast = propfindRenderer({ kind: 'allprop', include: [] }, lockroot)(r);
    const general = propfindRenderer({ kind: 'allprop', include: [{ ns: 'DAV:', local: 'resourcetype' }] }, lockroot)(r);
    assert.equal(fast, general);
    for (const d of r.dead) assert.ok(fast.includes(d.xml));
  });
}
