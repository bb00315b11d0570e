import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import net from 'node:net';
import { Writable } from 'node:stream';
import Fastify from 'fastify';
import { connect } from 'node:net';
import { AppError } from '../domain/errors.js';
import { installErrorHandling } from '../http/error-handler.js';
import { requestSignal } from '../lib/progress.js';
import { serverWithFastRead } from './http-server.js';
import { waitsForServices } from './request-deadline.js';

/** Far below the keep-alive timeout (72 s), which is what ended a connection stuck behind an unread body. */
const ANSWER_BOUND_MS = 10_000;
const BODY = Buffer.alloc(2 * 1024 * 1024, 7);

/** How a handler held the upload's body when it answered 503 without reading the rest. */
const holders: [string, (req: IncomingMessage) => void][] = [
  ['piped into a writer that never takes more', (req) => void req.pipe(new Writable({ highWaterMark: 1024, write: () => undefined }))],
  ['an async iterator whose loop stopped after the first chunk', (req) => void (async () => {
    await req.iterator({ destroyOnReturn: false }).next();
    await new Promise(() => undefined);
  })()],
  ['read by a \'data\' listener that pauses it whenever its own reader is full (the sealing stream\'s way)', (req) => void req.on('data', () => req.pause())],
  ['never read at all (Node drops it by itself)', () => undefined],
];

/** A PUT with the whole body, then a GET on the same connection: the GET's answer, or the connection's end. */
async function putThenGet(port: number): Promise<{ second: string | undefined; ms: number }> {
  const socket = net.connect(port, '127.0.0.1');
  const t0 = Date.now();
  try {
    return await new Promise((resolve) => {
      let text = '';
      let sent = false;
      const end = (second: string | undefined) => resolve({ second, ms: Date.now() - t0 });
      const timer = setTimeout(() => end(undefined), ANSWER_BOUND_MS);
      socket.on('data', (d: Buffer) => {
        text += d.toString('latin1');
        if (!sent && text.includes('refused')) {
          sent = true;
          socket.write('GET /second HTTP/1.1\r\nhost: x\r\n\r\n');
        }
        if (text.includes('second answer')) {
          clearTimeout(timer);
          end('second answer');
        }
      });
      socket.on('error', () => undefined);
      socket.on('close', () => {
        clearTimeout(timer);
        end(undefined);
      });
      socket.write(`PUT /upload HTTP/1.1\r\nhost: x\r\ncontent-length: ${BODY.length}\r\n\r\n`);
      socket.write(BODY);
    });
  } finally {
    socket.destroy();
  }
}

for (const [[how, hold], progress] of holders.flatMap((h) => [[h, true], [h, false]] as const)) {
  test(`a body left unread by a 503 (${how}; ${progress ? 'with' : 'without'} a progress context) does not hold the next request on the connection`, async () => {
    const handler = (req: IncomingMessage, res: ServerResponse) => {
      if (req.url === '/second') return void res.end('second answer');
      hold(req);
      // Answered once some of the body has come in, as an upload cut off by a failing service is.
      setTimeout(() => res.writeHead(503, { 'content-type': 'text/plain' }).end('refused'), 50);
    };
    const server = serverWithFastRead(() => undefined, { progress })(handler as never, {}) as unknown as Server;
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const { second, ms } = await putThenGet((server.address() as net.AddressInfo).port);
      assert.equal(second, 'second answer', `no answer to the next request within ${ms} ms`);
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
}

test('an error after part of the body was read leaves the connection able to answer its next request', async () => {
  // Fastify, the error handler and this server, as build-app.ts puts them together.
  const app = Fastify({ logger: false, serverFactory: serverWithFastRead(() => undefined, { progress: true }) });
  installErrorHandling(app);
  // Raw bodies reach the route unread, as uploads do.
  app.addContentTypeParser('application/octet-stream', (_request, _payload, done) => done(null));
  app.put('/upload', async (request) => {
    // Reads the first chunk of the body, then fails, as an upload does when a service dies mid-stream.
    await new Promise<void>((resolve) => request.raw.once('data', () => (request.raw.pause(), resolve())));
    throw new AppError('unavailable', 'A service went away mid-upload.');
  });
  app.get('/next', async () => ({ ok: true }));
  await app.listen({ host: '127.0.0.1', port: 0 });
  const port = (app.server.address() as import('node:net').AddressInfo).port;
  const socket = connect(port, '127.0.0.1');
  try {
    let got = '';
    socket.on('data', (d: Buffer) => (got += d.toString('latin1')));
    const body = Buffer.alloc(4 * 1024 * 1024, 1);
    socket.write(`PUT /upload HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nContent-Length: ${body.length}\r\n\r\n`);
    socket.write(body);
    const answers = () => got.match(/HTTP\/1\.1 \d+/g) ?? [];
    const until = async (n: number) => {
      const deadline = Date.now() + 5_000;
      while (answers().length < n && !socket.closed && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    };
    await until(1);
    assert.deepEqual(answers(), ['HTTP/1.1 503']);
    if (/^connection: close/im.test(got)) return; // a closed connection is answered honestly too
    socket.write('GET /next HTTP/1.1\r\nHost: x\r\n\r\n');
    await until(2);
    assert.deepEqual(answers(), ['HTTP/1.1 503', 'HTTP/1.1 200'], 'the next request on the kept connection is answered, not read as the rest of the body');
  } finally {
    socket.destroy();
    await app.close();
  }
});

test('a request runs in a progress context exactly where the deployment can wait for a service', async () => {
  const file = { kind: 'file' } as const;
  const s3 = { kind: 's3', bucket: 'b' } as never;
  const sqlite = { kind: 'sqlite' } as const;
  const postgres = { kind: 'postgres', url: 'postgres://x@h/db' } as const;
  const rows: [string, Parameters<typeof waitsForServices>[0], boolean][] = [
    ['local disk and SQLite', { storage: file, database: sqlite, redis: '' }, false],
    ['S3', { storage: s3, database: sqlite, redis: '' }, true],
    ['PostgreSQL', { storage: file, database: postgres, redis: '' }, true],
    ['Redis', { storage: file, database: sqlite, redis: 'redis://127.0.0.1:6379' }, true],
    ['all three', { storage: s3, database: postgres, redis: 'redis://127.0.0.1:6379' }, true],
  ];
  for (const [why, config, want] of rows) assert.equal(waitsForServices(config), want, why);

  // What a handler sees: the request's signal (src/lib/progress.ts) only inside a context.
  for (const progress of [true, false]) {
    const handler = (_req: IncomingMessage, res: ServerResponse) => void res.end(requestSignal() ? 'context' : 'none');
    const server = serverWithFastRead(() => undefined, { progress })(handler as never, {}) as unknown as Server;
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const answer = await fetch(`http://127.0.0.1:${(server.address() as net.AddressInfo).port}/`);
      assert.equal(await answer.text(), progress ? 'context' : 'none');
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  }
});
