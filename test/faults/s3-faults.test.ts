// Faults of File Cloud on S3 (Ceph radosgw): the object store dies in the middle of an upload,
// another tool aborts an upload's multipart upload, File Cloud dies in the middle of an upload and
// in the middle of a folder move. Each
// time the client gets a clear answer (or none, when the server itself died) and, once the
// dead part is back, the journal and the sweeper leave no partial object, no orphaned multipart
// upload and no half-moved folder. Servers are the real binary; the store is checked directly
// with the SDK on the main gateway. FC_FAULT_SEED replays the kill points of the move rounds.
import { after, describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AbortMultipartUploadCommand, HeadObjectCommand, ListMultipartUploadsCommand, ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { runCli, s3ServerOptions, startServer, type ServerProcess } from '../helpers/server.js';
import { rgwStart, rgwStop, s3Client, s3Service, skipReason } from '../helpers/services.js';
import { bearer, encodePath, login } from '../helpers/client.js';
import { faultSeed, prng, sleep } from './crash-helpers.js';

const MiB = 1024 * 1024;
const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
/** How long the sweeper (every second with --stale-upload-after 1) may take to clean up. */
const SWEEP_DEADLINE_MS = 15_000;
/**
 * Leases a SIGKILLed process held stay taken this long (TTL_MS in src/storage/coordination.ts and
 * src/cluster/leader.ts): a restarted server sweeps only once the dead one's `leader` lease has
 * expired, and takes over a journaled folder move only once that move's lease has.
 */
const LEASE_TTL_MS = 30_000;
/** A process not leading tries to take the `leader` lease every 10 s (src/cluster/leader.ts). */
const LEADER_RETRY_MS = 10_000;
/** From a SIGKILL until the restarted server has taken over leadership (and with it the sweeps). */
const TAKEOVER_MS = LEASE_TTL_MS + LEADER_RETRY_MS;
/**
 * Servers that get SIGKILLed run as one process (--workers 1), so the kill hits the process doing
 * the work; with workers, SIGKILL reaches only the cluster primary.
 */
const ONE_PROCESS = ['--workers', '1'];
const ALICE_PASSWORD = 'alice-password-for-s3-faults';

async function waitFor<T>(what: string, ms: number, probe: () => Promise<T | undefined>): Promise<{ value: T; ms: number }> {
  const t = Date.now();
  for (;;) {
    const value = await probe();
    if (value !== undefined) return { value, ms: Date.now() - t };
    if (Date.now() - t > ms) assert.fail(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(100);
  }
}

/** Multipart uploads in progress below a key prefix (one page is plenty here). */
async function uploadsUnder(s3: S3Client, bucket: string, prefix: string): Promise<{ Key?: string; UploadId?: string }[]> {
  return (await s3.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: prefix }))).Uploads ?? [];
}

async function objectExists(s3: S3Client, bucket: string, key: string): Promise<boolean> {
  try {
    await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
    return true;
  } catch (e) {
    if ((e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return false;
    throw e;
  }
}

async function keysUnder(s3: S3Client, bucket: string, prefix: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  let token: string | undefined;
  do {
    const r = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }));
    for (const o of r.Contents ?? []) out.set((o.Key as string).slice(prefix.length), o.Size ?? 0);
    token = r.IsTruncated ? r.NextContinuationToken : undefined;
  } while (token);
  return out;
}

type Outcome = { kind: 'response'; status: number; body: string } | { kind: 'closed'; error: string };

/**
 * A raw PUT of `total` declared bytes whose body the test feeds by hand: `send(upTo, pauseMs)`
 * writes 1 MiB chunks until upTo bytes are sent (or the request has an outcome), pausing between
 * chunks. `outcome` is the server's answer, or how the connection ended without one.
 */
