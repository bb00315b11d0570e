import assert from 'node:assert/strict';
import { test } from 'node:test';
import { collisionName, compareCodePoints, isValidName, isValidUsername, MAX_NAME_BYTES, nameProblem } from './names.js';

const bytes = (s: string) => Buffer.byteLength(s, 'utf8');

test('isValidUsername accepts 1–64 ASCII letters, digits, ".", "_", "-" not starting with "."', () => {
  const cases: [string, boolean][] = [
    ['alice', true],
    ['Alice_01', true],
    ['a', true],
    ['-dash', true],
    ['_under', true],
    ['a.b', true],
    ['x'.repeat(64), true],
    ['x'.repeat(65), false],
    ['', false],
    ['.hidden', false],
    ['.', false],
    ['..', false],
    ['a/b', false],
    ['a\\b', false],
    ['a b', false],
    ['a%20b', false],
    ['a\0', false],
    ['élise', false],
    ['a\nb', false],
    ['alice\n', false],
  ];
  for (const [name, want] of cases) assert.equal(isValidUsername(name), want, JSON.stringify(name));
});

test('nameProblem refuses only what no file system or client can take', () => {
  const cases: [string, boolean][] = [
    ['file.txt', true],
    ['.env', true],
    ['...', true],
    ['..a', true],
    ['a.', true],
    [' ', true],
    ['hello world', true],
    ['#?%&+=', true],
    ['%2e%2e', true],
    ['日本語.md', true],
    ['emoji 😀', true],
    ['x'.repeat(MAX_NAME_BYTES), true],
    ['é'.repeat(127), true],
    ['x'.repeat(MAX_NAME_BYTES + 1), false],
    ['é'.repeat(128), false],
    ['', false],
    ['.', false],
    ['..', false],
    ['a/b', false],
    ['/', false],
    ['a\\b', false],
    ['a\0b', false],
    ['lone \ud800 surrogate', false],
  ];
  for (const [name, ok] of cases) {
    const label = name.length > 40 ? `${name.slice(0, 10)}… (${bytes(name)} bytes)` : JSON.stringify(name);
    assert.equal(nameProblem(name) === undefined, ok, label);
    assert.equal(isValidName(name), ok, label);
    if (!ok) assert.equal(typeof nameProblem(name), 'string', `${label} gets a readable reason`);
  }
});

test('collisionName numbers before the last extension, as file managers do', () => {
  const cases: [string, number, string][] = [
    ['report.pdf', 0, 'report.pdf'],
    ['report.pdf', 1, 'report (1).pdf'],
    ['report.pdf', 2, 'report (2).pdf'],
    ['report.pdf', 10, 'report (10).pdf'],
    ['archive.tar.gz', 1, 'archive.tar (1).gz'],
    ['README', 1, 'README (1)'],
    ['.env', 1, '.env (1)'],
    ['.config.json', 1, '.config (1).json'],
    ['trailing.', 1, 'trailing. (1)'],
    ['photos', 3, 'photos (3)'],
    ['my file.tar.gz', 2, 'my file.tar (2).gz'],
    ['日本語.md', 1, '日本語 (1).md'],
    ['report (1).pdf', 1, 'report (1) (1).pdf'],
  ];
  for (const [name, n, want] of cases) assert.equal(collisionName(name, n), want, `${name} #${n}`);
});

test('collisionName shortens long names so the result stays a valid name', () => {
  const long = [
    'x'.repeat(251) + '.txt',
    'x'.repeat(MAX_NAME_BYTES),
    'é'.repeat(125) + '.txt',
    '😀'.repeat(62) + '.md',
    '.' + 'x'.repeat(254),
    'x.' + 'y'.repeat(253),
    'a.' + 'é'.repeat(126),
  ];
  for (const name of long) {
    assert.equal(isValidName(name), true, 'the input is valid');
    const seen = new Set<string>();
    for (const n of [1, 2, 99, 100, 12345]) {
      const got = collisionName(name, n);
      assert.equal(nameProblem(got), undefined, `${name.slice(0, 8)}… #${n} → ${got.slice(0, 8)}… (${bytes(got)} bytes)`);
      assert.ok(bytes(got) <= MAX_NAME_BYTES);
      assert.ok(got.includes(` (${n})`));
      seen.add(got);
    }
    assert.equal(seen.size, 5, 'different n give different names');
  }
  const shortened = collisionName('x'.repeat(251) + '.txt', 1);
  assert.ok(shortened.endsWith(' (1).txt'), 'a short extension is kept');
  assert.equal(bytes(shortened), MAX_NAME_BYTES);
});

test('compareCodePoints orders by code point, also beyond the Basic Multilingual Plane', () => {
  const sign = (n: number) => Math.sign(n);
  const rows: [string, string, number][] = [
    ['a', 'b', -1],
    ['b', 'a', 1],
    ['a', 'a', 0],
    ['a', 'ab', -1],
    ['Z', 'a', -1],
    ['é', 'z', 1],
    ['\uffff', '😀', -1], // U+FFFF < U+1F600, though UTF-16 units say 0xFFFF > 0xD83D
    ['😀', '\ue000', 1],
    ['😀', '\ud7ff', 1],
    ['😀', '😁', -1],
    ['x😀', 'x\uffee', 1],
    ['', 'a', -1],
  ];
  for (const [a, b, want] of rows) assert.equal(sign(compareCodePoints(a, b)), want, `${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
});

test('compareCodePoints agrees with the byte order of UTF-8 (which is code-point order) on random names', () => {
  const pool = ['a', 'Z', 'é', '\ud7ff', '\ue000', '\uffff', '😀', '𝄞', '中', ' ', '~'];
  for (let i = 0; i < 2000; i++) {
    const pick = () => Array.from({ length: 1 + (i % 4) }, () => pool[Math.floor(Math.random() * pool.length)]).join('');
    const a = pick();
    const b = pick();
    assert.equal(Math.sign(compareCodePoints(a, b)), Math.sign(Buffer.compare(Buffer.from(a), Buffer.from(b))), `${a} vs ${b}`);
  }
});
