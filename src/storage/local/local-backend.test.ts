import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { realpathSync, truncateSync } from 'node:fs';
import { link, mkdir, mkdtemp, readdir, readFile, readlink, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, test } from 'node:test';
import type { StorageKey } from '../../domain/storage-path.js';
import { StorageError, isStorageError, listAll, lookByStat, type StorageBackend } from '../backend.js';
import { assertCreatedThenReplaced, bodyOf, keyOf, leasingIn, losing, raceRounds, readAll, rejectsCode, runBackendConformance, usageLedger } from '../conformance/index.test-suite.js';
import { isWithin } from './confine.js';
import { fromErrno } from './errno.js';
import { openNoLinks } from './fs-ops.js';
import { createLocalBackend } from './local-backend.js';
import { fresh, localUnderTest } from './under-test.test-suite.js';

/** The lease stores of every backend made here, closed when the file's tests are done. */
const leasings: { close(): Promise<void> }[] = [];
after(() => Promise.all(leasings.map((l) => l.close())));

runBackendConformance('local', localUnderTest);

/**
 * A data dir where someone with disk access planted links of every kind in
 * alice's folder. `outside/` stands for /etc and the like; bob and `al` are
 * other users (`al` is a prefix of `alice`).
 */
async function planted() {
  const env = await fresh();
  const { base, storageDir } = env;
  await env.backend.init();
  const alice = join(storageDir, 'alice');
  await mkdir(join(base, 'outside', 'dir'), { recursive: true });
  await writeFile(join(base, 'outside', 'secret.txt'), 'secret');
  await mkdir(join(storageDir, 'bob'), { recursive: true });
  await writeFile(join(storageDir, 'bob', 'b.txt'), 'bob');
  await mkdir(join(storageDir, 'al'), { recursive: true });
  await mkdir(join(alice, 'real'), { recursive: true });
  await writeFile(join(alice, 'real', 'own.txt'), 'own');
  const leaving: Record<string, string> = {
    etc: '/etc',
    passwd: '/etc/passwd',
    'outside-dir': join(base, 'outside'),
    'outside-file': '../../outside/secret.txt',
    'bob-dir': '../bob',
    'bob-file': '../bob/b.txt',
    storage: '..',
    up: '../..',
    hop: 'outside-file', // an inside link to a leaving link
    dangling: 'nowhere',
    loop1: 'loop2',
    loop2: 'loop1',
  };
  for (const [name, target] of Object.entries(leaving)) await symlink(target, join(alice, name));
  await symlink('real', join(alice, 'inner-dir'));
  await symlink('real/own.txt', join(alice, 'inner-file'));
  await symlink(join(alice, 'real'), join(alice, 'abs-inner'));
  await symlink('..', join(alice, 'real', 'parent'));
  await symlink('../alice/real/own.txt', join(storageDir, 'al', 'alice-file'));
  const outsideState = async () => [await readdir(join(base, 'outside')), await readFile(join(base, 'outside', 'secret.txt'), 'utf8'), await readdir(join(storageDir, 'bob'))];
  const before = await outsideState();
  const untouched = async () => assert.deepEqual(await outsideState(), before, 'nothing outside alice/ may change');
  return { ...env, alice, leaving: Object.keys(leaving), untouched, cleanup: () => rm(base, { recursive: true, force: true }) };
}

const withPlanted = (title: string, fn: (p: Awaited<ReturnType<typeof planted>>) => Promise<void>) =>
  test(`local confinement: ${title}`, async () => {
    const p = await planted();
    try {
      await fn(p);
      await p.untouched();
    } finally {
      await p.cleanup();
    }
  });

withPlanted('a link leading outside is invisible to stat, read and list', async ({ backend: b, leaving }) => {
  for (const name of leaving) {
    assert.equal(await b.stat(keyOf(name)), undefined, name);
    await rejectsCode(b.read(keyOf(name)), 'not_found');
    await rejectsCode(listAll(b, keyOf(name)), 'not_found');
  }
  assert.deepEqual((await listAll(b, keyOf(''))).map((e) => e.name).sort(), ['abs-inner', 'inner-dir', 'inner-file', 'real']);
});

