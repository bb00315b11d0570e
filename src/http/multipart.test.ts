import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createServer, request, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { setImmediate as tick } from 'node:timers/promises';
import { AppError, type ErrorCode } from '../domain/errors.js';
import { lastSegment, multipartFiles, type MultipartLimits } from './multipart.js';

const B = 'X-TEST-BOUNDARY-4f2a';
const formHeaders = { 'content-type': `multipart/form-data; boundary=${B}` };

type PartSpec = { name?: string; filename?: string; filenameStar?: string; type?: string; data?: string | Buffer };

function partHead(p: PartSpec): Buffer {
  let cd = 'form-data';
  if (p.name !== undefined) cd += `; name="${p.name}"`;
  if (p.filename !== undefined) cd += `; filename="${p.filename}"`;
  if (p.filenameStar !== undefined) cd += `; filename*=${p.filenameStar}`;
  let head = `--${B}\r\nContent-Disposition: ${cd}\r\n`;
  if (p.type !== undefined) head += `Content-Type: ${p.type}\r\n`;
  return Buffer.from(`${head}\r\n`, 'utf8');
}

function multipartBody(parts: PartSpec[], { close = true } = {}): Buffer {
  const chunks: Buffer[] = [];
  for (const p of parts) chunks.push(partHead(p), Buffer.from(p.data ?? ''), Buffer.from('\r\n'));
  if (close) chunks.push(Buffer.from(`--${B}--\r\n`));
  return Buffer.concat(chunks);
}

/** A body delivered in chunks of `size` bytes, so boundaries and headers split across writes. */
function chunked(buf: Buffer, size: number): Readable {
  let at = 0;
  return new Readable({
    read() {
      this.push(at < buf.length ? buf.subarray(at, (at += size)) : null);
    },
  });
}

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

type Got = { fieldName: string; filename: string; mimeType: string; data: string };

async function collect(body: Readable, limits?: MultipartLimits, headers: Record<string, string> = formHeaders): Promise<Got[]> {
  const out: Got[] = [];
  for await (const p of multipartFiles(body, headers, limits)) {
    out.push({ fieldName: p.fieldName, filename: p.filename, mimeType: p.mimeType, data: (await readAll(p.stream)).toString('utf8') });
  }
  return out;
}

const isApp = (code: ErrorCode, message?: RegExp) => (e: unknown) => {
  assert.ok(e instanceof AppError, `expected an AppError, got ${String(e)}`);
  assert.equal(e.code, code);
  if (message) assert.match(e.message, message);
  return true;
};

const mixed: PartSpec[] = [
  { name: 'title', data: 'a plain field, skipped' },
  { name: 'f1', filename: 'hello.txt', type: 'text/plain', data: 'hello world' },
  { name: 'f2', filename: 'empty.bin', type: 'application/octet-stream', data: '' },
  { name: 'note', data: 'another field' },
  { name: 'f3', filename: '日本語 ファイル.txt', data: 'unicode name, raw UTF-8 in the header' },
  { name: 'f4', filenameStar: "UTF-8''r%C3%A9sum%C3%A9%20%281%29.pdf", data: 'RFC 5987 name' },
  // RFC 7578 §4.2 forbids filename* in forms; when a client sends both, busboy keeps the plain one.
  { name: 'f4b', filename: 'fallback.txt', filenameStar: "UTF-8''ignored.txt", data: 'both' },
  { name: 'f5', filename: 'C:\\Users\\me\\dir/odd "name".txt'.replace('"name"', '%22name%22'), data: 'path kept as sent' },
  { name: 'f6', filename: '..', data: 'a dangerous name is passed through for the service to refuse' },
  { name: 'f7', filename: '', data: 'an empty file input from a browser, skipped' },
  { filename: 'noname.txt', data: 'a file part without a field name' },
  { name: 'f8', filename: 'data.bin', type: 'application/octet-stream', data: '\r\n--X-TEST-BOUNDARY-4f2 not quite a boundary\r\n' },
];

