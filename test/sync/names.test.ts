import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { diskPath, rescanPaths, scanFolder, type LocalScan } from '../../packages/sync/src/local-scan.js';
import { caseView } from '../../packages/sync/src/names.js';
import { br, lf, v } from './planner-model.js';
import { plan } from '../../packages/sync/src/planner.js';

const scan = (files: string[], dirs: string[] = [], names: [string, string][] = []): LocalScan => ({
  files: new Map(files.map((p, i) => [p, lf(p, i + 1)])),
  dirs: new Set(dirs),
  names: new Map(names),
  skipped: [],
});

test('caseView: server names differing only in case keep the one here, else the base\'s, else the first; the others are left out and named', () => {
  const remote = new Map([
    ['Report.txt', v('u')],
    ['report.txt', v('l')],
    ['notes.txt', v('n')],
    ['NOTES.txt', v('N')],
    ['Docs/a', v('a')],
    ['docs/b', v('b')],
  ]);
  const got = caseView(scan(['notes.txt']), remote, new Set(['Docs', 'docs']), new Map([['docs/b', {}]]), new Set(['docs']));
  assert.deepEqual([...got.remote.keys()].sort(), ['Report.txt', 'docs/b', 'notes.txt']);
  assert.deepEqual([...got.remoteDirs], ['docs']);
  assert.equal(got.skipped.length, 3);
  assert.match(got.skipped.join('\n'), /^report\.txt: not synced, .* from Report\.txt/m);
  assert.match(got.skipped.join('\n'), /^NOTES\.txt: not synced, .* from notes\.txt/m);
  assert.match(got.skipped.join('\n'), /^Docs: not synced, .* from docs/m);
});

test('caseView: a local name spelled otherwise than the server\'s is taken as the server\'s, folder by folder, and found on disk under its own', () => {
  const got = caseView(scan(['DOCS/Readme.MD', 'DOCS/new.txt'], ['DOCS']), new Map([['docs/readme.md', v('r')]]), new Set(['docs']), new Map(), new Set());
  assert.deepEqual([...got.local.files.keys()].sort(), ['docs/new.txt', 'docs/readme.md']);
  assert.deepEqual([...got.local.dirs], ['docs']);
  assert.equal(diskPath(got.local.names, 'docs/readme.md'), 'DOCS/Readme.MD');
  assert.equal(diskPath(got.local.names, 'docs/new.txt'), 'DOCS/new.txt');
  assert.equal(diskPath(got.local.names, 'docs/later.txt'), 'DOCS/later.txt', 'a download into the folder goes into the one on disk');
  assert.deepEqual(got.skipped, []);
});

test('caseView: a synced file or folder spelled otherwise here while the server keeps the synced spelling was renamed here (case only): the plan moves it on the server', () => {
  const remote = new Map([['a.txt', v('a', 'ia')], ['docs/x', v('x', 'ix')], ['b.txt', v('b', 'ib')]]);
  const base = new Map([['a.txt', br('a', 'ia', 1)], ['docs/x', br('x', 'ix', 2)], ['b.txt', br('b', 'ib', 3)]]);
  // A.txt on a new inode (as a case-insensitive mount may show it): the same name and bytes tell the rename.
  const local = { files: new Map([['A.txt', lf('a', 9)], ['Docs/x', lf('x', 2)], ['b.txt', lf('b', 3)]]), dirs: new Set(['Docs']), names: new Map<string, string>(), skipped: [] };
  const got = caseView(local, remote, new Set(['docs']), base, new Set(['docs']));
  assert.deepEqual([...got.local.files.keys()].sort(), ['A.txt', 'Docs/x', 'b.txt']);
  const ops = plan({ local: got.local.files, base, remote: got.remote, localDirs: got.local.dirs, baseDirs: new Set(['docs']), remoteDirs: got.remoteDirs, noDeletes: false, device: 'mac', now: new Date() });
  assert.deepEqual(
    ops.filter((o) => !['record', 'record-folder', 'forget-folder'].includes(o.kind)).map((o) => ('from' in o ? `${o.kind} ${o.from} → ${o.to}` : `${o.kind} ${o.path}`)),
    ['move-remote a.txt → A.txt', 'move-remote-folder docs → Docs'],
  );
  // The server renamed it too, or the base never knew the server's spelling: taken as the server's name, as before.
  const unsynced = caseView({ ...local, files: new Map([['A.txt', lf('a', 1)]]), dirs: new Set() }, new Map([['a.txt', v('a', 'ia')]]), new Set(), new Map(), new Set());
  assert.deepEqual([...unsynced.local.files.keys()], ['a.txt']);
});

test('scan: an NFD name is keyed NFC and found on disk under its own; a path rescan follows a change without walking the rest', async () => {
  const root = await mkdtemp(join(tmpdir(), 'fc-sync-names-'));
  try {
    await mkdir(join(root, 'Re\u0301sume\u0301'));
    await writeFile(join(root, 'Re\u0301sume\u0301', 'cv.txt'), 'cv');
    await writeFile(join(root, 'other.txt'), 'o');
    const got = await scanFolder(root, new Map());
    assert.deepEqual([...got.files.keys()].sort(), ['Résumé/cv.txt', 'other.txt']);
    assert.equal(diskPath(got.names, 'Résumé/new.txt'), 'Re\u0301sume\u0301/new.txt');

    await writeFile(join(root, 'Re\u0301sume\u0301', 'new.txt'), 'n');
    await mkdir(join(root, 'a', 'b'), { recursive: true });
    await writeFile(join(root, 'a', 'b', 'deep.txt'), 'd');
    await rm(join(root, 'other.txt'));
    await rescanPaths(got, root, new Map(), ['Re\u0301sume\u0301/new.txt', 'a/b/deep.txt', 'other.txt']);
    assert.deepEqual([...got.files.keys()].sort(), ['Résumé/cv.txt', 'Résumé/new.txt', 'a/b/deep.txt']);
    assert.deepEqual([...got.dirs].sort(), ['a', 'a/b', 'Résumé'].sort());
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});
