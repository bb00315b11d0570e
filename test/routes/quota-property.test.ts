// The quota invariant as a property (issue 27): random sequences of writes through every write
// path — raw PUT, multipart PUT with repeated names, tus (finished, left open, cut, terminated),
// WebDAV PUT / COPY / MOVE, share drop-box uploads, deletes — for several users with and without
// quotas, some run concurrently, some killed midway. After every step each user's usage equals the
// bytes stored, and usage plus what unfinished uploads hold never passes the quota. On every backend.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import fc from 'fast-check';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { bytesStored } from '../helpers/stored.js';
import { bearer } from '../helpers/client.js';
import { multipartBody } from '../helpers/multipart.js';

const KB = 1024;
const TUS = { 'tus-resumable': '1.0.0' };
const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
/** alice and bob have quotas, carol none (her uploads take the unmetered paths). */
const QUOTAS: Record<string, number | null> = { alice: 16 * KB, bob: 6 * KB, carol: null };
const USERS = Object.keys(QUOTAS);
const NAMES = ['a.bin', 'b.bin', 'c.bin'];
const FOLDERS = ['p', 'q'];
/** How long an aborted request may take to settle on the server (its usage change, if any, lands by then). */
const SETTLE_MS = 5000;

type Op =
  | { kind: 'put'; user: string; folder: string; name: string; size: number; abort: boolean }
  | { kind: 'multipart'; user: string; folder: string; parts: { name: string; size: number }[]; overwrite: boolean; abort: boolean }
  | { kind: 'tus'; user: string; folder: string; name: string; size: number; send: number; overwrite: boolean; abort: boolean }
  | { kind: 'tusResume'; user: string; index: number }
  | { kind: 'tusTerminate'; user: string; index: number }
  | { kind: 'davPut'; user: string; folder: string; name: string; size: number }
  | { kind: 'davCopy' | 'davMove'; user: string; from: string; to: string }
  | { kind: 'share'; user: string; names: string[]; size: number }
  | { kind: 'delete'; user: string; path: string };

const user = fc.constantFrom(...USERS);
const folder = fc.constantFrom(...FOLDERS);
const name = fc.constantFrom(...NAMES);
const size = fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 7 * KB }));
const path = fc.oneof(fc.tuple(folder, name).map(([f, n]) => `${f}/${n}`), folder);
const abort = fc.constantFrom(false, false, false, true);

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('put' as const), user, folder, name, size, abort }),
  fc.record({ kind: fc.constant('multipart' as const), user, folder, parts: fc.array(fc.record({ name, size }), { minLength: 1, maxLength: 4 }), overwrite: fc.boolean(), abort }),
  fc.record({ kind: fc.constant('tus' as const), user, folder, name, size: fc.integer({ min: 1, max: 7 * KB }), send: fc.double({ min: 0, max: 1, noNaN: true }), overwrite: fc.boolean(), abort }),
  fc.record({ kind: fc.constant('tusResume' as const), user, index: fc.nat(5) }),
  fc.record({ kind: fc.constant('tusTerminate' as const), user, index: fc.nat(5) }),
  fc.record({ kind: fc.constant('davPut' as const), user, folder, name, size }),
  fc.record({ kind: fc.constantFrom('davCopy' as const, 'davMove' as const), user, from: path, to: path }),
  fc.record({ kind: fc.constant('share' as const), user, names: fc.array(name, { minLength: 1, maxLength: 3 }), size }),
  fc.record({ kind: fc.constant('delete' as const), user, path }),
);

/**
 * Steps: each a batch of operations run at the same time (a WebDAV COPY too: it is metered file by
 * file as it copies, so writes into its source or its destination meanwhile cannot pass the quota).
 */
const steps = fc.array(fc.array(op, { minLength: 1, maxLength: 3 }), { minLength: 4, maxLength: 12 });

/** Statuses a write may answer with; anything else (a 500) fails the property. */
// 405: a WebDAV PUT onto a name that a folder COPY made a folder meanwhile (RFC 4918 §9.7.2; a
// generated run met it: davCopy q → p/b.bin, then davPut p/b.bin).
const EXPECTED = new Set([200, 201, 204, 404, 405, 409, 412, 423, 429, 507]);

