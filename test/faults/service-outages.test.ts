// Issue 36: a service that hangs (SIGSTOP) or dies (SIGKILL) under a File Cloud cluster (S3 +
// PostgreSQL + Redis, two workers). For each of Redis, PostgreSQL and radosgw, paused and killed:
// a login, a read, a write, a delete, an upload in flight and /api/health are each answered
// within the documented bound (docs/operations.md, "When a service fails") with the documented
// status — the contract's 503 JSON naming the service, with Retry-After; never a 500, a hang, a
// closed socket or a 400 — and once the service is back (SIGCONT or restart) everything works
// again, nothing the client was told failed appears, and the bucket holds no partial object or
// multipart upload. The services are private instances (test/helpers/private-services.ts): the
// shared ones serve the other test files running meanwhile.
import { after, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { HeadObjectCommand, ListMultipartUploadsCommand, type S3Client } from '@aws-sdk/client-s3';
import { s3ServerOptions, startServer, type ServerProcess } from '../helpers/server.js';
import { s3Client, s3Service, skipReason } from '../helpers/services.js';
import { privateGateway, privatePostgres, privateRedis, type PrivateService } from '../helpers/private-services.js';
import { bearer } from '../helpers/client.js';

const MiB = 1024 * 1024;
/** --request-deadline's default: the longest any request waits for a service that does not answer. */
const REQUEST_DEADLINE_MS = 10_000;
/** /api/health's own bound. */
const HEALTH_MS = 2_000;
/** Timers on a 2-core CI machine loaded by parallel suites: what an answer may take beyond its bound. */
const SLACK_MS = 2_000;
/** --stale-upload-after here: the sweeper aborts what a failed upload could not (the store was down) soon after. */
const STALE_S = 12;
const SWEEP_DEADLINE_MS = STALE_S * 1000 * 2 + 10_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Service = 'redis' | 'database' | 'storage';
type Answer = { status: number; body: string; ms: number; headers: Record<string, string | string[] | undefined> };
type Expect = { status: number; error?: string };

const UNAVAILABLE: Record<Service, Expect> = {
  redis: { status: 503, error: 'coordination_unavailable' },
  database: { status: 503, error: 'database_unavailable' },
  storage: { status: 503, error: 'storage_unavailable' },
};

/**
 * What each operation answers while the service is out (docs/operations.md): without Redis
 * everything works (the throttle and leases fall back to the database); without the database
 * nothing that needs a signed-in user does; without the store, sign-in works and files do not.
 */
const EXPECTED: Record<Service, Record<'login' | 'read' | 'write' | 'delete' | 'upload', Expect>> = {
  redis: { login: { status: 200 }, read: { status: 200 }, write: { status: 201 }, delete: { status: 204 }, upload: { status: 201 } },
  database: { login: UNAVAILABLE.database, read: UNAVAILABLE.database, write: UNAVAILABLE.database, delete: UNAVAILABLE.database, upload: UNAVAILABLE.database },
  storage: { login: { status: 200 }, read: UNAVAILABLE.storage, write: UNAVAILABLE.storage, delete: UNAVAILABLE.storage, upload: UNAVAILABLE.storage },
};

/** One request, timed; a connection that ends without an answer is a failure of its own. */
function call(url: string, init: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {}): Promise<Answer> {
  const t = Date.now();
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const req = request({ host: u.hostname, port: u.port, path: u.pathname + u.search, method: init.method ?? 'GET', headers: init.headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, ms: Date.now() - t, headers: res.headers }));
      res.on('error', (e) => reject(new Error(`${init.method ?? 'GET'} ${u.pathname}: the answer broke off after ${Date.now() - t} ms: ${e.message}`)));
    });
    req.on('error', (e) => reject(new Error(`${init.method ?? 'GET'} ${u.pathname}: no answer, the connection ended after ${Date.now() - t} ms: ${e.message}`)));
    req.end(init.body);
  });
}

/**
 * A PUT whose body goes out in two steps: `first` bytes now (so a multipart upload has begun),
 * the rest when `finish()` is called. Its answer is timed from finish().
 */