withPlanted('lookBeforeWrite walks once and finds what the two stats find: links, files in the way, missing folders, share bounds', async ({ backend: b, alice }) => {
  await mkdir(join(alice, 'real', 'sub', 'deep'), { recursive: true });
  await writeFile(join(alice, 'real', 'sub', 'f.txt'), 'f');
  execFileSync('mkfifo', [join(alice, 'fifo')]);
  const paths = [
    'new.txt', 'real', 'real/own.txt', 'real/new.txt', 'real/own.txt/x', 'real/own.txt/x/y', 'missing/x', 'missing/deeper/x',
    'real/sub/f.txt', 'real/sub/deep', 'real/sub/deep/new', 'real/sub/f.txt/x', 'inner-dir', 'inner-dir/own.txt', 'inner-dir/new.txt',
    'inner-file', 'inner-file/x', 'abs-inner/own.txt', 'real/parent/real/own.txt', 'outside-dir', 'outside-dir/secret.txt', 'outside-dir/dir/x',
    'dangling', 'dangling/x', 'loop1/x', 'etc/passwd', 'hop', 'hop/x', 'fifo', 'fifo/x', 'bob-dir/b.txt',
  ];
  // A share link's keys: bound below `real` (or a link to it, or a folder that is not there).
  const keys = [
    ...paths.map((p) => keyOf(p)),
    ...['real/own.txt', 'real/sub/f.txt', 'real/sub/new', 'real/sub/deep/new', 'real/own.txt/x', 'inner-dir/sub/f.txt', 'missing/a/b', 'real/sub/f.txt/x'].map((p) => ({ ...keyOf(p), within: 1 })),
    { ...keyOf('real/sub/deep/new'), within: 2 },
    keyOf('x', 'nobody'),
  ];
  for (const key of keys) assert.deepEqual(await b.lookBeforeWrite(key), await lookByStat(b, key), JSON.stringify(key));
});

withPlanted('a read opens a path without links in one call, and finds what the walk finds', async ({ alice, base, storageDir, tmpDir }) => {
  await mkdir(join(alice, 'real', 'sub', 'deep'), { recursive: true });
  await writeFile(join(alice, 'real', 'sub', 'f.txt'), 'f');
  execFileSync('mkfifo', [join(alice, 'fifo')]);
  await mkdir(join(base, 'walk-only'));
  const leasing = await leasingIn(join(base, 'walk-only'));
  leasings.push(leasing);
  // The same files read by a backend that always walks, and by one that counts the linkless opens.
  const walking = createLocalBackend({ storageDir, tmpDir, openNoLinks: () => undefined }, leasing);
  const opened: string[] = [];
  const counting = createLocalBackend({ storageDir, tmpDir, openNoLinks: (path) => {
    const fd = openNoLinks(path);
    if (fd !== undefined) opened.push(path);
    return fd;
  } }, leasing);
  const outcome = async (backend: StorageBackend, key: StorageKey) => {
    try {
      const o = await backend.read(key);
      return { name: o.entry.name, size: o.entry.size, etag: o.entry.etag, isFile: o.entry.isFile, bytes: (o.bytes ?? (await readAll(o.stream))).toString() };
    } catch (e) {
      return { error: e instanceof StorageError ? e.code : String(e) };
    }
  };
  const paths = [
    'real/own.txt', 'real/sub/f.txt', 'real', 'real/sub/deep', 'real/own.txt/x', 'missing/x', 'new.txt', '', 'inner-dir/own.txt', 'inner-file',
    'abs-inner/own.txt', 'real/parent/real/own.txt', 'outside-dir/secret.txt', 'outside-file', 'dangling', 'loop1/x', 'etc/passwd', 'hop', 'fifo', 'bob-dir/b.txt',
  ];
  const keys = [
    ...paths.map((p) => keyOf(p)),
    ...['real/own.txt', 'real/sub/f.txt', 'real/sub', 'inner-dir/own.txt', 'missing/a'].map((p) => ({ ...keyOf(p), within: 1 })),
    { ...keyOf('real/sub/f.txt'), within: 2 },
    { ...keyOf('real/sub'), within: 2 },
    // A shared item as the key itself: the walk wants a folder there.
    { ...keyOf('real/sub/f.txt'), within: 3 },
    { ...keyOf('real/own.txt'), within: 2 },
    keyOf('x', 'nobody'),
  ];
  for (const key of keys) assert.deepEqual(await outcome(counting, key), await outcome(walking, key), JSON.stringify(key));
  // Opened at once: the files and folders reached through names alone, the share keys below their shared folder.
  const real = (p: string) => join(realpathSync(storageDir), 'alice', p);
  assert.deepEqual(opened, [...['real/own.txt', 'real/sub/f.txt', 'real', 'real/sub/deep', 'fifo', 'real/own.txt', 'real/sub/f.txt', 'real/sub', 'real/sub/f.txt'].map(real)]);
});

