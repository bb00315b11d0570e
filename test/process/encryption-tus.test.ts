// Encrypted tus uploads (CONTRACT "Encryption at rest": tus uploads resume after a restart), against
// the real binary on local disk and on S3: bytes are encrypted as they arrive, PATCHes that end
// mid-chunk leave no plaintext in staging, a SIGKILL and restart between PATCHes resumes at exactly
// the recorded offset, and the file reads back byte for byte; a PATCH killed while it streams and
// resumed with other bytes seals no two plaintexts under one nonce.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { bearer, login } from '../helpers/client.js';
import { ADMIN_PASSWORD, runCli, s3ServerOptions, startServer, type ServerProcess } from '../helpers/server.js';
import { s3Client, skipReason } from '../helpers/services.js';
import { CHUNK_SIZE, HEADER_SIZE, NONCE_SIZE, STORED_CHUNK, headerVersion } from '../../src/lib/encryption/format.js';

const MARK = 'PLAINTEXT-MARKER-tus51';
const TUS = { 'tus-resumable': '1.0.0' };

/** Every stored byte of a data dir's storage and staging (local: storage/ and tmp/; S3: the whole prefix). */
async function everythingStored(dataDir: string, s3?: { bucket: string; prefix: string }): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  if (!s3) {
    for (const sub of ['storage', 'tmp']) {
      const root = join(dataDir, sub);
      for (const e of await readdir(root, { recursive: true, withFileTypes: true }).catch(() => [])) {
        if (e.isFile()) out.set(join(e.parentPath, e.name).slice(dataDir.length), await readFile(join(e.parentPath, e.name)));
      }
    }
    return out;
  }
  let token: string | undefined;
  do {
    const r = await s3Client().send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: s3.prefix, ContinuationToken: token }));
    for (const o of r.Contents ?? []) out.set(o.Key!, Buffer.from(await (await s3Client().send(new GetObjectCommand({ Bucket: s3.bucket, Key: o.Key }))).Body!.transformToByteArray()));
    token = r.NextContinuationToken;
  } while (token);
  return out;
}

const plaintextIn = async (dataDir: string, s3?: { bucket: string; prefix: string }) => [...(await everythingStored(dataDir, s3))].filter(([, b]) => b.includes(MARK)).map(([k]) => k);

/** A fresh data dir (and, on S3, prefix) with a new key, and how to start File Cloud on it. */
async function encryptedDataDir(storage: 'file' | 's3', name: string) {
  const dir = await mkdtemp(join(tmpdir(), name));
  const dataDir = join(dir, 'data');
  const s3 = storage === 's3' ? await s3ServerOptions() : undefined;
  const keyFile = join(dir, 'key');
  assert.equal((await runCli(['encryption', 'keygen', keyFile])).code, 0);
  const start = () => startServer({ dataDir, args: [...(s3?.args ?? []), '--encryption-key-file', keyFile], env: s3?.env ?? {} });
  return { dir, dataDir, s3, start };
}

