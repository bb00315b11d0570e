import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decide, grantRefusal, isWriteMethod, type AccessRule, type GrantAccess, type Resource } from './access.js';
import type { Principal } from './principal.js';
import type { Share } from './share.js';

const alice = { kind: 'user', userId: 'u1', username: 'alice', isAdmin: false } as const;
const session: Principal = { ...alice, via: 'session', sessionId: 's1', readOnly: false };
const admin: Principal = { ...session, isAdmin: true };
const adminKey: Principal = { ...alice, isAdmin: true, via: 'key', keyId: 'k3', readOnly: false };
const adminRoKey: Principal = { ...alice, isAdmin: true, via: 'key', keyId: 'k4', readOnly: true };
const adminBasicPw: Principal = { ...alice, isAdmin: true, via: 'password', readOnly: false };
const fullKey: Principal = { ...alice, via: 'key', keyId: 'k1', readOnly: false };
const roKey: Principal = { ...alice, via: 'key', keyId: 'k2', readOnly: true };
const basicPw: Principal = { ...alice, via: 'password', readOnly: false };
const pathTok: Principal = { kind: 'pathToken', username: 'alice', path: 'alice/a.txt', readOnly: true };
const shareOf = (over: Partial<Share>): Principal => {
  const share: Share = { id: 'S', ownerId: 'u1', owner: 'alice', path: 'f', isFile: false, uploadOnly: false, passwordHash: undefined, maxDownloads: undefined, downloadUnits: 0, expiresAt: undefined, createdAt: 0, ...over };
  return { kind: 'share', shareId: 'S', username: 'alice', share, unlocked: over.passwordHash === undefined, readOnly: !share.uploadOnly };
};
const readLink = shareOf({});
const uploadLink = shareOf({ uploadOnly: true });
const lockedLink = shareOf({ passwordHash: 'h' });
const lockedDrop = shareOf({ passwordHash: 'h', uploadOnly: true });
const unlockedDrop: Principal = { ...(lockedDrop as Extract<Principal, { kind: 'share' }>), unlocked: true };

const own: Resource = { kind: 'storage', key: { user: 'alice', segments: ['a.txt'] }, trailingSlash: false };
const other: Resource = { kind: 'storage', key: { user: 'bob', segments: ['a.txt'] }, trailingSlash: false };
const sibling: Resource = { kind: 'storage', key: { user: 'alice', segments: ['b.txt'] }, trailingSlash: false };
const none: Resource = { kind: 'none' };

const USER: AccessRule = { who: 'user' };
const STORAGE_READ: AccessRule = { who: 'user', pathToken: true };
const ADMIN: AccessRule = { who: 'admin' };
const SESSION_ONLY: AccessRule = { who: 'user', sessionOnly: true };
const HIDDEN: AccessRule = { who: 'user', hide: true };
const SHARE: AccessRule = { who: 'share' };
const PAGE: AccessRule = { who: 'share', share: 'page' };