withPlanted('paths through a leaving link are not_found for reads', async ({ backend: b }) => {
  for (const path of ['etc/passwd', 'outside-dir/secret.txt', 'bob-dir/b.txt', 'storage/bob/b.txt', 'up/outside/secret.txt', 'hop/x']) {
    assert.equal(await b.stat(keyOf(path)), undefined, path);
    await rejectsCode(b.read(keyOf(path)), 'not_found');
  }
  await rejectsCode(listAll(b, keyOf('storage/bob')), 'not_found');
});

withPlanted('writes through a leaving link are invalid_path and create nothing outside', async ({ backend: b }) => {
  for (const path of ['outside-dir/new.txt', 'bob-dir/new.txt', 'storage/bob/new.txt', 'up/outside/dir/new.txt', 'dangling/new.txt']) {
    for (const ifExists of ['fail', 'replace', 'rename'] as const) {
      await rejectsCode(b.write(keyOf(path), bodyOf('x'), { ifExists }), 'invalid_path');
    }
    await rejectsCode(b.mkdir(keyOf(`${path}-dir`), { parents: true, existOk: true }), 'invalid_path');
  }
  await rejectsCode(b.write(keyOf('bob-file'), bodyOf('x'), { ifExists: 'fail' }), 'already_exists');
  await b.write(keyOf('mine.txt'), bodyOf('m'), { ifExists: 'fail' });
  await rejectsCode(b.move(keyOf('mine.txt'), keyOf('bob-dir/stolen.txt'), { overwrite: true }), 'invalid_path');
  await rejectsCode(b.mkdir(keyOf('outside-dir'), { parents: false, existOk: true }), 'invalid_path');
});

withPlanted('delete and move of a leaving link are not_found and keep its target', async ({ backend: b }) => {
  for (const name of ['outside-dir', 'outside-file', 'bob-dir', 'storage', 'etc']) {
    await rejectsCode(b.delete(keyOf(name), { recursive: true }), 'not_found');
    await rejectsCode(b.move(keyOf(name), keyOf(`moved-${name}`), { overwrite: true }), 'not_found');
  }
  await rejectsCode(b.delete(keyOf('bob-dir/b.txt'), { recursive: false }), 'not_found');
  await rejectsCode(b.move(keyOf('storage/bob'), keyOf('mine'), { overwrite: false }), 'not_found');
});

withPlanted('deleting a folder that holds leaving links removes the links, never their targets', async ({ backend: b, alice, base }) => {
  await mkdir(join(alice, 'box'));
  await symlink(join(base, 'outside'), join(alice, 'box', 'out'));
  await symlink('../../bob', join(alice, 'box', 'bob'));
  await b.delete(keyOf('box'), { recursive: true });
  assert.equal(await b.stat(keyOf('box')), undefined);
});

withPlanted('write with replace over a leaving link replaces the link, not its target', async ({ backend: b }) => {
  await b.write(keyOf('outside-file'), bodyOf('mine'), { ifExists: 'replace' });
  assert.equal((await readAll((await b.read(keyOf('outside-file'))).stream)).toString(), 'mine');
  assert.equal((await b.write(keyOf('bob-file'), bodyOf('r'), { ifExists: 'rename' })).name, 'bob-file (1)');
});

withPlanted('moving a folder with overwrite onto a leaving link replaces only the link', async ({ backend: b }) => {
  await b.mkdir(keyOf('src'), { parents: false, existOk: false });
  await b.move(keyOf('src'), keyOf('bob-dir'), { overwrite: true });
  assert.equal((await b.stat(keyOf('bob-dir')))?.isFile, false);
  assert.deepEqual(await listAll(b, keyOf('bob-dir')), []);
});

