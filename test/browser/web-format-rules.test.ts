import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadWebModule } from '../helpers/web-module.js';

/** web/src/lib/format.ts, upload-progress.ts and copy-names.ts, compiled here: what the file manager shows and names. No browser. */
type Format = { formatAgo(iso: string, now?: Date): string; formatDateTime(iso: string): string };
type Figures = { total: number; done: number; failed: number; cancelled: number; active: number; loaded: number; bytes: number; speed: number };
type Names = { copyName(name: string, isFile: boolean, taken: ReadonlySet<string>): string };
type Progress = { uploadHeadline(s: Figures): { title: string; detail: string; percent: number } };

const MB = 1024 * 1024;

test('how long ago: the largest whole unit, "just now" for a few seconds either way', async () => {
  const { formatAgo } = await loadWebModule<Format>('lib/format.ts');
  const now = new Date('2026-03-10T12:00:00Z');
  const before = (seconds: number) => new Date(now.getTime() - seconds * 1000).toISOString();
  const cases: [number, string][] = [
    [0, 'just now'],
    [4, 'just now'],
    [-3, 'just now'],
    [42, '42 seconds ago'],
    [60, '1 minute ago'],
    [150, '2 minutes ago'],
    [3 * 3600 + 5, '3 hours ago'],
    [86_400 + 60, 'yesterday'],
    [9 * 86_400, 'last week'],
    [65 * 86_400, '2 months ago'],
    [800 * 86_400, '2 years ago'],
  ];
  for (const [seconds, want] of cases) assert.equal(formatAgo(before(seconds), now), want, `${seconds} s`);
  assert.equal(formatAgo('not a date', now), '');
});

test('a full date and time: the year and the seconds, so moments apart read apart', async () => {
  const { formatDateTime } = await loadWebModule<Format>('lib/format.ts');
  const a = formatDateTime('2026-03-10T12:00:07Z');
  const b = formatDateTime('2026-03-10T12:00:08Z');
  assert.notEqual(a, b);
  assert.match(a, /2026/);
  assert.match(a, /\d:\d\d:0[78]/);
  assert.equal(formatDateTime('nonsense'), '—');
});

test('the upload panel head counts files as well as bytes, and says what became of a cancelled queue', async () => {
  const { uploadHeadline } = await loadWebModule<Progress>('lib/upload-progress.ts');
  const cases: [string, Figures, { title: string; detail: string; percent: number }][] = [
    [
      'many small files done, one big one under way',
      { total: 204, done: 80, failed: 0, cancelled: 0, active: 124, loaded: 2 * MB, bytes: 2000 * MB, speed: MB },
      { title: 'Uploading 124 files', detail: '80 of 204 files · <1% · 2 MB of 2 GB · 1 MB/s', percent: 0 },
    ],
    ['nothing sent yet', { total: 3, done: 0, failed: 0, cancelled: 0, active: 3, loaded: 0, bytes: 3 * MB, speed: 0 }, { title: 'Uploading 3 files', detail: '0 of 3 files · 0% · 0 B of 3 MB', percent: 0 }],
    ['empty files: the bar follows the files', { total: 4, done: 1, failed: 0, cancelled: 0, active: 3, loaded: 0, bytes: 0, speed: 0 }, { title: 'Uploading 3 files', detail: '1 of 4 files · 25% · 0 B of 0 B', percent: 25 }],
    ['all done', { total: 3, done: 3, failed: 0, cancelled: 0, active: 0, loaded: 3 * MB, bytes: 3 * MB, speed: 0 }, { title: '3 uploads complete', detail: '3 MB in total', percent: 100 }],
    ['one failed', { total: 2, done: 1, failed: 1, cancelled: 0, active: 0, loaded: 4, bytes: 65_540, speed: 0 }, { title: '1 upload complete, 1 failed', detail: '4 B in total', percent: 0 }],
    ['cancel all after some were done', { total: 30, done: 30, failed: 0, cancelled: 1, active: 0, loaded: 300, bytes: 300, speed: 0 }, { title: '30 uploads complete, 1 cancelled', detail: '300 B in total', percent: 100 }],
    ['cancel all before any was done', { total: 0, done: 0, failed: 0, cancelled: 204, active: 0, loaded: 0, bytes: 0, speed: 0 }, { title: '204 uploads cancelled', detail: '', percent: 0 }],
    ['failed and cancelled, none done', { total: 1, done: 0, failed: 1, cancelled: 2, active: 0, loaded: 0, bytes: 10, speed: 0 }, { title: '1 upload failed, 2 cancelled', detail: '', percent: 0 }],
  ];
  for (const [what, figures, want] of cases) assert.deepEqual(uploadHeadline(figures), want, what);
});

test('a copy takes its own name when free, else the first free "name (n).ext"; a folder keeps its dots', async () => {
  const { copyName } = await loadWebModule<Names>('lib/copy-names.ts');
  const cases: [string, boolean, string[], string][] = [
    ['plan.txt', true, [], 'plan.txt'],
    ['plan.txt', true, ['plan.txt'], 'plan (1).txt'],
    ['plan.txt', true, ['plan.txt', 'plan (1).txt', 'plan (2).txt'], 'plan (3).txt'],
    ['archive.tar.gz', true, ['archive.tar.gz'], 'archive.tar (1).gz'],
    ['.env', true, ['.env'], '.env (1)'],
    ['README', true, ['README'], 'README (1)'],
    ['trailing.', true, ['trailing.'], 'trailing. (1)'],
    ['Drafts', false, ['Drafts'], 'Drafts (1)'],
    ['v1.2 release', false, ['v1.2 release'], 'v1.2 release (1)'],
  ];
  for (const [name, isFile, taken, want] of cases) assert.equal(copyName(name, isFile, new Set(taken)), want, `${name} among ${JSON.stringify(taken)}`);
});
