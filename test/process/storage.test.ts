import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { GetObjectCommand, HeadObjectCommand, ListMultipartUploadsCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { BACKENDS, type TestStorage } from '../helpers/app.js';
import { s3ServerOptions, startServer, withServer, type ServerProcess } from '../helpers/server.js';
import { newDatabase, redisService, s3Client } from '../helpers/services.js';
import { bearer, login } from '../helpers/client.js';
import { multipartBody } from '../helpers/multipart.js';

const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
const MiB = 1024 * 1024;

async function waitFor(cond: () => Promise<boolean>, ms: number, what: string) {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A PUT on a connection of its own (no keep-alive), so a multi-worker server may hand it to another worker. */
function putOnNewConnection(server: ServerProcess, token: string, path: string, body: Buffer): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const url = new URL(`${server.url}${path}`);
    const req = request({ host: url.hostname, port: url.port, path: url.pathname, method: 'PUT', agent: false, headers: { ...bearer(token), 'content-length': String(body.length) } }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 201 ? resolve() : reject(new Error(`warm-up PUT answered ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Starts a raw PUT that sends `sendBytes` of a declared `totalBytes` body, then calls `then`. */
function partialUpload(server: ServerProcess, token: string, path: string, totalBytes: number, sendBytes: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const url = new URL(`${server.url}${path}`);
    const req = request({ host: url.hostname, port: url.port, path: url.pathname, method: 'PUT', headers: { ...bearer(token), 'content-length': String(totalBytes) } });
    req.on('error', () => {});
    const chunk = Buffer.alloc(MiB, 7);
    let sent = 0;
    const pump = () => {
      while (sent < sendBytes) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      resolve();
    };
    pump();
  }).then(() => new Promise((r) => setTimeout(r, 300)));
}

type S3Options = Awaited<ReturnType<typeof s3ServerOptions>>;

/**
 * The admin's files as the server left them, read straight from where they
 * live (the data dir's storage/ on disk, the objects under the prefix on
 * S3), never through the server under test.
 */
type Stored = {
  /** Names in the admin's folder `dir` ('' for the root), sorted. */
  names(dir: string): Promise<string[]>;
  /** The file's bytes, or undefined when no file is there. */
  read(path: string): Promise<Buffer | undefined>;
  /** The file's size, or undefined when no file is there. */
  size(path: string): Promise<number | undefined>;
  /** Staging an upload leaves until it is committed or discarded: data/tmp entries on disk, multipart uploads under the prefix on S3. */
  staging(): Promise<string[]>;
  /**
   * Checks that the admin's storage holds exactly these files (paths below
   * the admin's root): on S3 no other object under the prefix than them and
   * the markers of their folders.
   */
  holdsExactly(files: string[]): Promise<void>;
};

const missing = (e: unknown) => {
  if ((e as NodeJS.ErrnoException).code === 'ENOENT' || (e as { name?: string }).name === 'NoSuchKey' || (e as { name?: string }).name === 'NotFound') return undefined;
  throw e;
};

function localStore(dataDir: string): Stored {
  const admin = (p: string) => join(dataDir, 'storage', 'admin', ...p.split('/').filter(Boolean));
  const names = async (dir: string) => (await readdir(admin(dir))).sort();
  return {
    names,
    read: (path) => readFile(admin(path)).catch(missing),
    size: async (path) => (await stat(admin(path)).catch(missing))?.size,
    staging: () => readdir(join(dataDir, 'tmp')),
    async holdsExactly(files) {
      const found: string[] = [];
      const walk = async (dir: string): Promise<void> => {
        for (const e of await readdir(admin(dir), { withFileTypes: true })) {
          const p = dir ? `${dir}/${e.name}` : e.name;
          if (e.isDirectory()) await walk(p);
          else found.push(p);
        }
      };
      await walk('');
      assert.deepEqual(found.sort(), [...files].sort());
    },
  };
}

function s3Store(s3: S3Client, options: S3Options): Stored {
  const { bucket } = options;
  // The server's keys start with the prefix as a folder: `<prefix>/`.
  const prefix = options.prefix.replace(/\/?$/, '/');
  const key = (path: string) => `${prefix}admin/${path}`;
  const allKeys = async () => {
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const r = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }));
      for (const o of r.Contents ?? []) keys.push((o.Key as string).slice(prefix.length));
      token = r.IsTruncated ? r.NextContinuationToken : undefined;
    } while (token);
    return keys;
  };
  return {
    async names(dir) {
      const p = key(dir ? `${dir}/` : '');
      const names: string[] = [];
      let token: string | undefined;
      do {
        const r = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: p, Delimiter: '/', ContinuationToken: token }));
        for (const o of r.Contents ?? []) if (o.Key !== p) names.push((o.Key as string).slice(p.length));
        for (const c of r.CommonPrefixes ?? []) names.push((c.Prefix as string).slice(p.length, -1));
        token = r.IsTruncated ? r.NextContinuationToken : undefined;
      } while (token);
      return names.sort();
    },
    read: async (path) => {
      const r = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key(path) })).catch(missing);
      return r && Buffer.from((await r.Body?.transformToByteArray()) ?? []);
    },
    size: async (path) => (await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key(path) })).catch(missing))?.ContentLength,
    staging: async () => ((await s3.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: prefix }))).Uploads ?? []).map((u) => `upload of ${u.Key}`),
    async holdsExactly(files) {
      const keys = await allKeys();
      const folders = new Set(['admin/', ...files.flatMap((f) => f.split('/').slice(0, -1).map((_, i, segs) => `admin/${segs.slice(0, i + 1).join('/')}/`))]);
      assert.deepEqual(keys.filter((k) => !k.endsWith('/')).sort(), files.map((f) => `admin/${f}`).sort(), 'the files under the prefix');
      for (const k of keys.filter((k) => k.endsWith('/'))) assert.ok(folders.has(k), `unexpected object ${k} under the prefix`);
    },
  };
}

/**
 * withServer on the given backend (on S3 a fresh prefix), with a view of
 * what it stored. `s3` is undefined on disk; pass its args and env to
 * restart on the same prefix.
 */
async function onBackend(storage: TestStorage, fn: (server: ServerProcess, token: string, stored: Stored, s3: S3Options | undefined) => Promise<void>): Promise<void> {
  let s3: S3Options | undefined;
  if (storage !== 'file') {
    const o = await s3ServerOptions();
    // `cluster`: two workers on S3 + PostgreSQL + Redis, as a node of a cluster runs.
    s3 = storage === 'cluster' ? { ...o, args: [...o.args, '--workers', '2', '--database', await newDatabase('proc'), '--redis', redisService() as string] } : o;
  }
  const client = s3 && s3Client();
  try {
    await withServer((server, token) => fn(server, token, s3 && client ? s3Store(client, s3) : localStore(server.dataDir), s3), s3 ? { args: s3.args, env: s3.env } : {});
  } finally {
    client?.destroy();
  }
}

for (const [storage, skip] of BACKENDS) {
  describe(`storage processes on ${storage}`, { skip }, () => {
    test('aborting a 100 MB upload halfway leaves no file and no staging (data/tmp empty; no multipart upload on S3)', async () => {
      await onBackend(storage, async (server, access_token, stored) => {
        const url = new URL(`${server.url}/storage/admin/big.bin`);
        await new Promise<void>((resolve) => {
          const req = request({ host: url.hostname, port: url.port, path: url.pathname, method: 'PUT', headers: { ...bearer(access_token), 'content-length': String(100 * MiB) } });
          req.on('error', () => resolve());
          const chunk = Buffer.alloc(MiB, 1);
          let sent = 0;
          const pump = () => {
            while (sent < 50 * MiB) {
              sent += chunk.length;
              if (!req.write(chunk)) return void req.once('drain', pump);
            }
            req.destroy();
            resolve();
          };
          pump();
        });
        await waitFor(async () => (await stored.staging()).length === 0, 5000, 'the staging to be gone');
        assert.equal(await stored.read('big.bin'), undefined);
        await stored.holdsExactly([]);
        // The server keeps serving.
        assert.equal((await fetch(`${server.url}/storage/admin/`, { headers: bearer(access_token) })).status, 200);
      });
    });

    test('SIGKILL during an upload, then a restart, leaves no partial file and no staging (data/tmp clean; the sweeper aborts the multipart upload on S3)', async () => {
      await onBackend(storage, async (server, access_token, stored, s3) => {
        await partialUpload(server, access_token, '/storage/admin/killed.bin', 100 * MiB, 30 * MiB);
        if (storage === 'file') assert.ok((await stored.staging()).length > 0, 'the upload was staged in data/tmp');
        else await waitFor(async () => (await stored.staging()).length > 0, 5000, 'the upload to be staged as a multipart upload');
        await server.stop('SIGKILL');
        // On S3 the same prefix, and a sweeper that takes an upload without progress for 1 s as dead.
        const again = await startServer({ dataDir: server.dataDir, ...(s3 && { args: [...s3.args, '--stale-upload-after', '1'], env: s3.env }) });
        try {
          if (storage === 'file') assert.deepEqual(await stored.staging(), []);
          else {
            // Sweeps run on the leader only; the killed server's leader lease expires within 30 s and a worker of
            // the new one takes it at its next try (every 10 s), then sweeps every second (src/cluster/leader.ts):
            // up to ~40 s plus a sweep (seen: 1 to 40 s), so 60 s leaves room on a loaded machine.
            const since = Date.now();
            await waitFor(async () => (await stored.staging()).length === 0, 60_000, 'the sweeper to abort the dead multipart upload');
            console.log(`SIGKILL on ${storage}: the dead multipart upload was aborted ${((Date.now() - since) / 1000).toFixed(1)} s after the restart`);
          }
          assert.equal(await stored.read('killed.bin'), undefined);
          await stored.holdsExactly([]);
          const { access_token: t2 } = await login(again.url, 'admin', again.adminPassword);
          assert.equal((await fetch(`${again.url}/storage/admin/killed.bin`, { headers: bearer(t2) })).status, 404);
        } finally {
          await again.stop();
        }
      });
    });

    test('20 concurrent uploads under one name give 20 distinct files, each equal to one upload', async () => {
      await onBackend(storage, async (server, access_token, stored) => {
        const contents = Array.from({ length: 20 }, () => randomBytes(256 * 1024 + Math.floor(Math.random() * 1000)));
        const results = await Promise.all(
          contents.map(async (content) => {
            const { body, contentType } = multipartBody([{ filename: 'same.bin', content }]);
            const res = await fetch(`${server.url}/storage/admin/race/`, { method: 'PUT', headers: { ...bearer(access_token), 'content-type': contentType }, body });
            assert.equal(res.status, 201);
            return ((await res.json()) as { files_written: string[] }).files_written[0] as string;
          }),
        );
        assert.equal(new Set(results).size, 20, 'distinct final names');
        const files = await stored.names('race');
        assert.equal(files.length, 20);
        assert.deepEqual(files, [...results].sort(), 'the files are the names answered');
        const expected = new Set(contents.map(sha));
        const seen = new Set<string>();
        for (const name of files) {
          const h = sha((await stored.read(`race/${name}`)) ?? '');
          assert.ok(expected.has(h), `${name} matches one upload`);
          seen.add(h);
        }
        assert.equal(seen.size, 20, 'every upload survived');
        assert.deepEqual(await stored.staging(), []);
        await stored.holdsExactly(files.map((n) => `race/${n}`));
      });
    });

    test('10 concurrent overwrite uploads leave a file equal to exactly one of them', async () => {
      await onBackend(storage, async (server, access_token, stored) => {
        const contents = Array.from({ length: 10 }, () => randomBytes(512 * 1024));
        await Promise.all(
          contents.map(async (content, i) => {
            const res = i % 2 === 0
              ? await fetch(`${server.url}/storage/admin/one.bin`, { method: 'PUT', headers: bearer(access_token), body: content })
              : await (async () => {
                  const { body, contentType } = multipartBody([{ filename: 'one.bin', content }]);
                  return fetch(`${server.url}/storage/admin/?overwrite=true`, { method: 'PUT', headers: { ...bearer(access_token), 'content-type': contentType }, body });
                })();
            assert.equal(res.status, 201);
          }),
        );
        const final = sha((await stored.read('one.bin')) ?? '');
        assert.equal(contents.filter((c) => sha(c) === final).length, 1);
        assert.deepEqual(await stored.names(''), ['one.bin']);
        assert.deepEqual(await stored.staging(), []);
        await stored.holdsExactly(['one.bin']);
      });
    });

    test('a download running while the file is overwritten returns the old or the new contents, whole', async () => {
      await onBackend(storage, async (server, access_token) => {
        const versions = [Buffer.alloc(8 * MiB, 0x41), Buffer.alloc(6 * MiB, 0x42)];
        await fetch(`${server.url}/storage/admin/v.bin`, { method: 'PUT', headers: bearer(access_token), body: versions[0] });
        for (let round = 0; round < 4; round++) {
          const downloads = Array.from({ length: 3 }, () => fetch(`${server.url}/storage/admin/v.bin`, { headers: bearer(access_token) }).then(async (r) => Buffer.from(await r.arrayBuffer())));
          const next = versions[(round + 1) % 2] as Buffer;
          const put = fetch(`${server.url}/storage/admin/v.bin`, { method: 'PUT', headers: bearer(access_token), body: next });
          for (const got of await Promise.all(downloads)) {
            assert.ok(versions.some((v) => v.equals(got)), `round ${round}: a download got ${got.length} bytes matching neither version`);
          }
          assert.equal((await put).status, 201);
        }
      });
    });

    test('uploading 400 MB keeps the server\'s memory within 128 MiB of its resting size', async () => {
      await onBackend(storage, async (server, access_token, stored) => {
        // The whole server: one process, or (on the cluster) the primary and the workers that take the upload.
        const rssOf = async (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(await readFile(`/proc/${pid}/status`, 'utf8'))?.[1]) * 1024;
        const rss = async () => {
          const pid = server.proc.pid as number;
          const children = (await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8').catch(() => '')).split(' ').filter(Boolean).map(Number);
          let sum = await rssOf(pid);
          for (const c of children) sum += await rssOf(c).catch(() => 0);
          return sum;
        };
        // Warm up the upload path so one-time allocations (JIT, the object store client's first multipart upload,
        // malloc arenas) are not counted as growth: what must not grow with the file is the rest. Each warm-up is
        // 20 MiB (a multipart upload on S3) on a new connection, so the cluster's round robin reaches every worker.
        for (let i = 0; i < 4; i++) await putOnNewConnection(server, access_token, `/storage/admin/warm${i}.bin`, Buffer.alloc(20 * MiB, i));
        const before = await rss();
        let peak = before;
        const sampler = setInterval(() => void rss().then((v) => (peak = Math.max(peak, v)), () => {}), 50);
        // 400 MB against a 128 MiB bound: what is held by design is at most 32 MiB of S3 parts (and the local
        // target's 32 MiB), and on Node 24 the young generations of the primary and two workers add up to
        // ~60-90 MiB more before a scavenge (measured 17-94 MiB peaks for 200 MB, which made 64 MiB flaky);
        // a server that held the file, or any part of it that grows with it, still passes the bound.
        const total = 400 * MiB;
        const chunk = randomBytes(MiB);
        const hash = createHash('sha256');
        let sent = 0;
        const body = new ReadableStream({
          pull(c) {
            if (sent >= total) return c.close();
            sent += chunk.length;
            hash.update(chunk);
            c.enqueue(new Uint8Array(chunk));
          },
        });
        const res = await fetch(`${server.url}/storage/admin/huge.bin`, { method: 'PUT', headers: { ...bearer(access_token), 'content-length': String(total) }, body, duplex: 'half' } as RequestInit);
        clearInterval(sampler);
        assert.equal(res.status, 201);
        const growth = peak - before;
        console.log(`400 MB upload on ${storage}: resting RSS (all processes) ${(before / MiB).toFixed(1)} MiB, peak ${(peak / MiB).toFixed(1)} MiB, growth ${(growth / MiB).toFixed(1)} MiB`);
        assert.ok(growth < 128 * MiB, `peak RSS grew by ${(growth / MiB).toFixed(1)} MiB`);
        assert.equal(await stored.size('huge.bin'), total);
        const downloaded = createHash('sha256');
        const dl = await fetch(`${server.url}/storage/admin/huge.bin`, { headers: bearer(access_token) });
        for await (const part of dl.body as unknown as AsyncIterable<Uint8Array>) downloaded.update(part);
        assert.equal(downloaded.digest('hex'), hash.digest('hex'));
      });
    });
  });
}