function streamedPut(base: string, token: string, path: string, total: number) {
  const url = new URL(`${base}/storage/${encodePath(path)}`);
  const req = request({ host: url.hostname, port: url.port, path: url.pathname, method: 'PUT', headers: { ...bearer(token), 'content-type': 'application/octet-stream', 'content-length': String(total) } });
  let settled = false;
  const outcome = new Promise<Outcome>((resolve) => {
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ kind: 'response', status: res.statusCode ?? 0, body }));
      res.on('error', (e) => resolve({ kind: 'closed', error: `${e.message} after a ${res.statusCode} head` }));
    });
    req.on('error', (e) => resolve({ kind: 'closed', error: e.message }));
  }).finally(() => (settled = true));
  const chunk = randomBytes(MiB);
  let sent = 0;
  const send = async (upTo: number, pauseMs = 0) => {
    while (sent < Math.min(upTo, total) && !settled) {
      const n = Math.min(chunk.length, total - sent);
      sent += n;
      if (!req.write(chunk.subarray(0, n))) await Promise.race([new Promise((r) => req.once('drain', r)), outcome]);
      if (pauseMs) await sleep(pauseMs);
    }
    if (sent >= total && !settled) req.end();
  };
  return { send, outcome, sent: () => sent, destroy: () => req.destroy() };
}

async function addAlice(dataDir: string, storage: string, env: Record<string, string>): Promise<void> {
  const r = await runCli(['--data-dir', dataDir, '--storage', storage, 'user', 'add', 'alice', '--password', ALICE_PASSWORD], { env });
  assert.equal(r.code, 0, `user add alice: ${r.stderr}`);
}

/** SIGTERM, and SIGKILL if the server has not exited 30 s later (a hung shutdown must not hang the suite). */
async function stopServer(server: ServerProcess | undefined): Promise<void> {
  if (!server) return;
  let timer: NodeJS.Timeout | undefined;
  const hung = await Promise.race([server.stop().then(() => false), new Promise<boolean>((r) => (timer = setTimeout(() => r(true), 30_000)))]);
  clearTimeout(timer);
  if (hung) {
    await server.stop('SIGKILL');
    assert.fail(`the server did not exit within 30 s of SIGTERM\n${server.output().stderr.slice(-2000)}`);
  }
}

let faultGateway = false;
after(async () => {
  // never leave the extra gateway running, whatever failed
  if (faultGateway) await rgwStop('fault', 'KILL').catch(() => undefined);
});

test('the object store killed mid-upload: 503 storage_unavailable, and after it returns no object and no multipart upload remain', { skip: skipReason('S3') }, async (t: TestContext) => {
  const s3 = s3Client();
  const gw = await rgwStart('fault');
  faultGateway = true;
  const base = await s3ServerOptions();
  // as s3ServerOptions builds it, but through the extra gateway
  const storage = `s3://${base.bucket}/${base.prefix}?endpoint=${encodeURIComponent(gw.endpoint)}&region=${s3Service()!.region}&path_style=true`;
  const dataDir = await mkdtemp(join(tmpdir(), 'fc-s3-fault-'));
  let server: ServerProcess | undefined;
  try {
    server = await startServer({ dataDir, keepDataDir: true, args: ['--storage', storage, '--stale-upload-after', '1'], env: base.env });
    await addAlice(dataDir, storage, base.env);
    const { access_token } = await login(server.url, 'alice', ALICE_PASSWORD);
    const key = `${base.prefix}/alice/big.bin`;

    // 20 MiB at once: the first 8 MiB parts go out, so a multipart upload exists; then the gateway dies.
    const up = streamedPut(server.url, access_token, 'alice/big.bin', 60 * MiB);
    await up.send(20 * MiB);
    await waitFor('the multipart upload to start', 10_000, async () => ((await uploadsUnder(s3, base.bucket, key)).length > 0 ? true : undefined));
    await rgwStop('fault', 'KILL');
    const killedAt = Date.now();
    // The rest trickles in (1 MiB / 50 ms) until the server answers.
    void up.send(60 * MiB, 50);
    let timer: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([up.outcome, new Promise<Outcome>((r) => (timer = setTimeout(() => r({ kind: 'closed', error: 'no outcome within 60 s' }), 60_000)))]);
    clearTimeout(timer);
    up.destroy();
    t.diagnostic(`upload outcome ${Math.round((Date.now() - killedAt) / 100) / 10} s after the kill, ${up.sent() / MiB} MiB sent: ${JSON.stringify(outcome)}`);
    // The server is alive and must say what happened: a 5xx JSON naming the store, never a bare close or a 500.
    assert.equal(outcome.kind, 'response', `the upload got no answer: ${outcome.kind === 'closed' ? outcome.error : ''}\n${server.output().stderr.slice(-3000)}`);
    assert.notEqual(outcome.status, 500, `500 (a bug): ${outcome.body}\n${server.output().stdout.slice(-3000)}`);
    assert.ok(outcome.status === 502 || outcome.status === 503, `status ${outcome.status}: ${outcome.body}`);
    const answer = JSON.parse(outcome.body) as { error: string; message: string };
    assert.ok(['storage_unavailable', 'storage_failed'].includes(answer.error), outcome.body);
    assert.equal(outcome.status, answer.error === 'storage_unavailable' ? 503 : 502);

    // While the store is down: listings say so, the liveness check does not depend on it.
    const list = await fetch(`${server.url}/storage/alice/`, { headers: bearer(access_token) });
    assert.equal(list.status, 503);
    assert.equal(((await list.json()) as { error: string }).error, 'storage_unavailable');
    assert.equal((await fetch(`${server.url}/is_file_cloud`)).status, 200);

    await rgwStart('fault', gw.port);
    assert.equal(await objectExists(s3, base.bucket, key), false, 'no object at the key');
    const swept = await waitFor('the sweeper to abort the orphaned multipart upload', SWEEP_DEADLINE_MS, async () => ((await uploadsUnder(s3, base.bucket, `${base.prefix}/`)).length === 0 ? true : undefined));
    t.diagnostic(`multipart upload aborted ${swept.ms} ms after the gateway came back`);
    assert.equal(await objectExists(s3, base.bucket, key), false, 'still no object at the key');

    // and the server works again through the same gateway
    const again = await fetch(`${server.url}/storage/alice/after.txt`, { method: 'PUT', headers: bearer(access_token), body: 'back' });
    assert.equal(again.status, 201, await again.text());
  } finally {
    await stopServer(server);
    await rgwStop('fault', 'KILL').catch(() => undefined);
    faultGateway = false;
    s3.destroy();
    await rm(dataDir, { recursive: true, force: true });
  }
});

