import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import net from 'node:net';
import { Writable } from 'node:stream';
import { serverWithFastRead } from './http-server.js';

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

for (const [how, hold] of holders) {
  test(`a body left unread by a 503 (${how}) does not hold the next request on the connection`, async () => {
    const handler = (req: IncomingMessage, res: ServerResponse) => {
      if (req.url === '/second') return void res.end('second answer');
      hold(req);
      // Answered once some of the body has come in, as an upload cut off by a failing service is.
      setTimeout(() => res.writeHead(503, { 'content-type': 'text/plain' }).end('refused'), 50);
    };
    const server = serverWithFastRead(() => undefined)(handler as never, {}) as unknown as Server;
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
