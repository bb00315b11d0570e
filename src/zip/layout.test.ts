import assert from 'node:assert/strict';
import { test } from 'node:test';
import { centralHeader, comparePaths, dataDescriptor, dosDateTime, layoutZip, localHeader, MAX32, unixSeconds, zipEtag, type ZipSourceEntry } from './layout.js';

const T = new Date('2024-05-06T07:08:09.500Z');
const file = (path: string, size: number, validator = `"v-${path}"`): ZipSourceEntry => ({ path: path.split('/'), isFolder: false, size, modified: T, validator });
const folder = (path: string): ZipSourceEntry => ({ path: path === '' ? [] : path.split('/'), isFolder: true, size: 0, modified: T, validator: '' });

// Fixed parts: local header 30 + name + 9 (time extra); descriptor 16; central 46 + name + 9; end 22.
const L = (name: string, zip64 = false) => 30 + Buffer.byteLength(name) + 9 + (zip64 ? 20 : 0);
const C = (name: string, fields = 0) => 46 + Buffer.byteLength(name) + 9 + (fields ? 4 + 8 * fields : 0);

test('layout: sizes and offsets of a small tree', () => {
  const layout = layoutZip('r', [file('a.txt', 5), folder(''), folder('d'), file('d/é', 0)]);
  const names = layout.entries.map((e) => e.name.toString('utf8'));
  assert.deepEqual(names, ['r/', 'r/a.txt', 'r/d/', 'r/d/é']);
  const [root, a, d, e] = layout.entries;
  assert.ok(root && a && d && e);
  assert.deepEqual([root.local, root.dataStart, root.end], [0, L('r/'), L('r/')]);
  assert.equal(a.local, root.end);
  assert.equal(a.dataStart, a.local + L('r/a.txt'));
  assert.equal(a.dataEnd, a.dataStart + 5);
  assert.equal(a.end, a.dataEnd + 16, 'a 16-byte data descriptor follows a file');
  assert.equal(d.end, d.local + L('r/d/'), 'a folder has no data and no descriptor');
  assert.equal(e.dataEnd, e.dataStart, 'a zero-byte file');
  assert.equal(e.end, e.dataEnd + 16);
  assert.equal(layout.centralStart, e.end);
  assert.equal(layout.centralEnd - layout.centralStart, C('r/') + C('r/a.txt') + C('r/d/') + C('r/d/é'));
  assert.equal(layout.size, layout.centralEnd + 22);
  assert.equal(layout.zip64End, false);
  assert.equal(localHeader(a).length, a.dataStart - a.local);
  assert.equal(centralHeader(a, 1).length, a.centralEnd - a.central);
});

test('layout: header fields (UTF-8 flag, bit 3, stored, attributes)', () => {
  const layout = layoutZip('r', [folder(''), file('日本/😀.txt', 3), folder('日本')]);
  for (const e of layout.entries) {
    const lh = localHeader(e);
    const ch = centralHeader(e, 0xdeadbeef);
    assert.equal(lh.readUInt32LE(0), 0x04034b50);
    assert.equal(ch.readUInt32LE(0), 0x02014b50);
    const flags = lh.readUInt16LE(6);
    assert.equal(flags & 0x0800, 0x0800, 'UTF-8 flag on every entry');
    assert.equal(flags & 0x0008, e.source.isFolder ? 0 : 0x0008, 'data descriptor only for files');
    assert.equal(ch.readUInt16LE(8), flags, 'central flags = local flags');
    assert.equal(lh.readUInt16LE(8), 0, 'stored');
    assert.equal(lh.readUInt32LE(14), 0, 'no CRC in the local header');
    assert.equal(ch.readUInt32LE(16), e.source.isFolder ? 0xdeadbeef : 0xdeadbeef);
    assert.equal(lh.subarray(30, 30 + e.name.length).toString('utf8'), e.name.toString('utf8'));
    assert.equal(ch.readUInt32LE(42), e.local);
    const mode = ch.readUInt32LE(38) >>> 16;
    assert.equal(mode, e.source.isFolder ? 0o040755 : 0o100644);
  }
  assert.deepEqual(
    layout.entries.map((e) => e.name.toString()),
    ['r/', 'r/日本/', 'r/日本/😀.txt'],
  );
});