const mixedWant: Got[] = [
  { fieldName: 'f1', filename: 'hello.txt', mimeType: 'text/plain', data: 'hello world' },
  { fieldName: 'f2', filename: 'empty.bin', mimeType: 'application/octet-stream', data: '' },
  { fieldName: 'f3', filename: '日本語 ファイル.txt', mimeType: 'text/plain', data: 'unicode name, raw UTF-8 in the header' },
  { fieldName: 'f4', filename: 'résumé (1).pdf', mimeType: 'text/plain', data: 'RFC 5987 name' },
  { fieldName: 'f4b', filename: 'fallback.txt', mimeType: 'text/plain', data: 'both' },
  { fieldName: 'f5', filename: 'C:\\Users\\me\\dir/odd %22name%22.txt', mimeType: 'text/plain', data: 'path kept as sent' },
  { fieldName: 'f6', filename: '..', mimeType: 'text/plain', data: 'a dangerous name is passed through for the service to refuse' },
  { fieldName: '', filename: 'noname.txt', mimeType: 'text/plain', data: 'a file part without a field name' },
  { fieldName: 'f8', filename: 'data.bin', mimeType: 'application/octet-stream', data: '\r\n--X-TEST-BOUNDARY-4f2 not quite a boundary\r\n' },
];

test('multipartFiles yields every file part in order, skipping fields, whatever the chunking', async () => {
  const body = multipartBody(mixed);
  for (const size of [1, 2, 3, 7, 64, 1000, 64 * 1024]) {
    assert.deepEqual(await collect(chunked(body, size)), mixedWant, `chunks of ${size}`);
  }
});

test('multipartFiles accepts a quoted boundary, extra parameters, a preamble and an epilogue', async () => {
  const body = Buffer.concat([Buffer.from('preamble text\r\n'), multipartBody(mixed.slice(0, 3)), Buffer.from('epilogue, ignored')]);
  const headers = { 'content-type': `Multipart/Form-Data; charset=utf-8; boundary="${B}"` };
  assert.deepEqual(await collect(chunked(body, 5), {}, headers), mixedWant.slice(0, 2));
});

test('a body with no file part yields nothing (the service answers 400)', async () => {
  assert.deepEqual(await collect(chunked(multipartBody([{ name: 'a', data: 'x' }]), 3)), []);
  assert.deepEqual(await collect(chunked(Buffer.from(`--${B}--\r\n`), 3)), []);
});

test('multipartFiles refuses a request that is not multipart/form-data with a boundary, before reading it', () => {
  const rows: (string | undefined)[] = [
    undefined,
    '',
    'application/octet-stream',
    'application/x-www-form-urlencoded',
    'multipart/mixed; boundary=abc',
    'multipart/form-datax; boundary=abc',
    'multipart/form-data',
    'multipart/form-data; boundary=',
    'multipart/form-data; boundary=""',
    'multipart/form-data; charset=utf-8',
  ];
  for (const ct of rows) {
    const body = chunked(Buffer.from('never read'), 4);
    const headers = ct === undefined ? {} : { 'content-type': ct };
    assert.throws(() => multipartFiles(body, headers), isApp('bad_request'), String(ct));
    assert.equal(body.readableDidRead, false, 'the body was left alone');
  }
});

test('a truncated body or a missing closing boundary is bad_request', async () => {
  const full = multipartBody(mixed.slice(1, 3));
  const cuts: [string, Buffer][] = [
    ['empty body', Buffer.alloc(0)],
    ['no boundary at all', Buffer.from('just some bytes that are not multipart')],
    ['cut inside part headers', full.subarray(0, 30)],
    ['cut inside file data', full.subarray(0, partHead(mixed[1]!).length + 4)],
    ['no closing boundary', multipartBody(mixed.slice(1, 3), { close: false })],
    ['closing boundary cut short', full.subarray(0, full.length - 6)],
  ];
  for (const [why, body] of cuts) {
    await assert.rejects(collect(chunked(body, 7)), isApp('bad_request'), why);
  }
});

