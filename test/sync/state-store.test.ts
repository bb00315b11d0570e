import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { StateStore, stateFolder, stateRoot } from '../../packages/sync/src/state-store.js';

test('the state lives outside the folder: --state-dir, else $XDG_STATE_HOME/file-cloud, else ~/.local/state/file-cloud', () => {
  assert.equal(stateRoot('/x/y', { XDG_STATE_HOME: '/s' }), '/x/y');
  assert.equal(stateRoot(undefined, { XDG_STATE_HOME: '/s' }), '/s/file-cloud');
  assert.equal(stateRoot(undefined, {}), join(homedir(), '.local', 'state', 'file-cloud'));
  assert.notEqual(stateFolder('/r', '/home/a/Cloud'), stateFolder('/r', '/home/a/Other'));
});

test('a step confirmed before a crash is in the state at the next start; a line cut by the crash is ignored', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'fc-sync-state-'));
  try {
    const store = new StateStore(dir);
    const state = StateStore.fresh('/home/a/Cloud', 'http://s', '/alice/Cloud');
    state.remote.set('a', { sha256: 'aa', size: 1, id: 'i1' });
    state.cursor = 'c1';
    store.save(state);
    store.setBase(state, 'a', { sha256: 'aa', size: 1, id: 'i1', ino: 7, mtimeMs: 9 });
    store.setRemote(state, 'b', { sha256: 'bb', size: 2 });
    store.setBase(state, 'gone', null);
    // No save(), no close(): the process died here, in the middle of writing the next line.
    await appendFile(join(dir, 'journal'), '{"b":["half');
    const again = new StateStore(dir).load();
    assert.ok(again);
    assert.deepEqual(again.base.get('a'), { sha256: 'aa', size: 1, id: 'i1', ino: 7, mtimeMs: 9 });
    assert.deepEqual(again.remote.get('b'), { sha256: 'bb', size: 2 });
    assert.equal(again.cursor, 'c1');
    assert.equal(again.origin, state.origin, 'the origin stays, so old echoes are still known');
    store.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a folder never synced has no state', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'fc-sync-state-'));
  try {
    assert.equal(new StateStore(join(dir, 'none')).load(), undefined);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('the snapshot is a header line and a line per path, read a piece at a time; a snapshot of one JSON object (written before) still loads', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'fc-sync-state-'));
  try {
    const old = { localDir: '/home/a/Cloud', server: 'http://s', remoteRoot: '/alice/Cloud', origin: 'o1', cursor: 'c1', base: { 'ä/b.txt': { sha256: 'aa', size: 1, id: 'i1', mtimeMs: 5, ino: 7 } }, remote: { 'ä/b.txt': { sha256: 'aa', size: 1, id: 'i1' } }, baseDirs: ['ä'], remoteDirs: ['ä'] };
    await writeFile(join(dir, 'state.json'), JSON.stringify(old));
    const store = new StateStore(dir);
    const state = store.load();
    assert.equal(state?.cursor, 'c1');
    assert.deepEqual(state?.base.get('ä/b.txt'), old.base['ä/b.txt']);
    assert.deepEqual([...(state?.remoteDirs ?? [])], ['ä']);
    // Many paths, a name with a line break and one of 4-byte UTF-8 characters across the 1 MiB reads.
    for (let i = 0; i < 20_000; i++) state?.base.set(`f${i} 😀 ${'x'.repeat(40)}`, { sha256: 'bb', size: i, id: `i${i}` });
    state?.remote.set('line\nbreak.txt', { sha256: 'cc', size: 2 });
    store.save(state!);
    const text = await readFile(join(dir, 'state.json'), 'utf8');
    assert.equal(JSON.parse(text.slice(0, text.indexOf('\n'))).format, 2);
    const again = new StateStore(dir).load();
    assert.equal(again?.base.size, 20_001);
    assert.deepEqual(again?.base.get(`f19999 😀 ${'x'.repeat(40)}`), { sha256: 'bb', size: 19999, id: 'i19999' });
    assert.deepEqual(again?.remote.get('line\nbreak.txt'), { sha256: 'cc', size: 2 });
    assert.equal(again?.cursor, 'c1');
    assert.equal('format' in (again ?? {}), false);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
