import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadWebModule } from '../helpers/web-module.js';

/** web/src/lib/recent.ts, compiled here: which files the Recent view lists, from the newest changes. No browser. */
type Entry = { type: 'created' | 'modified' | 'deleted' | 'moved'; path: string; from?: string; is_file: boolean; size?: number; at: string };
type File = { owner: string; folder: string[]; name: string; type: string; at: string };
type Rules = { recentFiles(changes: Entry[]): File[] };

const at = '2026-03-10T12:00:00.000Z';
const e = (type: Entry['type'], path: string, extra: Partial<Entry> = {}): Entry => ({ type, path, is_file: true, at, ...extra });
const shown = (files: File[]) => files.map((f) => `${f.type} /${[f.owner, ...f.folder, f.name].join('/')}`);

test('each file once, at its newest change, newest first; folders are not files', async () => {
  const { recentFiles } = await loadWebModule<Rules>('lib/recent.ts');
  const cases: [string, Entry[], string[]][] = [
    ['repeats fold into the newest', [e('modified', '/a/x.txt'), e('modified', '/a/y.txt'), e('created', '/a/x.txt')], ['modified /a/x.txt', 'modified /a/y.txt']],
    ['a folder entry is left out', [e('created', '/a/d', { is_file: false }), e('created', '/a/d/f.txt')], ['created /a/d/f.txt']],
    ['a deleted file is gone, also its older entries', [e('deleted', '/a/x.txt'), e('modified', '/a/x.txt'), e('created', '/a/y.txt')], ['created /a/y.txt']],
    ['deleted, then made again: the new one shows', [e('created', '/a/x.txt'), e('deleted', '/a/x.txt'), e('created', '/a/x.txt')], ['created /a/x.txt']],
    ['a moved file shows at its new place only', [e('moved', '/a/new.txt', { from: '/a/old.txt' }), e('created', '/a/old.txt')], ['moved /a/new.txt']],
    ['a folder deleted takes what was below it', [e('deleted', '/a/d', { is_file: false }), e('created', '/a/d/f.txt'), e('created', '/a/dd.txt')], ['created /a/dd.txt']],
    ['a folder moved away takes what was below it', [e('moved', '/a/e', { is_file: false, from: '/a/d' }), e('created', '/a/d/f.txt')], []],
    ['another owner\'s file keeps its owner', [e('modified', '/bea/team/plan.txt')], ['modified /bea/team/plan.txt']],
    ['nothing', [], []],
  ];
  for (const [why, changes, want] of cases) assert.deepEqual(shown(recentFiles(changes)), want, why);
  const [first] = recentFiles([e('modified', '/bea/team/sub/plan.txt', { size: 4 })]);
  assert.deepEqual(first, { owner: 'bea', folder: ['team', 'sub'], name: 'plan.txt', type: 'modified', at, size: 4 });
});