withPlanted('links that stay inside the root are followed', async ({ backend: b, alice }) => {
  assert.equal((await b.stat(keyOf('inner-dir')))?.isFile, false);
  assert.deepEqual((await listAll(b, keyOf('inner-dir'))).map((e) => e.name).sort(), ['own.txt', 'parent']);
  assert.equal((await readAll((await b.read(keyOf('inner-file'))).stream)).toString(), 'own');
  assert.equal((await readAll((await b.read(keyOf('abs-inner/parent/real/own.txt'))).stream)).toString(), 'own');
  await b.write(keyOf('inner-dir/new.txt'), bodyOf('via link'), { ifExists: 'fail' });
  assert.equal(await readFile(join(alice, 'real', 'new.txt'), 'utf8'), 'via link');
});

withPlanted('a link in one user\'s folder never reaches a user whose name it prefixes', async ({ backend: b }) => {
  assert.equal(await b.stat(keyOf('alice-file', 'al')), undefined);
  await rejectsCode(b.read(keyOf('alice-file', 'al')), 'not_found');
  assert.deepEqual(await listAll(b, keyOf('', 'al')), []);
});

withPlanted('deleting an inside link removes the link, not the folder it points to', async ({ backend: b }) => {
  await b.delete(keyOf('inner-dir'), { recursive: true });
  assert.equal(await b.stat(keyOf('inner-dir')), undefined);
  assert.equal((await b.stat(keyOf('real/own.txt')))?.size, 3);
});

withPlanted('moving a folder into itself through an inside link is into_itself and creates nothing', async ({ backend: b }) => {
  await rejectsCode(b.move(keyOf('real'), keyOf('inner-dir/sub/deeper'), { overwrite: false }), 'into_itself');
  assert.equal(await b.stat(keyOf('real/sub')), undefined);
  await rejectsCode(b.move(keyOf('real/own.txt'), keyOf('inner-dir/own.txt'), { overwrite: true }), 'into_itself');
  assert.equal((await b.stat(keyOf('real/own.txt')))?.size, 3);
});

test('local confinement: a user root that is itself a link (the administrator\'s choice) is followed', async () => {
  const { base, storageDir, backend: b } = await fresh();
  try {
    await b.init();
    await mkdir(join(base, 'elsewhere', 'carol'), { recursive: true });
    await symlink(join(base, 'elsewhere', 'carol'), join(storageDir, 'carol'));
    await b.write(keyOf('x/f.txt', 'carol'), bodyOf('c'), { ifExists: 'fail' });
    assert.equal(await readFile(join(base, 'elsewhere', 'carol', 'x', 'f.txt'), 'utf8'), 'c');
    assert.deepEqual((await listAll(b, keyOf('', 'carol'))).map((e) => e.name), ['x']);
  } finally {
    await rm(base, { recursive: true, force: true });
  }
});

test('local: keys no parser could make are refused with invalid_path', async () => {
  const { base, backend: b } = await fresh();
  try {
    await b.init();
    const bad: StorageKey[] = [
      { user: '..', segments: [] },
      { user: '', segments: ['x'] },
      { user: 'alice', segments: ['..', 'bob'] },
      { user: 'alice', segments: ['a/b'] },
      { user: 'alice', segments: ['.'] },
      { user: 'alice', segments: [''] },
      { user: 'al/../bob', segments: [] },
    ];
    for (const key of bad) {
      await rejectsCode(b.stat(key), 'invalid_path');
      await rejectsCode(b.write(key, bodyOf('x'), { ifExists: 'replace' }), 'invalid_path');
      await rejectsCode(b.delete(key, { recursive: true }), 'invalid_path');
      await rejectsCode(b.move(keyOf('x'), key, { overwrite: true }), 'invalid_path');
    }
  } finally {
    await rm(base, { recursive: true, force: true });
  }
});

test('local: isWithin compares whole path segments', () => {
  const cases: [string, string, boolean][] = [
    ['/s/al', '/s/al', true],
    ['/s/al', '/s/al/x', true],
    ['/s/al', '/s/al/..x', true],
    ['/s/al', '/s/alice', false],
    ['/s/al', '/s/alice/x', false],
    ['/s/al', '/s', false],
    ['/s/al', '/s/al/../bob', false],
    ['/s/al', '/etc/passwd', false],
  ];
  for (const [root, p, want] of cases) assert.equal(isWithin(root, p), want, `${p} within ${root}`);
});

