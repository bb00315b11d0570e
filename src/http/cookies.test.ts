import { test } from 'node:test';
import assert from 'node:assert/strict';
import { clearCookie, cookieValues, parseCookies, setCookie } from './cookies.js';

const HEADER = 'a=1; b="two"; a=3;bad; =x; c=; d="';

test('parseCookies keeps the first value of each name and unquotes values', () => {
  const c = parseCookies(HEADER);
  assert.deepEqual([...c], [['a', '1'], ['b', 'two'], ['c', ''], ['d', '"']]);
  assert.equal(parseCookies(undefined).size, 0);
});

test('cookieValues gives every value of one name in order, read as parseCookies reads them', () => {
  const cases: [string | undefined, string, string[]][] = [
    [HEADER, 'a', ['1', '3']],
    [HEADER, 'b', ['two']],
    [HEADER, 'bad', []],
    ['fc_share="x"; fc_share=y', 'fc_share', ['x', 'y']],
    [undefined, 'a', []],
  ];
  for (const [header, name, values] of cases) assert.deepEqual(cookieValues(header, name), values, `${header} ${name}`);
});

test('setCookie always sets HttpOnly, SameSite=Lax and the path; Max-Age and Secure only when asked', () => {
  assert.equal(setCookie('s', 'v', { path: '/basic/', secure: false }), 's=v; Path=/basic/; HttpOnly; SameSite=Lax');
  assert.equal(setCookie('s', 'v', { path: '/f/basic/', secure: true, maxAge: 60 }), 's=v; Path=/f/basic/; HttpOnly; SameSite=Lax; Max-Age=60; Secure');
  assert.equal(clearCookie('s', { path: '/basic/', secure: false }), 's=; Path=/basic/; HttpOnly; SameSite=Lax; Max-Age=0');
});
