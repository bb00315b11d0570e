// Share links (CONTRACT "Share links"): create/list/revoke, the /share/<id>/ machine API and the
// /s/<id>/ pages, on every backend: exact download limits under concurrency, expiry, revocation,
// one byte-identical 404 for every dead link, passwords, upload-only links, sub-path checks.
import { after, before, describe, test } from 'node:test';
import { Writable } from 'node:stream';
import assert from 'node:assert/strict';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { bearer, postJson } from '../helpers/client.js';
import { multipartBody } from '../helpers/multipart.js';
import { rawRequest } from '../helpers/raw-http.js';
import { readZip } from '../helpers/zip-reader.js';

type ShareObject = {
  id: string;
  url: string;
  path: string;
  is_file: boolean;
  expires_at: string | null;
  has_password: boolean;
  max_downloads: number | null;
  downloads: number;
  upload_only: boolean;
  created_at: string;
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A clock the in-process apps read; cluster apps run on the system clock (their tests wait instead). */
const clock = { offset: 0, now: () => Date.now() + clock.offset };

for (const [storage, skip] of BACKENDS) {
  describe(`share links on ${storage}`, { skip }, () => {
    let t: TestApp;
    let alice: Record<string, string>;
    let bob: Record<string, string>;
    before(async () => {
      t = await startApp({ storage, users: ['alice', 'bob'], ...(storage === 'cluster' ? {} : { clock }) });
      alice = bearer((await t.login('alice')).access_token);
      bob = bearer((await t.login('bob')).access_token);
      await t.fs.put('a.txt', 'hello world');
      await t.fs.put('page.html', '<script>alert(1)</script>');
      await t.fs.mkdir('docs/sub');
      await t.fs.put('docs/one.txt', 'one');
      await t.fs.put('docs/sub/two.txt', 'two');
      await t.fs.put('secret.txt', 'not shared');
      await t.fs.put('drop/existing.txt', 'original');
    });
    after(() => t?.close());

    const share = async (body: Record<string, unknown>, who = alice): Promise<ShareObject> => {
      const res = await postJson(`${t.url}/api/shares`, body, who);
      assert.equal(res.status, 201, await res.clone().text());
      return (await res.json()) as ShareObject;
    };
    const get = (path: string, headers: Record<string, string> = {}) => fetch(`${t.url}${path}`, { headers, redirect: 'manual' });
    const deadBody = async (path: string) => {
      const res = await get(path);
      assert.equal(res.status, 404, path);
      return res.text();
    };

    test('create returns the share object; list shows the caller\'s own; revoke ends it at once', async () => {
      const before = Date.now();
      const s = await share({ path: '/alice/a.txt' });
      assert.match(s.id, /^[A-Za-z0-9_-]{32}$/, '192 random bits, base64url');
      assert.equal(s.url, `/s/${s.id}`);
      assert.ok(!s.url.includes('alice') && !s.url.includes('a.txt'), 'the URL names neither user nor path');
      assert.deepEqual({ ...s, id: '', url: '', expires_at: '', created_at: '' }, { id: '', url: '', path: '/alice/a.txt', is_file: true, expires_at: '', has_password: false, max_downloads: null, downloads: 0, upload_only: false, created_at: '' });
      const lifetime = Date.parse(s.expires_at as string) - Date.parse(s.created_at);
      assert.equal(lifetime, 604_800_000, 'default expiry 7 days');
      assert.ok(Date.parse(s.created_at) >= before - 5000);
      const folder = await share({ path: 'alice/docs/', expires_in: null, password: 'pw', max_downloads: 3 });
      assert.equal(folder.is_file, false);
      assert.equal(folder.path, '/alice/docs');
      assert.equal(folder.expires_at, null);
      assert.equal(folder.has_password, true);
      assert.ok(!JSON.stringify(folder).includes('pw"'), 'the password is never echoed');
      const bobs = await share({ path: '/bob/' }, bob);
      const list = (await (await get('/api/shares', alice)).json()) as { shares: ShareObject[] };
      assert.deepEqual(new Set(list.shares.map((x) => x.id)), new Set([s.id, folder.id]));
      assert.equal((await fetch(`${t.url}/api/shares/${bobs.id}`, { method: 'DELETE', headers: alice })).status, 404, "another user's share is not found");
      assert.equal((await get(`/share/${bobs.id}/`)).status, 200, 'and keeps working');
      assert.equal((await get(`/share/${s.id}`)).status, 200);
      assert.equal((await fetch(`${t.url}/api/shares/${s.id}`, { method: 'DELETE', headers: alice })).status, 204);
      assert.equal((await get(`/share/${s.id}`)).status, 404, 'revoked at once');
      assert.equal((await fetch(`${t.url}/api/shares/${s.id}`, { method: 'DELETE', headers: alice })).status, 404);
      assert.equal((await get('/api/shares')).status, 401, 'the API needs a token');
    });

    test('create refuses bad input with 400, someone else\'s path with 401, a missing path with 404', async () => {
      const cases: [unknown, number][] = [
        [{}, 400],
        [{ path: 5 }, 400],
        [{ path: '/alice/a.txt', expires_in: 0 }, 400],
        [{ path: '/alice/a.txt', expires_in: -5 }, 400],
        [{ path: '/alice/a.txt', expires_in: 1.5 }, 400],
        [{ path: '/alice/a.txt', expires_in: '60' }, 400],
        [{ path: '/alice/a.txt', max_downloads: 0 }, 400],
        [{ path: '/alice/a.txt', max_downloads: 2.5 }, 400],
        [{ path: '/alice/a.txt', password: '' }, 400],
        [{ path: '/alice/a.txt', password: 'x'.repeat(1025) }, 400],
        [{ path: '/alice/a.txt', password: 12 }, 400],
        [{ path: '/alice/a.txt', upload_only: true }, 400],
        [{ path: '/alice/docs', upload_only: 'yes' }, 400],
        [{ path: '/alice/../bob/x' }, 400],
        [{ path: '/bob/' }, 401],
        [{ path: '/alice/missing.txt' }, 404],
        ['[1]', 400],
      ];
      for (const [body, status] of cases) {
        const res = await postJson(`${t.url}/api/shares`, body, alice);
        assert.equal(res.status, status, JSON.stringify(body));
        const err = (await res.json()) as { error: string; message: string };
        assert.ok(err.error && err.message, 'the contract error body');
      }
    });

    test('a file share serves bytes with ETag, 304, Range, HEAD, download; sandbox and noindex headers', async () => {
      const s = await share({ path: '/alice/page.html' });
      const res = await get(`/share/${s.id}`);
      assert.equal(res.status, 200);
      assert.equal(await res.text(), '<script>alert(1)</script>');
      assert.equal(res.headers.get('content-security-policy'), 'sandbox');
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
      assert.match(res.headers.get('x-robots-tag') ?? '', /noindex/);
      assert.equal(res.headers.get('accept-ranges'), 'bytes');
      const etag = res.headers.get('etag') as string;
      assert.equal((await get(`/share/${s.id}/`, { 'if-none-match': etag })).status, 304);
      const part = await get(`/share/${s.id}`, { range: 'bytes=1-6' });
      assert.equal(part.status, 206);
      assert.equal(await part.text(), 'script');
      assert.equal((await get(`/share/${s.id}`, { range: 'bytes=900-' })).status, 416);
      const head = await fetch(`${t.url}/share/${s.id}`, { method: 'HEAD' });
      assert.equal(head.status, 200);
      assert.equal(head.headers.get('content-length'), '25');
      const dl = await get(`/share/${s.id}?download=1`);
      assert.match(dl.headers.get('content-disposition') ?? '', /^attachment; filename="page.html"/);
      assert.equal((await get(`/share/${s.id}/other`)).status, 404, 'a file share has no sub-paths');
      // An unlimited link's downloads are written in batches (within a second; at once by the process that lists).
      let downloads: number | undefined;
      for (let i = 0; i < 30 && downloads !== 2.24; i++) {
        if (i > 0) await sleep(100);
        const listed = (await (await get('/api/shares', alice)).json()) as { shares: ShareObject[] };
        downloads = listed.shares.find((x) => x.id === s.id)?.downloads;
      }
      assert.equal(downloads, 2.24, 'the two 200s and 6 of 25 bytes in the 206 counted; not the 304, the 416 or the HEAD');
    });

    test('a folder share lists like storage, serves files below it, and refuses every escape', async () => {
      const s = await share({ path: '/alice/docs' });
      const root = await get(`/share/${s.id}/`);
      assert.equal(root.status, 200);
      assert.match(root.headers.get('x-robots-tag') ?? '', /noindex/);
      const { entries } = (await root.json()) as { entries: { name: string; is_file: boolean }[] };
      assert.deepEqual(entries.map((e) => [e.name, e.is_file]), [['sub', false], ['one.txt', true]]);
      assert.deepEqual(((await (await get(`/share/${s.id}/sub`)).json()) as { entries: { name: string }[] }).entries.map((e) => e.name), ['two.txt']);
      assert.equal(await (await get(`/share/${s.id}/sub/two.txt`)).text(), 'two');
      assert.equal((await get(`/share/${s.id}/sub/two.txt/`)).status, 404, 'a trailing slash addresses a folder');
      assert.equal((await get(`/share/${s.id}/nope.txt`)).status, 404);
      for (const path of ['..', '../secret.txt', '%2e%2e/secret.txt', 'sub/..%2F..%2Fsecret.txt', 'sub%2F..%2F..%2Fa.txt', '.', 'a//b', 'x%00y', 'x%5Cy', '%C0%AE%C0%AE/a.txt', '%ZZ', '/one.txt', '%2Fone.txt']) {
        const res = await rawRequest(t.url, `GET /share/${s.id}/${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
        assert.equal(res.status, 400, path);
        assert.ok(!res.body.includes('not shared'));
      }
      const dotdot = await rawRequest(t.url, `GET /share/${s.id}/../../storage/alice/secret.txt HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
      assert.notEqual(dotdot.status, 200);
      assert.ok(!dotdot.body.includes('not shared'));
    });

    test('20 parallel downloads of a max_downloads: 5 link: exactly 5 succeed, the link is then used up', async () => {
      await t.fs.put('limited.bin', Buffer.alloc(64 * 1024, 7));
      const s = await share({ path: '/alice/limited.bin', max_downloads: 5 });
      assert.equal((await fetch(`${t.url}/share/${s.id}`, { method: 'HEAD' })).status, 200, 'HEAD does not count');
      const results = await Promise.all(
        Array.from({ length: 20 }, async () => {
          const res = await get(`/share/${s.id}`);
          const body = Buffer.from(await res.arrayBuffer());
          return { status: res.status, size: body.length };
        }),
      );
      const ok = results.filter((r) => r.status === 200);
      assert.equal(ok.length, 5, JSON.stringify(results.map((r) => r.status)));
      assert.ok(ok.every((r) => r.size === 64 * 1024), 'every success is whole');
      assert.equal(results.filter((r) => r.status === 404).length, 15);
      assert.equal((await get(`/share/${s.id}`, { range: 'bytes=100-199' })).status, 404, 'used up: nothing more, not even a range');
      const listed = (await (await get('/api/shares', alice)).json()) as { shares: ShareObject[] };
      assert.equal(listed.shares.find((x) => x.id === s.id)?.downloads, 5);
    });

    test('a 206 counts its part of a download: what is left of the copy is served, no more', async () => {
      const s = await share({ path: '/alice/a.txt', max_downloads: 1 });
      const first = await get(`/share/${s.id}`, { range: 'bytes=0-4' });
      assert.equal(first.status, 206);
      assert.equal(await first.text(), 'hello');
      assert.equal((await get(`/share/${s.id}`)).status, 404, 'a whole copy more would pass the limit');
      assert.equal(await (await get(`/share/${s.id}`, { range: 'bytes=5-' })).text(), ' world');
      assert.equal((await get(`/share/${s.id}`, { range: 'bytes=0-0' })).status, 404);
    });

    test('dead links: unknown, expired, revoked, used up, target deleted or moved, owner removed: one byte-identical 404', async () => {
      await t.fs.put('gone.txt', 'x');
      await t.fs.put('moving.txt', 'x');
      await t.fs.put('dir/inner.txt', 'x');
      const expired = await share({ path: '/alice/a.txt', expires_in: 1 });
      const revoked = await share({ path: '/alice/a.txt' });
      const usedUp = await share({ path: '/alice/a.txt', max_downloads: 1 });
      const deleted = await share({ path: '/alice/gone.txt' });
      const moved = await share({ path: '/alice/moving.txt' });
      const inMovedFolder = await share({ path: '/alice/dir/inner.txt' });
      const live = await share({ path: '/alice/a.txt' });
      assert.equal((await get(`/share/${usedUp.id}`)).status, 200);
      assert.equal((await fetch(`${t.url}/api/shares/${revoked.id}`, { method: 'DELETE', headers: alice })).status, 204);
      assert.equal((await fetch(`${t.url}/storage/alice/gone.txt`, { method: 'DELETE', headers: alice })).status, 204);
      assert.equal((await postJson(`${t.url}/storage/alice/moving.txt`, { action: 'Move', new_path: '/alice/moved.txt' }, alice)).status, 204);
      assert.equal((await postJson(`${t.url}/storage/alice/dir`, { action: 'Move', new_path: '/alice/dir2' }, alice)).status, 204);
      if (storage === 'cluster') await sleep(1100);
      else clock.offset += 1100;
      try {
        const ids = ['A'.repeat(32), 'nonsense', expired.id, revoked.id, usedUp.id, deleted.id, moved.id, inMovedFolder.id];
        const machine = await Promise.all(ids.map((id) => deadBody(`/share/${id}`)));
        assert.ok(machine.every((b) => b === machine[0]), 'the same JSON body for every cause');
        assert.deepEqual(Object.keys(JSON.parse(machine[0] as string) as object), ['error', 'message']);
        // Identical but for the nonce of the page's script and style sheet, fresh in every answer (docs/security.md).
        const pages = (await Promise.all(ids.map((id) => deadBody(`/s/${id}`)))).map((b) => b.replace(/ nonce="[^"]*"/g, ' nonce=""'));
        assert.ok(pages.every((b) => b === pages[0]), 'the same HTML page for every cause');
        assert.match(pages[0] as string, /<!doctype html>/);
        const subs = await Promise.all(ids.map((id) => deadBody(`/share/${id}/x/y`)));
        assert.ok(subs.every((b) => b === machine[0]));
        assert.equal((await get(`/share/${live.id}`)).status, 200, 'a live link still works');
        // The storage events ended the rows of the deleted and moved targets.
        let left: string[] = [];
        for (let i = 0; i < 50; i++) {
          const list = (await (await get('/api/shares', alice)).json()) as { shares: ShareObject[] };
          left = list.shares.map((x) => x.id).filter((id) => [deleted.id, moved.id, inMovedFolder.id].includes(id));
          if (left.length === 0) break;
          await sleep(100);
        }
        assert.deepEqual(left, [], 'the rows of deleted and moved targets are gone');
        // A new file at the old path does not revive the link.
        await t.fs.put('gone.txt', 'new');
        assert.equal(await deadBody(`/share/${deleted.id}`), machine[0]);
      } finally {
        clock.offset = 0;
      }
    });

    test('expiry follows the clock', async () => {
      if (storage === 'cluster') {
        // The nodes run on the system clock (no clock can be injected into them): a 2-second link, before and after.
        const short = await share({ path: '/alice/a.txt', expires_in: 2 });
        assert.equal((await get(`/share/${short.id}`)).status, 200);
        await sleep(Date.parse(short.expires_at as string) - Date.now() + 100);
        assert.equal((await get(`/share/${short.id}`)).status, 404);
        return;
      }
      const s = await share({ path: '/alice/a.txt', expires_in: 3600 });
      try {
        clock.offset = 3_599_000;
        assert.equal((await get(`/share/${s.id}`)).status, 200);
        clock.offset = 3_600_000;
        assert.equal((await get(`/share/${s.id}`)).status, 404);
      } finally {
        clock.offset = 0;
      }
    });

    test('a locked link asks for its password before telling its kind: a GET of a locked upload-only link and a PUT to a locked read link are 401 password_required, nothing written', async () => {
      const drop = await share({ path: '/alice/drop', upload_only: true, password: 'pw' });
      const docs = await share({ path: '/alice/docs', password: 'pw' });
      const before = { drop: await t.fs.names('drop'), docs: await t.fs.names('docs') };
      const read = await get(`/share/${drop.id}/existing.txt`);
      assert.equal(read.status, 401);
      assert.equal(((await read.json()) as { error: string }).error, 'password_required');
      for (const id of [docs.id, drop.id]) {
        const { body, contentType } = multipartBody([{ filename: 'x.txt', content: 'x' }]);
        const put = await fetch(`${t.url}/share/${id}/`, { method: 'PUT', headers: { 'content-type': contentType }, body });
        assert.equal(put.status, 401);
        assert.equal(((await put.json()) as { error: string }).error, 'password_required');
      }
      assert.deepEqual({ drop: await t.fs.names('drop'), docs: await t.fs.names('docs') }, before);
    });

    test('a password link: 401 password_required, wrong password 401, right one → 204 with a scoped HttpOnly cookie', async () => {
      const s = await share({ path: '/alice/docs', password: 'open sesame' });
      const other = await share({ path: '/alice/docs', password: 'open sesame' });
      const locked = await get(`/share/${s.id}/one.txt`);
      assert.equal(locked.status, 401);
      assert.equal(((await locked.json()) as { error: string }).error, 'password_required');
      assert.equal((await get(`/s/${s.id}/`)).status, 401, 'the page asks for the password');
      assert.match(await (await get(`/s/${s.id}/`)).text(), /type="password"/);
      const wrong = await postJson(`${t.url}/share/${s.id}/auth`, { password: 'nope' });
      assert.equal(wrong.status, 401);
      assert.equal(wrong.headers.get('set-cookie'), null);
      assert.equal((await postJson(`${t.url}/share/${s.id}/auth`, { pass: 1 })).status, 400);
      const ok = await postJson(`${t.url}/share/${s.id}/auth`, { password: 'open sesame' });
      assert.equal(ok.status, 204);
      const cookies = ok.headers.getSetCookie();
      assert.equal(cookies.length, 2);
      assert.deepEqual(cookies.map((c) => /Path=([^;]+)/.exec(c)?.[1]).sort(), [`/s/${s.id}`, `/share/${s.id}`]);
      for (const c of cookies) {
        assert.match(c, /; HttpOnly/);
        assert.match(c, /; SameSite=Lax/);
        assert.match(c, /; Max-Age=\d+/);
      }
      const cookie = (cookies[0] as string).split(';')[0] as string;
      assert.equal(await (await get(`/share/${s.id}/one.txt`, { cookie })).text(), 'one');
      const page = await get(`/s/${s.id}/`, { cookie });
      assert.equal(page.status, 200);
      assert.match(await page.text(), /one\.txt/);
      assert.equal((await get(`/share/${other.id}/one.txt`, { cookie })).status, 401, 'the cookie opens only its own share');
      assert.equal((await get(`/share/${s.id}/one.txt`, { cookie: `${cookie.slice(0, -3)}AAA` })).status, 401, 'a forged cookie opens nothing');
      // The no-JavaScript form: POST, cookie, redirect back.
      const form = await fetch(`${t.url}/s/${other.id}/auth`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'password=open+sesame', redirect: 'manual' });
      assert.equal(form.status, 303);
      assert.equal(form.headers.get('location'), `/s/${other.id}/`);
      assert.equal(form.headers.getSetCookie().length, 2);
      const bad = await fetch(`${t.url}/s/${other.id}/auth`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'password=x', redirect: 'manual' });
      assert.equal(bad.status, 401);
      assert.match(await bad.text(), /not right/);
    });

    test('an upload-only link writes new files, never replaces, and reads nothing', async () => {
      const s = await share({ path: '/alice/drop', upload_only: true });
      const dead = await deadBody(`/share/${'B'.repeat(32)}/`);
      assert.equal(await deadBody(`/share/${s.id}/`), dead, 'its listing is a dead link');
      assert.equal(await deadBody(`/share/${s.id}/existing.txt`), dead, 'so are its files');
      assert.equal((await fetch(`${t.url}/share/${s.id}/existing.txt`, { method: 'HEAD' })).status, 404);
      const { body, contentType } = multipartBody([
        { filename: 'existing.txt', content: 'visitor' },
        { filename: 'new.txt', content: 'fresh' },
      ]);
      const put = await fetch(`${t.url}/share/${s.id}/`, { method: 'PUT', headers: { 'content-type': contentType }, body });
      assert.equal(put.status, 201);
      assert.deepEqual(await put.json(), { files_written: ['existing.txt', 'new.txt'] }, 'the names as sent; a collision suffix is not told');
      assert.equal(await t.fs.text('drop/existing.txt'), 'original', 'never replaced');
      assert.equal(await t.fs.text('drop/existing (1).txt'), 'visitor');
      assert.equal(await t.fs.text('drop/new.txt'), 'fresh');
      const over = await fetch(`${t.url}/share/${s.id}/?overwrite=true`, { method: 'PUT', headers: { 'content-type': contentType }, body });
      assert.equal(over.status, 201);
      assert.equal(await t.fs.text('drop/existing.txt'), 'original', '?overwrite is ignored');
      const sub = multipartBody([{ filename: 'deep.txt', content: 'deep' }]);
      assert.equal((await fetch(`${t.url}/share/${s.id}/in/here/`, { method: 'PUT', headers: { 'content-type': sub.contentType }, body: sub.body })).status, 201);
      assert.equal(await t.fs.text('drop/in/here/deep.txt'), 'deep');
      assert.equal((await fetch(`${t.url}/share/${s.id}/../x/`, { method: 'PUT', headers: { 'content-type': sub.contentType }, body: sub.body })).status !== 201, true);
      assert.equal((await fetch(`${t.url}/share/${s.id}/`, { method: 'PUT', headers: { 'content-type': 'text/plain' }, body: 'raw' })).status, 415);
      // A read link takes no uploads.
      const read = await share({ path: '/alice/docs' });
      assert.equal((await fetch(`${t.url}/share/${read.id}/`, { method: 'PUT', headers: { 'content-type': sub.contentType }, body: sub.body })).status, 403);
      assert.equal(await t.fs.kind('docs/deep.txt'), undefined);
      // The page: a plain form, and its POST redirects back with a result.
      const page = await get(`/s/${s.id}/`);
      assert.equal(page.status, 200);
      const html = await page.text();
      assert.match(html, /<form class="upload" method="post" action="\/s\/[^"]+\/" enctype="multipart\/form-data"/);
      assert.match(html, /<input id="files" name="file" type="file" multiple required>/);
      assert.ok(!html.includes('existing.txt'), 'the page shows nothing of the folder');
      const formPost = await fetch(`${t.url}/s/${s.id}/`, { method: 'POST', headers: { 'content-type': contentType }, body, redirect: 'manual' });
      assert.equal(formPost.status, 303);
      assert.equal(formPost.headers.get('location'), `/s/${s.id}/?uploaded=2`);
      assert.match(await (await get(`/s/${s.id}/?uploaded=2`)).text(), /2 files uploaded/);
      assert.equal(await t.fs.text('drop/existing.txt'), 'original');
    });

    test('public pages: file and folder views, escaped names, strict CSP, noindex', async () => {
      const evil = '"><img src=x onerror=alert(1)>.txt';
      await t.fs.put(`pub/${evil}`, 'evil');
      await t.fs.put('pub/pic.png', Buffer.from('89504e470d0a1a0a', 'hex'));
      const s = await share({ path: '/alice/pub' });
      const res = await get(`/s/${s.id}/`);
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
      assert.match(res.headers.get('content-security-policy') ?? '', /default-src 'none'/);
      assert.match(res.headers.get('x-robots-tag') ?? '', /noindex/);
      const html = await res.text();
      assert.ok(!html.includes('<img src=x'), 'the name is escaped');
      assert.ok(html.includes('&quot;&gt;&lt;img src=x onerror=alert(1)&gt;.txt'));
      assert.ok(!html.includes('alice'), 'no owner data');
      assert.match(html, new RegExp(`href="/share/${s.id}/\\?zip=1"[^>]*>Download all \\(zip\\)`));
      assert.match(html, new RegExp(`data-gallery="/share/${s.id}/pic.png\\?thumbnail=1024"`));
      const file = await get(`/s/${s.id}/${encodeURIComponent(evil)}`);
      assert.equal(file.status, 200);
      const fileHtml = await file.text();
      assert.match(fileHtml, /<pre class="text">evil<\/pre>/, 'a text preview without JavaScript');
      assert.ok(fileHtml.includes(`href="/share/${s.id}/%22%3E%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E.txt?download=1"`));
      assert.equal((await get(`/s/${s.id}/missing`)).status, 404);
      const css = await get('/s/_assets/share.css');
      assert.equal(css.status, 200);
      assert.match(css.headers.get('content-type') ?? '', /^text\/css/);
      assert.equal((await get('/s/_assets/share.js')).status, 200);
      assert.equal((await get('/s/_assets/constructor')).status, 404);
    });

    test('?zip=1 on a shared folder: the folder\'s tree under its own name, each answer counting its bytes, then the dead link', async () => {
      const s = await share({ path: '/alice/docs', max_downloads: 2 });
      const res = await get(`/share/${s.id}/?zip=1`);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-type'), 'application/zip');
      assert.match(res.headers.get('x-robots-tag') ?? '', /noindex/);
      const zip = Buffer.from(await res.arrayBuffer());
      assert.equal(Number(res.headers.get('content-length')), zip.length);
      const entries = readZip(zip);
      assert.deepEqual(entries.map((e) => e.name).sort(), ['docs/', 'docs/one.txt', 'docs/sub/', 'docs/sub/two.txt']);
      assert.equal(entries.find((e) => e.name === 'docs/sub/two.txt')?.data?.toString(), 'two');
      assert.ok(!zip.includes('alice'), 'nothing names the owner');
      const unlimited = await share({ path: '/alice/docs' });
      const sub = await get(`/share/${unlimited.id}/sub/?zip=1&name=two.txt`);
      assert.equal(sub.status, 200);
      assert.deepEqual(readZip(Buffer.from(await sub.arrayBuffer())).map((e) => e.name), ['sub/', 'sub/two.txt']);
      // HEAD counts nothing; a range counts its part.
      assert.equal((await fetch(`${t.url}/share/${s.id}/?zip=1`, { method: 'HEAD' })).status, 200);
      const head = await get(`/share/${s.id}/?zip=1`, { range: `bytes=0-9` });
      assert.equal(head.status, 206);
      assert.equal((await get(`/share/${s.id}/?zip=1`)).status, 404, 'a whole zip more would pass the limit');
      const rest = await get(`/share/${s.id}/?zip=1`, { range: `bytes=10-` });
      assert.equal(rest.status, 206, 'the rest of the resumed zip fits');
      assert.deepEqual(Buffer.from(await rest.arrayBuffer()), zip.subarray(10));
      const listed = (await (await get('/api/shares', alice)).json()) as { shares: ShareObject[] };
      assert.equal(listed.shares.find((x) => x.id === s.id)?.downloads, 2);
      assert.equal(await deadBody(`/share/${s.id}/?zip=1`), await deadBody(`/share/${'x'.repeat(32)}/`), 'used up: the one dead-link answer');
      const locked = await share({ path: '/alice/docs', password: 'pw' });
      assert.equal((await get(`/share/${locked.id}/?zip=1`)).status, 401);
      const drop = await share({ path: '/alice/drop', upload_only: true });
      assert.equal(await deadBody(`/share/${drop.id}/?zip=1`), await deadBody(`/share/${'x'.repeat(32)}/`), 'an upload-only link reads nothing');
    });

    test("removing the owner ends their shares", async () => {
      await t.addUser('carol');
      await t.fs.put('c.txt', 'carol', 'carol');
      const s = await share({ path: '/carol/c.txt' }, bearer((await t.login('carol')).access_token));
      assert.equal((await get(`/share/${s.id}`)).status, 200);
      assert.equal(await t.store.users.delete('carol'), true);
      assert.equal((await get(`/share/${s.id}`)).status, 404);
      assert.equal(await t.store.shares.get(s.id), undefined, 'the row went with the user');
    });
  });
}

describe('share link throttles', () => {
  let t: TestApp;
  before(async () => {
    t = await startApp({ users: ['alice'], flags: { dev: false, loginRateLimit: '3', shareRateLimit: '12' } });
    await t.fs.put('a.txt', 'x');
  });
  after(() => t?.close());

  test('password attempts are throttled like login; visitors are rate-limited per address', async () => {
    const alice = bearer((await t.login('alice')).access_token);
    const s = (await (await postJson(`${t.url}/api/shares`, { path: '/alice/a.txt', password: 'right' }, alice)).json()) as ShareObject;
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await postJson(`${t.url}/share/${s.id}/auth`, { password: 'wrong' })).status);
    assert.deepEqual(statuses, [401, 401, 401, 429]);
    const throttled = await postJson(`${t.url}/share/${s.id}/auth`, { password: 'right' });
    assert.equal(throttled.status, 429, 'even the right password waits');
    assert.ok(Number(throttled.headers.get('retry-after')) > 0);
    const page = await fetch(`${t.url}/s/${s.id}/auth`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'password=right' });
    assert.equal(page.status, 429);
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    // 6 requests so far; the limit is 12 a minute.
    const more: number[] = [];
    for (let i = 0; i < 8; i++) more.push((await fetch(`${t.url}/share/${s.id}`)).status);
    assert.deepEqual(more.slice(0, 6), [401, 401, 401, 401, 401, 401]);
    assert.deepEqual(more.slice(6), [429, 429]);
  });
});