test('layout: the data descriptor holds the CRC and sizes', () => {
  const [e] = layoutZip('r', [file('x', 1234)]).entries;
  assert.ok(e);
  const d = dataDescriptor(e, 0x01020304);
  assert.deepEqual([d.readUInt32LE(0), d.readUInt32LE(4), d.readUInt32LE(8), d.readUInt32LE(12)], [0x08074b50, 0x01020304, 1234, 1234]);
});

const big = 2 ** 32; // 4 GiB
test('layout: ZIP64 thresholds', async (t) => {
  const cases: { name: string; files: ZipSourceEntry[]; zip64Sizes: boolean[]; zip64Offsets: boolean[]; zip64End: boolean }[] = [
    { name: 'small', files: [file('a', 10)], zip64Sizes: [false], zip64Offsets: [false], zip64End: false },
    // The central directory then starts past 0xFFFFFFFF: the end record needs ZIP64, the entry does not.
    { name: 'size just below 0xFFFFFFFF', files: [file('a', MAX32 - 1)], zip64Sizes: [false], zip64Offsets: [false], zip64End: true },
    { name: 'archive just below 4 GiB', files: [file('a', MAX32 - 200)], zip64Sizes: [false], zip64Offsets: [false], zip64End: false },
    { name: 'size 0xFFFFFFFF', files: [file('a', MAX32)], zip64Sizes: [true], zip64Offsets: [false], zip64End: true },
    { name: 'size 5 GiB', files: [file('a', big + 2 ** 30)], zip64Sizes: [true], zip64Offsets: [false], zip64End: true },
    { name: 'two 2.5 GiB files: the second starts below 4 GiB', files: [file('a', 2.5 * 2 ** 30), file('b', 2.5 * 2 ** 30)], zip64Sizes: [false, false], zip64Offsets: [false, false], zip64End: true },
    { name: 'three 2 GiB files: the third starts past 4 GiB', files: [file('a', 2 ** 31), file('b', 2 ** 31), file('c', 2 ** 31)], zip64Sizes: [false, false, false], zip64Offsets: [false, false, true], zip64End: true },
  ];
  for (const c of cases) {
    await t.test(c.name, () => {
      const layout = layoutZip('r', c.files);
      assert.deepEqual(layout.entries.map((e) => e.zip64Size), c.zip64Sizes);
      assert.deepEqual(layout.entries.map((e) => e.zip64Offset), c.zip64Offsets);
      assert.equal(layout.zip64End, c.zip64End);
      assert.equal(layout.endRecords.length, c.zip64End ? 56 + 20 + 22 : 22);
      for (const e of layout.entries) {
        assert.equal(e.end - e.dataEnd, e.zip64Size ? 24 : 16);
        const ch = centralHeader(e, 0);
        const fields = (e.zip64Size ? 2 : 0) + (e.zip64Offset ? 1 : 0);
        assert.equal(ch.length, C(e.name.toString(), fields));
        assert.equal(ch.readUInt32LE(20), e.zip64Size ? MAX32 : e.dataEnd - e.dataStart);
        assert.equal(ch.readUInt32LE(42), e.zip64Offset ? MAX32 : e.local);
        assert.equal(ch.readUInt16LE(6), fields ? 45 : 20);
        if (fields) {
          const at = 46 + e.name.length + 9;
          assert.equal(ch.readUInt16LE(at), 1);
          let v = at + 4;
          if (e.zip64Size) {
            assert.equal(Number(ch.readBigUInt64LE(v)), e.dataEnd - e.dataStart);
            v += 16;
          }
          if (e.zip64Offset) assert.equal(Number(ch.readBigUInt64LE(v)), e.local);
        }
        assert.equal(localHeader(e).length, e.dataStart - e.local);
      }
      const end = layout.endRecords.subarray(layout.endRecords.length - 22);
      assert.equal(end.readUInt32LE(0), 0x06054b50);
      if (layout.zip64End) {
        const z = layout.endRecords;
        assert.equal(z.readUInt32LE(0), 0x06064b50);
        assert.equal(Number(z.readBigUInt64LE(32)), layout.entries.length);
        assert.equal(Number(z.readBigUInt64LE(40)), layout.centralEnd - layout.centralStart);
        assert.equal(Number(z.readBigUInt64LE(48)), layout.centralStart);
        assert.equal(z.readUInt32LE(56), 0x07064b50);
        assert.equal(Number(z.readBigUInt64LE(64)), layout.centralEnd, 'the locator points at the ZIP64 end record');
      } else {
        assert.equal(end.readUInt16LE(10), layout.entries.length);
        assert.equal(end.readUInt32LE(12), layout.centralEnd - layout.centralStart);
        assert.equal(end.readUInt32LE(16), layout.centralStart);
      }
    });
  }
});

