// The GetObject transport (get-transport.ts): its pure parts by table, then the
// File Cloud S3 client (createS3Client) against a real HTTP server on a real
// port standing in for the store's framing: keep-alive, a chunked answer, a
// socket the store closed while idle, a download given up half way, an error
// answer, a store that never answers. The store's own behaviour is covered by
// the S3 backend suites against radosgw (test/storage/s3-backend.test.ts).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Readable } from 'node:stream';
import { test } from 'node:test';
import { GetObjectCommand, HeadObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { createS3Client } from './client.js';
import { getTransport, parseHead, queryString, requestHead, type SdkRequest } from './get-transport.js';

test('queryString writes the pairs sorted and RFC 3986 encoded, as the SDK does', () => {
  const rows: [SdkRequest['query'], string][] = [
    [undefined, ''],
    [{}, ''],
    [{ 'x-id': 'GetObject' }, 'x-id=GetObject'],
    [{ versionId: "a b!'()*/", 'x-id': 'GetObject' }, "versionId=a%20b%21%27%28%29%2A%2F&x-id=GetObject"],
    [{ uploads: null, b: ['2', '1'] }, 'b=2&b=1&uploads'],
    [{ empty: '' }, 'empty='],
  ];
  for (const [query, expected] of rows) assert.equal(queryString(query), expected, JSON.stringify(query));
});

test('requestHead writes one GET with the signed headers, adds Host only when missing, and refuses a line break', () => {
  const base: SdkRequest = { method: 'GET', protocol: 'http:', hostname: '127.0.0.1', port: 9000, path: '/b/k%20x', query: { 'x-id': 'GetObject' }, headers: { 'x-amz-date': '20261127T000000Z' } };
  assert.equal(requestHead(base), 'GET /b/k%20x?x-id=GetObject HTTP/1.1\r\nx-amz-date: 20261127T000000Z\r\nHost: 127.0.0.1:9000\r\n\r\n');
  assert.equal(requestHead({ ...base, query: undefined, headers: { host: 's3.example' } }), 'GET /b/k%20x HTTP/1.1\r\nhost: s3.example\r\n\r\n');
  assert.throws(() => requestHead({ ...base, headers: { range: 'bytes=0-1\r\nX-Evil: 1' } }), /line break/);
});

test('parseHead reads the status, headers and whether the connection stays open', () => {
  const rows: [string, ReturnType<typeof parseHead>][] = [
    ['HTTP/1.1 200 OK\r\nContent-Length: 5\r\nETag: "x"', { statusCode: 200, reason: 'OK', headers: { 'content-length': '5', etag: '"x"' }, keepAlive: true }],
    ['HTTP/1.1 206 Partial Content\r\nConnection: close', { statusCode: 206, reason: 'Partial Content', headers: { connection: 'close' }, keepAlive: false }],
    ['HTTP/1.0 200 OK', { statusCode: 200, reason: 'OK', headers: {}, keepAlive: false }],
    ['HTTP/1.0 200 OK\r\nConnection: Keep-Alive', { statusCode: 200, reason: 'OK', headers: { connection: 'Keep-Alive' }, keepAlive: true }],
    ['HTTP/1.1 404', { statusCode: 404, reason: '', headers: {}, keepAlive: true }],
    ['HTTP/1.1 200 OK\r\nX-A: 1\r\nx-a: 2', { statusCode: 200, reason: 'OK', headers: { 'x-a': '1, 2' }, keepAlive: true }],
    ['HTTP/2 200', undefined],
    ['HTTP/1.1 20 OK', undefined],
    ['HTTP/1.1 200 OK\r\nno colon here', undefined],
    ['HTTP/1.1 200 OK\r\n: empty name', undefined],
  ];
  for (const [text, expected] of rows) assert.deepEqual(parseHead(text), expected, JSON.stringify(text));
});

type Store = { url: string; connections: () => number; requests: () => number; close(): Promise<void>; server: Server };

/** An HTTP server answering every request with `answer`; counts connections and requests. */
async function store(answer: (req: IncomingMessage, res: ServerResponse) => void): Promise<Store> {
  let connections = 0;
  let requests = 0;
  const server = createServer((req, res) => {
    requests++;
    answer(req, res);
  });
  server.on('connection', () => connections++);
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    connections: () => connections,
    requests: () => requests,
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}

const clientFor = (s: Store, timeoutMs = 4000): S3Client =>
  createS3Client({ bucket: 'bucket', prefix: '', endpoint: s.url, region: 'us-east-1', pathStyle: true }, { accessKeyId: 'a', secretAccessKey: 'b' }, { timeoutMs });

async function getAll(client: S3Client, key: string, range?: string): Promise<{ bytes: Buffer; etag: string | undefined; contentRange: string | undefined }> {
  const r = await client.send(new GetObjectCommand({ Bucket: 'bucket', Key: key, Range: range }));
  const chunks: Buffer[] = [];
  for await (const c of r.Body as Readable) chunks.push(c as Buffer);
  return { bytes: Buffer.concat(chunks), etag: r.ETag, contentRange: r.ContentRange };
}

/** A store answering with `answer`, File Cloud's S3 client on it, and both closed after `fn`. */
async function withClient(answer: (req: IncomingMessage, res: ServerResponse) => void, fn: (client: S3Client, s: Store) => Promise<void>, timeoutMs?: number): Promise<void> {
  const s = await store(answer);
  const client = clientFor(s, timeoutMs);
  try {
    await fn(client, s);
  } finally {
    client.destroy();
    await s.close();
  }
}

const OBJECT = randomBytes(3 * 1024 * 1024 + 17);

/** The object whole or a range of it, with Content-Length, as a store answers. */
function objectAnswer(req: IncomingMessage, res: ServerResponse): void {
  const m = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? '');
  if (req.url?.includes('missing')) {
    const xml = '<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchKey</Code><Message>none</Message></Error>';
    res.writeHead(404, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(xml) }).end(xml);
    return;
  }
  if (req.url?.includes('empty')) return void res.writeHead(200, { etag: '"e"', 'content-length': '0' }).end();
  const [start, end] = m ? [Number(m[1]), Number(m[2])] : [0, OBJECT.length - 1];
  const part = OBJECT.subarray(start, end + 1);
  res.writeHead(m ? 206 : 200, { etag: '"abc"', 'content-length': part.length, ...(m ? { 'content-range': `bytes ${start}-${end}/${OBJECT.length}` } : {}) });
  res.end(part);
}