for (const [storage, skip] of [['file', undefined], ['s3', skipReason('S3')]] as const) {
  test(`an encrypted tus upload on ${storage}: PATCHes ending mid-chunk leave no plaintext in staging, a SIGKILL and restart resume exactly, the file reads back byte for byte`, { skip }, async () => {
    const { dir, dataDir, s3, start } = await encryptedDataDir(storage, 'fc-enc-tus-');
    let server: ServerProcess | undefined;
    try {
      server = await start();
      const auth = bearer((await login(server.url, 'admin', ADMIN_PASSWORD)).access_token);
      const data = Buffer.alloc(3 * CHUNK_SIZE + 5000, `${MARK} `);
      // Each PATCH ends inside a chunk; the second crosses a chunk edge; the last completes the file.
      const cuts = [0, 100_000, 150_000, data.length];
      const created = await fetch(`${server.url}/tus/`, {
        method: 'POST',
        headers: { ...auth, ...TUS, 'upload-length': String(data.length), 'upload-metadata': `filename ${Buffer.from('resumed.bin').toString('base64')}` },
      });
      assert.equal(created.status, 201, await created.text());
      const path = created.headers.get('location')!;
      const patch = (url: string, from: number, to: number) =>
        fetch(`${url}${path}`, { method: 'PATCH', headers: { ...auth, ...TUS, 'content-type': 'application/offset+octet-stream', 'upload-offset': String(from) }, body: data.subarray(from, to) });

      const first = await patch(server.url, cuts[0]!, cuts[1]!);
      assert.equal(first.status, 204, await first.text());
      assert.equal(first.headers.get('upload-offset'), String(cuts[1]));
      assert.deepEqual(await plaintextIn(dataDir, s3), [], 'no plaintext in staging after a PATCH that ended mid-chunk');

      await server.stop('SIGKILL');
      server = await start();
      Object.assign(auth, bearer((await login(server.url, 'admin', ADMIN_PASSWORD)).access_token));
      const head = await fetch(`${server.url}${path}`, { method: 'HEAD', headers: { ...auth, ...TUS } });
      assert.equal(head.headers.get('upload-offset'), String(cuts[1]), 'the restarted server resumes at the recorded offset');

      for (let i = 1; i < cuts.length - 1; i++) {
        const r = await patch(server.url, cuts[i]!, cuts[i + 1]!);
        assert.equal(r.status, 204, await r.text());
        assert.equal(r.headers.get('upload-offset'), String(cuts[i + 1]));
        if (i < cuts.length - 2) assert.deepEqual(await plaintextIn(dataDir, s3), [], `no plaintext in staging after PATCH ${i + 1}`);
      }
      const got = await fetch(`${server.url}/storage/admin/resumed.bin`, { headers: auth });
      assert.equal(got.status, 200);
      assert.equal(got.headers.get('content-length'), String(data.length));
      assert.ok(Buffer.from(await got.arrayBuffer()).equals(data), 'exact bytes back');
      const edge = await fetch(`${server.url}/storage/admin/resumed.bin`, { headers: { ...auth, range: `bytes=${CHUNK_SIZE - 10}-${CHUNK_SIZE + 9}` } });
      assert.equal(edge.status, 206);
      assert.ok(Buffer.from(await edge.arrayBuffer()).equals(data.subarray(CHUNK_SIZE - 10, CHUNK_SIZE + 10)), 'a range across a chunk edge');
      assert.deepEqual(await plaintextIn(dataDir, s3), [], 'no plaintext anywhere in storage');
    } finally {
      await server?.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
}

for (const [storage, skip] of [['file', undefined], ['s3', skipReason('S3')]] as const) {
  test(`a tus upload open across a rotate on ${storage} finishes readable with the new key; the next rotate re-wraps it`, { skip }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fc-enc-tus-rot-'));
    const dataDir = join(dir, 'data');
    const s3 = storage === 's3' ? await s3ServerOptions() : undefined;
    const [k1, k2, k3] = [join(dir, 'k1'), join(dir, 'k2'), join(dir, 'k3')];
    for (const k of [k1, k2, k3]) assert.equal((await runCli(['encryption', 'keygen', k])).code, 0);
    const start = (key: string) => startServer({ dataDir, args: [...(s3?.args ?? []), '--encryption-key-file', key], env: s3?.env ?? {} });
    const rotate = (from: string, to: string) => runCli(['encryption', 'rotate', '--data-dir', dataDir, '--encryption-key-file', from, '--new-key-file', to, ...(s3?.args ?? [])], { env: s3?.env });
    let server: ServerProcess | undefined;
    try {
      server = await start(k1);
      let auth = bearer((await login(server.url, 'admin', ADMIN_PASSWORD)).access_token);
      const data = Buffer.alloc(2 * CHUNK_SIZE + 777, `${MARK} rotate `);
      const created = await fetch(`${server.url}/tus/`, {
        method: 'POST',
        headers: { ...auth, ...TUS, 'upload-length': String(data.length), 'upload-metadata': `filename ${Buffer.from('across.bin').toString('base64')}` },
      });
      assert.equal(created.status, 201, await created.text());
      const path = created.headers.get('location')!;
      const patch = (from: number, to: number) =>
        fetch(`${server!.url}${path}`, { method: 'PATCH', headers: { ...auth, ...TUS, 'content-type': 'application/offset+octet-stream', 'upload-offset': String(from) }, body: data.subarray(from, to) });
      assert.equal((await patch(0, 100_000)).status, 204);
      await server.stop();
      server = undefined;

      // The open upload's staging stays under k1 (its header is not a file's); the keyring keeps k1 for it.
      const r1 = await rotate(k1, k2);
      assert.equal(r1.code, 0, r1.stderr);
      server = await start(k2);
      auth = bearer((await login(server.url, 'admin', ADMIN_PASSWORD)).access_token);
      const head = await fetch(`${server.url}${path}`, { method: 'HEAD', headers: { ...auth, ...TUS } });
      assert.equal(head.headers.get('upload-offset'), '100000');
      const last = await patch(100_000, data.length);
      assert.equal(last.status, 204, await last.text());
      const got = await fetch(`${server.url}/storage/admin/across.bin`, { headers: auth });
      assert.equal(got.status, 200);
      assert.ok(Buffer.from(await got.arrayBuffer()).equals(data), 'exact bytes back after the rotate');
      await server.stop();
      server = undefined;

      // The file it made still names k1 in its header, read through the keyring; the next rotate re-wraps it.
      const r2 = await rotate(k2, k3);
      assert.equal(r2.code, 0, r2.stderr);
      assert.match(r2.stderr, /admin: 1 re-wrapped, 0 already under the new key/);
      server = await start(k3);
      auth = bearer((await login(server.url, 'admin', ADMIN_PASSWORD)).access_token);
      const again = await fetch(`${server.url}/storage/admin/across.bin`, { headers: auth });
      assert.ok(Buffer.from(await again.arrayBuffer()).equals(data), 'exact bytes back after the second rotate');
      assert.deepEqual(await plaintextIn(dataDir, s3), [], 'no plaintext anywhere in storage');
    } finally {
      await server?.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
}

/** Stored bytes with the stored offset they start at: a staging snapshot (local: its one file; S3: its segments). */
type Piece = { readonly at: number; readonly bytes: Buffer };

async function stagingPieces(dataDir: string, id: string, s3?: { bucket: string; prefix: string }): Promise<Piece[]> {
  if (!s3) {
    const bytes = await readFile(join(dataDir, 'tmp', 'tus', id)).catch(() => undefined);
    return bytes ? [{ at: 0, bytes }] : [];
  }
  const area = `${s3.prefix}/.file-cloud/tus/${id}/`;
  const out: Piece[] = [];
  const r = await s3Client().send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: area }));
  for (const o of r.Contents ?? []) {
    const rest = o.Key!.slice(area.length);
    if (!/^\d{16}$/.test(rest)) continue;
    out.push({ at: Number(rest), bytes: Buffer.from(await (await s3Client().send(new GetObjectCommand({ Bucket: s3.bucket, Key: o.Key }))).Body!.transformToByteArray()) });
  }
  return out;
}

/** Every stored chunk (version 2) whose nonce lies whole in the pieces: its index, nonce and the bytes of it there. */
function chunksIn(pieces: readonly Piece[]): { index: number; nonce: string; bytes: Buffer }[] {
  const out: { index: number; nonce: string; bytes: Buffer }[] = [];
  for (const { at, bytes } of pieces) {
    const end = at + bytes.length;
    for (let i = Math.max(0, Math.ceil((at - HEADER_SIZE) / STORED_CHUNK)); HEADER_SIZE + i * STORED_CHUNK + NONCE_SIZE <= end; i++) {
      const from = HEADER_SIZE + i * STORED_CHUNK - at;
      out.push({ index: i, nonce: bytes.subarray(from, from + NONCE_SIZE).toString('hex'), bytes: bytes.subarray(from, Math.min(from + STORED_CHUNK, bytes.length)) });
    }
  }
  return out;
}

const samePrefix = (a: Buffer, b: Buffer) => a.subarray(0, Math.min(a.length, b.length)).equals(b.subarray(0, Math.min(a.length, b.length)));

for (const [storage, skip] of [['file', undefined], ['s3', skipReason('S3')]] as const) {
  test(`an encrypted tus upload on ${storage} killed mid-PATCH and resumed with other bytes past the recorded offset: no nonce seals two plaintexts, the file reads back exactly, Range across the resume point`, { skip }, async () => {
    const { dir, dataDir, s3, start } = await encryptedDataDir(storage, 'fc-enc-tus-crash-');
    let server: ServerProcess | undefined;
    let hang: ReadableStreamDefaultController<Uint8Array> | undefined;
    try {
      server = await start();
      const auth = bearer((await login(server.url, 'admin', ADMIN_PASSWORD)).access_token);
      const length = 10 * 1024 * 1024 + 12_345;
      const before = Buffer.alloc(length, `${MARK} first attempt `);
      const after = Buffer.alloc(length, `${MARK} OTHER BYTES `);
      const created = await fetch(`${server.url}/tus/`, {
        method: 'POST',
        headers: { ...auth, ...TUS, 'upload-length': String(length), 'upload-metadata': `filename ${Buffer.from('crash.bin').toString('base64')}` },
      });
      assert.equal(created.status, 201, await created.text());
      const path = created.headers.get('location')!;
      const id = path.split('/').pop()!;
      const patchHeaders = (from: number) => ({ ...auth, ...TUS, 'content-type': 'application/offset+octet-stream', 'upload-offset': String(from) });
      const first = await fetch(`${server.url}${path}`, { method: 'PATCH', headers: patchHeaders(0), body: before.subarray(0, 100_000) });
      assert.equal(first.status, 204, await first.text());

      // A PATCH that sends 9.5 MiB and then stalls: the staging gets whole chunks the upload has not recorded
      // (local disk records at its 4 MiB syncs, S3 as each 8 MiB segment is stored, at a chunk boundary).
      const sent = 100_000 + 9.5 * 1024 * 1024;
      const body = new ReadableStream<Uint8Array>({
        start(c) {
          hang = c;
          for (let at = 100_000; at < sent; at += CHUNK_SIZE) c.enqueue(before.subarray(at, Math.min(sent, at + CHUNK_SIZE)));
        },
      });
      const stalled = fetch(`${server.url}${path}`, { method: 'PATCH', headers: patchHeaders(100_000), body, duplex: 'half' } as RequestInit).catch(() => undefined);
      const wanted = HEADER_SIZE + STORED_CHUNK + 8 * 1024 * 1024;
      const deadline = Date.now() + 30_000;
      const stagedEnd = async () => Math.max(0, ...(await stagingPieces(dataDir, id, s3)).map((p) => p.at + p.bytes.length));
      while ((await stagedEnd()) < wanted) {
        assert.ok(Date.now() < deadline, `the staging reaches ${wanted} stored bytes within 30 s`);
        await new Promise((r) => setTimeout(r, 100));
      }
      await server.stop('SIGKILL');
      server = undefined;
      await stalled;
      const staged = await stagingPieces(dataDir, id, s3);

      server = await start();
      Object.assign(auth, bearer((await login(server.url, 'admin', ADMIN_PASSWORD)).access_token));
      const head = await fetch(`${server.url}${path}`, { method: 'HEAD', headers: { ...auth, ...TUS } });
      const resumeAt = Number(head.headers.get('upload-offset'));
      assert.ok(resumeAt >= 100_000 && resumeAt < sent, `resumes at ${resumeAt}`);
      // The lease of the killed PATCH lapses within its 10 s; until then a PATCH is 409 (asked with an
      // empty one: a refused long body would break its connection).
      const leaseDeadline = Date.now() + 20_000;
      for (;;) {
        const probe = await fetch(`${server.url}${path}`, { method: 'PATCH', headers: patchHeaders(resumeAt), body: Buffer.alloc(0) });
        await probe.arrayBuffer();
        if (probe.status !== 409) {
          assert.equal(probe.status, 204);
          break;
        }
        assert.ok(Date.now() < leaseDeadline, 'the killed PATCH’s lease lapses within 20 s');
        await new Promise((r) => setTimeout(r, 250));
      }
      const resumed = await fetch(`${server.url}${path}`, { method: 'PATCH', headers: patchHeaders(resumeAt), body: after.subarray(resumeAt) });
      assert.equal(resumed.status, 204, await resumed.text());
      assert.equal(resumed.headers.get('upload-offset'), String(length));

      const expected = Buffer.concat([before.subarray(0, resumeAt), after.subarray(resumeAt)]);
      const got = await fetch(`${server.url}/storage/admin/crash.bin`, { headers: auth });
      assert.equal(got.status, 200);
      assert.ok(Buffer.from(await got.arrayBuffer()).equals(expected), 'exact bytes back: the first attempt up to the resume point, the other bytes after it');
      for (const [from, to] of [
        [resumeAt - 100, resumeAt + 99],
        [resumeAt + CHUNK_SIZE - 10, resumeAt + CHUNK_SIZE + 9],
      ] as const) {
        const r = await fetch(`${server.url}/storage/admin/crash.bin`, { headers: { ...auth, range: `bytes=${from}-${to}` } });
        assert.equal(r.status, 206);
        assert.ok(Buffer.from(await r.arrayBuffer()).equals(expected.subarray(from, to + 1)), `range ${from}-${to} across the resume point`);
      }

      // The stored file, parsed: version 2, and no nonce under its key that sealed two different chunks,
      // counting those the killed PATCH left in the staging.
      const stored = s3
        ? Buffer.from(await (await s3Client().send(new GetObjectCommand({ Bucket: s3.bucket, Key: `${s3.prefix}/admin/crash.bin` }))).Body!.transformToByteArray())
        : await readFile(join(dataDir, 'storage', 'admin', 'crash.bin'));
      assert.equal(headerVersion(stored), 2);
      const final = chunksIn([{ at: 0, bytes: stored }]);
      assert.equal(final.length, Math.ceil(length / CHUNK_SIZE));
      assert.equal(new Set(final.map((c) => c.nonce)).size, final.length, 'every chunk of the file has a nonce of its own');
      const leftover = chunksIn(staged).filter((c) => c.index * CHUNK_SIZE >= resumeAt);
      const resealed = leftover.filter((c) => !samePrefix(c.bytes, final[c.index]!.bytes));
      assert.ok(resealed.length > 0, 'the killed PATCH had staged chunks past the recorded offset, and the resume sealed those indexes again from other bytes');
      const byNonce = new Map<string, Buffer>();
      for (const c of [...chunksIn(staged), ...final]) {
        const seen = byNonce.get(c.nonce);
        assert.ok(seen === undefined || samePrefix(seen, c.bytes), `nonce ${c.nonce} (chunk ${c.index}) seals one chunk only`);
        if (seen === undefined || c.bytes.length > seen.length) byNonce.set(c.nonce, c.bytes);
      }
      assert.deepEqual(await plaintextIn(dataDir, s3), [], 'no plaintext anywhere in storage');
    } finally {
      try {
        hang?.close();
      } catch {
        // Already errored with the killed connection.
      }
      await server?.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
}