test('request logs carry no whole share id', async () => {
  let log = '';
  const sink = new Writable({ write: (chunk, _enc, cb) => ((log += chunk.toString()), cb()) });
  const t = await startApp({ users: ['alice'], logTo: sink });
  try {
    await t.fs.put('a.txt', 'x');
    const alice = bearer((await t.login('alice')).access_token);
    const s = (await (await postJson(`${t.url}/api/shares`, { path: '/alice/a.txt', password: 'pw-in-body' }, alice)).json()) as ShareObject;
    await fetch(`${t.url}/share/${s.id}`);
    await fetch(`${t.url}/s/${s.id}/?x=1`);
    await fetch(`${t.url}/share/${s.id}/../x`);
    await postJson(`${t.url}/share/${s.id}/auth`, { password: 'pw-in-body' });
    await fetch(`${t.url}/api/shares/${s.id}`, { method: 'DELETE', headers: alice });
    assert.ok(log.includes(`/share/${s.id.slice(0, 6)}[redacted]`), 'the link is recognisable in the log');
    assert.ok(log.includes(`/s/${s.id.slice(0, 6)}[redacted]/?x=1`));
    assert.ok(log.includes(`/api/shares/${s.id.slice(0, 6)}[redacted]`));
    assert.ok(!log.includes(s.id), `never the whole id: ${log.split('\n').filter((l) => l.includes(s.id)).join('\n')}`);
    assert.ok(!log.includes('pw-in-body'));
  } finally {
    await t.close();
  }
});

