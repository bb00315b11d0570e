import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { BasicClient } from '../helpers/basic-client.js';

const run = promisify(execFile);

/** Why a text browser cannot run here (CI installs them through scripts/test-services.sh). */
function missing(bin: string): string | undefined {
  if (existsSync(`/usr/bin/${bin}`)) return undefined;
  const why = `${bin} is not installed (apt-get install ${bin})`;
  if (process.env.CI) throw new Error(why);
  return why;
}

for (const [storage, skip] of BACKENDS) {
  describe(`the basic HTML UI in real text browsers on ${storage}`, { skip }, () => {
    let t: TestApp;
    let dir: string;
    let cookie: string;
    before(async () => {
      t = await startApp({ users: ['alice'], storage });
      dir = await mkdtemp(join(tmpdir(), 'fc-textbrowser-'));
      await t.fs.mkdir('Photos 2026/');
      await t.fs.put('report <final>.txt', 'report');
      await t.fs.put('notes.md', '# notes');
      const c = new BasicClient(t.url);
      assert.equal((await c.login('alice', 'alice-password')).status, 303);
      cookie = c.jar.get('fc_basic')?.value ?? '';
      assert.ok(cookie);
    });
    after(async () => {
      await t?.close();
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    const expectListing = (out: string) => {
      assert.match(out, /Signed in as alice/);
      const photos = out.indexOf('Photos 2026/');
      const notes = out.indexOf('notes.md');
      const report = out.indexOf('report <final>.txt');
      assert.ok(photos >= 0 && notes >= 0 && report >= 0, out);
      assert.ok(photos < notes && notes < report, 'folders first, then files by name');
      assert.match(out, /Upload files/);
      assert.match(out, /New folder/);
    };

    test('lynx -dump of a signed-in folder page shows its entries (cookie from a cookie file)', { skip: missing('lynx') }, async () => {
      const { hostname, pathname } = new URL(t.url);
      const cookies = join(dir, 'lynx-cookies');
      // Netscape cookie-file format, which lynx reads with PERSISTENT_COOKIES on.
      await writeFile(cookies, `${hostname}\tFALSE\t${pathname.replace(/\/$/, '')}/basic/\tFALSE\t4102444800\tfc_basic\t${cookie}\n`);
      const cfg = join(dir, 'lynx.cfg');
      await writeFile(cfg, `PERSISTENT_COOKIES:TRUE\nCOOKIE_FILE:${cookies}\nACCEPT_ALL_COOKIES:TRUE\nCHARACTER_SET:utf-8\n`);
      const { stdout } = await run('lynx', [`-cfg=${cfg}`, '-dump', '-width=200', '-nolist', `${t.url}/basic/`], { env: { ...process.env, HOME: dir, LANG: 'C.UTF-8' } });
      expectListing(stdout);
      assert.doesNotMatch(stdout, /Sign in\b(?! as)/, 'not the login form');
    });

    test('w3m -dump of a signed-in folder page shows its entries', { skip: missing('w3m') }, async () => {
      const { stdout } = await run('w3m', ['-dump', '-cols', '200', '-O', 'UTF-8', '-header', `Cookie: fc_basic=${cookie}`, `${t.url}/basic/`], { env: { ...process.env, HOME: dir, LANG: 'C.UTF-8' } });
      expectListing(stdout);
    });

    test('lynx without a session gets the login form', { skip: missing('lynx') }, async () => {
      const { stdout } = await run('lynx', ['-dump', '-nolist', `${t.url}/basic/`], { env: { ...process.env, HOME: dir } });
      assert.match(stdout, /Sign in/);
      assert.match(stdout, /Username/);
      assert.match(stdout, /Password/);
    });
  });
}
