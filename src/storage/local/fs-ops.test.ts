import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import * as os from 'node:os';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nativeDisabled } from '../../lib/native-off.js';
import { durableWritePath, nativeDurableWrite, nativeFs, nativeOpenNoLinks, nativeRenameNoReplace, noOpenNoLinks, noRenameNoReplace, nodeDurableWrite, type DurableWrite } from './fs-ops.js';

/**
 * The native module, or undefined after t.skip with the loader's reason (not built here, or
 * FILE_CLOUD_NATIVE_FS=0). In CI, which must build it (scripts/build-native.mjs at npm ci), its
 * absence fails the test instead.
 */
function nativeOrSkip(t: TestContext): typeof nativeFs {
  if (nativeFs) return nativeFs;
  if (process.env.CI && !nativeDisabled(process.env.FILE_CLOUD_NATIVE_FS)) assert.fail(`CI must build the native module: ${durableWritePath}`);
  t.skip(`native/fs-ops.c is not in use here: ${durableWritePath}`);
  return undefined;
}

// Both implementations answer the same table: native/fs-ops.c when it is built (CI must build it), node:fs always.
const implementations: [string, (t: TestContext) => DurableWrite | undefined][] = [
  ['node:fs', () => nodeDurableWrite],
  [
    'native',
    (t) => {
      const native = nativeOrSkip(t);
      return native && nativeDurableWrite(native);
    },
  ],
];

const chunks = (...parts: string[]) => parts.map((p) => Buffer.from(p));
/** Whether fd is closed (fstat fails with EBADF). */
const closed = (fd: number) => {
  try {
    fs.fstatSync(fd);
    return false;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EBADF';
  }
};

async function inDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'fc-durable-'));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

for (const [name, pick] of implementations) {
  test(`durableWrite (${name}): a new file holds every chunk in order, and its stats are the file's`, async (t) => {
    const write = pick(t);
    if (!write) return;
    await inDir(async (dir) => {
      const cases: [string, Buffer[]][] = [
        ['one chunk', chunks('hello')],
        ['several, an empty one among them', chunks('a', '', 'bc', 'def')],
        ['none', []],
        // More than IOV_MAX (1,024) buffers: writev takes them in several calls.
        ['2,000 one-byte chunks', Array.from({ length: 2000 }, (_, i) => Buffer.from([i % 256]))],
        ['a large one', [Buffer.alloc(300 * 1024, 7)]],
      ];
      for (const [label, parts] of cases) {
        const path = join(dir, `${label}.bin`);
        const stats = await write(path, parts);
        const onDisk = fs.lstatSync(path, { bigint: true });
        // Read whole: the test's own file of at most 300 KiB in its temp dir, never a user's.
        assert.ok((await readFile(path)).equals(Buffer.concat(parts)), label);
        assert.equal(stats.size, onDisk.size, label);
        assert.equal(stats.ino, onDisk.ino, label);
        assert.equal(stats.mtimeNs, onDisk.mtimeNs, label);
        assert.equal(stats.mtimeMs, onDisk.mtimeMs, label);
        assert.equal(stats.isFile(), true, label);
        // 'wx' as node:fs makes it: 0666 less the umask.
        assert.equal(Number(onDisk.mode) & 0o777, 0o666 & ~process.umask(), label);
      }
    });
  });

  test(`durableWrite (${name}): into a descriptor created earlier, which it closes`, async (t) => {
    const write = pick(t);
    if (!write) return;
    await inDir(async (dir) => {
      const path = join(dir, 'early.bin');
      const fd = fs.openSync(path, 'wx');
      const stats = await write(fd, chunks('early ', 'bytes'));
      assert.equal(closed(fd), true);
      // Read whole, as below: the test's own few bytes in its temp dir.
      assert.equal(await readFile(path, 'utf8'), 'early bytes');
      assert.equal(stats.ino, fs.lstatSync(path, { bigint: true }).ino);
    });
  });

  test(`durableWrite (${name}): failures are node:fs's errors, the existing file is untouched, the descriptor closed`, async (t) => {
    const write = pick(t);
    if (!write) return;
    await inDir(async (dir) => {
      const there = join(dir, 'there.bin');
      await writeFile(there, 'kept');
      await assert.rejects(write(there, chunks('over')), (e: NodeJS.ErrnoException) => e.code === 'EEXIST' && e.syscall === 'open' && e.path === there);
      assert.equal(await readFile(there, 'utf8'), 'kept');
      const missing = join(dir, 'no-such-folder', 'x.bin');
      await assert.rejects(write(missing, chunks('x')), (e: NodeJS.ErrnoException) => e.code === 'ENOENT' && e.syscall === 'open');
      // /dev/full takes no byte: the write fails with ENOSPC and the descriptor is closed.
      const full = fs.openSync('/dev/full', 'w');
      await assert.rejects(write(full, [Buffer.alloc(4096)]), (e: NodeJS.ErrnoException) => e.code === 'ENOSPC' && e.syscall === 'write');
      assert.equal(closed(full), true);
    });
  });
}

test('durableWrite (native): wrong arguments are a TypeError before anything is opened', (t) => {
  const loaded = nativeOrSkip(t);
  if (!loaded) return;
  const native = loaded as unknown as { durableWrite(...args: unknown[]): void };
  const done = () => assert.fail('no callback for a refused call');
  for (const args of [[], ['/tmp/x', 'not an array', done], ['/tmp/x', ['text'], done], [{}, [], done], [-1, [], done], ['/tmp/a\0b', [], done], ['/tmp/x', [], 'not a function']]) {
    assert.throws(() => native.durableWrite(...args), TypeError, JSON.stringify(args));
  }
});