test('local: errno codes map to storage error codes in one table', () => {
  const sys = (code: string) => Object.assign(new Error(code), { code });
  const cases: [string, string | undefined][] = [
    ['ENOENT', 'not_found'],
    ['EEXIST', 'already_exists'],
    ['ENOTEMPTY', 'already_exists'],
    ['ENOTDIR', 'not_a_directory'],
    ['EISDIR', 'is_a_directory'],
    ['ENOSPC', 'no_space'],
    ['EDQUOT', 'no_space'],
    ['EFBIG', 'too_large'],
    ['ELOOP', 'invalid_path'],
    ['ENAMETOOLONG', 'invalid_path'],
    ['EACCES', undefined],
    ['EIO', undefined],
  ];
  for (const [errno, code] of cases) {
    const e = sys(errno);
    const mapped = fromErrno(e, 'op');
    if (code === undefined) assert.equal(mapped, e, `${errno} stays an internal error`);
    else assert.ok(isStorageError(mapped, code as StorageError['code']) && mapped.cause === e, errno);
  }
  const own = new StorageError('aborted', 'x');
  assert.equal(fromErrno(own, 'op'), own);
  assert.equal(fromErrno('not an error', 'op'), 'not an error');
});

test('local staging: init creates the storage and staging folders', async () => {
  const { base, storageDir, tmpDir, backend } = await fresh();
  try {
    await backend.init();
    assert.deepEqual([await readdir(storageDir), await readdir(tmpDir)], [[], []]);
  } finally {
    await rm(base, { recursive: true, force: true });
  }
});

test('local staging: init removes staging left by a crash and keeps users\' files', async () => {
  const { base, storageDir, tmpDir, backend } = await fresh();
  try {
    await mkdir(join(tmpDir, 'aside-x', 'deep'), { recursive: true });
    await writeFile(join(tmpDir, 'upload-1'), 'half');
    await writeFile(join(tmpDir, 'aside-x', 'deep', 'f'), 'f');
    await mkdir(join(storageDir, 'alice'), { recursive: true });
    await writeFile(join(storageDir, 'alice', 'keep.txt'), 'keep');
    await backend.init();
    assert.deepEqual(await readdir(tmpDir), []);
    assert.equal(await readFile(join(storageDir, 'alice', 'keep.txt'), 'utf8'), 'keep');
  } finally {
    await rm(base, { recursive: true, force: true });
  }
});

test('local staging: an upload lives in tmpDir (a small one in memory, created early when its length is not declared) until complete and only then gets its name', async () => {
  const { base, storageDir, tmpDir, backend: b } = await fresh();
  try {
    await b.init();
    // Past the 256 KiB a small body is held in memory for (write.ts SMALL_BODY), the rest streams into tmpDir.
    const first = Buffer.alloc(300 * 1024, 'a');
    const body = new Readable({ read() {} });
    body.push(first);
    const writing = b.write(keyOf('new/up.txt'), body, { ifExists: 'fail' });
    for (let i = 0; i < 200 && (await readdir(tmpDir)).length === 0; i++) await new Promise((r) => setTimeout(r, 5));
    assert.equal((await readdir(tmpDir)).length, 1, 'one staging file');
    assert.deepEqual(await readdir(storageDir), [], 'nothing (not even the parents) in storage yet');
    body.push('second half');
    body.push(null);
    assert.equal((await writing).size, first.length + 11);
    assert.equal(await readFile(join(storageDir, 'alice', 'new', 'up.txt'), 'utf8'), `${first.toString()}second half`);
    assert.deepEqual(await readdir(tmpDir), []);

    // A small body of declared length: nothing anywhere until it ends (it is held in memory, then written whole).
    const small = new Readable({ read() {} });
    small.push('first half, ');
    const smallWrite = b.write(keyOf('small/up.txt'), small, { ifExists: 'fail', sizeHint: 23 });
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual([await readdir(tmpDir), (await readdir(join(storageDir, 'alice'))).sort()], [[], ['new']], 'no staging file, no parents');
    small.push('second half');
    small.push(null);
    assert.equal((await smallWrite).size, 23);
    assert.equal(await readFile(join(storageDir, 'alice', 'small', 'up.txt'), 'utf8'), 'first half, second half');
    assert.deepEqual(await readdir(tmpDir), []);

    // A small body nobody declared the length of (an SFTP put): its staging file is created while it comes
    // (empty: the bytes are held until the end), still with no parents in storage.
    const undeclared = new Readable({ read() {} });
    undeclared.push('first half, ');
    const undeclaredWrite = b.write(keyOf('later/up.txt'), undeclared, { ifExists: 'fail' });
    for (let i = 0; i < 200 && (await readdir(tmpDir)).length === 0; i++) await new Promise((r) => setTimeout(r, 5));
    const [staging] = await readdir(tmpDir);
    assert.ok(staging !== undefined, 'one staging file');
    assert.equal((await stat(join(tmpDir, staging))).size, 0, 'empty until the body ends');
    assert.deepEqual((await readdir(join(storageDir, 'alice'))).sort(), ['new', 'small'], 'no parents');
    undeclared.push('second half');
    undeclared.push(null);
    assert.equal((await undeclaredWrite).size, 23);
    // Read whole: the test's own 23-byte file in its temp dir, never a user's.
    assert.equal(await readFile(join(storageDir, 'alice', 'later', 'up.txt'), 'utf8'), 'first half, second half');
    assert.deepEqual(await readdir(tmpDir), []);
  } finally {
    await rm(base, { recursive: true, force: true });
  }
});