function uploadInFlight(base: string, token: string, path: string, first: number, total: number) {
  const u = new URL(`${base}/storage/${path}`);
  let finishedAt = 0;
  const req = request({ host: u.hostname, port: u.port, path: u.pathname, method: 'PUT', headers: { ...bearer(token), 'content-type': 'application/octet-stream', 'content-length': String(total) } });
  const answer = new Promise<Answer>((resolve, reject) => {
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, ms: Date.now() - (finishedAt || Date.now()), headers: res.headers }));
    });
    req.on('error', (e) => reject(new Error(`the upload in flight got no answer: ${e.message}`)));
  });
  answer.catch(() => undefined);
  req.write(randomBytes(first));
  return {
    answer,
    finish() {
      finishedAt = Date.now();
      // Written without waiting for drain: a store that does not take the bytes holds them back, and the answer comes anyway.
      req.end(randomBytes(total - first));
    },
    destroy: () => req.destroy(),
  };
}

function check(what: string, a: Answer, want: Expect, boundMs: number): void {
  const detail = `${what}: ${a.status} in ${a.ms} ms ${a.body.slice(0, 300)}`;
  assert.ok(a.ms <= boundMs + SLACK_MS, `${detail} — over the bound of ${boundMs} ms`);
  assert.equal(a.status, want.status, detail);
  if (want.error) {
    const body = JSON.parse(a.body) as { error: string; message: string };
    assert.equal(body.error, want.error, detail);
    assert.equal(typeof body.message, 'string', detail);
    assert.ok(Number(a.headers['retry-after']) > 0, `${detail} — no Retry-After`);
  }
}

async function login(base: string, password: string): Promise<Answer> {
  return call(`${base}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password }) });
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

async function multipartUploads(s3: S3Client, bucket: string, prefix: string): Promise<number> {
  return ((await s3.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: prefix }))).Uploads ?? []).length;
}

const disposers: (() => Promise<void>)[] = [];
after(async () => {
  for (const d of disposers.splice(0).reverse()) await d().catch(() => undefined);
});

/**
 * File Cloud on services of its own (a Redis, a PostgreSQL and a gateway to the shared radosgw that a
 * test may pause or kill), disposed of after the test or, if it hangs, after the file.
 */
async function onPrivateServices(gateway: string, serverArgs: string[]) {
  const s3 = s3Client();
  let services: PrivateService[] = [];
  let server: ServerProcess | undefined;
  const dispose = async () => {
    await server?.stop('SIGKILL').catch(() => undefined);
    server = undefined;
    await Promise.all(services.map((x) => x.dispose()));
    services = [];
    s3.destroy();
  };
  disposers.push(dispose);
  try {
    // Settled, not Promise.all: when one cannot start, the others that did are still stopped.
    const started = await Promise.allSettled([privateRedis(), privatePostgres(), privateGateway(gateway)]);
    services = started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    const failed = started.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
    const [redis, pg, gw] = services as [PrivateService, PrivateService, PrivateService];
    const opts = await s3ServerOptions();
    const storage = `s3://${opts.bucket}/${opts.prefix}?endpoint=${encodeURIComponent(gw.url)}&region=${s3Service()!.region}&path_style=true`;
    server = await startServer({ args: ['--storage', storage, '--database', pg.url, '--redis', redis.url, ...serverArgs], env: opts.env, startTimeoutMs: 60_000 });
    return { s3, opts, redis, pg, gw, server, dispose };
  } catch (e) {
    await dispose();
    throw e;
  }
}

// FC_OUTAGE_SERVICES=database,storage runs only those (while working on one).
const SERVICES = (['redis', 'database', 'storage'] as const).filter((s) => !process.env.FC_OUTAGE_SERVICES || process.env.FC_OUTAGE_SERVICES.split(',').includes(s));

