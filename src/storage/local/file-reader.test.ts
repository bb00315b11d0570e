import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { openSync } from 'node:fs';
import { mkdtemp, readdir, readlink, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { FileReader, READ_CHUNK } from './file-reader.js';

async function withFile(bytes: Buffer, fn: (path: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'file-reader-'));
  try {
    const path = join(dir, 'f.bin');
    await writeFile(path, bytes);
    await fn(path);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function openFds(path: string): Promise<number> {
  const fds = await readdir('/proc/self/fd');
  const targets = await Promise.all(fds.map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => '')));
  return targets.filter((t) => t === path).length;
}

test('FileReader: exactly the bytes asked for, read into the buffers handed back', async () => {
  const bytes = randomBytes(3 * READ_CHUNK + 12_345);
  await withFile(bytes, async (path) => {
    const start = 1000;
    const end = bytes.length - 7;
    const reader = new FileReader(openSync(path, 'r'), start, end);
    const parts: Buffer[] = [];
    const seen = new Set<ArrayBufferLike>();
    for await (const chunk of reader as AsyncIterable<Buffer>) {
      parts.push(Buffer.from(chunk)); // a copy: the chunk's buffer is read into again
      seen.add(chunk.buffer);
      reader.recycle(chunk);
    }
    assert.deepEqual(Buffer.concat(parts), bytes.subarray(start, end + 1));
    // Each chunk was handed back: two buffers served every read (one with the consumer, one read ahead).
    assert.equal(seen.size, 2);
    assert.equal(await openFds(path), 0, 'the descriptor is closed at the end');
  });
});

test('FileReader: destroyed during a read, it closes the descriptor once the read is back', async () => {
  await withFile(randomBytes(4 * READ_CHUNK), async (path) => {
    const reader = new FileReader(openSync(path, 'r'), 0, 4 * READ_CHUNK - 1);
    reader.once('data', () => reader.destroy());
    await new Promise((resolve) => reader.once('close', resolve));
    assert.equal(await openFds(path), 0);
  });
});
