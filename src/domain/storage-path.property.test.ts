import assert from 'node:assert/strict';
import { isAbsolute, relative, resolve } from 'node:path';
import { test } from 'node:test';
import fc from 'fast-check';
import { isAppError } from './errors.js';
import { isValidName, isValidUsername } from './names.js';
import { keyId, parseDecodedStoragePath, parseStoragePath, type ParsedStoragePath, type StorageKey } from './storage-path.js';

/**
 * Property tests for the only maker of StorageKeys: whatever the raw path,
 * the result is an AppError or a key that stays inside the user's root; and
 * every valid name survives an encode → parse round trip.
 */

const ROOT = '/srv/file-cloud/storage';

/** Pieces attackers combine: dot segments, encoded separators, overlong UTF-8, NUL, broken escapes. */
const hostilePiece = fc.constantFrom(
  '/', '//', '.', '..', '%2e', '%2E', '%2e%2e', '.%2e', '%2F', '%2f', '\\', '%5C', '%5c', '%00', '\0',
  '%C0%AE', '%C0%AF', '%E0%80%AE', '%c1%9c', '%', '%Z', '%2', '%%', '%252e', '%ED%A0%80', '%FF', '%C3', '%C3%A9',
  'a', 'b', 'alice', 'é', 'e\u0301', ' ', '#', '?', '~', '..\\', '....', '.../', 'x'.repeat(300), '%20',
);
const hostileRaw = fc.oneof(
  fc.array(hostilePiece, { maxLength: 12 }).map((xs) => xs.join('')),
  fc.string({ unit: 'binary', maxLength: 64 }),
  fc.tuple(fc.constantFrom('alice/', 'bob/', ''), fc.array(hostilePiece, { maxLength: 10 })).map(([u, xs]) => u + xs.join('')),
);

/** Where a key points on disk, joined naively: the test of confinement is that even this stays inside. */
function diskPath(key: StorageKey): string {
  return resolve(ROOT, key.user, ...key.segments);
}

function assertConfined(parsed: ParsedStoragePath): void {
  const { key } = parsed;
  assert.ok(key.user !== '' && key.user !== '.' && key.user !== '..', `user segment ${JSON.stringify(key.user)}`);
  assert.ok(!/[/\\\0]/.test(key.user), `user segment ${JSON.stringify(key.user)}`);
  for (const s of key.segments) assert.ok(isValidName(s), `segment ${JSON.stringify(s)} is a valid name`);
  const userRoot = resolve(ROOT, key.user);
  assert.equal(relative(ROOT, userRoot), key.user, 'the user segment is one folder below storage/');
  const rel = relative(userRoot, diskPath(key));
  assert.ok(rel !== '..' && !rel.startsWith('../') && !isAbsolute(rel), `key ${JSON.stringify(key)} resolves inside the user root`);
}

/** Parses, and passes only an AppError of the expected kinds; any other throw fails the property. */
function parseOrRefuse(parse: (s: string) => ParsedStoragePath, raw: string): ParsedStoragePath | undefined {
  try {
    return parse(raw);
  } catch (e) {
    assert.ok(isAppError(e), `threw a non-AppError for ${JSON.stringify(raw)}: ${String(e)}`);
    assert.ok(e.code === 'invalid_path' || e.code === 'not_found', `code ${e.code}`);
    return undefined;
  }
}

test('parseStoragePath never yields a key outside the user root, whatever the raw path', () => {
  fc.assert(
    fc.property(hostileRaw, (raw) => {
      const parsed = parseOrRefuse(parseStoragePath, raw);
      if (parsed) assertConfined(parsed);
    }),
    { numRuns: 5000 },
  );
});

test('parseDecodedStoragePath (Move new_path) never yields a key outside the user root', () => {
  fc.assert(
    fc.property(hostileRaw, (raw) => {
      const parsed = parseOrRefuse(parseDecodedStoragePath, raw);
      if (parsed) assertConfined(parsed);
    }),
    { numRuns: 5000 },
  );
});

const username = fc.stringMatching(/^[A-Za-z0-9_-][A-Za-z0-9._-]{0,20}$/).filter(isValidUsername);
/** Valid names: any Unicode (including `#?%`, spaces, dot-files) except what nameProblem refuses. */
const validName = fc
  .oneof(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }), fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }), fc.constantFrom('.env', '...', 'a b', '#1', '?x', '100%', '%2F', '%2e%2e', 'é', 'e\u0301'))
  .filter(isValidName);

test('every valid path round-trips: percent-encoded, parsed, the same user and segments', () => {
  fc.assert(
    fc.property(username, fc.array(validName, { maxLength: 6 }), fc.boolean(), (user, segments, slash) => {
      const raw = [user, ...segments].map(encodeURIComponent).join('/') + (slash || segments.length === 0 ? '/' : '');
      const parsed = parseStoragePath(raw);
      assert.deepEqual(parsed.key, { user, segments });
      assert.equal(parsed.trailingSlash, slash || segments.length === 0);
      // The canonical id path tokens are bound to parses back to the same key.
      assert.deepEqual(parseDecodedStoragePath(`${keyId(parsed.key)}/`).key, parsed.key);
    }),
    { numRuns: 2000 },
  );
});

test('a valid path round-trips whichever characters are needlessly percent-encoded', () => {
  const encodeSome = (s: string, mask: number) =>
    Array.from(s)
      .map((ch, i) => ((mask >> i % 31) & 1 ? encodeURIComponent(ch) : ch === '%' || ch === '/' || ch === '?' || ch === '#' ? encodeURIComponent(ch) : ch))
      .join('');
  fc.assert(
    fc.property(username, fc.array(validName, { minLength: 1, maxLength: 4 }), fc.integer({ min: 0, max: 2 ** 31 - 1 }), (user, segments, mask) => {
      const raw = [user, ...segments.map((s) => encodeSome(s, mask))].join('/');
      assert.deepEqual(parseStoragePath(raw).key, { user, segments });
    }),
    { numRuns: 2000 },
  );
});