for (const [storage, skip] of BACKENDS) {
  describe(`the quota invariant under random writes on ${storage}`, { skip }, () => {
    let t: TestApp;
    const auth: Record<string, Record<string, string>> = {};
    const shares: Record<string, string> = {};
    /** Open tus uploads per user (their URLs and lengths), as the test knows them. */
    let open: Record<string, { url: string; length: number }[]> = {};

    before(async () => {
      t = await startApp({ users: USERS, storage });
      for (const u of USERS) {
        auth[u] = bearer((await t.login(u)).access_token);
        await t.fs.mkdir('inbox', u);
        const res = await fetch(`${t.url}/api/shares`, { method: 'POST', headers: { ...auth[u], 'content-type': 'application/json' }, body: JSON.stringify({ path: `/${u}/inbox`, upload_only: true }) });
        assert.equal(res.status, 201, await res.clone().text());
        shares[u] = ((await res.json()) as { id: string }).id;
      }
    });
    after(() => t?.close());

    const stored = (u: string) => bytesStored(t, u);

    /** A request whose body is cut off midway when `abort`: the client goes away, the server sees a broken body. */
    function send(method: string, url: string, headers: Record<string, string>, body: Buffer, abort: boolean): Promise<number> {
      return new Promise((resolve, reject) => {
        const req = httpRequest(url, { method, headers: { ...headers, 'content-length': String(body.length) } }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
          res.on('error', () => resolve(0));
        });
        if (!abort) {
          req.on('error', reject);
          req.end(body);
          return;
        }
        req.on('error', () => resolve(0));
        req.write(body.subarray(0, Math.floor(body.length / 2)), () => setTimeout(() => {
          req.destroy();
          resolve(0);
        }, 20));
      });
    }

    async function run(o: Op): Promise<number> {
      const h = auth[o.user] as Record<string, string>;
      const fill = (n: number) => Buffer.alloc(n, 0x61);
      switch (o.kind) {
        case 'put':
          return send('PUT', `${t.url}/storage/${o.user}/${o.folder}/${o.name}`, h, fill(o.size), o.abort && o.size > 1);
        case 'multipart': {
          const { body, contentType } = multipartBody(o.parts.map((p) => ({ filename: p.name, content: fill(p.size) })));
          return send('PUT', `${t.url}/storage/${o.user}/${o.folder}/${o.overwrite ? '?overwrite=true' : ''}`, { ...h, 'content-type': contentType }, body, o.abort);
        }
        case 'tus': {
          const meta = `filename ${b64(o.name)},folder ${b64(`/${o.user}/${o.folder}`)}${o.overwrite ? `,overwrite ${b64('true')}` : ''}`;
          const created = await fetch(`${t.url}/tus/`, { method: 'POST', headers: { ...h, ...TUS, 'upload-length': String(o.size), 'upload-metadata': meta } });
          if (created.status !== 201) return created.status;
          const url = `${t.origin}${created.headers.get('location') as string}`;
          const n = Math.floor(o.size * o.send);
          const status = n === 0 ? 204 : await send('PATCH', url, { ...h, ...TUS, 'content-type': 'application/offset+octet-stream', 'upload-offset': '0' }, fill(n), o.abort);
          // Cut, refused or sent only in part: it stays open, holding its length.
          if (status !== 204 || n < o.size) (open[o.user] ??= []).push({ url, length: o.size });
          return status;
        }
        case 'tusResume':
        case 'tusTerminate': {
          const list = open[o.user] ?? [];
          const u = list[o.index % Math.max(1, list.length)];
          if (!u) return 404;
          list.splice(list.indexOf(u), 1);
          if (o.kind === 'tusTerminate') {
            const status = (await fetch(u.url, { method: 'DELETE', headers: { ...h, ...TUS } })).status;
            // 409: a cut PATCH still holds it (until the server notices the client went away).
            if (status === 409) list.push(u);
            return status;
          }
          const head = await fetch(u.url, { method: 'HEAD', headers: { ...h, ...TUS } });
          if (head.status !== 200) return head.status;
          const offset = Number(head.headers.get('upload-offset'));
          if (offset === u.length) return 204;
          const res = await fetch(u.url, { method: 'PATCH', headers: { ...h, ...TUS, 'content-type': 'application/offset+octet-stream', 'upload-offset': String(offset) }, body: fill(u.length - offset) });
          // Refused or busy: it stays open, to be resumed or terminated later.
          if (res.status !== 204) list.push(u);
          return res.status;
        }
        case 'davPut':
          return (await fetch(`${t.url}/dav/${o.user}/${o.folder}/${o.name}`, { method: 'PUT', headers: h, body: fill(o.size) })).status;
        case 'davCopy':
        case 'davMove': {
          const res = await fetch(`${t.url}/dav/${o.user}/${o.from}`, { method: o.kind === 'davCopy' ? 'COPY' : 'MOVE', headers: { ...h, destination: `${t.url}/dav/${o.user}/${o.to}`, overwrite: 'T' } });
          // 400/403: a folder into itself or over its own file, which WebDAV refuses; 409: no parent folder yet.
          return [400, 403].includes(res.status) ? 409 : res.status;
        }
        case 'share': {
          const { body, contentType } = multipartBody(o.names.map((n) => ({ filename: n, content: fill(o.size) })));
          return (await fetch(`${t.url}/share/${shares[o.user]}/`, { method: 'PUT', headers: { 'content-type': contentType }, body })).status;
        }
        case 'delete':
          return (await fetch(`${t.url}/storage/${o.user}/${o.path}`, { method: 'DELETE', headers: h })).status;
      }
    }

    async function check(step: string, aborted: boolean) {
      for (const u of USERS) {
        const figures = await t.store.usage.get(u);
        assert.ok(figures);
        // What the user's open tus uploads may still stage, as the test knows them: their lengths.
        const holds = (open[u] ?? []).reduce((n, x) => n + x.length, 0);
        const quota = QUOTAS[u];
        if (quota !== null && quota !== undefined) {
          assert.ok(figures.used + holds <= quota, `${step}: ${u} has ${figures.used} bytes stored + ${holds} in open uploads, past the quota ${quota}`);
        }
        assert.equal(figures.staged, holds, `${step}: ${u}'s open uploads hold their lengths in the store`);
        // An aborted request has no answer to wait for: it settles within SETTLE_MS.
        const deadline = Date.now() + (aborted ? SETTLE_MS : 0);
        for (;;) {
          const [used, bytes] = [(await t.store.usage.get(u))?.used, await stored(u)];
          if (used === bytes) break;
          if (Date.now() >= deadline) assert.equal(used, bytes, `${step}: ${u}'s usage is the bytes stored`);
          await new Promise((r) => setTimeout(r, 50));
        }
      }
    }

    test('after every step, usage equals the bytes stored and stays within the quota', { timeout: 120_000 }, async () => {
      let runs = 0;
      await fc.assert(
        fc.asyncProperty(steps, async (batches) => {
          runs++;
          // Every run starts empty: no files, no open uploads.
          for (const u of USERS) {
            for (const x of open[u] ?? []) {
              // A cut PATCH of the last run may hold the upload for a moment more (409 upload_busy).
              const deadline = Date.now() + SETTLE_MS;
              while ((await fetch(x.url, { method: 'DELETE', headers: { ...auth[u], ...TUS } })).status === 409 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
            }
            for (const f of FOLDERS) await fetch(`${t.url}/storage/${u}/${f}`, { method: 'DELETE', headers: auth[u] });
            for (const e of await t.fs.names('inbox', u)) await fetch(`${t.url}/storage/${u}/inbox/${encodeURIComponent(e)}`, { method: 'DELETE', headers: auth[u] });
            await t.store.usage.setQuota(u, QUOTAS[u] ?? null);
          }
          open = {};
          await check('start', false);
          for (const [i, batch] of batches.entries()) {
            const statuses = await Promise.all(batch.map(run));
            for (const [j, s] of statuses.entries()) {
              const o = batch[j] as Op;
              const aborted = 'abort' in o && o.abort;
              if (!aborted) assert.ok(EXPECTED.has(s), `step ${i}: ${JSON.stringify(o)} answered ${s}`);
            }
            await check(`step ${i} ${JSON.stringify(batch)}`, batch.some((o) => 'abort' in o && o.abort));
          }
        }),
        // FC_QUOTA_SEED and FC_QUOTA_PATH replay a failure with the seed and path fast-check printed.
        { numRuns: storage === 'file' ? 25 : 6, endOnFailure: true, includeErrorInReport: true, ...(process.env.FC_QUOTA_SEED ? { seed: Number(process.env.FC_QUOTA_SEED), path: process.env.FC_QUOTA_PATH } : {}) },
      );
      assert.ok(runs > 0);
    });
  });
}