test('the stream of a part cut short errors with the same AppError', async () => {
  const body = multipartBody([{ name: 'f', filename: 'big.bin', data: Buffer.alloc(300_000, 7) }]).subarray(0, 200_000);
  const gen = multipartFiles(chunked(body, 16 * 1024), formHeaders);
  const first = await gen.next();
  assert.ok(!first.done);
  await assert.rejects(readAll(first.value.stream), isApp('bad_request'));
  await assert.rejects(gen.next(), isApp('bad_request'));
});

test('too many parts is bad_request', async () => {
  const parts: PartSpec[] = Array.from({ length: 6 }, (_, i) => ({ name: `f${i}`, filename: `${i}.txt`, data: 'x' }));
  await assert.rejects(collect(chunked(multipartBody(parts), 100), { maxParts: 5 }), isApp('bad_request', /more than 5 parts/));
  assert.equal((await collect(chunked(multipartBody(parts.slice(0, 5)), 100), { maxParts: 5 })).length, 5);
  const fields: PartSpec[] = Array.from({ length: 6 }, (_, i) => ({ name: `n${i}`, data: 'x' }));
  await assert.rejects(collect(chunked(multipartBody(fields), 100), { maxParts: 5 }), isApp('bad_request'), 'fields count as parts');
});

test('a field larger than maxFieldBytes is bad_request; fields are never buffered', async () => {
  const body = (n: number) => multipartBody([{ name: 'big', data: 'y'.repeat(n) }, { name: 'f', filename: 'a.txt', data: 'ok' }]);
  await assert.rejects(collect(chunked(body(1001), 64), { maxFieldBytes: 1000 }), isApp('bad_request', /field/));
  assert.equal((await collect(chunked(body(1000), 64), { maxFieldBytes: 1000 })).length, 1);
});

test('a file larger than maxFileBytes is too_large, and its stream errors', async () => {
  const body = (n: number) => multipartBody([{ name: 'f', filename: 'a.bin', data: Buffer.alloc(n, 1) }]);
  assert.equal((await collect(chunked(body(10_000), 1000), { maxFileBytes: 10_000 }))[0]?.data.length, 10_000);
  await assert.rejects(collect(chunked(body(10_001), 1000), { maxFileBytes: 10_000 }), isApp('too_large'));
});

test('header lines past maxHeaderPairs are ignored, not an error', async () => {
  const extra = Array.from({ length: 50 }, (_, i) => `X-Extra-${i}: ${i}\r\n`).join('');
  const body = Buffer.from(`--${B}\r\nContent-Disposition: form-data; name="f"; filename="a.txt"\r\n${extra}\r\nhi\r\n--${B}--\r\n`);
  assert.deepEqual(await collect(chunked(body, 50), { maxHeaderPairs: 4 }), [{ fieldName: 'f', filename: 'a.txt', mimeType: 'text/plain', data: 'hi' }]);
});

test('a body that errors mid-part errors the part stream and the iteration with bad_request', async () => {
  const head = partHead({ name: 'f', filename: 'a.bin' });
  let sent = 0;
  // The body breaks only once the part is in the consumer's hands: how far a stream reads ahead
  // is Node's choice (the default highWaterMark grew from 16 to 64 KiB in Node 22, so a body that
  // broke after 50 KB broke before busboy had even named the part).
  const body = new Readable({
    read() {
      if (sent === 0) this.push(head);
      else if (sent < 5) this.push(Buffer.alloc(10_000, 2));
      sent++;
    },
  });
  const gen = multipartFiles(body, formHeaders);
  const first = await gen.next();
  assert.ok(!first.done);
  body.destroy(new Error('socket hang up'));
  await assert.rejects(readAll(first.value.stream), isApp('bad_request', /interrupted/));
  await assert.rejects(gen.next(), isApp('bad_request'));
});

