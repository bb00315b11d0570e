import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, open, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { setImmediate } from 'node:timers/promises';
import { stream } from './write.js';

const CHUNK = 64 * 1024;

/** A body in chunks of 64 KiB, each after a turn of the event loop, as a network body's come (`paced`), or at once. */
async function* chunks(bytes: Buffer, paced = false): AsyncGenerator<Buffer> {
  for (let at = 0; at < bytes.length; at += CHUNK) {
    if (paced) await setImmediate();
    yield bytes.subarray(at, at + CHUNK);
  }
}

test('stream: the head and the rest land in order, each chunk handed back only once its write returned', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'fc-write-'));
  try {
    const bytes = randomBytes(40 * CHUNK + 123);
    const head = [bytes.subarray(0, CHUNK), bytes.subarray(CHUNK, 2 * CHUNK)];
    const handle = await open(join(dir, 'staged'), 'wx');
    const back: Buffer[] = [];
    let received = 2 * CHUNK;
    try {
      const { writeError } = await stream(handle, head, chunks(bytes.subarray(2 * CHUNK)), (c) => ((received += c.length), c as Buffer), () => received, (c) => back.push(c));
      assert.equal(writeError, undefined);
    } finally {
      await handle.close().catch(() => undefined);
    }
    // Read whole: the test's own 2.6 MiB staging file in its temp dir, never a user's file.
    assert.ok((await readFile(join(dir, 'staged'))).equals(bytes));
    assert.equal(back.length, 2 + Math.ceil((bytes.length - 2 * CHUNK) / CHUNK), 'every chunk handed back once');
    assert.ok(Buffer.concat(back).equals(bytes), 'in the order written');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

// /dev/full fails every write with ENOSPC. The write stream is `errored` (and destroyed) from the
// failed write on, but emits 'error' only once its file is closed; a chunk written in between
// fails at once. That failure is the disk's (507 disk_full), never the body's (400 aborted): a CI
// run once answered a disk-full upload 400 this way.
// Skipped only off Linux, saying so: /dev/full is Linux's device.
test('stream: a full disk is the write side\'s error, however soon the next write comes after it', { skip: process.platform !== 'linux' ? 'needs /dev/full, a Linux device' : false }, async () => {
  for (let round = 0; round < 20; round++) {
    const handle = await open('/dev/full', 'w');
    let received = 0;
    try {
      const { writeError } = await stream(handle, [], chunks(randomBytes(64 * CHUNK), round % 2 === 0), (c) => ((received += c.length), c as Buffer), () => received);
      assert.equal((writeError as NodeJS.ErrnoException | undefined)?.code, 'ENOSPC', `round ${round}`);
    } finally {
      await handle.close().catch(() => undefined);
    }
  }
});
