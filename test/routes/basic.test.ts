import { describe, test, before, after } from 'node:test';
import { Writable } from 'node:stream';
import assert from 'node:assert/strict';
import { BACKENDS, startApp, testHasher, type TestApp } from '../helpers/app.js';
import { BasicClient, listedNames, notice } from '../helpers/basic-client.js';
import { rawRequest } from '../helpers/raw-http.js';
import { createUserService } from '../../src/services/users.js';
import { systemClock } from '../../src/lib/clock.js';
import { WEB_ROOT } from '../../src/main.js';

/** No script; style only from the sheet that carries this answer's nonce (never 'self': a user's .css must not apply). */
const PAGE_CSP = /^default-src 'none'; style-src 'nonce-([A-Za-z0-9+/=]+)'; img-src 'self'; form-action 'self'; frame-ancestors 'none'/;

/** An HTML page with the status, the security headers of every basic page, and no script anywhere. */
async function htmlPage(res: Response, status: number): Promise<string> {
  const body = await res.text();
  assert.equal(res.status, status, body.slice(0, 2000));
  assert.match(res.headers.get('content-type') ?? '', /^text\/html; charset=utf-8/);
  const nonce = PAGE_CSP.exec(res.headers.get('content-security-policy') ?? '')?.[1];
  assert.ok(nonce, res.headers.get('content-security-policy') ?? 'no CSP');
  assert.ok(body.includes(`<link rel="stylesheet" nonce="${nonce}" `), 'the style sheet carries the nonce');
  assert.equal(res.headers.get('x-frame-options'), 'DENY');
  assert.equal(res.headers.get('cache-control'), 'no-store');
  assert.doesNotMatch(body, /<script|javascript:|\son[a-z]+=/i);
  return body;
}

