import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { AppError } from '../domain/errors.js';
import type { StorageKey } from '../domain/storage-path.js';
import { StreamedWrite } from './handles.js';

const key: StorageKey = { user: 'alice', segments: ['f.bin'] };

/** A streamed write whose upload collects the body; `got` resolves with every byte it read. */
function collecting(): { w: StreamedWrite; got: Promise<Buffer> } {
  let got!: Promise<Buffer>;
  const w = new StreamedWrite(key, (body) => {
    got = collect(body);
    return got.then(() => undefined);
  });
  return { w, got };
}

async function collect(body: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of body) parts.push(c as Buffer);
  return Buffer.concat(parts);
}

const refused = (code: string) => (e: unknown) => e instanceof AppError && e.code === code;

test('StreamedWrite: writes in order, ahead of the next offset, and holes become the file in order (holes are zeros)', async () => {
  const { w, got } = collecting();
  await w.write(0, Buffer.from('abc'));
  await w.write(6, Buffer.from('ghi'));
  await w.write(3, Buffer.from('def'));
  await w.write(12, Buffer.from('mn'));
  assert.equal(w.size, 14);
  await w.truncate(16);
  await w.finish();
  assert.deepEqual(await got, Buffer.concat([Buffer.from('abcdefghi'), Buffer.alloc(3), Buffer.from('mn'), Buffer.alloc(2)]));
});

test('StreamedWrite: a write behind what was sent, or a truncation below the size, is refused and gives the upload up', async () => {
  for (const backwards of [(w: StreamedWrite) => w.write(2, Buffer.from('X')), (w: StreamedWrite) => w.truncate(3)]) {
    const { w, got } = collecting();
    await w.write(0, Buffer.from('abcdef'));
    await w.truncate(6);
    await assert.rejects(backwards(w), refused('method_not_allowed'));
    await assert.rejects(w.write(6, Buffer.from('g')), refused('method_not_allowed'));
    await assert.rejects(w.finish(), refused('method_not_allowed'));
    await assert.rejects(got, refused('method_not_allowed'), 'the upload saw its body fail');
  }
});

test('StreamedWrite: more held ahead than its bound is sent after zeros, and a later write into that hole is refused', async () => {
  const { w, got } = collecting();
  const far = Buffer.alloc(3 * 1024 * 1024, 9);
  await w.write(10, far);
  await w.finish();
  assert.deepEqual(await got, Buffer.concat([Buffer.alloc(10), far]));
  const late = collecting();
  await late.w.write(10, far);
  await assert.rejects(late.w.write(0, Buffer.from('late')), refused('method_not_allowed'));
  await assert.rejects(late.got);
});

test('StreamedWrite: a WRITE waits while the upload has not taken the body (memory bounded), and goes on when it reads', async () => {
  let release!: () => void;
  const reading = new Promise<void>((resolve) => (release = resolve));
  let got!: Promise<Buffer>;
  const w = new StreamedWrite(key, async (body) => {
    await reading;
    got = collect(body);
    await got;
  });
  const chunk = Buffer.alloc(256 * 1024, 1);
  let written = 0;
  const writes = (async () => {
    for (let i = 0; i < 16; i++) {
      await w.write(i * chunk.length, chunk);
      written++;
    }
  })();
  await sleep(200);
  assert.ok(written < 16, `all 16 writes (4 MiB) were answered with nothing read: ${written}`);
  release();
  await writes;
  await w.finish();
  assert.equal((await got).length, 16 * chunk.length);
});

test('StreamedWrite: a failed upload fails the next write and the close; an abort fails the upload', async () => {
  const failing = new StreamedWrite(key, async (body) => {
    body.read();
    throw new AppError('quota_exceeded', 'no room');
  });
  await sleep(10);
  await assert.rejects(failing.write(0, Buffer.from('x')), refused('quota_exceeded'));
  await assert.rejects(failing.finish(), refused('quota_exceeded'));

  let seen: unknown;
  const aborted = new StreamedWrite(key, (body) =>
    collect(body).then(
      () => undefined,
      (e: unknown) => {
        seen = e;
        throw e;
      },
    ),
  );
  await aborted.write(0, Buffer.from('partial'));
  await aborted.abort();
  assert.ok(seen instanceof Error, 'the upload saw the body fail');
});