test('a multipart upload aborted under a live upload (by another tool) fails it with 502 storage_failed, not 500', { skip: skipReason('S3') }, async (t: TestContext) => {
  const s3 = s3Client();
  const opts = await s3ServerOptions();
  let server: ServerProcess | undefined;
  try {
    server = await startServer({ args: opts.args, env: opts.env });
    const { access_token } = await login(server.url, 'admin', server.adminPassword);
    const key = `${opts.prefix}/admin/pulled.bin`;
    const up = streamedPut(server.url, access_token, 'admin/pulled.bin', 60 * MiB);
    await up.send(20 * MiB);
    const { value: [upload] } = await waitFor('the multipart upload to start', 10_000, async () => {
      const ups = await uploadsUnder(s3, opts.bucket, key);
      return ups.length > 0 ? ups : undefined;
    });
    await s3.send(new AbortMultipartUploadCommand({ Bucket: opts.bucket, Key: key, UploadId: upload!.UploadId }));
    const abortedAt = Date.now();
    void up.send(60 * MiB);
    const outcome = await up.outcome;
    up.destroy();
    t.diagnostic(`answered ${Date.now() - abortedAt} ms after the abort, ${up.sent() / MiB} MiB sent`);
    // The next UploadPart (or the CompleteMultipartUpload) gets NoSuchUpload: the store refused a request of ours.
    assert.equal(outcome.kind, 'response', JSON.stringify(outcome));
    assert.equal(outcome.status, 502, `${outcome.status} ${outcome.body}`);
    assert.equal((JSON.parse(outcome.body) as { error: string }).error, 'storage_failed');
    assert.equal(await objectExists(s3, opts.bucket, key), false);
    assert.deepEqual(await uploadsUnder(s3, opts.bucket, `${opts.prefix}/`), []);
  } finally {
    await stopServer(server);
    s3.destroy();
  }
});