test('a consumer may skip a part unread or stop early without hanging', async () => {
  const parts: PartSpec[] = [
    { name: 'a', filename: 'a.bin', data: Buffer.alloc(500_000, 1) },
    { name: 'b', filename: 'b.txt', data: 'second' },
    { name: 'c', filename: 'c.txt', data: 'third' },
  ];
  const names: string[] = [];
  let second = '';
  for await (const p of multipartFiles(chunked(multipartBody(parts), 8192), formHeaders)) {
    names.push(p.filename);
    if (p.filename === 'b.txt') second = (await readAll(p.stream)).toString();
  }
  assert.deepEqual(names, ['a.bin', 'b.txt', 'c.txt']);
  assert.equal(second, 'second');

  const body = chunked(multipartBody(parts), 8192);
  for await (const p of multipartFiles(body, formHeaders)) {
    assert.equal(p.filename, 'a.bin');
    break;
  }
  assert.ok(body.isPaused(), 'the rest of the body is left unread');
});

test('the consumer gets a service error out of the loop and the body stays unread', async () => {
  const body = chunked(multipartBody(mixed), 16);
  await assert.rejects(
    (async () => {
      for await (const p of multipartFiles(body, formHeaders)) {
        p.stream.resume();
        throw new AppError('invalid_name', `bad name ${p.filename}`);
      }
    })(),
    isApp('invalid_name'),
  );
  assert.equal(body.readableEnded, false);
});

test('lastSegment keeps only the last path segment, splitting on / and \\', () => {
  const rows: [string, string][] = [
    ['a.txt', 'a.txt'],
    ['dir/a.txt', 'a.txt'],
    ['C:\\Users\\me\\a.txt', 'a.txt'],
    ['mixed\\dir/and\\more/a.txt', 'a.txt'],
    ['dir/', ''],
    ['/', ''],
    ['', ''],
    ['..', '..'],
    ['a/..', '..'],
    ['日本/語.txt', '語.txt'],
    ['.bashrc', '.bashrc'],
  ];
  for (const [input, want] of rows) assert.equal(lastSegment(input), want, input);
});

/** A deterministic generated body: header, `size` bytes of pattern, closing boundary; never held whole. */
function generatedUpload(size: number, chunk = 64 * 1024) {
  const head = partHead({ name: 'f', filename: 'big.bin', type: 'application/octet-stream' });
  const tail = Buffer.from(`\r\n--${B}--\r\n`);
  const hash = createHash('sha256');
  const stats = { produced: 0 };
  let sent = 0;
  let started = false;
  const body = new Readable({
    highWaterMark: chunk,
    read() {
      if (!started) {
        started = true;
        this.push(head);
        return;
      }
      if (sent >= size) {
        if (sent !== Infinity) this.push(tail);
        sent = Infinity;
        this.push(null);
        return;
      }
      const n = Math.min(chunk, size - sent);
      const buf = Buffer.alloc(n);
      for (let i = 0; i < n; i += 4) buf.writeUInt32LE((sent + i) * 2654435761 >>> 0, i);
      hash.update(buf);
      sent += n;
      stats.produced += n;
      this.push(buf);
    },
  });
  return { body, stats, expected: () => hash.digest('hex') };
}

test('a 50 MB part streams through a hash with bounded lookahead', async () => {
  const size = 50 * 1024 * 1024;
  const { body, stats, expected } = generatedUpload(size);
  const heapBefore = process.memoryUsage().heapUsed;
  let maxAhead = 0;
  let consumed = 0;
  const hash = createHash('sha256');
  for await (const p of multipartFiles(body, formHeaders)) {
    for await (const c of p.stream) {
      consumed += (c as Buffer).length;
      maxAhead = Math.max(maxAhead, stats.produced - consumed);
      hash.update(c as Buffer);
    }
  }
  assert.equal(consumed, size);
  assert.equal(hash.digest('hex'), expected());
  // Producer never more than a few buffers ahead of the consumer: the file is streamed, not held.
  assert.ok(maxAhead < 1024 * 1024, `read ahead ${maxAhead} bytes`);
  assert.ok(process.memoryUsage().heapUsed - heapBefore < 30 * 1024 * 1024, 'heap did not grow with the file');
});

