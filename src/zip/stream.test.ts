import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { test } from 'node:test';
import { crc32 } from 'node:zlib';
import { layoutZip, type ZipEntry, type ZipSourceEntry } from './layout.js';
import { TreeChangedError, zipBytes, type CrcCache, type ZipIO, type ZipRange } from './stream.js';

const T = new Date('2023-01-02T03:04:05Z');
const contents = new Map<string, Buffer>([
  ['a.bin', Buffer.from('hello, zip')],
  ['d/b.bin', Buffer.alloc(70_000, 7)],
  ['d/empty', Buffer.alloc(0)],
  ['z', Buffer.from('last')],
]);
const sources: ZipSourceEntry[] = [
  { path: [], isFolder: true, size: 0, modified: T, validator: '' },
  { path: ['d'], isFolder: true, size: 0, modified: T, validator: '' },
  { path: ['e'], isFolder: true, size: 0, modified: T, validator: '' },
  ...[...contents].map(([p, b]) => ({ path: p.split('/'), isFolder: false, size: b.length, modified: T, validator: `"${p}"` })),
];
const layout = layoutZip('root', sources);

/** In-memory files, recording every read, in 4 KiB chunks. */
function memoryIO(opts: { cache?: Map<string, number>; change?: string } = {}): ZipIO & { reads: string[]; openNow: string[] } {
  const reads: string[] = [];
  const openNow: string[] = [];
  const cache = opts.cache;
  const crcs: CrcCache | undefined = cache && {
    getMany: async (keys) => new Map(keys.flatMap((k) => (cache.has(k) ? [[k, cache.get(k) as number]] : []))),
    putMany: async (rows) => void rows.forEach((r) => cache.set(r.key, r.crc)),
  };
  return {
    reads,
    openNow,
    crcKey: (e: ZipEntry) => e.source.validator,
    crcs,
    open: async (e: ZipEntry, r: ZipRange) => {
      const p = e.source.path.join('/');
      if (p === opts.change) throw new TreeChangedError('changed');
      reads.push(`${p}:${r.start}-${r.end}`);
      const b = (contents.get(p) as Buffer).subarray(r.start, r.end + 1);
      const chunks: Buffer[] = [];
      for (let i = 0; i < b.length; i += 4096) chunks.push(b.subarray(i, i + 4096));
      const stream = Readable.from(chunks);
      openNow.push(p);
      stream.on('close', () => openNow.splice(openNow.indexOf(p), 1));
      return stream;
    },
  };
}

async function collect(range: ZipRange, io: ZipIO): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const b of zipBytes(layout, range, io)) parts.push(b);
  return Buffer.concat(parts);
}

const full = { start: 0, end: layout.size - 1 };

test('zipBytes: the whole archive has every file, descriptor and central CRC', async () => {
  const io = memoryIO();
  const zip = await collect(full, io);
  assert.equal(zip.length, layout.size);
  for (const e of layout.entries) {
    if (e.source.isFolder) continue;
    const data = contents.get(e.source.path.join('/')) as Buffer;
    assert.ok(zip.subarray(e.dataStart, e.dataEnd).equals(data));
    assert.equal(zip.readUInt32LE(e.dataEnd + 4), crc32(data), 'descriptor CRC');
    assert.equal(zip.readUInt32LE(e.central + 16), crc32(data), 'central CRC');
  }
  assert.deepEqual(io.reads.sort(), ['a.bin:0-9', 'd/b.bin:0-69999', 'z:0-3'], 'each file read once, a zero-byte file not at all');
});

test('zipBytes: every range equals the same slice of the whole, with or without a CRC cache', async () => {
  const zip = await collect(full, memoryIO());
  const b = layout.entries.find((e) => e.source.path.join('/') === 'd/b.bin') as ZipEntry;
  const points = [0, 1, 30, b.local, b.dataStart, b.dataStart + 1, b.dataStart + 40_000, b.dataEnd - 1, b.dataEnd, b.dataEnd + 3, b.end, layout.centralStart, layout.centralStart + 50, layout.centralEnd, layout.size - 1];
  const cache = new Map<string, number>();
  await collect(full, memoryIO({ cache }));
  assert.equal(cache.size, 3, 'the whole answer fills the cache');
  for (const start of points) {
    for (const end of points) {
      if (end < start) continue;
      for (const io of [memoryIO(), memoryIO({ cache: new Map(cache) })]) {
        const got = await collect({ start, end }, io);
        assert.ok(got.equals(zip.subarray(start, end + 1)), `bytes ${start}-${end}`);
      }
    }
  }
});

test('zipBytes: a late start reads only what it sends when CRCs are cached, and the skipped prefix when not', async () => {
  const b = layout.entries.find((e) => e.source.path.join('/') === 'd/b.bin') as ZipEntry;
  const range = { start: b.dataStart + 40_000, end: layout.size - 1 };
  const cache = new Map<string, number>();
  await collect(full, memoryIO({ cache }));
  const warm = memoryIO({ cache });
  await collect(range, warm);
  assert.deepEqual(warm.reads, ['d/b.bin:40000-69999', 'z:0-3']);
  const cold = memoryIO({ cache: new Map() });
  await collect(range, cold);
  assert.deepEqual(cold.reads, ['d/b.bin:0-69999', 'z:0-3', 'a.bin:0-9'], 'the prefix for its descriptor; a.bin for its central header');
  const onlyCentral = memoryIO({ cache });
  await collect({ start: layout.centralStart, end: layout.size - 1 }, onlyCentral);
  assert.deepEqual(onlyCentral.reads, [], 'the central directory from cached CRCs reads no file');
});

test('zipBytes: a file that changed fails the stream', async () => {
  await assert.rejects(collect(full, memoryIO({ change: 'z' })), TreeChangedError);
});

test('zipBytes: a file shorter than laid out fails the stream', async () => {
  const io = memoryIO();
  const short: ZipIO = { ...io, open: async () => Readable.from([Buffer.from('x')]) };
  await assert.rejects(collect(full, short), TreeChangedError);
});

test('zipBytes: a consumer that stops early leaves no file open, the one read ahead included', async () => {
  const io = memoryIO();
  const b = layout.entries.find((e) => e.source.path.join('/') === 'd/b.bin') as ZipEntry;
  const gen = zipBytes(layout, full, io);
  let sent = 0;
  for await (const chunk of gen) {
    sent += chunk.length;
    if (sent > b.dataStart + 10_000) break;
  }
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(io.openNow, []);
  assert.ok(io.reads.includes('d/b.bin:0-69999') && io.reads.includes('z:0-3'), 'the next file was opened ahead');
});