test('GetObjects share one kept-alive socket and bring the exact bytes, whole, in ranges and empty', async () => {
  await withClient(objectAnswer, async (client, s) => {
    for (let i = 0; i < 3; i++) {
      const r = await getAll(client, 'k');
      assert.ok(r.bytes.equals(OBJECT));
      assert.equal(r.etag, '"abc"');
    }
    const part = await getAll(client, 'k', 'bytes=10-1000009');
    assert.ok(part.bytes.equals(OBJECT.subarray(10, 1000010)));
    assert.equal(part.contentRange, `bytes 10-1000009/${OBJECT.length}`);
    assert.equal((await getAll(client, 'empty')).bytes.length, 0);
    assert.equal(s.requests(), 5);
    assert.equal(s.connections(), 1, 'one connection for five GetObjects in a row');
  });
});

test('an error answer is the SDK error it was, and the socket serves the next GetObject', async () => {
  await withClient(objectAnswer, async (client, s) => {
    await assert.rejects(client.send(new GetObjectCommand({ Bucket: 'bucket', Key: 'missing' })), (e: { name?: string; $metadata?: { httpStatusCode?: number } }) => e.name === 'NoSuchKey' && e.$metadata?.httpStatusCode === 404);
    assert.ok((await getAll(client, 'k')).bytes.equals(OBJECT));
    assert.equal(s.connections(), 1);
  });
});

test('other requests keep the SDK handler (a HeadObject is not read as a GET)', async () => {
  const answer = (req: IncomingMessage, res: ServerResponse) => {
    assert.equal(req.method, 'HEAD');
    res.writeHead(200, { etag: '"h"', 'content-length': '1234' }).end();
  };
  await withClient(answer, async (client) => {
    const h = await client.send(new HeadObjectCommand({ Bucket: 'bucket', Key: 'k' }));
    assert.equal(h.ContentLength, 1234);
  });
});