test('renameNoReplace (native): the name only while free, the staging name gone in the same step; EEXIST leaves both', async (t) => {
  const loaded = nativeOrSkip(t);
  if (!loaded) return;
  const move = nativeRenameNoReplace(loaded);
  await inDir(async (dir) => {
    const from = join(dir, 'staged');
    await writeFile(from, 'new');
    const ino = fs.lstatSync(from).ino;
    assert.equal(move(from, join(dir, 'free')), true);
    assert.equal(fs.existsSync(from), false);
    assert.equal(fs.lstatSync(join(dir, 'free')).ino, ino);
    await writeFile(from, 'again');
    fs.mkdirSync(join(dir, 'folder'));
    for (const taken of ['free', 'folder']) {
      assert.throws(() => move(from, join(dir, taken)), (e: NodeJS.ErrnoException) => e.code === 'EEXIST' && e.syscall === 'rename' && e.path === from && (e as { dest?: string }).dest === join(dir, taken), taken);
      assert.equal(await readFile(from, 'utf8'), 'again', taken);
    }
    assert.equal(await readFile(join(dir, 'free'), 'utf8'), 'new');
    assert.throws(() => move(join(dir, 'missing'), join(dir, 'other')), (e: NodeJS.ErrnoException) => e.code === 'ENOENT');
  });
  const native = loaded as unknown as { renameNoReplaceSync(...args: unknown[]): void };
  for (const args of [[], ['/tmp/a'], ['/tmp/a', 1], ['/tmp/a\0b', '/tmp/c'], [{}, '/tmp/b']]) {
    assert.throws(() => native.renameNoReplaceSync(...args), TypeError, JSON.stringify(args));
  }
});

/** A stand-in for the native module whose calls fail the test, but the ones given. */
const nativeWith = <T extends object>(calls: T) => ({
  durableWrite: () => assert.fail('not used'),
  renameNoReplaceSync: () => assert.fail('not used'),
  openNoLinksSync: (): number => assert.fail('not used'),
  ...calls,
});

test('renameNoReplace: a file system without it (EINVAL) answers false, and is not asked again', () => {
  let asked = 0;
  const without = nativeWith({
    renameNoReplaceSync: () => {
      asked++;
      throw Object.assign(new Error('EINVAL: invalid argument, rename'), { code: 'EINVAL' });
    },
  });
  const move = nativeRenameNoReplace(without);
  assert.equal(move('/a', '/b'), false);
  assert.equal(move('/a', '/b'), false);
  assert.equal(asked, 1);
  assert.equal(noRenameNoReplace('/a', '/b'), false);
});

test('openNoLinks (native): a path without links opens; a link in any component, a missing name or a file on the way does not', async (t) => {
  const loaded = nativeOrSkip(t);
  if (!loaded) return;
  const open = nativeOpenNoLinks(loaded);
  await inDir(async (dir0) => {
    // The kernel refuses a link anywhere in the path, so the test's own folder must be real.
    const dir = fs.realpathSync(dir0);
    fs.mkdirSync(join(dir, 'a/b'), { recursive: true });
    await writeFile(join(dir, 'a/b/file'), 'bytes');
    fs.symlinkSync('b', join(dir, 'a/link-to-b'));
    fs.symlinkSync('file', join(dir, 'a/b/link-to-file'));
    fs.symlinkSync(join(dir, 'a'), join(dir, 'absolute-to-a'));
    const fd = open(join(dir, 'a/b/file'));
    assert.equal(typeof fd, 'number');
    try {
      assert.equal(fs.fstatSync(fd as number).ino, fs.statSync(join(dir, 'a/b/file')).ino);
      const got = Buffer.alloc(16);
      assert.equal(got.toString('utf8', 0, fs.readSync(fd as number, got, 0, got.length, 0)), 'bytes');
    } finally {
      fs.closeSync(fd as number);
    }
    const folder = open(join(dir, 'a/b'));
    assert.equal(typeof folder, 'number', 'a folder opens too: the reader then sees a folder');
    fs.closeSync(folder as number);
    for (const path of ['a/link-to-b/file', 'a/b/link-to-file', 'absolute-to-a/b/file', 'a/b/missing', 'a/b/file/below', 'a/missing/file']) {
      assert.equal(open(join(dir, path)), undefined, path);
    }
    // Still asked after a refusal of the path (not of the call).
    const again = open(join(dir, 'a/b/file'));
    assert.equal(typeof again, 'number');
    fs.closeSync(again as number);
  });
  const native = loaded as unknown as { openNoLinksSync(...args: unknown[]): number };
  for (const args of [[], [1], [{}], ['/tmp/a\0b']]) {
    assert.throws(() => native.openNoLinksSync(...args), TypeError, JSON.stringify(args));
  }
});

test('openNoLinks: where openat2 is refused as a call (ENOSYS, EPERM, EINVAL) it is not asked again; a refused path is', () => {
  for (const errno of ['ENOSYS', 'EPERM', 'EINVAL'] as const) {
    let asked = 0;
    const without = nativeWith({
      openNoLinksSync: () => {
        asked++;
        return -os.constants.errno[errno];
      },
    });
    const open = nativeOpenNoLinks(without);
    assert.equal(open('/a'), undefined);
    assert.equal(open('/a'), undefined);
    assert.equal(asked, 1, errno);
  }
  let asked = 0;
  const loops = nativeWith({ openNoLinksSync: () => (asked++, -os.constants.errno.ELOOP) });
  const open = nativeOpenNoLinks(loops);
  assert.equal(open('/a'), undefined);
  assert.equal(open('/a'), undefined);
  assert.equal(asked, 2);
  assert.equal(noOpenNoLinks('/a'), undefined);
});