test('under --base-path every share address, link, form and cookie carries the prefix', async () => {
  const t = await startApp({ users: ['alice'], flags: { basePath: '/files' } });
  try {
    await t.fs.put('box/a b.txt', 'inside');
    const alice = bearer((await t.login('alice')).access_token);
    const s = (await (await postJson(`${t.url}/api/shares`, { path: '/alice/box', password: 'pw' }, alice)).json()) as ShareObject;
    assert.equal(s.url, `/files/s/${s.id}`);
    assert.equal((await fetch(`${t.origin}/s/${s.id}/`)).status, 404, 'nothing outside the prefix');
    assert.equal((await fetch(`${t.origin}/share/${s.id}/`)).status, 404);
    const locked = await (await fetch(`${t.origin}${s.url}/`)).text();
    assert.match(locked, new RegExp(`<form method="post" action="/files/s/${s.id}/auth"`));
    assert.match(locked, /href="\/files\/s\/_assets\/share\.css"/);
    const form = await fetch(`${t.origin}/files/s/${s.id}/auth`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'password=pw', redirect: 'manual' });
    assert.equal(form.status, 303);
    assert.equal(form.headers.get('location'), `/files/s/${s.id}/`);
    const cookies = form.headers.getSetCookie();
    assert.deepEqual(cookies.map((c) => /Path=([^;]+)/.exec(c)?.[1]).sort(), [`/files/s/${s.id}`, `/files/share/${s.id}`]);
    const cookie = (cookies[0] as string).split(';')[0] as string;
    const page = await (await fetch(`${t.origin}/files/s/${s.id}/`, { headers: { cookie } })).text();
    assert.ok(page.includes(`href="/files/s/${s.id}/a%20b.txt"`));
    assert.ok(page.includes(`href="/files/share/${s.id}/a%20b.txt?download=1"`));
    assert.ok(page.includes(`href="/files/share/${s.id}/?zip=1"`));
    assert.equal(await (await fetch(`${t.origin}/files/share/${s.id}/a%20b.txt`, { headers: { cookie } })).text(), 'inside');
  } finally {
    await t.close();
  }
});