test('local staging: an aborted upload creates no parent folders', async () => {
  const { base, storageDir, tmpDir, backend: b } = await fresh();
  try {
    await b.init();
    await b.mkdir(keyOf(''), { parents: false, existOk: false });
    const ac = new AbortController();
    const body = new Readable({ read() {} });
    body.push('some');
    setTimeout(() => ac.abort(), 20);
    await rejectsCode(b.write(keyOf('a/b/c.txt'), body, { ifExists: 'fail', signal: ac.signal }), 'aborted');
    assert.deepEqual([await readdir(join(storageDir, 'alice')), await readdir(tmpDir)], [[], []]);
  } finally {
    await rm(base, { recursive: true, force: true });
  }
});

test('local: a FIFO planted on disk is neither listed nor opened', async (t) => {
  const { base, storageDir, backend: b } = await fresh();
  try {
    await b.init();
    await mkdir(join(storageDir, 'alice'));
    try {
      execFileSync('mkfifo', [join(storageDir, 'alice', 'pipe')]);
    } catch {
      t.skip('mkfifo is not available on this system');
      return;
    }
    assert.deepEqual(await listAll(b, keyOf('')), []);
    assert.equal(await b.stat(keyOf('pipe')), undefined);
    await rejectsCode(b.read(keyOf('pipe')), 'not_found');
  } finally {
    await rm(base, { recursive: true, force: true });
  }
});

test('local: startup and the stale-staging sweep clear data/tmp but keep resumable uploads (data/tmp/tus), which outlive a restart', async () => {
  const { base, tmpDir, backend } = await fresh();
  try {
    await backend.init();
    const id = '0b6f3c52-8f1a-4c1e-9a34-2f0d2b7e9c11';
    await backend.resumable.create(id);
    await backend.resumable.append(id, 0, bodyOf('kept'), { maxBytes: 4 });
    await writeFile(join(tmpDir, 'upload-leftover'), 'x');
    await backend.init();
    assert.deepEqual(await readdir(tmpDir), ['tus']);
    await writeFile(join(tmpDir, 'upload-leftover'), 'x');
    await backend.sweep({ staleMs: -1000 });
    assert.deepEqual(await readdir(tmpDir), ['tus']);
    assert.deepEqual(await readdir(join(tmpDir, 'tus')), [id]);
    await backend.resumable.commit(id, 4, keyOf('after-restart.txt'), { ifExists: 'replace' });
    assert.equal((await readAll((await backend.read(keyOf('after-restart.txt'))).stream)).toString(), 'kept');
  } finally {
    await backend.close();
    await rm(base, { recursive: true, force: true });
  }
});

