import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isAppError } from './errors.js';
import {
  isRoot,
  isSameOrInside,
  keyChild,
  keyFolders,
  keyId,
  keyName,
  keyParent,
  keyUserLooksValid,
  MAX_PATH_BYTES,
  parseDecodedStoragePath,
  parseStoragePath,
  type StorageKey,
} from './storage-path.js';

const name255 = 'n'.repeat(251) + '.txt';
const name256 = 'n'.repeat(252) + '.txt';

/** raw (still percent-encoded) path below /storage/ → segments and trailing slash, or the error code. */
const cases: [string, { segments: string[]; slash: boolean; user?: string } | 'invalid_path' | 'not_found'][] = [
  // the root and the user segment
  ['alice/', { segments: [], slash: true }],
  ['alice', 'not_found'],
  ['', 'not_found'],
  ['/alice/', 'invalid_path'],
  ['./', 'invalid_path'],
  ['../', 'invalid_path'],
  ['%2e%2e/', 'invalid_path'],
  ['%2E%2E/x', 'invalid_path'],
  ['ali%00ce/', 'invalid_path'],
  ['ali%5cce/', 'invalid_path'],
  ['a%2Fb/', { user: 'a', segments: ['b'], slash: true }],
  // dot segments, plain and encoded
  ['alice/.', 'invalid_path'],
  ['alice/..', 'invalid_path'],
  ['alice/../bob/x', 'invalid_path'],
  ['alice/a/./b', 'invalid_path'],
  ['alice/%2e', 'invalid_path'],
  ['alice/%2e%2e', 'invalid_path'],
  ['alice/%2E%2e', 'invalid_path'],
  ['alice/%2e%2E/bob', 'invalid_path'],
  ['alice/..%2f', 'invalid_path'],
  ['alice/..%2Fbob%2Fx', 'invalid_path'],
  ['alice/a%2f..%2f..%2fbob', 'invalid_path'],
  // %2F inside a segment splits it (decoded first, then split)
  ['alice/a%2Fb', { segments: ['a', 'b'], slash: false }],
  ['alice/a%2fb/c', { segments: ['a', 'b', 'c'], slash: false }],
  ['alice/a%2F', { segments: ['a'], slash: true }],
  ['alice/%2F', 'invalid_path'],
  ['alice/a/%2Fb', 'invalid_path'],
  // empty segments and the one trailing slash
  ['alice//', 'invalid_path'],
  ['alice//a', 'invalid_path'],
  ['alice/a//b', 'invalid_path'],
  ['alice/a//', 'invalid_path'],
  ['alice/a/', { segments: ['a'], slash: true }],
  ['alice/a/b', { segments: ['a', 'b'], slash: false }],
  ['alice/a/b/', { segments: ['a', 'b'], slash: true }],
  // backslash, NUL
  ['alice/a\\b', 'invalid_path'],
  ['alice/%5c', 'invalid_path'],
  ['alice/a%5Cb', 'invalid_path'],
  ['alice/..%5c..%5cbob', 'invalid_path'],
  ['alice/%00', 'invalid_path'],
  ['alice/a%00.txt', 'invalid_path'],
  // strict UTF-8 and strict escapes
  ['alice/%c0%ae', 'invalid_path'],
  ['alice/%c0%ae%c0%ae/bob', 'invalid_path'],
  ['alice/%e0%80%ae', 'invalid_path'],
  ['alice/%ff', 'invalid_path'],
  ['alice/%ed%a0%80', 'invalid_path'],
  ['alice/%zz', 'invalid_path'],
  ['alice/%', 'invalid_path'],
  ['alice/%2', 'invalid_path'],
  // names that must work
  ['alice/%E6%97%A5%E6%9C%AC%E8%AA%9E.md', { segments: ['日本語.md'], slash: false }],
  ['alice/caf%C3%A9/na%C3%AFve.txt', { segments: ['café', 'naïve.txt'], slash: false }],
  ['alice/%F0%9F%98%80', { segments: ['😀'], slash: false }],
  ['alice/hello%20world.txt', { segments: ['hello world.txt'], slash: false }],
  ['alice/hello world.txt', { segments: ['hello world.txt'], slash: false }],
  ['alice/%20', { segments: [' '], slash: false }],
  ['alice/%23', { segments: ['#'], slash: false }],
  ['alice/%3F', { segments: ['?'], slash: false }],
  ['alice/%25', { segments: ['%'], slash: false }],
  ['alice/100%25.txt', { segments: ['100%.txt'], slash: false }],
  ['alice/%252e%252e', { segments: ['%2e%2e'], slash: false }],
  ['alice/a+b', { segments: ['a+b'], slash: false }],
  ['alice/.env', { segments: ['.env'], slash: false }],
  ['alice/.config/', { segments: ['.config'], slash: true }],
  ['alice/...', { segments: ['...'], slash: false }],
  ['alice/..a', { segments: ['..a'], slash: false }],
  ['alice/a.', { segments: ['a.'], slash: false }],
  [`alice/${name255}`, { segments: [name255], slash: false }],
  [`alice/${name256}`, 'invalid_path'],
  [`alice/${'%C3%A9'.repeat(127)}`, { segments: ['é'.repeat(127)], slash: false }],
  [`alice/${'%C3%A9'.repeat(128)}`, 'invalid_path'],
  [`alice/${Array.from({ length: 17 }, () => name255).join('/')}`, 'invalid_path'],
];

