import { test } from 'node:test';
import assert from 'node:assert/strict';
import { evaluateIf, IfHeaderError, parseIfHeader, submittedTokens, type IfHeader } from './dav-if-header.js';

const tok = (value: string, not = false) => ({ not, kind: 'token' as const, value });
const etag = (value: string, not = false) => ({ not, kind: 'etag' as const, value });

test('parses the forms of RFC 4918 §10.4 and those litmus sends', () => {
  const table: [string, IfHeader][] = [
    ['(<urn:uuid:a>)', { lists: [{ conditions: [tok('urn:uuid:a')] }] }],
    ['  ( <urn:uuid:a>  ["e1"] )  ', { lists: [{ conditions: [tok('urn:uuid:a'), etag('"e1"')] }] }],
    ['(<urn:uuid:a>) (Not <DAV:no-lock>)', { lists: [{ conditions: [tok('urn:uuid:a')] }, { conditions: [tok('DAV:no-lock', true)] }] }],
    ['(<urn:uuid:x> ["etag"]) (Not <DAV:no-lock> ["etag"])', { lists: [{ conditions: [tok('urn:uuid:x'), etag('"etag"')] }, { conditions: [tok('DAV:no-lock', true), etag('"etag"')] }] }],
    ['(not [W/"w"])', { lists: [{ conditions: [etag('W/"w"', true)] }] }],
    ['(NOT<opaquelocktoken:f81d4fae>)', { lists: [{ conditions: [tok('opaquelocktoken:f81d4fae', true)] }] }],
    [
      '<http://h.example/dav/alice/a> (<urn:uuid:1>) (["x"]) </dav/alice/b%20c> (<urn:uuid:2>)',
      {
        lists: [
          { resource: 'http://h.example/dav/alice/a', conditions: [tok('urn:uuid:1')] },
          { resource: 'http://h.example/dav/alice/a', conditions: [etag('"x"')] },
          { resource: '/dav/alice/b%20c', conditions: [tok('urn:uuid:2')] },
        ],
      },
    ],
  ];
  for (const [raw, parsed] of table) assert.deepEqual(parseIfHeader(raw), parsed, raw);
});

test('refuses malformed headers', () => {
  const bad = ['', '   ', '()', '(<a>', '(<a)', '(["x")', '<urn:uuid:a>', '(<a>) <http://x/> (<b>)', '<http://x/> (<a>) (<b>) junk', 'Not (<a>)', '(<a> junk)', '(<>)', '([])', `(${'<a> '.repeat(101)})`, `(<${'a'.repeat(9000)}>)`];
  for (const raw of bad) assert.throws(() => parseIfHeader(raw), IfHeaderError, JSON.stringify(raw.slice(0, 40)));
});

test('submittedTokens: the non-negated state tokens, once each', () => {
  assert.deepEqual(submittedTokens(parseIfHeader('(<urn:uuid:a> ["e"]) (Not <DAV:no-lock>) (<urn:uuid:b>) (<urn:uuid:a>)')), ['urn:uuid:a', 'urn:uuid:b']);
  assert.deepEqual(submittedTokens(parseIfHeader('(["e"])')), []);
});

test('evaluateIf truth table', () => {
  const state = { etag: '"e1"', lockTokens: ['urn:uuid:held'] };
  const states: Record<string, { etag?: string; lockTokens: string[] } | undefined> = { '': state, '/dav/alice/other': { lockTokens: [] } };
  const resolve = (r: string | undefined) => states[r ?? ''];
  const table: [string, boolean][] = [
    ['(<urn:uuid:held>)', true],
    ['(<urn:uuid:other>)', false],
    ['(["e1"])', true],
    ['(["e2"])', false],
    ['([W/"e1"])', false],
    ['(<urn:uuid:held> ["e1"])', true],
    ['(<urn:uuid:held> ["e2"])', false],
    ['(<urn:uuid:other>) (<urn:uuid:held>)', true],
    ['(Not <DAV:no-lock>)', true],
    ['(<DAV:no-lock>)', false],
    ['(<urn:uuid:held>) (Not <DAV:no-lock>)', true],
    ['(Not <urn:uuid:held>)', false],
    ['(Not ["e2"])', true],
    ['</dav/alice/other> (<urn:uuid:held>)', false],
    ['</dav/alice/other> (Not <urn:uuid:held>)', true],
    ['</dav/alice/missing> (<urn:uuid:held>)', false],
    ['</dav/alice/missing> (Not ["e1"])', true],
  ];
  for (const [raw, expected] of table) assert.equal(evaluateIf(parseIfHeader(raw), resolve), expected, raw);
});
