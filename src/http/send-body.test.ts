import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { openSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { test } from 'node:test';
import { FileReader, READ_CHUNK } from '../storage/local/file-reader.js';
import { sendBody } from './send-body.js';

test('sendBody: a slow client gets every byte of a recycled big file, none overwritten by a later read', async () => {
  const bytes = randomBytes(8 * READ_CHUNK + 99);
  const dir = await mkdtemp(join(tmpdir(), 'send-body-'));
  const path = join(dir, 'f.bin');
  await writeFile(path, bytes);
  try {
    const server = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-length': String(bytes.length) });
      sendBody(new FileReader(openSync(path, 'r'), 0, bytes.length - 1), res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const got = await new Promise<Buffer>((resolve, reject) => {
        http
          .get({ host: '127.0.0.1', port, path: '/' }, (res) => {
            const parts: Buffer[] = [];
            // Reads a little at a time, so the server's socket fills and its writes wait: a buffer read into
            // again before the socket took it would show up as wrong bytes here.
            res.on('data', (c: Buffer) => {
              parts.push(c);
              res.pause();
              setTimeout(() => res.resume(), 1);
            });
            res.on('end', () => resolve(Buffer.concat(parts)));
            res.on('error', reject);
          })
          .on('error', reject);
      });
      assert.equal(got.length, bytes.length);
      assert.ok(got.equals(bytes), 'the bytes sent are the file');
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('sendBody: a body that gives bursts of chunks (a decryption) reaches a slow client whole and in order', async () => {
  const bytes = randomBytes(40 * 64 * 1024 + 123);
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-length': String(bytes.length) });
    let at = 0;
    // 16 chunks at once per read, as a decryption pushes a storage read's chunks.
    const body = new Readable({
      read() {
        setImmediate(() => {
          for (let i = 0; i < 16 && at < bytes.length; i++, at += 64 * 1024) this.push(Buffer.from(bytes.subarray(at, at + 64 * 1024)));
          if (at >= bytes.length) this.push(null);
        });
      },
    });
    sendBody(body, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const got = await new Promise<Buffer>((resolve, reject) => {
      http
        .get({ host: '127.0.0.1', port, path: '/' }, (res) => {
          const parts: Buffer[] = [];
          res.on('data', (c: Buffer) => {
            parts.push(c);
            res.pause();
            setTimeout(() => res.resume(), 1);
          });
          res.on('end', () => resolve(Buffer.concat(parts)));
          res.on('error', reject);
        })
        .on('error', reject);
    });
    assert.ok(got.equals(bytes), 'the bytes sent are the body, in order');
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});