for (const [storage, skip] of BACKENDS) {
  describe(`basic HTML UI on ${storage}`, { skip }, () => {
    let t: TestApp;
    let alice: BasicClient;
    before(async () => {
      t = await startApp({ users: ['alice', 'bob'], flags: { maxUploadSize: '1M' }, storage });
      await t.fs.put('hello.txt', 'Hello, world!');
      await t.fs.mkdir('zeta/');
      await t.fs.put('zeta/inner.txt', 'inner');
      await t.fs.put('secret.txt', 'bob only', 'bob');
      alice = new BasicClient(t.url);
      const res = await alice.login('alice', 'alice-password');
      assert.equal(res.status, 303);
    });
    after(() => t.close());

    test('a visitor without a session is sent to the login form, which has labelled fields and no script', async () => {
      const anon = new BasicClient(t.url);
      const cases: [string, string][] = [
        ['/basic/', '/basic/login'],
        ['/basic/zeta/?page=2', '/basic/login?next=%2Fbasic%2Fzeta%2F%3Fpage%3D2'],
        ['/basic/file/hello.txt', '/basic/login?next=%2Fbasic%2Ffile%2Fhello.txt'],
      ];
      for (const [path, location] of cases) {
        const res = await anon.fetch(path);
        assert.equal(res.status, 303, path);
        assert.equal(res.headers.get('location'), location);
      }
      const html = await htmlPage(await anon.fetch('/basic/login'), 200);
      assert.match(html, /<label for="username">Username<\/label>/);
      assert.match(html, /<label for="password">Password<\/label>/);
      assert.match(html, /<form method="post" action="\/basic\/login">/);
      const css = await anon.fetch('/basic/style.css');
      assert.equal(css.status, 200);
      assert.match(css.headers.get('content-type') ?? '', /^text\/css/);
      // the pages link their icon, so a browser never asks for a /favicon.ico that is not there
      assert.match(html, /<link rel="icon" href="\/basic\/icon.svg" type="image\/svg\+xml">/);
      const icon = await anon.fetch('/basic/icon.svg');
      assert.equal(icon.status, 200);
      assert.equal(icon.headers.get('content-type'), 'image/svg+xml');
      assert.match(await icon.text(), /^<svg /);
    });

    test('login sets an HttpOnly, SameSite=Lax session cookie scoped to /basic/ (no Secure over http)', async () => {
      const c = new BasicClient(t.url);
      const res = await c.login('alice', 'alice-password');
      assert.equal(res.status, 303);
      assert.equal(res.headers.get('location'), '/basic/');
      const cookie = c.jar.get('fc_basic');
      assert.ok(cookie, 'session cookie set');
      assert.match(cookie.value, /^alice:fcr_[A-Za-z0-9_-]{40,}$/);
      const attrs = cookie.attributes.split(';').map((a) => a.trim().toLowerCase());
      assert.ok(attrs.includes('httponly'));
      assert.ok(attrs.includes('samesite=lax'));
      assert.ok(attrs.includes('path=/basic/'));
      assert.ok(!attrs.includes('secure'));
      const html = await htmlPage(await c.fetch('/basic/'), 200);
      assert.match(html, /Signed in as <strong>alice<\/strong>/);
    });

    test('after signing in, the page first asked for opens; a next that is not one of our pages is ignored', async () => {
      const c = new BasicClient(t.url);
      const form = await c.page('/basic/zeta/');
      assert.match(form.html, /<input type="hidden" name="next" value="\/basic\/zeta\/">/);
      const res = await c.fetch('/basic/login', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ username: 'alice', password: 'alice-password', next: '/basic/zeta/' }).toString() });
      assert.equal(res.status, 303);
      assert.equal(res.headers.get('location'), '/basic/zeta/');
      for (const next of ['https://evil.example/', '//evil.example/basic/', '/basic//evil.example', '/basic/\\evil', '/storage/alice/', 'javascript:alert(1)']) {
        const other = new BasicClient(t.url);
        const r = await other.fetch('/basic/login', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ username: 'alice', password: 'alice-password', next }).toString() });
        assert.equal(r.headers.get('location'), '/basic/', next);
        const page = await htmlPage(await new BasicClient(t.url).fetch(`/basic/login?next=${encodeURIComponent(next)}`), 200);
        assert.doesNotMatch(page, /name="next"/, next);
      }
    });

    test('a wrong password and an unknown user get the same 401 page and no cookie', async () => {
      const bodies: string[] = [];
      for (const [user, pw] of [['alice', 'wrong-password'], ['nobody', 'wrong-password']] as const) {
        const c = new BasicClient(t.url);
        const html = await htmlPage(await c.login(user, pw), 401);
        assert.equal(c.jar.has('fc_basic'), false);
        bodies.push(html.replace(/value="[^"]*"/, '').replace(/ nonce="[^"]*"/g, ''));
        assert.match(html, /The username or password is wrong\./);
      }
      assert.equal(bodies[0], bodies[1]);
      const c = new BasicClient(t.url);
      assert.match(await htmlPage(await c.login('', ''), 400), /Enter your username and password/);
    });

    test('the root folder lists folders first, then files, with sizes and download links', async () => {
      const { res, html } = await alice.page('/basic/');
      await htmlPage(new Response(html, { status: res.status, headers: res.headers }), 200);
      assert.deepEqual(listedNames(html), ['zeta/', 'hello.txt']);
      assert.match(html, /href="\/basic\/file\/hello.txt">hello.txt<\/a><\/td><td class="size">13 B</);
      assert.match(html, /href="\/basic\/zeta\/">zeta\/<\/a>/);
      const sub = await alice.page('/basic/zeta/');
      assert.deepEqual(listedNames(sub.html), ['inner.txt']);
      assert.match(sub.html, /<nav class="crumbs" aria-label="Folder path"><a href="\/basic\/">alice<\/a> \/ <span aria-current="page">zeta<\/span><\/nav>/);
      assert.match(sub.html, /href="\/basic\/">\.\.\/ \(parent folder\)/);
    });

    test('a folder address without its slash redirects to the folder page; a file’s to its download', async () => {
      const res = await alice.fetch('/basic/zeta');
      assert.equal(res.status, 302);
      assert.equal(res.headers.get('location'), '/basic/zeta/');
      const file = await alice.fetch('/basic/hello.txt/');
      assert.equal(file.status, 302);
      assert.equal(file.headers.get('location'), '/basic/file/hello.txt');
      const folder = await alice.fetch('/basic/file/zeta');
      assert.equal(folder.status, 302);
      assert.equal(folder.headers.get('location'), '/basic/zeta/');
    });

    test('download streams the file as an attachment, with Range', async () => {
      const res = await alice.fetch('/basic/file/hello.txt');
      assert.equal(res.status, 200);
      assert.equal(await res.text(), 'Hello, world!');
      assert.match(res.headers.get('content-disposition') ?? '', /^attachment; filename="hello.txt"/);
      assert.match(res.headers.get('content-security-policy') ?? '', /^sandbox/);
      assert.equal(res.headers.get('accept-ranges'), 'bytes');
      const part = await alice.fetch('/basic/file/hello.txt', { headers: { range: 'bytes=7-11' } });
      assert.equal(part.status, 206);
      assert.equal(part.headers.get('content-range'), 'bytes 7-11/13');
      assert.equal(await part.text(), 'world');
      const bad = await alice.fetch('/basic/file/hello.txt', { headers: { range: 'bytes=50-60' } });
      await htmlPage(bad, 416);
      await htmlPage(await alice.fetch('/basic/file/missing.txt'), 404);
    });

    test('uploading several files through the form writes them all; a taken name gets a suffix; the result shows once', async () => {
      await t.fs.mkdir('up/');
      const csrf = await alice.csrf('/basic/up/');
      const res = await alice.upload('/basic/up/', [{ name: 'a.txt', content: 'A' }, { name: 'b ü #1.txt', content: 'B' }, { name: 'a.txt', content: 'A2' }], csrf);
      assert.equal(res.status, 303, await res.clone().text());
      assert.equal(res.headers.get('location'), '/basic/up/');
      assert.equal(await t.fs.text('up/a.txt'), 'A');
      assert.equal(await t.fs.text('up/b ü #1.txt'), 'B');
      assert.equal(await t.fs.text('up/a (1).txt'), 'A2');
      const first = await alice.page('/basic/up/');
      assert.equal(notice(first.html), 'Uploaded 3 files: a.txt, b ü #1.txt, a (1).txt.');
      assert.deepEqual(listedNames(first.html), ['a (1).txt', 'a.txt', 'b ü #1.txt']);
      assert.equal(notice((await alice.page('/basic/up/')).html), undefined, 'the message is shown once');
      const again = await alice.upload('/basic/up/', [{ name: 'a.txt', content: 'A3' }], csrf);
      assert.equal(again.status, 303);
      assert.equal(await t.fs.text('up/a (2).txt'), 'A3');
      assert.equal(await t.fs.text('up/a.txt'), 'A', 'never replaced');
    });

    test('an upload over --max-upload-size is a 413 page and leaves no file', async () => {
      await t.fs.mkdir('big/');
      const csrf = await alice.csrf();
      const res = await alice.upload('/basic/big/', [{ name: 'big.bin', content: Buffer.alloc(1024 * 1024 + 1) }], csrf);
      const html = await htmlPage(res, 413);
      assert.match(html, /larger than this server accepts/);
      assert.equal(await t.fs.kind('big/big.bin'), undefined);
    });

    test('an upload with no file chosen is a clear 400 page', async () => {
      const csrf = await alice.csrf();
      const form = new FormData();
      form.append('files', new Blob([]), '');
      const res = await alice.fetch(`/basic/?action=upload&csrf=${encodeURIComponent(csrf)}`, { method: 'POST', body: form });
      assert.match(await htmlPage(res, 400), /no file part/);
    });

    test('new folder, then rename and delete (with a confirmation page) through the forms', async () => {
      const csrf = await alice.csrf();
      const made = await alice.post('/basic/', { csrf, action: 'mkdir', name: 'Projects <2026>' });
      assert.equal(made.status, 303);
      assert.equal(await t.fs.kind('Projects <2026>'), 'folder');
      const page = await alice.page('/basic/');
      assert.equal(notice(page.html), 'Created folder Projects <2026>.');
      assert.match(page.html, /Projects &lt;2026&gt;\/<\/a>/);
      assert.doesNotMatch(page.html, /<2026>/);

      await htmlPage(await alice.post('/basic/', { csrf, action: 'mkdir', name: 'Projects <2026>' }), 409);

      const renameForm = await alice.page(`/basic/?rename=${encodeURIComponent('Projects <2026>')}`);
      assert.match(renameForm.html, /<label for="new-name">New name<\/label>/);
      assert.match(renameForm.html, /name="name" value="Projects &lt;2026&gt;"/);
      const renamed = await alice.post('/basic/', { csrf: BasicClient.csrfOf(renameForm.html), action: 'rename', name: 'Projects <2026>', new_name: 'Archive' });
      assert.equal(renamed.status, 303);
      assert.equal(await t.fs.kind('Archive'), 'folder');
      assert.equal(await t.fs.kind('Projects <2026>'), undefined);
      assert.equal(notice((await alice.page('/basic/')).html), 'Renamed Projects <2026> to Archive.');

      await htmlPage(await alice.post('/basic/', { csrf, action: 'rename', name: 'Archive', new_name: 'hello.txt' }), 409);
      await htmlPage(await alice.post('/basic/', { csrf, action: 'rename', name: 'gone', new_name: 'x' }), 404);

      const confirm = await alice.page('/basic/?delete=Archive');
      assert.match(confirm.html, /Delete folder “Archive”\?/);
      assert.equal(await t.fs.kind('Archive'), 'folder', 'the confirmation page deletes nothing');
      const deleted = await alice.post('/basic/', { csrf, action: 'delete', name: 'Archive' });
      assert.equal(deleted.status, 303);
      assert.equal(await t.fs.kind('Archive'), undefined);
      assert.equal(notice((await alice.page('/basic/')).html), 'Deleted Archive.');
      await htmlPage(await alice.post('/basic/', { csrf, action: 'delete', name: 'Archive' }), 404);
      await htmlPage(await alice.fetch('/basic/?delete=nothing-here'), 404);
    });

    test('bad input gets a clear error page and changes nothing', async () => {
      const csrf = await alice.csrf();
      const cases: [Record<string, string>, number, RegExp][] = [
        [{ csrf, action: 'mkdir', name: '' }, 400, /A name is required/],
        [{ csrf, action: 'mkdir', name: '..' }, 400, /not allowed/],
        [{ csrf, action: 'mkdir', name: 'a/b' }, 400, /cannot contain &quot;\/&quot;/],
        [{ csrf, action: 'rename', name: 'hello.txt', new_name: 'x\\y' }, 400, /backslash/],
        [{ csrf, action: 'explode' }, 400, /Unknown action/],
        [{ csrf }, 400, /Unknown action/],
      ];
      for (const [fields, status, message] of cases) assert.match(await htmlPage(await alice.post('/basic/', fields), status), message, JSON.stringify(fields));
      await htmlPage(await alice.post('/basic/missing-folder/', { csrf, action: 'mkdir', name: 'x' }), 404);
      await htmlPage(await alice.post('/basic/hello.txt/', { csrf, action: 'mkdir', name: 'x' }), 409);
      await htmlPage(await alice.fetch('/basic/', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }), 415);
      assert.deepEqual(await t.fs.names(''), ['big', 'hello.txt', 'up', 'zeta']);
    });

    test('CSRF: a POST without the token, with a wrong one, another session’s, or from another origin is refused with 403', async () => {
      const csrf = await alice.csrf();
      const other = new BasicClient(t.url);
      await other.login('alice', 'alice-password');
      const otherCsrf = await other.csrf();
      assert.notEqual(otherCsrf, csrf, 'the token is bound to the session');
      const attempts: [Record<string, string>, Record<string, string>][] = [
        [{ action: 'mkdir', name: 'csrf1' }, {}],
        [{ csrf: 'wrong', action: 'mkdir', name: 'csrf2' }, {}],
        [{ csrf: otherCsrf, action: 'mkdir', name: 'csrf3' }, {}],
        [{ csrf, action: 'mkdir', name: 'csrf4' }, { origin: 'http://evil.example' }],
        [{ csrf, action: 'mkdir', name: 'csrf5' }, { 'sec-fetch-site': 'cross-site' }],
        [{ csrf, action: 'delete', name: 'hello.txt' }, { origin: 'http://127.0.0.1.evil.example' }],
        [{ csrf: 'wrong', action: 'delete', name: 'hello.txt' }, { origin: 'null' }],
      ];
      for (const [fields, headers] of attempts) {
        const html = await htmlPage(await alice.post('/basic/', fields, headers), 403);
        assert.match(html, /Refused/);
      }
      await htmlPage(await alice.upload('/basic/', [{ name: 'csrf6.txt', content: 'x' }], undefined), 403);
      await htmlPage(await alice.upload('/basic/', [{ name: 'csrf7.txt', content: 'x' }], 'wrong'), 403);
      await htmlPage(await alice.post('/basic/logout', {}), 403);
      assert.deepEqual(await t.fs.names(''), ['big', 'hello.txt', 'up', 'zeta']);
      // The same forms with the right token, from our own origin, work.
      const ok = await alice.post('/basic/', { csrf, action: 'mkdir', name: 'csrf-ok' }, { origin: new URL(t.url).origin, 'sec-fetch-site': 'same-origin' });
      assert.equal(ok.status, 303);
      assert.equal(await t.fs.kind('csrf-ok'), 'folder');
      // A cross-site login form is refused too (login CSRF).
      await htmlPage(await new BasicClient(t.url).login('alice', 'alice-password', { origin: 'http://evil.example' }), 403);
    });

    test('GET never changes anything', async () => {
      const csrf = await alice.csrf();
      for (const q of [`?action=mkdir&name=viaget&csrf=${csrf}`, `?action=delete&name=hello.txt&csrf=${csrf}`]) await alice.page(`/basic/${q}`);
      assert.equal(await t.fs.kind('viaget'), undefined);
      assert.equal(await t.fs.kind('hello.txt'), 'file');
    });

    test('another user’s files are unreachable and traversal is refused', async () => {
      // The user is always the signed-in one: /basic/bob/ is a folder "bob" of alice's, which does not exist.
      await htmlPage(await alice.fetch('/basic/bob/'), 404);
      await htmlPage(await alice.fetch('/basic/file/bob/secret.txt'), 404);
      // Sent as raw bytes: fetch would resolve the dot segments itself before the server saw them.
      const cookie = alice.cookieHeader();
      for (const path of ['/basic/%2e%2e/bob/', '/basic/..%2Fbob/', '/basic/file/..%2Fbob%2Fsecret.txt', '/basic/file/%2e%2e/%2e%2e/bob/secret.txt', '/basic/file/./secret.txt', '/basic/a%5Cb/', '/basic/a%00b/', '/basic/a//b/']) {
        const res = await rawRequest(t.url, `GET ${new URL(t.url).pathname.replace(/\/$/, '')}${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: ${cookie}\r\nConnection: close\r\n\r\n`);
        assert.equal(res.status, 400, path);
        assert.match(res.headers, /content-type: text\/html/i, path);
        assert.doesNotMatch(res.body, /bob only/, path);
      }
      // A URL that is not even valid percent-encoding is refused before routing (the JSON of every such URL).
      assert.equal((await alice.fetch('/basic/%ZZ/')).status, 400);
      const csrf = await alice.csrf();
      await htmlPage(await alice.post('/basic/', { csrf, action: 'rename', name: 'hello.txt', new_name: '../bob/x' }), 400);
      const form = new URLSearchParams({ csrf, action: 'delete', name: 'secret.txt' }).toString();
      const post = await rawRequest(t.url, `POST ${new URL(t.url).pathname.replace(/\/$/, '')}/basic/%2e%2e/bob/ HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: ${cookie}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${form.length}\r\nConnection: close\r\n\r\n${form}`);
      assert.equal(post.status, 400);
      assert.equal(await t.fs.text('secret.txt', 'bob'), 'bob only');
      assert.equal(await t.fs.text('hello.txt'), 'Hello, world!');
    });

    test('sign out ends the session at once: the old cookie no longer opens anything', async () => {
      const c = new BasicClient(t.url);
      await c.login('alice', 'alice-password');
      const stolen = c.cookieHeader();
      const csrf = await c.csrf();
      const out = await c.post('/basic/logout', { csrf });
      assert.equal(out.status, 303);
      assert.equal(out.headers.get('location'), '/basic/login');
      assert.equal(c.jar.has('fc_basic'), false, 'the cookie is cleared');
      assert.match((await c.page('/basic/login')).html, /You are signed out\./);
      const replay = await fetch(`${t.url}/basic/zeta/`, { headers: { cookie: stolen }, redirect: 'manual' });
      assert.equal(replay.status, 303);
      assert.equal(replay.headers.get('location'), '/basic/login?next=%2Fbasic%2Fzeta%2F');
    });

    test('a password change revokes the cookie session with the user’s other sessions', async () => {
      await t.addUser('carol');
      const c = new BasicClient(t.url);
      await c.login('carol', 'carol-password');
      assert.equal((await c.fetch('/basic/')).status, 200);
      const users = createUserService({ store: t.store, backend: t.backend, hasher: testHasher(), clock: systemClock });
      await users.setPassword('carol', 'carol-new-password');
      // The cluster's nodes read the same database: the change is seen by every worker at once.
      const res = await c.fetch('/basic/');
      assert.equal(res.status, 303);
      assert.equal(res.headers.get('location'), '/basic/login');
      assert.equal((await c.login('carol', 'carol-new-password')).status, 303);
    });

    test('a forged or malformed session cookie is no session', async () => {
      for (const cookie of ['fc_basic=alice:fcr_forged', 'fc_basic=bob:' + (alice.jar.get('fc_basic')?.value.split(':')[1] ?? ''), 'fc_basic=garbage', 'fc_basic=']) {
        const res = await fetch(`${t.url}/basic/`, { headers: { cookie }, redirect: 'manual' });
        assert.equal(res.status, 303, cookie);
      }
    });
  });
}

