import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makePathToken, pathTokenExpiresAt, pathTokenRecipient, verifyPathToken, type PathTokenClaims } from './path-tokens.js';

const secret = Buffer.alloc(32, 7);
const claims: PathTokenClaims = { owner: 'alice', keyId: 'alice/photos/cat.jpg', expiresAt: 2_000, authEpoch: 'epoch-1' };
const token = makePathToken(secret, claims);
const expected = { owner: claims.owner, keyId: claims.keyId, authEpoch: claims.authEpoch };

test('path token verification table', () => {
  const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
  const rows: [string, string, Partial<typeof expected>, number, string][] = [
    ['valid', token, {}, 1_000, 'ok'],
    ['expired exactly at expiry', token, {}, 2_000, 'expired'],
    ['expired later', token, {}, 9_999, 'expired'],
    ['tampered signature', flip(token, token.length - 1), {}, 1_000, 'bad_signature'],
    ['tampered expiry', token.replace('.2000.', '.9000.'), {}, 1_000, 'bad_signature'],
    ['other path', token, { keyId: 'alice/photos/dog.jpg' }, 1_000, 'bad_signature'],
    ['parent folder', token, { keyId: 'alice/photos' }, 1_000, 'bad_signature'],
    ['other owner', token, { owner: 'bob', keyId: 'bob/photos/cat.jpg' }, 1_000, 'bad_signature'],
    ['old epoch (password changed)', token, { authEpoch: 'epoch-2' }, 1_000, 'bad_signature'],
    ['other secret', makePathToken(Buffer.alloc(32, 8), claims), {}, 1_000, 'bad_signature'],
    ['empty', '', {}, 1_000, 'malformed'],
    ['access token', 'fca_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', {}, 1_000, 'malformed'],
    ['missing mac', 'fcp1.2000.', {}, 1_000, 'malformed'],
    ['wrong version', token.replace('fcp1', 'fcp2'), {}, 1_000, 'malformed'],
    ['non-numeric expiry', token.replace('.2000.', '.2e3.'), {}, 1_000, 'malformed'],
    ['trailing data', `${token}x`, {}, 1_000, 'malformed'],
  ];
  for (const [name, tok, change, now, result] of rows) {
    assert.equal(verifyPathToken(secret, tok, { ...expected, ...change }, now), result, name);
  }
});

test('fields cannot be shifted into each other', () => {
  // owner "alice" + keyId "x/y" must not verify as owner "alice\0x" etc.: NUL never occurs in names, and the MAC covers all fields.
  const a = makePathToken(secret, { owner: 'al', keyId: 'ice/x', expiresAt: 5, authEpoch: 'e' });
  assert.equal(verifyPathToken(secret, a, { owner: 'ali', keyId: 'ce/x', authEpoch: 'e' }, 1), 'bad_signature');
});

test('a token is short enough for a URL and URL-safe', () => {
  assert.match(token, /^fcp1\.\d+\.[A-Za-z0-9_-]{43}$/);
});

test('a recipient\'s token (made through a grant) names the recipient and is bound to both epochs', () => {
  const withRecipient: PathTokenClaims = { ...claims, recipient: { name: 'bob.smith', authEpoch: 'bob-1' } };
  const tok = makePathToken(secret, withRecipient);
  assert.match(tok, /^fcp1\.2000\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
  assert.equal(pathTokenRecipient(tok), 'bob.smith');
  assert.equal(pathTokenRecipient(token), undefined);
  assert.equal(verifyPathToken(secret, tok, { ...expected, recipient: withRecipient.recipient }, 1_000), 'ok');
  assert.equal(verifyPathToken(secret, tok, { ...expected, recipient: { name: 'bob.smith', authEpoch: 'bob-2' } }, 1_000), 'bad_signature', 'recipient changed password');
  assert.equal(verifyPathToken(secret, tok, { ...expected, authEpoch: 'epoch-2', recipient: withRecipient.recipient }, 1_000), 'bad_signature', 'owner changed password');
  assert.equal(verifyPathToken(secret, tok, expected, 1_000), 'bad_signature', 'not an owner token');
  assert.equal(verifyPathToken(secret, token, { ...expected, recipient: withRecipient.recipient }, 1_000), 'bad_signature', 'an owner token is no recipient token');
  const renamed = tok.replace(`.${Buffer.from('bob.smith').toString('base64url')}.`, `.${Buffer.from('eve').toString('base64url')}.`);
  assert.equal(verifyPathToken(secret, renamed, { ...expected, recipient: { name: 'eve', authEpoch: 'bob-1' } }, 1_000), 'bad_signature');
});

test('a token made for ttl seconds is good for at least ttl seconds and at most one more, wherever in a second it is made', () => {
  for (const [madeMs, ttl] of [[10_000, 1], [10_001, 1], [10_999, 1], [10_500, 60], [0, 1], [1_700_000_000_999, 3600]] as const) {
    const expiresAt = pathTokenExpiresAt(madeMs, ttl);
    const tok = makePathToken(secret, { ...claims, expiresAt });
    const at = (ms: number) => verifyPathToken(secret, tok, expected, Math.floor(ms / 1000));
    assert.equal(at(madeMs), 'ok', `made at ${madeMs} ms`);
    assert.equal(at(madeMs + ttl * 1000 - 1), 'ok', `${ttl} s later, less 1 ms (made at ${madeMs} ms)`);
    assert.equal(at(madeMs + (ttl + 1) * 1000), 'expired', `${ttl + 1} s later (made at ${madeMs} ms)`);
  }
});