for (const [raw, want] of cases) {
  const label = raw.length > 60 ? `${raw.slice(0, 40)}… (${raw.length} chars)` : JSON.stringify(raw);
  test(`parseStoragePath ${label} → ${typeof want === 'string' ? want : JSON.stringify(want.segments)}`, () => {
    if (typeof want === 'string') {
      assert.throws(() => parseStoragePath(raw), (e: unknown) => isAppError(e) && e.code === want);
    } else {
      const { key, trailingSlash } = parseStoragePath(raw);
      assert.deepEqual(key, { user: want.user ?? 'alice', segments: want.segments });
      assert.equal(trailingSlash, want.slash);
    }
  });
}

test('parseStoragePath accepts a path of exactly MAX_PATH_BYTES below the user', () => {
  const parts = Array.from({ length: 20 }, () => 'x'.repeat(200));
  parts.push('x'.repeat(MAX_PATH_BYTES - 20 * 201));
  assert.equal(Buffer.byteLength(parts.join('/')), MAX_PATH_BYTES);
  assert.equal(parseStoragePath(`alice/${parts.join('/')}`).key.segments.length, 21);
  parts[20] += 'x';
  assert.throws(() => parseStoragePath(`alice/${parts.join('/')}`), (e: unknown) => isAppError(e) && e.code === 'invalid_path');
});

test('keyId is the same for differently encoded forms of one path', () => {
  const groups = [
    ['alice/a b/c.txt', 'alice/a%20b/c.txt', 'alice/a%20b%2Fc.txt', 'alice/%61%20%62/c%2etxt'],
    ['alice/日本/x', 'alice/%E6%97%A5%E6%9C%AC/x', 'alice/%e6%97%a5%e6%9c%ac/x'],
    ['alice/dir/', 'alice/dir', 'alice/d%69r/'],
  ];
  for (const forms of groups) {
    const ids = forms.map((f) => keyId(parseStoragePath(f).key));
    assert.equal(new Set(ids).size, 1, `${forms.join(' | ')} → ${ids.join(' | ')}`);
  }
  assert.equal(keyId(parseStoragePath('alice/').key), 'alice');
  assert.notEqual(keyId(parseStoragePath('alice/a%252F').key), keyId(parseStoragePath('alice/a%2F').key));
});

test('parseDecodedStoragePath takes % literally and applies the same rules', () => {
  assert.deepEqual(parseDecodedStoragePath('alice/100%/a%2Fb').key.segments, ['100%', 'a%2Fb']);
  assert.deepEqual(parseDecodedStoragePath('alice/%2e%2e').key.segments, ['%2e%2e']);
  for (const bad of ['alice/..', 'alice/a//b', 'alice/a\\b', 'alice/a\0', '../x']) {
    assert.throws(() => parseDecodedStoragePath(bad), (e: unknown) => isAppError(e) && e.code === 'invalid_path', bad);
  }
  assert.throws(() => parseDecodedStoragePath('alice'), (e: unknown) => isAppError(e) && e.code === 'not_found');
  assert.throws(() => parseDecodedStoragePath('alice/\ud800'), (e: unknown) => isAppError(e) && e.code === 'invalid_path');
});

test('key helpers: name, parent, child, root and containment', () => {
  const k = parseStoragePath('alice/a/b/c.txt').key;
  const root: StorageKey = { user: 'alice', segments: [] };
  assert.equal(keyName(k), 'c.txt');
  assert.equal(keyName(root), '');
  assert.deepEqual(keyParent(k), { user: 'alice', segments: ['a', 'b'] });
  assert.deepEqual(keyChild(keyParent(k), 'd'), { user: 'alice', segments: ['a', 'b', 'd'] });
  for (const bad of ['..', '.', 'a/b', '', 'a\\b']) assert.throws(() => keyChild(k, bad), (e: unknown) => isAppError(e) && e.code === 'invalid_name', bad);
  assert.equal(isRoot(root), true);
  assert.equal(isRoot(k), false);
  const inside: [string, string, boolean][] = [
    ['alice/a/b', 'alice/a', true],
    ['alice/a', 'alice/a', true],
    ['alice/a', 'alice/', true],
    ['alice/ab', 'alice/a', false],
    ['alice/a', 'alice/a/b', false],
    ['bob/a/b', 'alice/a', false],
  ];
  for (const [a, b, want] of inside) assert.equal(isSameOrInside(parseStoragePath(a).key, parseStoragePath(b).key), want, `${a} inside ${b}`);
  assert.equal(keyUserLooksValid(parseStoragePath('alice/').key), true);
  assert.equal(keyUserLooksValid(parseStoragePath('%20x/').key), false);
});

test('keyFolders: the folders a key lies in, outermost first, without the user root, keeping a share bound', () => {
  const key = { user: 'alice', segments: ['a', 'b', 'c.txt'] };
  assert.deepEqual(keyFolders(key), [
    { user: 'alice', segments: ['a'] },
    { user: 'alice', segments: ['a', 'b'] },
  ]);
  assert.deepEqual(keyFolders({ user: 'alice', segments: ['top.txt'] }), []);
  assert.deepEqual(keyFolders({ user: 'alice', segments: [] }), []);
  assert.deepEqual(keyFolders({ ...key, within: 1 }), [
    { user: 'alice', segments: ['a'], within: 1 },
    { user: 'alice', segments: ['a', 'b'], within: 1 },
  ]);
});