describe('basic HTML UI: paging, base path, throttle', () => {
  test('a 10 000-entry folder renders in pages of 500, folders first, with next/previous links', async () => {
    const t = await startApp({ users: ['alice'] });
    try {
      const { mkdir, writeFile } = await import('node:fs/promises');
      const { join } = await import('node:path');
      const dir = join(t.paths.storage, 'alice', 'many');
      await mkdir(dir, { recursive: true });
      for (let i = 0; i < 10; i++) await mkdir(join(dir, `dir-${i}`));
      await Promise.all(Array.from({ length: 9990 }, (_, i) => writeFile(join(dir, `f-${String(i).padStart(5, '0')}.txt`), '')));
      const c = new BasicClient(t.url);
      await c.login('alice', 'alice-password');
      const first = await c.page('/basic/many/');
      const names = listedNames(first.html);
      assert.equal(names.length, 500);
      assert.equal(names[0], 'dir-0/');
      assert.equal(names[10], 'f-00000.txt');
      assert.match(first.html, /Entries 1–500 of 10,000\./);
      assert.match(first.html, /<a href="\/basic\/many\/\?page=2" rel="next">Next page<\/a>/);
      const last = await c.page('/basic/many/?page=20');
      assert.deepEqual(listedNames(last.html).slice(-1), ['f-09989.txt']);
      assert.match(last.html, /Entries 9,501–10,000 of 10,000\./);
      assert.match(last.html, /rel="prev"/);
      assert.doesNotMatch(last.html, /rel="next"/);
      assert.ok(first.html.length < 400_000, `one page stays small (${first.html.length} bytes)`);
    } finally {
      await t.close();
    }
  });

  test('request logs never contain the session cookie, the password or the CSRF token', async () => {
    let log = '';
    const sink = new Writable({ write: (chunk, _enc, cb) => ((log += chunk.toString()), cb()) });
    const t = await startApp({ users: ['alice'], logTo: sink });
    try {
      const c = new BasicClient(t.url);
      await c.login('alice', 'alice-password');
      await c.login('alice', 'wrong-password-xyz');
      const csrf = await c.csrf();
      assert.equal((await c.upload('/basic/', [{ name: 'logged.txt', content: 'x' }], csrf)).status, 303);
      await c.post('/basic/logout', { csrf });
      assert.ok(log.includes('/basic/?action=upload&csrf=[redacted]'), 'the upload URL is logged, redacted');
      const secrets = [csrf, 'alice-password', 'wrong-password-xyz', ...[...c.jar.values()].map((k) => k.value.split(':')[1] ?? 'none')];
      for (const secret of secrets) assert.ok(!log.includes(secret), `the log contains ${secret.slice(0, 8)}…`);
      assert.doesNotMatch(log, /fcr_/);
    } finally {
      await t.close();
    }
  });

  test('under --base-path with an https public URL the cookie is Secure and scoped to <base>/basic/', async () => {
    const t = await startApp({ users: ['alice'], flags: { basePath: '/files', publicUrl: 'https://files.example/files' }, webRoot: WEB_ROOT });
    try {
      const c = new BasicClient(t.url);
      const res = await c.login('alice', 'alice-password');
      assert.equal(res.status, 303);
      assert.equal(res.headers.get('location'), '/files/basic/');
      const attrs = c.jar.get('fc_basic')?.attributes.split(';').map((a) => a.trim()) ?? [];
      assert.ok(attrs.includes('Path=/files/basic/'));
      assert.ok(attrs.includes('Secure'));
      const page = await c.page('/basic/');
      assert.match(page.html, /href="\/files\/basic\/style.css"/);
      assert.match(page.html, /action="\/files\/basic\/logout"/);
      // The public URL's host counts as our origin (a reverse proxy may pass another Host).
      const csrf = BasicClient.csrfOf(page.html);
      const made = await c.post('/basic/', { csrf, action: 'mkdir', name: 'via-proxy' }, { origin: 'https://files.example' });
      assert.equal(made.status, 303);
      assert.equal((await fetch(`${t.origin}/basic/login`)).status, 404, 'nothing outside the base path');
      // The app's shell points browsers without JavaScript here, under the base path.
      const shell = await (await fetch(`${t.origin}/files/browse/x/`)).text();
      assert.match(shell, /<noscript>[^]*<a href="\/files\/basic\/">basic HTML version<\/a>[^]*<\/noscript>/);
    } finally {
      await t.close();
    }
  });

  for (const [storage, skip] of BACKENDS) {
    test(`basic sign-in counts towards the login throttle shared with /auth/login on ${storage}`, { skip }, async () => {
      // The cluster's throttle lives in the Redis every test file shares: an address of this test's own
      // (through a trusted proxy) keeps other files' sign-ins from 127.0.0.1 out of its count.
      const t = await startApp({ users: ['alice'], flags: { dev: false, loginRateLimit: '3', trustProxy: true }, storage });
      const from = { 'x-forwarded-for': `198.18.${Math.floor(Math.random() * 256)}.${Math.floor(Math.random() * 256)}` };
      try {
        const c = new BasicClient(t.url);
        assert.equal((await c.login('alice', 'wrong', from)).status, 401);
        assert.equal((await fetch(`${t.url}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json', ...from }, body: '{"username":"alice","password":"x"}' })).status, 401);
        assert.equal((await c.login('alice', 'alice-password', from)).status, 303);
        const res = await c.login('alice', 'alice-password', from);
        const html = await htmlPage(res, 429);
        assert.match(html, /Too many sign-in attempts/);
        assert.ok(Number(res.headers.get('retry-after')) > 0);
      } finally {
        await t.close();
      }
    });
  }
});