for (const service of SERVICES) {
  test(`${service} paused, then killed: every request answered within the bound with the documented status; all works again after; nothing partial`, { skip: skipReason('S3') ?? skipReason('Redis') ?? skipReason('PostgreSQL'), timeout: 240_000 }, async (t: TestContext) => {
    // The throttle is checked below with Redis gone, from an address of its own (X-Forwarded-For, trusted here).
    const { s3, opts, redis, pg, gw, server, dispose } = await onPrivateServices(`outage_${service}`, ['--workers', '2', '--stale-upload-after', String(STALE_S), '--trust-proxy']);
    try {
      const base = server.url;
      const first = await login(base, server.adminPassword);
      assert.equal(first.status, 200, first.body);
      const token = (JSON.parse(first.body) as { access_token: string }).access_token;
      const auth = bearer(token);
      const outage = { redis, database: pg, storage: gw }[service];

      for (const fault of ['paused', 'killed'] as const) {
        // What the operations work on: a file to read, one to delete.
        for (const name of ['existing.txt', `doomed-${fault}.txt`]) assert.equal((await call(`${base}/storage/admin/${name}`, { method: 'PUT', headers: auth, body: `content of ${name}` })).status, 201);
        const upload = uploadInFlight(base, token, `admin/upload-${fault}.bin`, 12 * MiB, 20 * MiB);
        // The first 8 MiB part is on its way to the store: the upload has begun there.
        const started = Date.now();
        while ((await multipartUploads(s3, opts.bucket, `${opts.prefix}/admin/upload-${fault}.bin`)) === 0) {
          assert.ok(Date.now() - started < 15_000, 'the upload in flight did not begin a multipart upload');
          await sleep(50);
        }

        if (fault === 'paused') await outage.pause();
        else await outage.kill();
        t.diagnostic(`${service} ${fault}`);
        upload.finish();
        const want = EXPECTED[service];
        // An intermittent ECONNRESET of the upload itself (2 of ~10 CI runs) has not been reproduced by hand: what the
        // server said goes with any request that got no answer. (The other one, /api/health reset after 73 s in the loop
        // below, twice: the upload's unread rest of body held the kept connection the next request went out on, until
        // the keep-alive timeout, 72 s + Node's 1 s, ended it; src/app/http-server.ts dropUnreadBody.)
        const withServerOutput = (e: Error): never => {
          const o = server.output();
          throw new Error(`${e.message}\n--- server stderr, the end ---\n${o.stderr.slice(-3000)}\n--- server stdout, the end ---\n${o.stdout.slice(-6000)}`);
        };
        const [signIn, read, write, del, health, up]: [Answer, Answer, Answer, Answer, Answer, Answer] = await Promise.all([
          login(base, server.adminPassword),
          call(`${base}/storage/admin/existing.txt`, { headers: auth }),
          call(`${base}/storage/admin/new-${fault}.txt`, { method: 'PUT', headers: auth, body: 'written while a service was out' }),
          call(`${base}/storage/admin/doomed-${fault}.txt`, { method: 'DELETE', headers: auth }),
          call(`${base}/api/health`),
          upload.answer,
        ].map((p) => p.catch(withServerOutput)) as Promise<Answer>[]) as [Answer, Answer, Answer, Answer, Answer, Answer];
        for (const [what, a] of [['login', signIn], ['read', read], ['write', write], ['delete', del], ['upload', up], ['health', health]] as const) t.diagnostic(`${service} ${fault}: ${what} ${a.status} in ${a.ms} ms`);
        check('login', signIn, want.login, REQUEST_DEADLINE_MS);
        check('read', read, want.read, REQUEST_DEADLINE_MS);
        check('write', write, want.write, REQUEST_DEADLINE_MS);
        check('delete', del, want.delete, REQUEST_DEADLINE_MS);
        check('upload in flight', up, want.upload, REQUEST_DEADLINE_MS);
        check('health', health, UNAVAILABLE[service], HEALTH_MS);
        assert.deepEqual((JSON.parse(health.body) as { down: string[] }).down, [service]);
        // Liveness asks no service.
        const live = await call(`${base}/api/health?live`);
        assert.equal(live.status, 200, live.body);
        assert.ok(live.ms <= HEALTH_MS, `?live took ${live.ms} ms`);

        if (service === 'redis' && fault === 'killed') {
          // The throttle falls back to the database, never open: wrong passwords are still counted to 429.
          let throttled: Answer | undefined;
          for (let i = 0; i < 15 && !throttled; i++) {
            const a = await call(`${base}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-forwarded-for': '192.0.2.7' }, body: JSON.stringify({ username: 'admin', password: 'wrong-password' }) });
            if (a.status === 429) throttled = a;
            else assert.equal(a.status, 401, a.body);
          }
          assert.ok(throttled, 'never throttled (the limit is 10 a minute) while Redis was down');
          assert.ok(Number(throttled.headers['retry-after']) > 0);
        }

        if (fault === 'paused') await outage.resume();
        else await outage.restart();
        const backAt = Date.now();
        // Back within seconds, without a restart of File Cloud.
        for (;;) {
          const h = await call(`${base}/api/health`);
          if (h.status === 200) break;
          assert.ok(Date.now() - backAt < 20_000, `health still ${h.status} 20 s after ${service} came back: ${h.body}`);
          await sleep(200);
        }
        t.diagnostic(`${service} back: healthy after ${Date.now() - backAt} ms`);

        // What the client was told failed did not happen, then or later; what succeeded did.
        await sleep(2000);
        const after = async (path: string) => (await call(`${base}/storage/admin/${path}`, { headers: auth })).status;
        assert.equal(await after(`new-${fault}.txt`), write.status === 201 ? 200 : 404, 'the write');
        assert.equal(await after(`doomed-${fault}.txt`), del.status === 204 ? 404 : 200, 'the delete');
        assert.equal(await after(`upload-${fault}.bin`), up.status === 201 ? 200 : 404, 'the upload in flight');
        assert.equal(await objectExists(s3, opts.bucket, `${opts.prefix}/admin/upload-${fault}.bin`), up.status === 201, 'the upload in flight, in the bucket');
        // Everything works again.
        const again = await login(base, server.adminPassword);
        assert.equal(again.status, 200, again.body);
        assert.equal((await call(`${base}/storage/admin/again-${fault}.txt`, { method: 'PUT', headers: auth, body: 'back' })).status, 201);
        assert.equal((await call(`${base}/storage/admin/existing.txt`, { headers: auth })).status, 200);
        assert.equal((await call(`${base}/storage/admin/again-${fault}.txt`, { method: 'DELETE', headers: auth })).status, 204);
        // No multipart upload left: aborted by the failed upload itself, or by the sweeper once the store was back.
        const sweptFrom = Date.now();
        while ((await multipartUploads(s3, opts.bucket, `${opts.prefix}/`)) > 0) {
          if (Date.now() - sweptFrom > SWEEP_DEADLINE_MS) {
            const left = (await s3.send(new ListMultipartUploadsCommand({ Bucket: opts.bucket, Prefix: `${opts.prefix}/` }))).Uploads ?? [];
            const { default: PG } = await import('pg');
            const client: InstanceType<typeof PG.Client> = new PG.Client({ connectionString: (pg as PrivateService).url });
            await client.connect();
            const journal: unknown[] = (await client.query('SELECT * FROM journal')).rows;
            await client.end();
            assert.fail(`a multipart upload is still there ${SWEEP_DEADLINE_MS} ms after ${service} came back: ${JSON.stringify(left.map((u) => [u.Key, u.UploadId, u.Initiated]))}\njournal: ${JSON.stringify(journal)}\n${server.output().stderr.slice(-3000)}`);
          }
          await sleep(500);
        }
        upload.destroy();
      }
    } finally {
      await dispose();
    }
  });
}

test('the request deadline answers a request still waiting for a hung store with 503 at its bound, and the write it waited for never lands', { skip: skipReason('S3') ?? skipReason('Redis') ?? skipReason('PostgreSQL'), timeout: 120_000 }, async (t: TestContext) => {
  // The store's own bound (2 × 5 s) far beyond the deadline's (2 s): only the deadline can answer in time.
  const DEADLINE_MS = 2000;
  const { s3, opts, gw, server, dispose } = await onPrivateServices('outage_deadline', ['--workers', '1', '--service-timeout', '5', '--request-deadline', String(DEADLINE_MS / 1000)]);
  try {
    const signedIn = await login(server.url, server.adminPassword);
    const auth = bearer((JSON.parse(signedIn.body) as { access_token: string }).access_token);
    assert.equal((await call(`${server.url}/storage/admin/before.txt`, { method: 'PUT', headers: auth, body: 'x' })).status, 201);

    await gw.pause();
    const write = await call(`${server.url}/storage/admin/late.txt`, { method: 'PUT', headers: auth, body: 'must never land' });
    t.diagnostic(`write while the store hangs: ${write.status} in ${write.ms} ms ${write.body}`);
    check('write', write, { status: 503, error: 'unavailable' }, DEADLINE_MS);
    // The store answers again well within its own bound: the request goes on, and must stop before its commit.
    await gw.resume();
    await sleep(3000);
    assert.equal(await objectExists(s3, opts.bucket, `${opts.prefix}/admin/late.txt`), false, 'the write the client was told failed landed afterwards');
    assert.equal((await call(`${server.url}/storage/admin/late.txt`, { headers: auth })).status, 404);
    assert.equal((await call(`${server.url}/storage/admin/after.txt`, { method: 'PUT', headers: auth, body: 'y' })).status, 201);
  } finally {
    await dispose();
  }
});