test('local: a resumable commit that died after linking the file into place (before removing the staging name) is not made twice', async () => {
  const { base, storageDir, tmpDir, backend } = await fresh();
  try {
    await backend.init();
    await backend.mkdir(keyOf(''), { parents: true, existOk: true });
    const id = '3c9d2e41-7a6b-4f0e-8d21-5b4a3c2d1e0f';
    await backend.resumable.create(id);
    await backend.resumable.append(id, 0, bodyOf('linked'), { maxBytes: 6 });
    // What commit's link(2) did before the process died.
    await link(join(tmpDir, 'tus', id), join(storageDir, 'alice', 'up.txt'));
    assert.equal(await backend.resumable.commit(id, 6, keyOf('up.txt'), { ifExists: 'rename' }), undefined);
    assert.deepEqual(await readdir(join(storageDir, 'alice')), ['up.txt'], 'no "up (1).txt"');
    assert.deepEqual(await readdir(join(tmpDir, 'tus')), [], 'the staging name is gone');
  } finally {
    await backend.close();
    await rm(base, { recursive: true, force: true });
  }
});

test('local: a download whose file another program shortens in place fails instead of ending short, and closes the file', async () => {
  const { base, storageDir, backend } = await fresh();
  try {
    await backend.init();
    const size = 2 * 1024 * 1024;
    await backend.write(keyOf('rotated.log'), bodyOf(Buffer.alloc(size, 'x')), { ifExists: 'fail' });
    const opened = await backend.read(keyOf('rotated.log'));
    assert.equal(opened.entry.size, size);
    // logrotate's copytruncate, after the open and fstat but before the bytes are read.
    truncateSync(join(storageDir, 'alice', 'rotated.log'), 100 * 1024);
    await assert.rejects(readAll(opened.stream), (e: unknown) => isStorageError(e) && e.code === 'failed' && /changed while it was read/.test(e.message));
    // What is now there reads whole, with an entry that matches it.
    const again = await backend.read(keyOf('rotated.log'));
    assert.equal(again.entry.size, 100 * 1024);
    assert.equal((await readAll(again.stream)).length, 100 * 1024);
    // Both descriptors are closed: none of this process's open files is the log.
    const fds = await readdir('/proc/self/fd');
    const targets = await Promise.all(fds.map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => '')));
    assert.ok(!targets.some((t) => t.endsWith('rotated.log')), 'no descriptor of the file left open');
  } finally {
    await rm(base, { recursive: true, force: true });
  }
});

test('local: files replaced inside a folder while it is deleted or moved over: the sizes the events report add up to the bytes stored', async () => {
  // The S3 backend counts a folder by listing it just before it goes (docs/storage.md, "Usage and quotas");
  // the local disk counts it again once it is set aside, where no writer reaches it any more.
  const { base, backend: b } = await fresh();
  try {
    await b.init();
    const usage = usageLedger(b);
    const race = (p: Promise<unknown>) => losing(p, 'not_found', 'already_exists', 'failed');
    await raceRounds(async (round) => {
      for (const n of ['a', 'b']) await b.write(keyOf(`box/${n}.bin`), bodyOf(Buffer.alloc(100)), { ifExists: 'replace' });
      await b.write(keyOf('other/c.bin'), bodyOf(Buffer.alloc(10)), { ifExists: 'replace' });
      await Promise.all([
        ...['a', 'b'].map((n, i) => race(b.write(keyOf(`box/${n}.bin`), bodyOf(Buffer.alloc(1000 + round + i)), { ifExists: 'replace' }))),
        round % 2 ? race(b.delete(keyOf('box'), { recursive: true })) : race(b.move(keyOf('other'), keyOf('box'), { overwrite: true })),
      ]);
    });
    assert.equal(usage.total, await usage.stored(), 'the events add up to the bytes stored');
  } finally {
    await rm(base, { recursive: true, force: true });
  }
});

test('local: a replace onto a free name takes no lease (link claims it); onto a taken name it holds the edit lock, and the events say created, then replaced', async () => {
  // Issue 30: the lease cost two metadata writes per small upload, and with several workers their contention for the database.
  const base = await mkdtemp(join(tmpdir(), 'fc-local-'));
  const leasing = await leasingIn(base);
  leasings.push(leasing);
  const taken: string[] = [];
  const counted = { leases: { ...leasing.leases, acquire: (name: string, owner: string, now: number, expiresAt: number) => (taken.push(name), leasing.leases.acquire(name, owner, now, expiresAt)) } };
  const b = createLocalBackend({ storageDir: join(base, 'storage'), tmpDir: join(base, 'tmp') }, counted);
  try {
    await b.init();
    const events: unknown[] = [];
    b.events.subscribe((e) => void events.push(e));
    await b.write(keyOf('in/new.txt'), bodyOf('one'), { ifExists: 'replace' });
    assert.deepEqual(taken, [], 'no lease for a free name');
    await b.write(keyOf('in/new.txt'), bodyOf('three'), { ifExists: 'replace' });
    assert.deepEqual(taken, ['local-edit:alice/in/new.txt'], 'the edit lock for a taken name');
    assert.equal((await readAll((await b.read(keyOf('in/new.txt'))).stream)).toString(), 'three');
    await assertCreatedThenReplaced(b, events, 'in/new.txt');
    // A folder or a link at the name is not a free name: the locked replace refuses or handles it as before.
    await b.mkdir(keyOf('in/dir'), { parents: true, existOk: false });
    await rejectsCode(b.write(keyOf('in/dir'), bodyOf('x'), { ifExists: 'replace' }), 'is_a_directory');
    assert.deepEqual(await readdir(join(base, 'tmp')), [], 'staging is empty');
  } finally {
    await rm(base, { recursive: true, force: true });
  }
});