test('layout: 65 534 entries fit the classic end record, 65 535 need ZIP64', () => {
  const many = (n: number) => Array.from({ length: n }, (_, i) => file(`f${i}`, 0));
  const below = layoutZip('r', many(65_534));
  assert.equal(below.zip64End, false);
  assert.equal(below.endRecords.readUInt16LE(10), 65_534);
  const at = layoutZip('r', many(65_535));
  assert.equal(at.zip64End, true, '0xFFFF in the count field means "see ZIP64"');
  assert.equal(at.endRecords.readUInt16LE(56 + 20 + 10), 0xffff);
});

test('dosDateTime: UTC fields, 2-second steps, clamped to 1980…2107', () => {
  const cases: [string, number, number][] = [
    // [iso, date, time]
    ['2024-05-06T07:08:09.500Z', ((2024 - 1980) << 9) | (5 << 5) | 6, (7 << 11) | (8 << 5) | 4],
    ['1980-01-01T00:00:00Z', (0 << 9) | (1 << 5) | 1, 0],
    ['1970-01-01T00:00:00Z', (1 << 5) | 1, 0],
    ['2107-12-31T23:59:59Z', (127 << 9) | (12 << 5) | 31, (23 << 11) | (59 << 5) | 29],
    ['2200-01-01T00:00:00Z', (127 << 9) | (12 << 5) | 31, (23 << 11) | (59 << 5) | 29],
    ['2000-02-29T12:30:58Z', (20 << 9) | (2 << 5) | 29, (12 << 11) | (30 << 5) | 29],
  ];
  for (const [iso, date, time] of cases) assert.deepEqual(dosDateTime(new Date(iso)), { date, time }, iso);
  assert.deepEqual(dosDateTime(new Date(NaN)), { date: (1 << 5) | 1, time: 0 });
});

test('unixSeconds: whole seconds within the signed 32-bit field', () => {
  assert.equal(unixSeconds(new Date(1500)), 1);
  assert.equal(unixSeconds(new Date(-5000)), 0);
  assert.equal(unixSeconds(new Date(2 ** 33 * 1000)), 0x7fffffff);
});

test('comparePaths: segment order, a folder before its contents', () => {
  const paths = [['b'], ['a', 'z'], ['a'], [], ['a b'], ['a', 'b'], ['A']];
  assert.deepEqual(
    [...paths].sort(comparePaths).map((p) => p.join('/')),
    ['', 'A', 'a', 'a/b', 'a/z', 'a b', 'b'],
  );
});

test('layout: the same tree in any order gives the same layout and ETag; any change changes the ETag', () => {
  const tree = [folder(''), folder('x'), file('x/1', 3), file('2', 4), folder('y')];
  const a = layoutZip('n', tree);
  const b = layoutZip('n', [...tree].reverse());
  assert.deepEqual(a.entries.map((e) => [e.name.toString(), e.local, e.central]), b.entries.map((e) => [e.name.toString(), e.local, e.central]));
  assert.equal(zipEtag(a), zipEtag(b));
  assert.match(zipEtag(a), /^"z-[A-Za-z0-9_-]+"$/);
  const variants = [
    layoutZip('m', tree),
    layoutZip('n', tree.map((e) => (e.path.join('/') === 'x/1' ? { ...e, size: 5 } : e))),
    layoutZip('n', tree.map((e) => (e.path.join('/') === 'x/1' ? { ...e, validator: '"other"' } : e))),
    layoutZip('n', tree.map((e) => (e.path.join('/') === 'x/1' ? { ...e, modified: new Date(0) } : e))),
    layoutZip('n', tree.filter((e) => e.path.join('/') !== 'y')),
  ];
  for (const v of variants) assert.notEqual(zipEtag(v), zipEtag(a));
});

test('layout: a duplicate path is a bug, not an archive', () => {
  assert.throws(() => layoutZip('r', [file('a', 1), file('a', 2)]), /duplicate/);
});
