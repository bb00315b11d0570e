import { test } from 'node:test';
import assert from 'node:assert/strict';
import { type ConditionalHeaders, ifMatchPasses, ifRangeMatches, isNotModified, preconditionsPass, type WritePreconditions } from './conditional.js';

const etag = '"abc123"';
const modified = new Date('2024-05-06T07:08:09.750Z');
const http = (iso: string) => new Date(iso).toUTCString();

test('If-None-Match decides by weak comparison, over lists and *', () => {
  const rows: [string, boolean][] = [
    ['"abc123"', true],
    ['W/"abc123"', true],
    ['"other"', false],
    ['"other", "abc123"', true],
    ['"other","abc123"', true],
    ['  "other" ,  W/"abc123"  ', true],
    ['*', true],
    [' * ', true],
    ['abc123', false], // unquoted: not an entity tag
    ['"abc', false],
    ['"a,b", "abc123"', true], // a comma inside a tag does not split it
    ['garbage, "abc123"', false], // a malformed list stops there
    ['"ABC123"', false], // opaque tags are case-sensitive
  ];
  for (const [inm, want] of rows) assert.equal(isNotModified({ 'if-none-match': inm }, etag, modified), want, inm);
  assert.equal(isNotModified({ 'if-none-match': '"abc123"' }, 'W/"abc123"', modified), true, 'a weak stored tag matches weakly');
});

test('If-None-Match takes precedence over If-Modified-Since', () => {
  const future = http('2030-01-01T00:00:00Z');
  assert.equal(isNotModified({ 'if-none-match': '"other"', 'if-modified-since': future }, etag, modified), false);
  assert.equal(isNotModified({ 'if-none-match': '"abc123"', 'if-modified-since': http('2000-01-01T00:00:00Z') }, etag, modified), true);
});

test('If-Modified-Since compares to the second and ignores invalid dates', () => {
  const rows: [ConditionalHeaders, boolean][] = [
    [{}, false],
    [{ 'if-modified-since': http('2024-05-06T07:08:09Z') }, true], // same second, fraction dropped
    [{ 'if-modified-since': http('2024-05-06T07:08:10Z') }, true],
    [{ 'if-modified-since': http('2024-05-06T07:08:08Z') }, false],
    [{ 'if-modified-since': 'Mon, 06 May 2024 07:08:09 GMT' }, true],
    [{ 'if-modified-since': 'Monday, 06-May-24 07:08:09 GMT' }, true], // RFC 850
    [{ 'if-modified-since': 'Mon May  6 07:08:09 2024' }, true], // asctime, GMT by definition
    [{ 'if-modified-since': 'Mon May  6 07:08:08 2024' }, false],
    [{ 'if-modified-since': '2030' }, false], // Date.parse would accept it; HTTP does not
    [{ 'if-modified-since': '2030-01-01T00:00:00Z' }, false],
    [{ 'if-modified-since': 'not a date' }, false],
    [{ 'if-modified-since': '' }, false],
    [{ 'if-none-match': '', 'if-modified-since': http('2030-01-01T00:00:00Z') }, true], // an empty If-None-Match is absent
  ];
  for (const [headers, want] of rows) assert.equal(isNotModified(headers, etag, modified), want, JSON.stringify(headers));
  assert.equal(isNotModified({ 'if-modified-since': http('2030-01-01T00:00:00Z') }, etag, new Date(NaN)), false);
});

test('If-Range allows the range only on a strong match', () => {
  const rows: [string | undefined, boolean][] = [
    [undefined, true],
    ['"abc123"', true],
    [' "abc123" ', true],
    ['W/"abc123"', false], // If-Range needs strong comparison
    ['"other"', false],
    ['"abc123", "other"', false], // If-Range holds one validator, not a list
    [http('2024-05-06T07:08:09Z'), true],
    [http('2024-05-06T07:08:10Z'), false], // a date must match exactly, not be later
    [http('2024-05-06T07:08:08Z'), false],
    ['garbage', false],
    ['', false],
  ];
  for (const [ifRange, want] of rows) assert.equal(ifRangeMatches(ifRange, etag, modified), want, String(ifRange));
  assert.equal(ifRangeMatches('"abc123"', 'W/"abc123"', modified), false, 'a weak stored tag never matches strongly');
});

test('ifMatchPasses: strong comparison against the current file, * for any file, nothing matches a missing one', () => {
  const cases: [string | undefined, string | undefined, boolean][] = [
    [undefined, '"a"', true],
    [undefined, undefined, true],
    ['*', '"a"', true],
    ['*', undefined, false],
    ['"a"', '"a"', true],
    ['"b"', '"a"', false],
    ['"b", "a"', '"a"', true],
    ['"x,y", "a"', '"a"', true],
    ['W/"a"', '"a"', false],
    ['"a"', 'W/"a"', false],
    ['"a"', undefined, false],
    ['a', '"a"', false],
    ['', '"a"', false],
  ];
  for (const [header, etag, want] of cases) assert.equal(ifMatchPasses(header, etag), want, `${header} vs ${etag}`);
});

test('preconditionsPass: If-Match and If-None-Match of a write (PUT, DELETE, Move) against the item there', () => {
  const cases: [WritePreconditions, string | undefined, boolean][] = [
    [{}, undefined, true],
    [{}, '"a"', true],
    [{ ifNoneMatch: '*' }, undefined, true], // a free name
    [{ ifNoneMatch: '*' }, '"a"', false], // something is there
    [{ ifNoneMatch: ' * ' }, '"a"', false],
    [{ ifNoneMatch: '"a"' }, '"a"', false], // still that version
    [{ ifNoneMatch: 'W/"a"' }, '"a"', false], // weak comparison
    [{ ifNoneMatch: '"b", "a"' }, '"a"', false],
    [{ ifNoneMatch: '"b"' }, '"a"', true],
    [{ ifNoneMatch: '"a"' }, undefined, true],
    [{ ifNoneMatch: '' }, '"a"', true],
    [{ ifMatch: '"a"' }, '"a"', true],
    [{ ifMatch: '"b"' }, '"a"', false],
    [{ ifMatch: '"a"' }, undefined, false], // gone
    [{ ifMatch: '*' }, '"a"', true],
    [{ ifMatch: '*' }, undefined, false],
    [{ ifMatch: '"a"', ifNoneMatch: '"a"' }, '"a"', false], // both must hold
    [{ ifMatch: '"a"', ifNoneMatch: '"b"' }, '"a"', true],
  ];
  for (const [pre, current, want] of cases) assert.equal(preconditionsPass(pre, current), want, `${JSON.stringify(pre)} vs ${current}`);
});