test('a chunked answer is asked again through the SDK handler, which reads it whole', async () => {
  const answer = (_req: IncomingMessage, res: ServerResponse) => {
    res.writeHead(200, { etag: '"c"' }); // no Content-Length: Node sends it chunked
    res.write(OBJECT.subarray(0, 1000));
    res.end(OBJECT.subarray(1000, 5000));
  };
  await withClient(answer, async (client, s) => {
    assert.ok((await getAll(client, 'k')).bytes.equals(OBJECT.subarray(0, 5000)));
    assert.equal(s.requests(), 2, 'asked once here, once more by the SDK handler');
  });
});

test('a kept-alive socket the store closed while idle is replaced without the caller seeing it', async () => {
  await withClient(objectAnswer, async (client, s) => {
    for (const pause of [0, 100]) {
      assert.ok((await getAll(client, 'k')).bytes.equals(OBJECT));
      // The store closes the idle socket; the next GetObject is sent at once (it meets the closed socket when it
      // writes) or after the close has arrived (the socket left the pool): either way on a new connection.
      s.server.closeIdleConnections();
      await new Promise((r) => setTimeout(r, pause));
    }
    assert.ok((await getAll(client, 'k')).bytes.equals(OBJECT));
    assert.equal(s.connections(), 3);
  });
});

test('a download given up half way closes its socket instead of reusing it out of step', async () => {
  await withClient(objectAnswer, async (client, s) => {
    const r = await client.send(new GetObjectCommand({ Bucket: 'bucket', Key: 'k' }));
    const body = r.Body as Readable;
    await new Promise<void>((ok) => body.once('data', () => ok()));
    body.destroy();
    assert.ok((await getAll(client, 'k')).bytes.equals(OBJECT));
    assert.equal(s.connections(), 2);
  });
});

test('a store that never answers fails the GetObject with a timeout, not a hang', async () => {
  // The store takes the request and never answers.
  await withClient(
    () => undefined,
    async (client) => {
      await assert.rejects(client.send(new GetObjectCommand({ Bucket: 'bucket', Key: 'k' })), (e: Error) => e.name === 'TimeoutError');
    },
    200,
  );
});

test('a store that closes in the middle of an answer fails the body', async () => {
  const answer = (_req: IncomingMessage, res: ServerResponse) => {
    res.writeHead(200, { 'content-length': String(OBJECT.length) });
    res.write(OBJECT.subarray(0, 100_000), () => res.socket?.destroy());
  };
  await withClient(answer, async (client) => {
    await assert.rejects(getAll(client, 'k'), /middle of an answer|aborted|ECONNRESET/);
  });
});

test('an idle socket is closed after its idle time, and a complete answer not yet read stays whole', async () => {
  const s = await store(objectAnswer);
  let closed = 0;
  s.server.on('connection', (c) => c.on('close', () => closed++));
  const noInner = { handle: () => Promise.reject(new Error('not for the SDK handler')) };
  const transport = getTransport(noInner, { connectionTimeoutMs: 1000, answerTimeoutMs: 1000, idleMs: 50 });
  const { port } = s.server.address() as AddressInfo;
  const req: SdkRequest = { method: 'GET', protocol: 'http:', hostname: '127.0.0.1', port, path: '/bucket/k', query: { 'x-id': 'GetObject' }, headers: { range: 'bytes=0-99' } };
  try {
    const first = (await transport.handle(req)).response;
    const chunks: Buffer[] = [];
    for await (const c of first.body) chunks.push(c as Buffer);
    assert.ok(Buffer.concat(chunks).equals(OBJECT.subarray(0, 100)));
    // The second answer arrives whole on the same socket, which goes back to the pool; its body is read only later.
    const second = (await transport.handle(req)).response;
    let failed: unknown;
    second.body.on('error', (e) => (failed = e));
    // Bound: a 50 ms idle time has long passed when the store has seen the socket close (polled up to 10 s).
    for (let t = 0; closed === 0 && t < 200; t++) await new Promise((r) => setTimeout(r, 50));
    assert.equal(closed, 1, 'the idle socket was closed');
    assert.equal(s.connections(), 1);
    const rest: Buffer[] = [];
    for await (const c of second.body) rest.push(c as Buffer);
    assert.ok(Buffer.concat(rest).equals(OBJECT.subarray(0, 100)));
    assert.equal(failed, undefined);
  } finally {
    transport.destroy?.();
    await s.close();
  }
});
