import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadWebModule } from '../helpers/web-module.js';

/**
 * web/src/lib/share-rules.ts is built by Vite, not by this tsconfig: compile
 * it here (it imports nothing and touches no DOM) and load it as a module.
 */
type Rules = {
  expiresIn(choice: string, date: string, now: Date): number | null | undefined;
  parseLimit(text: string): number | null | undefined;
  tomorrow(now: Date): string;
  shareState(share: { expires_at: string | null; max_downloads: number | null; downloads: number }, now: number): string;
};
const loadRules = (): Promise<Rules> => loadWebModule<Rules>('lib/share-rules.ts');

test('share dialog expiry: presets count from now, a date lasts to the end of that local day, the past is refused', async () => {
  const { expiresIn, tomorrow } = await loadRules();
  const now = new Date(2026, 2, 10, 18, 30, 0); // 10 March 2026, 18:30 local
  const cases: [string, string, number | null | undefined][] = [
    ['1d', '', 86_400],
    ['7d', '', 7 * 86_400],
    ['30d', '', 30 * 86_400],
    ['never', '', null],
    ['7d', '2020-01-01', 7 * 86_400], // the date only counts when chosen
    ['date', '2026-03-11', 29.5 * 3600], // to midnight after 11 March
    ['date', '2026-03-10', 5.5 * 3600], // today: until midnight tonight
    ['date', '2026-03-09', undefined],
    ['date', '', undefined],
    ['date', '11/03/2026', undefined],
  ];
  for (const [choice, date, want] of cases) assert.equal(expiresIn(choice, date, now), want, `${choice} ${date}`);
  assert.equal(tomorrow(now), '2026-03-11');
  assert.equal(tomorrow(new Date(2026, 11, 31, 12)), '2027-01-01');
});

test('download limit field: empty is no limit, else a whole number from 1', async () => {
  const { parseLimit } = await loadRules();
  const cases: [string, number | null | undefined][] = [
    ['', null],
    ['  ', null],
    ['1', 1],
    [' 5 ', 5],
    ['0', undefined],
    ['-3', undefined],
    ['2.5', undefined],
    ['1e3', undefined],
    ['abc', undefined],
    ['99999999999999999999', undefined],
  ];
  for (const [text, want] of cases) assert.equal(parseLimit(text), want, JSON.stringify(text));
});

test('a share link is expired, used up or active', async () => {
  const { shareState } = await loadRules();
  const now = Date.parse('2026-03-10T12:00:00Z');
  const cases: [string | null, number | null, number, string][] = [
    [null, null, 0, 'active'],
    [null, null, 1000, 'active'],
    ['2026-03-10T12:00:01Z', 5, 4, 'active'],
    ['2026-03-10T12:00:00Z', null, 0, 'expired'], // expiry is exclusive: at that instant it is over
    ['2026-03-01T00:00:00Z', 5, 5, 'expired'], // expired wins over used up
    [null, 5, 5, 'used_up'],
    [null, 1, 2, 'used_up'],
  ];
  for (const [expires_at, max_downloads, downloads, want] of cases) {
    assert.equal(shareState({ expires_at, max_downloads, downloads }, now), want, JSON.stringify({ expires_at, max_downloads, downloads }));
  }
});
