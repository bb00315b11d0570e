// The real tus client (tus-js-client, in Node) against /tus/ on every backend: a large upload
// through a proxy that cuts the connection twice mid-stream resumes and lands whole (sha256);
// a chunk with a wrong Upload-Checksum is refused; two clients resuming one upload at once
// do not corrupt it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tus from 'tus-js-client';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { bearer } from '../helpers/client.js';
import { startCuttingProxy } from '../helpers/cutting-proxy.js';

const MiB = 1024 * 1024;
/**
 * The 1 GiB on local disk (about 7 s for the upload here), 64 MiB on the object store:
 * radosgw runs on a memory store in tests, and a finished tus upload is copied once into its
 * final object. FC_TUS_TEST_MIB sets another size for both.
 */
const sizeFor = (storage: string) => Number(process.env.FC_TUS_TEST_MIB ?? (storage === 'file' ? 1024 : 64)) * MiB;

/** A file of random bytes and its sha256, written in 4 MiB pieces (never in memory whole). */
async function randomFile(dir: string, size: number): Promise<{ path: string; sha256: string }> {
  const path = join(dir, `random-${size}.bin`);
  const hash = createHash('sha256');
  const handle = await open(path, 'w');
  try {
    for (let done = 0; done < size; ) {
      const piece = randomBytes(Math.min(4 * MiB, size - done));
      hash.update(piece);
      await handle.write(piece);
      done += piece.length;
    }
  } finally {
    await handle.close();
  }
  return { path, sha256: hash.digest('hex') };
}

/** sha256 of a stored file, streamed through GET /storage. */
async function storedSha256(t: TestApp, auth: Record<string, string>, path: string): Promise<string> {
  const res = await fetch(`${t.url}/storage${path.split('/').map(encodeURIComponent).join('/')}`, { headers: auth });
  assert.equal(res.status, 200, `GET ${path}`);
  const hash = createHash('sha256');
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) hash.update(chunk);
  return hash.digest('hex');
}

type Outcome = { url: string; finalPath: string | undefined; retries: number };

/** Runs one tus-js-client upload to completion (or its error). */
function upload(file: string, size: number, opts: Partial<tus.UploadOptions> & { endpoint?: string; uploadUrl?: string }): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    let finalPath: string | undefined;
    let retries = 0;
    const u = new tus.Upload(createReadStream(file), {
      uploadSize: size,
      retryDelays: [0, 100, 200, 400, 800, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000],
      // tus-js-client's own rule (retry unless a 4xx other than 409/423), counting the retries.
      onShouldRetry: (err) => {
        const status = err.originalResponse?.getStatus() ?? 0;
        const retry = !(status >= 400 && status < 500) || status === 409 || status === 423;
        if (retry) retries++;
        return retry;
      },
      onAfterResponse: (_req, res) => {
        finalPath ??= res.getHeader('File-Cloud-Path') ?? undefined;
      },
      onSuccess: () => resolve({ url: u.url as string, finalPath, retries }),
      onError: reject,
      ...opts,
    });
    u.start();
  });
}

for (const [storage, skip] of BACKENDS) {
  describe(`tus-js-client on ${storage}`, { skip }, () => {
    let t: TestApp;
    let token: string;
    let dir: string;
    let big: { path: string; sha256: string };
    const size = sizeFor(storage);

    before(async () => {
      t = await startApp({ storage, users: ['alice'] });
      token = (await t.login('alice')).access_token;
      dir = await mkdtemp(join(tmpdir(), 'fc-tus-client-'));
      big = await randomFile(dir, size);
    });
    after(async () => {
      await t?.close();
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    test(`a ${size / MiB} MiB upload through a proxy that cuts the connection twice resumes and lands whole`, async () => {
      const proxy = await startCuttingProxy(t.url, [Math.floor(size * 0.3), Math.floor(size * 0.65)]);
      try {
        const started = Date.now();
        const r = await upload(big.path, size, {
          endpoint: `${proxy.url}/tus/`,
          headers: { authorization: `Bearer ${token}` },
          metadata: { filename: 'big.bin', folder: '/alice/uploads' },
        });
        assert.equal(proxy.cuts, 2, 'the proxy cut two connections');
        assert.ok(r.retries >= 2, `the client resumed after each cut (${r.retries} retries)`);
        assert.equal(r.finalPath, '/alice/uploads/big.bin');
        assert.equal(await storedSha256(t, bearer(token), '/alice/uploads/big.bin'), big.sha256);
        assert.ok(proxy.forwarded < size * 1.2, `resumed, not restarted (${proxy.forwarded} bytes sent for ${size})`);
        process.stderr.write(`# ${size / MiB} MiB on ${storage} in ${Date.now() - started} ms\n`);
      } finally {
        await proxy.close();
      }
    });

    test('a chunk with a wrong Upload-Checksum is refused with 460 and nothing of it is kept', async () => {
      const small = await randomFile(dir, 100_000);
      const wrong = createHash('sha1').update('something else').digest('base64');
      const err = await upload(small.path, 100_000, {
        endpoint: `${t.url}/tus/`,
        headers: { authorization: `Bearer ${token}` },
        metadata: { filename: 'bad.bin' },
        onBeforeRequest: (req) => {
          if (req.getMethod() === 'PATCH') req.setHeader('Upload-Checksum', `sha1 ${wrong}`);
        },
      }).then(
        () => undefined,
        (e: unknown) => e as tus.DetailedError,
      );
      assert.ok(err, 'the upload failed');
      assert.equal(err.originalResponse?.getStatus(), 460);
      const url = err.originalRequest?.getURL() as string;
      const head = await fetch(url, { method: 'HEAD', headers: { ...bearer(token), 'tus-resumable': '1.0.0' } });
      assert.equal(head.headers.get('upload-offset'), '0', 'the chunk was discarded');
      assert.equal(await t.fs.kind('bad.bin'), undefined);
    });

    test('two clients resuming the same upload at once: one writes at a time, the file is whole and appears once', async () => {
      const n = Math.min(size, 32 * MiB);
      const file = await randomFile(dir, n);
      // Start the upload with its first MiB, then let two clients resume it together.
      const created = await fetch(`${t.url}/tus/`, {
        method: 'POST',
        headers: { ...bearer(token), 'tus-resumable': '1.0.0', 'upload-length': String(n), 'upload-metadata': `filename ${Buffer.from('shared.bin').toString('base64')}`, 'content-type': 'application/offset+octet-stream' },
        body: await readBytes(file.path, MiB),
      });
      assert.equal(created.status, 201);
      const url = new URL(created.headers.get('location') as string, t.url).href;
      const both = await Promise.all(
        [0, 1].map(() => upload(file.path, n, { uploadUrl: url, headers: { authorization: `Bearer ${token}` }, chunkSize: 4 * MiB })),
      );
      for (const r of both) assert.equal(r.url, url);
      // Both started at the same offset: at least one PATCH was refused (409) and retried.
      assert.ok(both[0]!.retries + both[1]!.retries >= 1, 'the clients collided');
      assert.equal(await storedSha256(t, bearer(token), '/alice/shared.bin'), file.sha256);
      assert.deepEqual((await t.fs.names('')).filter((name) => name.startsWith('shared')), ['shared.bin'], 'committed once');
    });
  });
}

async function readBytes(path: string, n: number): Promise<Buffer> {
  const handle = await open(path, 'r');
  try {
    const buf = Buffer.alloc(n);
    await handle.read(buf, 0, n, 0);
    return buf;
  } finally {
    await handle.close();
  }
}