test('File Cloud SIGKILLed mid-upload: after a restart the sweeper aborts its multipart upload and no object appears', { skip: skipReason('S3') }, async (t: TestContext) => {
  const s3 = s3Client();
  const opts = await s3ServerOptions();
  const dataDir = await mkdtemp(join(tmpdir(), 'fc-s3-fault-'));
  let server: ServerProcess | undefined;
  try {
    // The default --stale-upload-after (an hour): nothing sweeps the live upload before the kill.
    server = await startServer({ dataDir, keepDataDir: true, args: [...opts.args, ...ONE_PROCESS], env: opts.env });
    const { access_token } = await login(server.url, 'admin', server.adminPassword);
    const key = `${opts.prefix}/admin/killed.bin`;
    const up = streamedPut(server.url, access_token, 'admin/killed.bin', 100 * MiB);
    await up.send(40 * MiB);
    const started = await waitFor('a multipart upload of the key', 10_000, async () => {
      const ups = await uploadsUnder(s3, opts.bucket, key);
      return ups.some((u) => u.Key === key) ? ups : undefined;
    });
    assert.equal(started.value.length, 1, 'one multipart upload');
    await server.stop('SIGKILL');
    const killedAt = Date.now();
    up.destroy();
    assert.equal((await uploadsUnder(s3, opts.bucket, key)).length, 1, 'the dead writer left its multipart upload');

    server = await startServer({ dataDir, keepDataDir: true, args: [...opts.args, ...ONE_PROCESS, '--stale-upload-after', '1'], env: opts.env });
    const restartedAfter = Date.now() - killedAt;
    // Sweeps run on the leader only: the restarted process leads once the dead one's lease has expired.
    const swept = await waitFor('the sweeper to abort the dead multipart upload', TAKEOVER_MS + SWEEP_DEADLINE_MS - restartedAfter, async () =>
      (await uploadsUnder(s3, opts.bucket, `${opts.prefix}/`)).length === 0 ? true : undefined,
    );
    t.diagnostic(`restarted ${restartedAfter} ms after the kill; multipart upload aborted ${swept.ms} ms after the restart (${restartedAfter + swept.ms} ms after the kill)`);
    assert.equal(await objectExists(s3, opts.bucket, key), false, 'no object at the key');
    const { access_token: token } = await login(server.url, 'admin', server.adminPassword);
    assert.equal((await fetch(`${server.url}/storage/admin/killed.bin`, { headers: bearer(token) })).status, 404);
  } finally {
    await stopServer(server);
    s3.destroy();
    await rm(dataDir, { recursive: true, force: true });
  }
});

const MOVE_FILES = 300;
const SEED = faultSeed();

