import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { request } from './http.js';
import { MiB } from './paths.js';
import type { Server } from './server.js';

/**
 * A listing-shaped JSON body of `entries` entries, sent in 64 KiB writes that
 * wait for the socket to drain (as File Cloud's streamed listing does).
 */
async function withJsonServer(entries: number, run: (s: Server) => Promise<void>): Promise<void> {
  const entry = (i: number) => `{"is_file":true,"name":"f${String(i).padStart(6, '0')}.txt","size":0,"sha256":"${'e'.repeat(64)}"}`;
  const srv = http.createServer(async (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    let out = '{"entries":[';
    for (let i = 0; i < entries; i++) {
      out += (i === 0 ? '' : ',') + entry(i);
      if (out.length >= 64 * 1024) {
        if (!res.write(out)) await once(res, 'drain');
        out = '';
      }
    }
    res.end(`${out}]}`);
  });
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  const { port } = srv.address() as AddressInfo;
  const base = `http://127.0.0.1:${port}`;
  try {
    await run({ name: 'json server', base, headers: {}, path: (rel) => `/${rel}`, statsPath: '/', pids: async () => [], proc: undefined as never });
  } finally {
    srv.closeAllConnections();
    srv.close();
  }
}

// The 100,000-entry listing with its sync fields is 23.5 MB: over the 16 MiB a
// result keeps by default, it came back as an empty body, which listscale then
// reported as "not a JSON listing" (as if the server had cut it off).
test('a body over the default kept size comes back whole when the caller asks to keep it', async () => {
  const entries = 200_000; // about 22 MB
  await withJsonServer(entries, async (s) => {
    const r = await request(s, 'GET', '/', { keepBytes: 64 * MiB });
    assert.ok(r.bytes > 16 * MiB, `the body is ${r.bytes} bytes`);
    assert.equal(r.kept, true);
    assert.equal(Buffer.byteLength(r.body), r.bytes);
    assert.equal((JSON.parse(r.body) as { entries: unknown[] }).entries.length, entries);
  });
});

test('a body over the kept size is counted, and the result says it was not kept', async () => {
  await withJsonServer(20_000, async (s) => {
    const r = await request(s, 'GET', '/', { keepBytes: 1 * MiB });
    assert.ok(r.bytes > 1 * MiB);
    assert.equal(r.kept, false);
    assert.equal(r.body, '');
  });
});