test('local: a change of a whole folder waits for the change of a name below it that began first, and a change below steps back while the folder changes', async () => {
  // With versions and the trash, a replace measured a file, the folder went to the trash with it, a writer made the
  // folder again, and the replace's rename landed there reporting bytes the trash had counted: usage fell short.
  const base = await mkdtemp(join(tmpdir(), 'fc-local-'));
  const leasing = await leasingIn(base);
  leasings.push(leasing);
  const b = createLocalBackend({ storageDir: join(base, 'storage'), tmpDir: join(base, 'tmp'), trashDir: join(base, 'trash') }, leasing);
  const settled = <T>(p: Promise<T>): { done: boolean; value: Promise<T> } => {
    const s: { done: boolean; value: Promise<T> } = { done: false, value: p };
    s.value = p.then((v) => ((s.done = true), v));
    return s;
  };
  /** Enough turns of the event loop and of the database for a change that does not wait to end. */
  const turns = async (n = 20) => {
    for (let i = 0; i < n; i++) await leasing.leases.heldOf(['nothing'], Date.now());
  };
  try {
    await b.init();
    await b.write(keyOf('box/a.bin'), bodyOf('aaaa'), { ifExists: 'replace' });
    await b.write(keyOf('box/sub/c.bin'), bodyOf('cc'), { ifExists: 'replace' });

    // A change below holds its name's lease: the folder's move into the trash waits for it.
    const now = Date.now();
    assert.equal(await leasing.leases.acquire('local-edit:alice/box/sub/c.bin', 'below', now, now + 30_000), true);
    const trashed = settled(b.trash.put(keyOf('box'), 'item1'));
    await turns();
    assert.equal(trashed.done, false, 'the folder waits while a change below it holds its lease');
    assert.ok(await b.stat(keyOf('box/a.bin')), 'and has not moved');
    await leasing.leases.release('local-edit:alice/box/sub/c.bin', 'below');
    assert.equal((await trashed.value).size, 6, 'then it moves, counting what it moved');

    // The folder's change holds its lease: a replace below steps back until it ends.
    await b.write(keyOf('box/a.bin'), bodyOf('aaaa'), { ifExists: 'replace' });
    assert.equal(await leasing.leases.acquire('local-edit:alice/box', 'folder', now, now + 30_000), true);
    const replaced = settled(b.write(keyOf('box/a.bin'), bodyOf('bbbbbbbb'), { ifExists: 'replace' }));
    const deleted = settled(b.delete(keyOf('box/a.bin'), { recursive: false }).catch((e: unknown) => e));
    await turns();
    assert.equal(replaced.done, false, 'the replace waits while the folder changes');
    assert.equal(deleted.done, false, 'so does a delete');
    assert.equal((await readAll((await b.read(keyOf('box/a.bin'))).stream)).toString(), 'aaaa');
    await leasing.leases.release('local-edit:alice/box', 'folder');
    await replaced.value;
    await deleted.value;
    assert.deepEqual(await leasing.leases.heldWithin('local-edit:alice/', Date.now()), [], 'every lease let go');

    // A user root's delete settles below it too, and does not wait for its own lease.
    await b.write(keyOf('x/y.bin'), bodyOf('y'), { ifExists: 'replace' });
    await b.delete({ user: 'alice', segments: [] }, { recursive: true });
  } finally {
    await rm(base, { recursive: true, force: true });
  }
});
