import { test } from 'node:test';
import assert from 'node:assert/strict';
import { crossSiteProblem, csrfToken, csrfValid, parseSessionCookie, sessionCookieValue } from './session.js';

test('a session cookie round-trips and refuses anything malformed', () => {
  const v = sessionCookieValue('alice', 'fcr_abc-DEF_123');
  assert.deepEqual(parseSessionCookie(v), { username: 'alice', refreshToken: 'fcr_abc-DEF_123' });
  const bad = [undefined, '', 'alice', ':fcr_x', 'al ice:fcr_x', 'alice:', 'alice:fcr x', 'alice:fcr_;x', '../x:fcr_x', `alice:${'a'.repeat(400)}`];
  for (const b of bad) assert.equal(parseSessionCookie(b), undefined, String(b));
});

test('a CSRF token is bound to its session and to the server key', () => {
  const key = Buffer.alloc(32, 1);
  const t = csrfToken(key, 'session-1');
  assert.equal(csrfValid(key, 'session-1', t), true);
  assert.equal(csrfValid(key, 'session-2', t), false);
  assert.equal(csrfValid(Buffer.alloc(32, 2), 'session-1', t), false);
  for (const bad of [undefined, '', 42, t.slice(1), `${t}x`, ['x']]) assert.equal(csrfValid(key, 'session-1', bad), false, String(bad));
});

test('crossSiteProblem refuses other sites and host names, accepts our own host (any port) and headerless clients', () => {
  const hosts = ['files.example:8000'];
  const cases: [Record<string, string>, boolean][] = [
    [{}, true],
    [{ 'sec-fetch-site': 'same-origin' }, true],
    [{ 'sec-fetch-site': 'none' }, true],
    [{ 'sec-fetch-site': 'same-site' }, false],
    [{ 'sec-fetch-site': 'cross-site' }, false],
    [{ origin: 'http://files.example:8000' }, true],
    [{ origin: 'https://files.example:8000' }, true],
    [{ origin: 'https://FILES.example' }, true],
    [{ origin: 'https://files.example.evil.example' }, false],
    [{ origin: 'https://evil.example/files.example' }, false],
    [{ origin: 'http://evil.example' }, false],
    [{ origin: 'null' }, true],
    [{ origin: 'null', 'sec-fetch-site': 'cross-site' }, false],
    [{ origin: 'not a url' }, false],
    [{ origin: 'http://files.example:8000', 'sec-fetch-site': 'cross-site' }, false],
  ];
  for (const [headers, ok] of cases) assert.equal(crossSiteProblem(headers, hosts) === undefined, ok, JSON.stringify(headers));
});
