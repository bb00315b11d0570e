// Encryption at rest from the command line (CONTRACT "Encryption at rest"), against the real
// binary on local disk and on S3: keygen, a start refused with one line for a wrong, missing or
// unreadable key and for encrypted files without a key; uploads stored without a byte of
// plaintext; migrate killed midway and run again; versions and trash items migrated and rotated too.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { bearer, login } from '../helpers/client.js';
import { ADMIN_PASSWORD, BIN, REPO_ROOT, runCli, s3ServerOptions, startServer } from '../helpers/server.js';
import { newDatabase, redisService, s3Client, skipReason } from '../helpers/services.js';
import { HEADER_SIZE } from '../../src/lib/encryption/format.js';

const MARK = 'PLAINTEXT-MARKER-51c9';
const contents = (i: number) => Buffer.from(`${MARK} file ${i} `.repeat(5000 + i));

/** One stored file or object of a user's tree. */
async function storedFile(dataDir: string, path: string, s3?: { bucket: string; prefix: string }): Promise<Buffer> {
  if (!s3) return readFile(join(dataDir, 'storage', path));
  return Buffer.from(await (await s3Client().send(new GetObjectCommand({ Bucket: s3.bucket, Key: `${s3.prefix.replace(/\/$/, '')}/${path}` }))).Body!.transformToByteArray());
}

/** A version's stored bytes (local: data/versions/<owner>/<id>; S3: below the prefix's .file-cloud/versions/). */
async function storedVersion(dataDir: string, owner: string, id: string, s3?: { bucket: string; prefix: string }): Promise<Buffer> {
  if (!s3) return readFile(join(dataDir, 'versions', owner, id));
  return storedFile(dataDir, `.file-cloud/versions/${owner}/${id}`, s3);
}

/** Every stored object or file of a data dir's storage, versions and trash (local: data/storage, data/versions, data/trash; S3: the prefix). */
async function storedBytes(dataDir: string, s3?: { bucket: string; prefix: string }): Promise<Buffer[]> {
  if (!s3) {
    const out: Buffer[] = [];
    for (const root of [join(dataDir, 'storage'), join(dataDir, 'versions'), join(dataDir, 'trash')]) {
      const all = await readdir(root, { recursive: true, withFileTypes: true }).catch(() => []);
      out.push(...(await Promise.all(all.filter((e) => e.isFile()).map((e) => readFile(join(e.parentPath, e.name))))));
    }
    return out;
  }
  const listed = await s3Client().send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: s3.prefix }));
  return Promise.all((listed.Contents ?? []).map(async (o) => Buffer.from(await (await s3Client().send(new GetObjectCommand({ Bucket: s3.bucket, Key: o.Key }))).Body!.transformToByteArray())));
}

/** A trash item's stored file (local: data/trash/<owner>/<id>/<path>; S3: below the prefix's .file-cloud/trash/). */
async function storedTrash(dataDir: string, owner: string, id: string, path: string, s3?: { bucket: string; prefix: string }): Promise<Buffer> {
  if (!s3) return readFile(join(dataDir, 'trash', owner, id, path));
  return storedFile(dataDir, `.file-cloud/trash/${owner}/${id}/${path}`, s3);
}

type TrashListing = { items: { id: string; path: string }[] };

/** Restores every trash item of the signed-in user and checks each file's bytes where it came back. */
async function restoreAll(url: string, auth: Record<string, string>, want: Record<string, Buffer>): Promise<void> {
  const { items } = (await (await fetch(`${url}/api/trash`, { headers: auth })).json()) as TrashListing;
  for (const item of items) assert.equal((await fetch(`${url}/api/trash/${item.id}/restore`, { method: 'POST', headers: auth })).status, 200, item.path);
  for (const [path, data] of Object.entries(want)) {
    const r = await fetch(`${url}/storage/admin/${path}`, { headers: auth });
    assert.equal(r.status, 200, path);
    assert.deepEqual(Buffer.from(await r.arrayBuffer()), data, `${path}: restored from the trash, exact bytes`);
  }
}