// The rounds run side by side: each has its own server, data dir and prefix, and each spends most of
// its time waiting for the dead process's leases to expire, which does not get shorter in a queue.
describe(`folder move of ${MOVE_FILES} files SIGKILLed midway`, { concurrency: true, skip: skipReason('S3') }, () => {
  for (const round of [0, 1, 2]) {
    test(`round ${round}: after a restart it completes from the journal`, async (t: TestContext) => {
      const seed = SEED + round;
      const rand = prng(seed);
      t.diagnostic(`FC_FAULT_SEED=${SEED}`);
      const s3 = s3Client();
      const opts = await s3ServerOptions();
      const dataDir = await mkdtemp(join(tmpdir(), 'fc-s3-fault-'));
      const args = [...opts.args, ...ONE_PROCESS, '--stale-upload-after', '1'];
      let server: ServerProcess | undefined;
      try {
        // The tree, put straight into the bucket: nested folders, an empty one (a marker), small files.
        const root = `${opts.prefix}/admin/work/`;
        const files = new Map<string, Buffer>();
        for (let i = 0; i < MOVE_FILES; i++) files.set(`${['', 'a/', 'b/c/'][i % 3]}f-${String(i).padStart(3, '0')}.txt`, Buffer.concat([Buffer.from(`file ${i} seed ${seed}\n`), randomBytes(Math.floor(rand() * 2000))]));
        const puts = [...files].map(([rel, body]) => () => s3.send(new PutObjectCommand({ Bucket: opts.bucket, Key: `${root}src/${rel}`, Body: body })));
        puts.push(() => s3.send(new PutObjectCommand({ Bucket: opts.bucket, Key: `${root}src/empty/`, Body: new Uint8Array(0), ContentLength: 0 })));
        await Promise.all(
          Array.from({ length: 16 }, async () => {
            for (let p = puts.shift(); p; p = puts.shift()) await p();
          }),
        );

        server = await startServer({ dataDir, keepDataDir: true, args, env: opts.env });
        const { access_token } = await login(server.url, 'admin', server.adminPassword);

        // The kill point: once the copy phase has copied a seeded share of the files; the rounds
        // take it early (10–30 %), midway (35–55 %) and late (60–80 %).
        const target = Math.max(1, Math.floor(MOVE_FILES * (0.1 + 0.25 * round + 0.2 * rand())));
        const startedAt = Date.now();
        let answered: number | undefined;
        const move = fetch(`${server.url}/storage/admin/work/src`, { method: 'POST', headers: { ...bearer(access_token), 'content-type': 'application/json' }, body: JSON.stringify({ action: 'Move', new_path: '/admin/work/dst' }) }).then(
          (r) => (answered = r.status),
          () => undefined,
        );
        await waitFor(`${target} copies at the destination`, 60_000, async () => ((await keysUnder(s3, opts.bucket, `${root}dst/`)).size >= target || answered !== undefined ? true : undefined));
        await server.stop('SIGKILL');
        const killedAt = Date.now();
        await move;
        const [src, dst] = await Promise.all([keysUnder(s3, opts.bucket, `${root}src/`), keysUnder(s3, opts.bucket, `${root}dst/`)]);
        t.diagnostic(`killed ${killedAt - startedAt} ms into the move (target ${target}): ${dst.size} keys at the destination, ${src.size} left at the source`);
        assert.equal(answered, undefined, `the move finished (${answered}) before the kill: make the folder bigger`);
        assert.ok(dst.size > 0 && src.size > 0, 'the kill hit the move in progress');
        // The resumed job copies every key again (each phase is idempotent, not incremental).
        const fullCopyMs = ((killedAt - startedAt) / dst.size) * (MOVE_FILES + 2);

        server = await startServer({ dataDir, keepDataDir: true, args, env: opts.env });
        const restartedAfter = Date.now() - killedAt;
        const expected = new Map([...files].map(([rel, b]) => [rel, b.length]));
        expected.set('', 0).set('empty/', 0);
        // Neither init() (the move's lease) nor the sweeper (the leader lease) takes the job before the dead process's leases expire.
        const deadline = TAKEOVER_MS + SWEEP_DEADLINE_MS + 2 * fullCopyMs - restartedAfter;
        const done = await waitFor(`the move to finish from the journal (deadline ${Math.round(deadline)} ms)`, deadline, async () => {
          const [s, d] = await Promise.all([keysUnder(s3, opts.bucket, `${root}src/`), keysUnder(s3, opts.bucket, `${root}dst/`)]);
          return s.size === 0 && d.size === expected.size ? d : undefined;
        });
        t.diagnostic(`restarted ${restartedAfter} ms after the kill; the move finished ${done.ms} ms after the restart (a full copy takes ~${Math.round(fullCopyMs)} ms here)`);
        assert.deepEqual(done.value, expected, 'every file (and the empty folder) at the destination, with its size');
        assert.equal(await objectExists(s3, opts.bucket, `${root}src`), false);

        const { access_token: token } = await login(server.url, 'admin', server.adminPassword);
        const parent = await fetch(`${server.url}/storage/admin/work/`, { headers: bearer(token) });
        assert.equal(parent.status, 200);
        assert.deepEqual(((await parent.json()) as { entries: { name: string; is_file: boolean }[] }).entries.map((e) => [e.name, e.is_file]), [['dst', false]]);
        assert.equal((await fetch(`${server.url}/storage/admin/work/src/`, { headers: bearer(token) })).status, 404);
        const queue = [...files];
        await Promise.all(
          Array.from({ length: 8 }, async () => {
            for (let f = queue.shift(); f; f = queue.shift()) {
              const [rel, body] = f;
              const r = await fetch(`${server!.url}/storage/admin/work/dst/${encodePath(rel)}`, { headers: bearer(token) });
              assert.equal(r.status, 200, `GET dst/${rel}`);
              assert.equal(sha(Buffer.from(await r.arrayBuffer())), sha(body), `content of dst/${rel}`);
            }
          }),
        );
      } finally {
        await stopServer(server);
        s3.destroy();
        await rm(dataDir, { recursive: true, force: true });
      }
    });
  }
});