// rule, principal, method, resource → expected denial code (undefined = allowed)
const CASES: [string, AccessRule, Principal | undefined, string, Resource, string | undefined][] = [
  ['public needs nothing', { who: 'public' }, undefined, 'POST', none, undefined],
  ['cookie pages decide themselves', { who: 'cookie' }, undefined, 'GET', none, undefined],
  ['no credential', USER, undefined, 'GET', none, 'unauthorized'],
  ['no credential on a private URL', HIDDEN, undefined, 'PATCH', none, 'not_found'],
  ['session reads', USER, session, 'GET', none, undefined],
  ['session writes', USER, session, 'DELETE', none, undefined],
  ['full key writes', USER, fullKey, 'PUT', own, undefined],
  ['read-only key reads', USER, roKey, 'GET', own, undefined],
  ['read-only key PROPFIND is a read', USER, roKey, 'PROPFIND', own, undefined],
  ['read-only key PUT', USER, roKey, 'PUT', own, 'forbidden'],
  ['read-only key POST', USER, roKey, 'POST', none, 'forbidden'],
  ['read-only key MOVE', USER, roKey, 'MOVE', own, 'forbidden'],
  ['read-only key LOCK', USER, roKey, 'LOCK', own, 'forbidden'],
  ['read-only key on a declared read', { who: 'user', write: false }, roKey, 'POST', none, undefined],
  ["another user's storage", USER, session, 'GET', other, 'unauthorized'],
  ["another user's storage beats read-only", USER, roKey, 'PUT', other, 'unauthorized'],
  ['Basic password writes', USER, basicPw, 'PUT', own, undefined],
  ['non-admin on admin', ADMIN, session, 'GET', none, 'forbidden'],
  ['admin on admin', ADMIN, admin, 'GET', none, undefined],
  ['key of a non-admin on admin', ADMIN, fullKey, 'GET', none, 'forbidden'],
  // Issue 27: an admin's app password is no admin; account-level powers need a signed-in session.
  ["admin's full key on admin (create a user)", ADMIN, adminKey, 'POST', none, 'forbidden'],
  ["admin's full key on admin (read)", ADMIN, adminKey, 'GET', none, 'forbidden'],
  ["admin's read-only key on admin", ADMIN, adminRoKey, 'GET', none, 'forbidden'],
  ["admin's account password over Basic on admin", ADMIN, adminBasicPw, 'PATCH', none, 'forbidden'],
  ["admin's key on a session-only route", SESSION_ONLY, adminKey, 'POST', none, 'forbidden'],
  ["admin's key on a user route", USER, adminKey, 'PUT', own, undefined],
  ['key on a session-only route', SESSION_ONLY, fullKey, 'GET', none, 'forbidden'],
  ['session on a session-only route', SESSION_ONLY, session, 'POST', none, undefined],
  ['path token: exact path GET', STORAGE_READ, pathTok, 'GET', own, undefined],
  ['path token: exact path HEAD', STORAGE_READ, pathTok, 'HEAD', own, undefined],
  ['path token: another path', STORAGE_READ, pathTok, 'GET', sibling, 'unauthorized'],
  ['path token: a write', STORAGE_READ, pathTok, 'PUT', own, 'unauthorized'],
  ['path token: route without path tokens', USER, pathTok, 'GET', own, 'unauthorized'],
  ['share link on a user route', USER, readLink, 'GET', none, 'unauthorized'],
  ['dead link', SHARE, undefined, 'GET', none, 'not_found'],
  ['read link read', SHARE, readLink, 'GET', none, undefined],
  ['read link upload', SHARE, readLink, 'PUT', none, 'forbidden'],
  ['upload link read', SHARE, uploadLink, 'GET', none, 'not_found'],
  ['upload link upload', SHARE, uploadLink, 'PUT', none, undefined],
  ['locked link', SHARE, lockedLink, 'GET', none, 'password_required'],
  // The password before the kind, as on the pages: a locked link does not tell what it is.
  ['locked read link upload', SHARE, lockedLink, 'PUT', none, 'password_required'],
  ['locked upload-only link read', SHARE, lockedDrop, 'GET', none, 'password_required'],
  ['locked upload-only link upload', SHARE, lockedDrop, 'PUT', none, 'password_required'],
  ['unlocked upload-only link read', SHARE, unlockedDrop, 'GET', none, 'not_found'],
  ['unlocked upload-only link upload', SHARE, unlockedDrop, 'PUT', none, undefined],
  // The page asks the password first: a locked link's page is its password form, whatever its kind.
  ['locked link page', PAGE, lockedLink, 'GET', none, 'password_required'],
  ['locked upload-only link page', PAGE, lockedDrop, 'GET', none, 'password_required'],
  ['locked link page upload', PAGE, lockedLink, 'POST', none, 'password_required'],
  ['locked upload-only link page upload', PAGE, lockedDrop, 'POST', none, 'password_required'],
  ['read link page', PAGE, readLink, 'GET', none, undefined],
  ['read link page upload', PAGE, readLink, 'POST', none, 'forbidden'],
  ['upload-only link page (its drop zone)', PAGE, uploadLink, 'GET', none, undefined],
  ['unlocked upload-only link page upload', PAGE, unlockedDrop, 'POST', none, undefined],
  ['session on a share route', SHARE, session, 'GET', none, 'not_found'],
];