/** Runs fn on a fresh directory (the data dir inside it) and, on S3, a fresh prefix; removes the directory after. */
async function inDataDir(storage: 'file' | 's3' | 'cluster', fn: (at: { dir: string; dataDir: string; s3: Awaited<ReturnType<typeof s3ServerOptions>> | undefined }) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'fc-enc-cli-'));
  try {
    const s3 = storage === 'file' ? undefined : await s3ServerOptions();
    // The cluster's database goes to the server and to every command alike (Redis to the server alone).
    if (storage === 'cluster') s3?.args.push('--database', await newDatabase('enc'));
    await fn({ dir, dataDir: join(dir, 'data'), s3 });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const plaintextIn = async (dataDir: string, s3?: { bucket: string; prefix: string }) => (await storedBytes(dataDir, s3)).filter((b) => b.includes(MARK)).length;

for (const [storage, skip] of [['file', undefined], ['s3', skipReason('S3')]] as const) {
  describe(`encryption on ${storage}`, { skip }, () => {
    test('keygen, encrypted uploads, and a start refused in one line without the key, with another or an unreadable one', () =>
      inDataDir(storage, async ({ dir, dataDir, s3 }) => {
      const keyFile = join(dir, 'key');
        const made = await runCli(['encryption', 'keygen', keyFile]);
        assert.equal(made.code, 0, made.stderr);
        assert.equal((await stat(keyFile)).mode & 0o777, 0o600);
        assert.equal(Buffer.from((await readFile(keyFile, 'utf8')).trim(), 'base64').length, 32);
        const again = await runCli(['encryption', 'keygen', keyFile]);
        assert.equal(again.code, 1, 'an existing key file is never overwritten');
        const server = await startServer({ dataDir, args: [...(s3?.args ?? []), '--encryption-key-file', keyFile], env: s3?.env ?? {} });
        try {
          const auth = bearer((await login(server.url, 'admin', ADMIN_PASSWORD)).access_token);
          const data = contents(1);
          assert.equal((await fetch(`${server.url}/storage/admin/a.txt`, { method: 'PUT', headers: auth, body: data })).status, 201);
          const got = await fetch(`${server.url}/storage/admin/a.txt`, { headers: auth });
          assert.equal(got.headers.get('content-length'), String(data.length));
          assert.deepEqual(Buffer.from(await got.arrayBuffer()), data);
          const ranged = await fetch(`${server.url}/storage/admin/a.txt`, { headers: { ...auth, range: 'bytes=65530-65545' } });
          assert.equal(ranged.status, 206);
          assert.deepEqual(Buffer.from(await ranged.arrayBuffer()), data.subarray(65530, 65546));
          assert.equal(await plaintextIn(dataDir, s3), 0, 'no plaintext in storage');
        } finally {
          await server.stop();
        }
        const other = join(dir, 'other');
        assert.equal((await runCli(['encryption', 'keygen', other])).code, 0);
        await writeFile(join(dir, 'bad'), 'not a key\n');
        const serve = (extra: string[]) => runCli(['serve', '--data-dir', dataDir, '--port', '0', ...(s3?.args ?? []), ...extra], { env: { ...s3?.env, FILE_CLOUD_ADMIN_PASSWORD: ADMIN_PASSWORD } });
        const cases: [string, string[], RegExp][] = [
          ['no key', [], /encrypted .*start with --encryption-key-file/],
          ['another key', ['--encryption-key-file', other], /not the one this data directory's files are encrypted with/],
          ['a missing key file', ['--encryption-key-file', join(dir, 'nowhere')], /cannot read the encryption key file .*ENOENT/],
          ['a file that holds no key', ['--encryption-key-file', join(dir, 'bad')], /holds no key/],
        ];
        for (const [what, extra, message] of cases) {
          const r = await serve(extra);
          assert.equal(r.code, 1, `${what}: ${r.stderr}`);
          assert.match(r.stderr, message, what);
          assert.equal(r.stderr.trim().split('\n').length, 1, `${what}: one line`);
        }
      }));

    test('migrate encrypts files, versions and trash items written before the key; killed midway and run again, every one is whole', () =>
      inDataDir(storage, async ({ dir, dataDir, s3 }) => {
      const keyFile = join(dir, 'key');
      const files = Array.from({ length: 40 }, (_, i) => ({ path: `docs/f${i}.txt`, data: contents(i) }));
        assert.equal((await runCli(['encryption', 'keygen', keyFile])).code, 0);
        const serveArgs = [...(s3?.args ?? []), '--versions', '--trash-days', '7'];
        const before = await startServer({ dataDir, args: serveArgs, env: s3?.env ?? {} });
        // f0 replaced once: its first contents are a version, kept plain like the files.
        const replaced = contents(100);
        // A folder of two files and a lone file deleted into the trash: three plain trash files.
        const trashed: Record<string, Buffer> = { 'old/x.txt': contents(200), 'old/sub/y.txt': contents(201), 'lone.txt': contents(202) };
        try {
          const auth = bearer((await login(before.url, 'admin', ADMIN_PASSWORD)).access_token);
          for (const f of files) assert.equal((await fetch(`${before.url}/storage/admin/${f.path}`, { method: 'PUT', headers: auth, body: f.data })).status, 201);
          assert.ok((await fetch(`${before.url}/storage/admin/docs/f0.txt`, { method: 'PUT', headers: auth, body: replaced })).ok);
          for (const [path, data] of Object.entries(trashed)) assert.equal((await fetch(`${before.url}/storage/admin/${path}`, { method: 'PUT', headers: auth, body: data })).status, 201, path);
          for (const path of ['old/', 'lone.txt']) assert.equal((await fetch(`${before.url}/storage/admin/${path}`, { method: 'DELETE', headers: auth })).status, 204, path);
        } finally {
          await before.stop();
        }
        assert.equal(await plaintextIn(dataDir, s3), files.length + 1 + 3);
        const args = ['encryption', 'migrate', '--data-dir', dataDir, '--encryption-key-file', keyFile, ...(s3?.args ?? [])];
        // Killed as soon as it reports its first file: the rest is left to the second run.
        const killed = await new Promise<string>((res) => {
          const proc = spawn(process.execPath, [BIN, ...args], { cwd: REPO_ROOT, env: { ...process.env, ...s3?.env }, stdio: ['ignore', 'ignore', 'pipe'] });
          let err = '';
          proc.stderr.on('data', (d: Buffer) => {
            err += d.toString();
            if (/encrypted admin\//.test(err)) proc.kill('SIGKILL');
          });
          proc.once('exit', () => res(err));
        });
        assert.match(killed, /encrypted admin\//);
        // The version and the trash are visited after the files: killed among the files, they are still plain.
        const left = (await plaintextIn(dataDir, s3)) - 1 - 3;
        assert.ok(left < files.length, `the first run encrypted some: ${left} of ${files.length} still plain`);
        const rerun = await runCli(args, { env: s3?.env });
        assert.equal(rerun.code, 0, rerun.stderr);
        assert.match(rerun.stderr, new RegExp(`admin: ${left} encrypted, ${files.length - left} already encrypted`));
        assert.match(rerun.stderr, /admin: 1 versions encrypted, 0 already encrypted/);
        assert.match(rerun.stderr, /admin: 3 trash files encrypted, 0 already encrypted/);
        assert.equal(await plaintextIn(dataDir, s3), 0);
        const again = await runCli(args, { env: s3?.env });
        assert.match(again.stderr, /admin: 0 versions encrypted, 1 already encrypted/);
        assert.match(again.stderr, /admin: 0 trash files encrypted, 3 already encrypted/);
        const after = await startServer({ dataDir, args: [...serveArgs, '--encryption-key-file', keyFile], env: s3?.env ?? {} });
        try {
          const auth = bearer((await login(after.url, 'admin', ADMIN_PASSWORD)).access_token);
          for (const f of [...files.slice(1), { path: 'docs/f0.txt', data: replaced }]) {
            const r = await fetch(`${after.url}/storage/admin/${f.path}`, { headers: auth });
            assert.equal(r.headers.get('content-length'), String(f.data.length), f.path);
            assert.deepEqual(Buffer.from(await r.arrayBuffer()), f.data, f.path);
          }
          const { versions } = (await (await fetch(`${after.url}/storage/admin/docs/f0.txt?versions`, { headers: auth })).json()) as { versions: { id: string; size: number }[] };
          assert.deepEqual(versions.map((v) => v.size), [files[0]!.data.length]);
          const kept = await fetch(`${after.url}/storage/admin/docs/f0.txt?version=${versions[0]!.id}`, { headers: auth });
          assert.deepEqual(Buffer.from(await kept.arrayBuffer()), files[0]!.data, 'the version reads back whole, now encrypted');
          await restoreAll(after.url, auth, trashed);
        } finally {
          await after.stop();
        }
      }));

    test('rotate re-wraps every data key, the contents stay byte for byte; the old key is refused, the new one reads all, versions too', () => rotates(storage));
  });
}

/** The rotate case on a backend: `cluster` is S3 + PostgreSQL + Redis with two workers. */
const rotates = (storage: 'file' | 's3' | 'cluster') =>
  inDataDir(storage, async ({ dir, dataDir, s3 }) => {
    const [k1, k2] = [join(dir, 'k1'), join(dir, 'k2')];
    const serveArgs = (key: string) => [...(s3?.args ?? []), ...(storage === 'cluster' ? ['--workers', '2', '--redis', redisService()!] : []), '--versions', '--trash-days', '7', '--encryption-key-file', key];
    const gone = contents(3);
    const first = contents(1);
    const second = contents(2);
    const big = contents(30);
    for (const k of [k1, k2]) assert.equal((await runCli(['encryption', 'keygen', k])).code, 0);
    const before = await startServer({ dataDir, args: serveArgs(k1), env: s3?.env ?? {} });
    let versionId: string;
    let trashId: string;
    try {
      const auth = bearer((await login(before.url, 'admin', ADMIN_PASSWORD)).access_token);
      for (const [path, body] of [['a.txt', first], ['a.txt', second], ['b.bin', big]] as const) assert.equal((await fetch(`${before.url}/storage/admin/${path}`, { method: 'PUT', headers: auth, body })).status, 201);
      versionId = ((await (await fetch(`${before.url}/storage/admin/a.txt?versions`, { headers: auth })).json()) as { versions: { id: string }[] }).versions[0]!.id;
      assert.equal((await fetch(`${before.url}/storage/admin/gone.txt`, { method: 'PUT', headers: auth, body: gone })).status, 201);
      assert.equal((await fetch(`${before.url}/storage/admin/gone.txt`, { method: 'DELETE', headers: auth })).status, 204);
      trashId = ((await (await fetch(`${before.url}/api/trash`, { headers: auth })).json()) as TrashListing).items[0]!.id;
    } finally {
      await before.stop();
    }
    const was = await Promise.all(['admin/a.txt', 'admin/b.bin'].map((p) => storedFile(dataDir, p, s3)));
    const versionWas = await storedVersion(dataDir, 'admin', versionId, s3);
    const trashWas = await storedTrash(dataDir, 'admin', trashId, 'gone.txt', s3);
    const r = await runCli(['encryption', 'rotate', '--data-dir', dataDir, '--encryption-key-file', k1, '--new-key-file', k2, ...(s3?.args ?? [])], { env: s3?.env });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /admin: 2 re-wrapped/);
    assert.match(r.stderr, /admin: 1 versions re-wrapped/);
    assert.match(r.stderr, /admin: 1 trash files re-wrapped/);
    const now = await Promise.all(['admin/a.txt', 'admin/b.bin'].map((p) => storedFile(dataDir, p, s3)));
    const thenAll = [...was, versionWas, trashWas];
    for (const [i, b] of [...now, await storedVersion(dataDir, 'admin', versionId, s3), await storedTrash(dataDir, 'admin', trashId, 'gone.txt', s3)].entries()) {
      const then = thenAll[i]!;
      assert.deepEqual(b.subarray(HEADER_SIZE), then.subarray(HEADER_SIZE), 'the contents’ ciphertext is unchanged');
      assert.notDeepEqual(b.subarray(0, HEADER_SIZE), then.subarray(0, HEADER_SIZE), 'the header is new');
    }
    const old = await runCli(['serve', '--data-dir', dataDir, '--port', '0', ...serveArgs(k1)], { env: { ...s3?.env, FILE_CLOUD_ADMIN_PASSWORD: ADMIN_PASSWORD } });
    assert.equal(old.code, 1, old.stderr);
    assert.match(old.stderr, /not the one this data directory's files are encrypted with/);
    const after = await startServer({ dataDir, args: serveArgs(k2), env: s3?.env ?? {} });
    try {
      const auth = bearer((await login(after.url, 'admin', ADMIN_PASSWORD)).access_token);
      assert.deepEqual(Buffer.from(await (await fetch(`${after.url}/storage/admin/a.txt`, { headers: auth })).arrayBuffer()), second);
      assert.deepEqual(Buffer.from(await (await fetch(`${after.url}/storage/admin/b.bin`, { headers: auth })).arrayBuffer()), big);
      const { versions } = (await (await fetch(`${after.url}/storage/admin/a.txt?versions`, { headers: auth })).json()) as { versions: { id: string }[] };
      assert.equal(versions.length, 1);
      const kept = await fetch(`${after.url}/storage/admin/a.txt?version=${versions[0]!.id}`, { headers: auth });
      assert.equal(kept.status, 200);
      assert.deepEqual(Buffer.from(await kept.arrayBuffer()), first, 'a version from before the rotate reads with the new key');
      await restoreAll(after.url, auth, { 'gone.txt': gone });
    } finally {
      await after.stop();
    }
  });

test('rotate on S3 + PostgreSQL + Redis with two workers: the same, the key record and keyring in PostgreSQL', { skip: skipReason('S3') ?? skipReason('PostgreSQL') ?? skipReason('Redis') }, () => rotates('cluster'));
