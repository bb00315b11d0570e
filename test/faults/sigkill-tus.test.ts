// SIGKILL of the server in the middle of a tus upload, then a restart on the same data (and the
// same S3 prefix): the real client (tus-js-client) resumes from the last durable offset, not from
// zero, and the file lands whole (sha256). Staging is gone afterwards.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdtemp, open, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tus from 'tus-js-client';
import { bearer, login } from '../helpers/client.js';
import { startCuttingProxy } from '../helpers/cutting-proxy.js';
import { s3ServerOptions, startServer, type ServerProcess } from '../helpers/server.js';
import { skipReason } from '../helpers/services.js';
import { writeNewKeyFile } from '../../src/storage/encrypted/key-file.js';

const MiB = 1024 * 1024;
const SIZE = 128 * MiB;
/** One process, so the kill hits the process doing the work (with workers it reaches only the primary). */
const ONE_PROCESS = ['--workers', '1'];
/** How long a start may take (on a busy machine it takes many seconds). */
const START_MS = 60_000;
/** The client retries for a restart and then the dead process's lease on the upload (10 s), every 500 ms. */
const RETRY_DELAYS = Array.from({ length: (START_MS + 10_000) / 500 }, () => 500);

async function randomFile(dir: string, size: number): Promise<{ path: string; sha256: string }> {
  const path = join(dir, 'upload.bin');
  const hash = createHash('sha256');
  const handle = await open(path, 'w');
  try {
    for (let done = 0; done < size; done += 4 * MiB) {
      const piece = randomBytes(Math.min(4 * MiB, size - done));
      hash.update(piece);
      await handle.write(piece);
    }
  } finally {
    await handle.close();
  }
  return { path, sha256: hash.digest('hex') };
}

// Encrypted: the offsets reported while the PATCH streams are chunk boundaries, and the resume writes on from there.
for (const [storage, skip, encrypted] of [['file', undefined, false], ['s3', skipReason('S3'), false], ['file', undefined, true], ['s3', skipReason('S3'), true]] as const) {
  test(`SIGKILL mid tus upload on ${storage}${encrypted ? ' with encryption at rest' : ''}, restart: the client resumes from the last durable offset and the file is whole`, { skip }, async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'fc-kill-tus-'));
    const s3 = storage === 's3' ? await s3ServerOptions() : { args: [], env: {} };
    const keyFile = join(dataDir, 'encryption.key');
    if (encrypted) await writeNewKeyFile(keyFile);
    const start = () => startServer({ dataDir, args: [...ONE_PROCESS, ...s3.args, ...(encrypted ? ['--encryption-key-file', keyFile] : [])], env: s3.env, startTimeoutMs: START_MS });
    let server: ServerProcess = await start();
    const proxy = await startCuttingProxy(server.url, []);
    let restarting: Promise<void> | undefined;
    try {
      const { access_token } = await login(server.url, 'admin', server.adminPassword);
      const file = await randomFile(dataDir, SIZE);
      let killedAt: number | undefined;
      const resumedFrom: number[] = [];
      await new Promise<void>((resolve, reject) => {
        const upload = new tus.Upload(createReadStream(file.path), {
          endpoint: `${proxy.url}/tus/`,
          uploadSize: SIZE,
          headers: { authorization: `Bearer ${access_token}` },
          metadata: { filename: 'killed.bin' },
          // Long enough for a restart, and for the dead process's lease on the upload to expire.
          retryDelays: RETRY_DELAYS,
          onProgress: (sent) => {
            if (killedAt !== undefined || sent < SIZE * 0.4) return;
            killedAt = sent;
            restarting = (async () => {
              await server.stop('SIGKILL');
              server = await start();
              proxy.retarget(server.url);
            })();
          },
          onAfterResponse: (req, res) => {
            if (killedAt !== undefined && req.getMethod() === 'HEAD' && res.getStatus() === 200) resumedFrom.push(Number(res.getHeader('Upload-Offset')));
          },
          onSuccess: () => resolve(),
          onError: reject,
        });
        upload.start();
      });
      await restarting;
      assert.ok(killedAt !== undefined, 'the server was killed mid-upload');
      const first = resumedFrom[0];
      assert.ok(first !== undefined && first > 0, `resumed from a durable offset, not from zero (HEAD said ${first})`);
      assert.ok(first <= killedAt, `never more than the client had sent (${first} ≤ ${killedAt})`);
      const res = await fetch(`${server.url}/storage/admin/killed.bin`, { headers: bearer(access_token) });
      assert.equal(res.status, 200);
      const hash = createHash('sha256');
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) hash.update(chunk);
      assert.equal(hash.digest('hex'), file.sha256, 'the file is whole');
      if (storage === 'file') assert.deepEqual(await readdir(join(dataDir, 'tmp', 'tus')), [], 'the finished upload left no staging');
    } finally {
      // A resume that failed can leave the restart under way: the server it starts is the one to stop.
      await restarting?.catch(() => undefined);
      await proxy.close();
      await server.stop();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
}