// Issue 29: grants. alice reaches bob's `team/` (a folder) or `one.txt` (a file) through a grant.
const bobs = (...segments: string[]): Resource => ({ kind: 'storage', key: { user: 'bob', segments }, trailingSlash: false });
const readGrant: GrantAccess = { root: { user: 'bob', segments: ['team'] }, isFile: false, permission: 'read' };
const writeGrant: GrantAccess = { ...readGrant, permission: 'write' };
const writeFile: GrantAccess = { root: { user: 'bob', segments: ['one.txt'] }, isFile: true, permission: 'write' };
const GRANT_CASES: [string, AccessRule, Principal, string, Resource, GrantAccess | undefined, string | undefined][] = [
  ['read grant: a read inside', STORAGE_READ, session, 'GET', bobs('team', 'a.txt'), readGrant, undefined],
  ['read grant: PROPFIND of the item', USER, session, 'PROPFIND', bobs('team'), readGrant, undefined],
  ['read grant: a write inside', USER, session, 'PUT', bobs('team', 'a.txt'), readGrant, 'forbidden'],
  ['read grant: outside the item', STORAGE_READ, session, 'GET', bobs('other.txt'), readGrant, 'unauthorized'],
  ['read grant: a sibling with the same prefix', STORAGE_READ, session, 'GET', bobs('team2', 'a.txt'), readGrant, 'unauthorized'],
  ['no grant', STORAGE_READ, session, 'GET', bobs('team', 'a.txt'), undefined, 'unauthorized'],
  ['write grant: PUT inside', USER, session, 'PUT', bobs('team', 'sub', 'a.txt'), writeGrant, undefined],
  ['write grant: upload into the item', USER, session, 'PUT', bobs('team'), writeGrant, undefined],
  ['write grant: DELETE inside', USER, session, 'DELETE', bobs('team', 'a.txt'), writeGrant, undefined],
  ['write grant: DELETE of the item', USER, session, 'DELETE', bobs('team'), writeGrant, 'forbidden'],
  ['write grant: MOVE of the item', USER, session, 'MOVE', bobs('team'), writeGrant, 'forbidden'],
  // Issue 49: a lock on the item itself would hold the owner's whole item against them.
  ['write grant: LOCK of the item', USER, session, 'LOCK', bobs('team'), writeGrant, 'forbidden'],
  ['write grant: LOCK inside', USER, session, 'LOCK', bobs('team', 'sub'), writeGrant, undefined],
  ['write grant: UNLOCK through the item (of a lock inside it)', USER, session, 'UNLOCK', bobs('team'), writeGrant, undefined],
  ['read grant: LOCK inside', USER, session, 'LOCK', bobs('team', 'a.txt'), readGrant, 'forbidden'],
  ['write grant of a file: lock it', USER, session, 'LOCK', bobs('one.txt'), writeFile, 'forbidden'],
  ['write grant: read-only key', USER, roKey, 'PUT', bobs('team', 'a.txt'), writeGrant, 'forbidden'],
  ['write grant: path token is not a grantee', STORAGE_READ, pathTok, 'GET', bobs('team', 'a.txt'), writeGrant, 'unauthorized'],
  ['write grant of a file: replace it', USER, session, 'PUT', bobs('one.txt'), writeFile, undefined],
  ['write grant of a file: delete it', USER, session, 'DELETE', bobs('one.txt'), writeFile, 'forbidden'],
  ['a grant never opens an admin route', ADMIN, session, 'GET', bobs('team'), writeGrant, 'unauthorized'],
  ['read grant: a POST whose action may only read (the handler asks again for writes)', { who: 'user', readingAction: true }, session, 'POST', bobs('team', 'a.txt'), readGrant, undefined],
  ['read grant: such a POST with a read-only key', { who: 'user', readingAction: true }, roKey, 'POST', bobs('team', 'a.txt'), readGrant, 'forbidden'],
  ['read grant: such a POST outside the item', { who: 'user', readingAction: true }, session, 'POST', bobs('other.txt'), readGrant, 'unauthorized'],
];

for (const [name, rule, principal, method, resource, grant, expected] of GRANT_CASES) {
  test(`decide with a grant: ${name} → ${expected ?? 'allowed'}`, () => {
    assert.equal(decide(rule, principal, method, resource, grant)?.code, expected);
  });
}

// What a grant that reaches a key lets its recipient write there (decide's grant part, asked alone when
// a grant ends, for the locks the recipient holds): [grant, key segments, method] → refusal code.
const REFUSALS: [GrantAccess, string[], string, string | undefined][] = [
  [writeGrant, ['team', 'sub'], 'LOCK', undefined],
  [writeGrant, ['team'], 'LOCK', 'forbidden'],
  [writeGrant, ['team'], 'PUT', undefined],
  [readGrant, ['team', 'sub'], 'LOCK', 'forbidden'],
  [writeFile, ['one.txt'], 'LOCK', 'forbidden'],
  [writeFile, ['one.txt'], 'PUT', undefined],
];
for (const [grant, segments, method, expected] of REFUSALS) {
  test(`grantRefusal: ${grant.permission} grant of ${grant.root.segments.join('/')}, ${method} at ${segments.join('/')} → ${expected ?? 'allowed'}`, () => {
    assert.equal(grantRefusal(grant, { user: 'bob', segments }, method)?.code, expected);
  });
}

for (const [name, rule, principal, method, resource, expected] of CASES) {
  test(`decide: ${name} → ${expected ?? 'allowed'}`, () => {
    assert.equal(decide(rule, principal, method, resource)?.code, expected);
  });
}

test('isWriteMethod: GET, HEAD, OPTIONS and PROPFIND read; the rest write', () => {
  for (const m of ['GET', 'HEAD', 'OPTIONS', 'PROPFIND', 'propfind']) assert.equal(isWriteMethod(m), false, m);
  for (const m of ['PUT', 'POST', 'PATCH', 'DELETE', 'MKCOL', 'COPY', 'MOVE', 'LOCK', 'UNLOCK', 'PROPPATCH']) assert.equal(isWriteMethod(m), true, m);
});