test('a slow consumer holds the body back (backpressure)', async () => {
  const size = 8 * 1024 * 1024;
  const { body, stats } = generatedUpload(size, 16 * 1024);
  let maxAhead = 0;
  let consumed = 0;
  for await (const p of multipartFiles(body, formHeaders)) {
    for await (const c of p.stream) {
      consumed += (c as Buffer).length;
      maxAhead = Math.max(maxAhead, stats.produced - consumed);
      await tick();
      await tick();
    }
  }
  assert.equal(consumed, size);
  assert.ok(maxAhead < 512 * 1024, `read ahead ${maxAhead} bytes of ${size}`);
});

test('many small files do not pile up ahead of a slow consumer', async () => {
  const count = 4000;
  const parts = Array.from({ length: count }, (_, i) => ({ name: 'f', filename: `${i}.txt`, data: Buffer.alloc(1000, i % 256) }));
  const whole = multipartBody(parts);
  let produced = 0;
  let at = 0;
  const body = new Readable({
    highWaterMark: 16 * 1024,
    read() {
      const c = at < whole.length ? whole.subarray(at, (at += 16 * 1024)) : null;
      if (c) produced += c.length;
      this.push(c);
    },
  });
  let files = 0;
  let maxAhead = 0;
  for await (const p of multipartFiles(body, formHeaders)) {
    await tick();
    await readAll(p.stream);
    files++;
    // Each part costs ~1.1 kB of body; compare how far the reader got with how far the consumer is.
    maxAhead = Math.max(maxAhead, produced - (files * whole.length) / count);
  }
  assert.equal(files, count);
  assert.ok(maxAhead < 256 * 1024, `read ahead ${Math.round(maxAhead)} bytes of ${whole.length}`);
});

test('over real HTTP: an upload arrives whole, and a client abort errors the part stream', async () => {
  type Seen = { filename: string; bytes?: number; error?: unknown };
  const seen: Seen[] = [];
  let settled!: () => void;
  let done = new Promise<void>((r) => (settled = r));
  const server = createServer((req: IncomingMessage, res) => {
    void (async () => {
      try {
        for await (const p of multipartFiles(req, req.headers)) {
          const entry: Seen = { filename: p.filename };
          seen.push(entry);
          try {
            entry.bytes = (await readAll(p.stream)).length;
          } catch (e) {
            entry.error = e;
            throw e;
          }
        }
        res.end('ok');
      } catch (e) {
        seen.push({ filename: '(iteration)', error: e });
        res.destroy();
      } finally {
        settled();
      }
    })();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  try {
    const body = multipartBody([
      { name: 'a', filename: 'é.txt', data: 'x'.repeat(100_000) },
      { name: 'b', filename: 'b.txt', data: 'y' },
    ]);
    const status = await new Promise<number>((resolve, reject) => {
      const req = request({ port, method: 'PUT', headers: { ...formHeaders, 'content-length': body.length } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end(body);
    });
    await done;
    assert.equal(status, 200);
    assert.deepEqual(seen, [
      { filename: 'é.txt', bytes: 100_000 },
      { filename: 'b.txt', bytes: 1 },
    ]);

    seen.length = 0;
    done = new Promise<void>((r) => (settled = r));
    const half = multipartBody([{ name: 'a', filename: 'cut.bin', data: Buffer.alloc(1_000_000, 3) }]).subarray(0, 300_000);
    const req = request({ port, method: 'PUT', headers: { ...formHeaders, 'content-length': 1_000_200 } });
    req.on('error', () => {});
    req.write(half, () => setTimeout(() => req.destroy(), 50));
    await done;
    assert.equal(seen[0]?.filename, 'cut.bin');
    isApp('bad_request')((seen[0] as Seen | undefined)?.error);
    isApp('bad_request')((seen[1] as Seen | undefined)?.error);
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
});
