import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseAcceptLanguage, pickLocale } from './negotiate.js';

test('pickLocale: the first wanted language we have, by its primary subtag; English otherwise', () => {
  const cases: [string[], string][] = [
    [[], 'en'],
    [['de'], 'de'],
    [['de-AT', 'en'], 'de'],
    [['DE_ch'], 'de'],
    [['fr-FR', 'de-DE', 'en'], 'de'],
    [['en-GB', 'de'], 'en'],
    [['fr', 'es'], 'en'],
    [['deutsch'], 'en'],
  ];
  for (const [wanted, want] of cases) assert.equal(pickLocale(wanted), want, wanted.join(','));
});

test('parseAcceptLanguage: tags by weight, ties in the order written, q=0 and * left out', () => {
  const cases: [string | undefined, string[]][] = [
    [undefined, []],
    ['', []],
    ['de', ['de']],
    ['de-DE,de;q=0.9,en-US;q=0.8,en;q=0.7', ['de-DE', 'de', 'en-US', 'en']],
    ['en;q=0.5, de', ['de', 'en']],
    ['fr, de', ['fr', 'de']],
    ['de;q=0, en', ['en']],
    ['*, de;q=0.1', ['de']],
    ['de;q=abc, en', ['en']],
  ];
  for (const [header, want] of cases) assert.deepEqual(parseAcceptLanguage(header), want, String(header));
});
