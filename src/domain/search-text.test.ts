import { test } from 'node:test';
import assert from 'node:assert/strict';
import { charCount, escapeLike, ftsPhrase, matchRank, normalizeName } from './search-text.js';

test('normalizeName folds case, accents and compatibility forms', () => {
  const table: [string, string][] = [
    ['Report.PDF', 'report.pdf'],
    ['Café', 'cafe'],
    ['Cafe\u0301', 'cafe'], // decomposed input gives the same as composed
    ['ÉLAN', 'elan'],
    ['Ångström', 'angstrom'],
    ['naïve résumé', 'naive resume'],
    ['İstanbul', 'istanbul'], // the dot that lower-casing adds goes too
    ['ﬁle', 'file'],
    ['Ｆｕｌｌ', 'full'],
    ['Straße', 'straße'], // ß has no decomposition: kept
    ['日本語.txt', '日本語.txt'],
    ['Привет', 'привет'],
    ['100%_done', '100%_done'],
    ['😀 smile', '😀 smile'],
    ['', ''],
  ];
  for (const [input, want] of table) assert.equal(normalizeName(input), want, input);
});

test('escapeLike makes %, _ and \\ literal', () => {
  assert.equal(escapeLike('100%_a\\b'), '100\\%\\_a\\\\b');
  assert.equal(escapeLike('plain'), 'plain');
});

test('ftsPhrase quotes the whole query as one phrase', () => {
  assert.equal(ftsPhrase('a"b'), '"a""b"');
  assert.equal(ftsPhrase('x OR y'), '"x OR y"');
});

test('charCount counts code points, as SQL length() does', () => {
  assert.equal(charCount('日本'), 2);
  assert.equal(charCount('😀a'), 2);
});

test('matchRank: exact, then prefix, then substring', () => {
  const table: [string, string, 0 | 1 | 2 | undefined][] = [
    ['report', 'report', 0],
    ['report.pdf', 'report', 1],
    ['old report', 'report', 2],
    ['rep', 'report', undefined],
    ['abc', 'x', undefined],
  ];
  for (const [name, q, want] of table) assert.equal(matchRank(name, q), want, `${name} / ${q}`);
});
