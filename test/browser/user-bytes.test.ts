import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, missingBrowser, newPage, seed, signIn, startServer, type ServerProcess } from './browser.js';
import { startAll } from '../helpers/start-all.js';

const skip = missingBrowser();

/**
 * User bytes never run as the app's script or style (docs/security.md, "User
 * bytes and the app's pages"): an HTML injection on any page of the app's
 * origin is simulated by rewriting the page's HTML on its way to the browser
 * (the server's own headers kept), adding a script and a style sheet that
 * point at files a user uploaded. The page's `load` event waits for every
 * parser-inserted script and style sheet, loaded or refused, so after it
 * the answer is final.
 */
describe('web UI: user bytes cannot run as script or style on the app pages', { skip }, () => {
  let server: ServerProcess;
  let browser: Browser;
  let token: string;
  let shareId: string;

  before(async () => {
    [server, browser] = await startAll(startServer({ args: ['--dev'] }), launchBrowser());
    await seed(server, {
      'Pub/evil.js': "globalThis.__evil = 'ran';",
      'Pub/evil.css': 'html { --evil: applied; }',
      'Pub/note.txt': 'hello',
    });
    const login = await fetch(`${server.url}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: server.adminPassword }) });
    token = ((await login.json()) as { access_token: string }).access_token;
    const share = await fetch(`${server.url}/api/shares`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify({ path: '/admin/Pub' }) });
    assert.equal(share.status, 201);
    shareId = ((await share.json()) as { id: string }).id;
    // The files are served as they are (the contract's Content-Type from the extension): only the pages' policy stops them.
    const js = await fetch(`${server.url}/share/${shareId}/evil.js`);
    assert.equal(js.status, 200);
    assert.match(js.headers.get('content-type') ?? '', /javascript/);
  });
  after(async () => {
    await browser?.close();
    await server?.dispose();
  });

  const sources = () => [
    { script: `/storage/admin/Pub/evil.js?token=${token}`, style: `/storage/admin/Pub/evil.css?token=${token}` },
    { script: `/share/${shareId}/evil.js`, style: `/share/${shareId}/evil.css` },
  ];

  /** Loads `path` with the injected tags for one source; returns whether the script ran and the style applied. */
  async function injected(page: Page, path: string, src: { script: string; style: string }): Promise<{ ran: unknown; style: string; status: number }> {
    const url = server.url + path;
    await page.route(url, async (route) => {
      const response = await route.fetch();
      const body = (await response.text())
        .replace('</head>', `<link rel="stylesheet" href="${src.style}"></head>`)
        .replace('</body>', `<script src="${src.script}"></script></body>`);
      await route.fulfill({ response, body });
    });
    try {
      const res = await page.goto(url, { waitUntil: 'load' });
      const ran = await page.evaluate('globalThis.__evil');
      const style = await page.evaluate("getComputedStyle(document.documentElement).getPropertyValue('--evil').trim()");
      return { ran, style: String(style), status: res?.status() ?? 0 };
    } finally {
      await page.unroute(url);
    }
  }

  async function check(path: string, ready?: (page: Page) => Promise<void>): Promise<void> {
    for (const src of sources()) {
      const { context, page, errors } = await newPage(browser);
      try {
        if (ready) await ready(page);
        const got = await injected(page, path, src);
        assert.ok(got.status > 0 && got.status < 500, `${path} answered`);
        assert.equal(got.ran, undefined, `${src.script} must not run on ${path}`);
        assert.equal(got.style, '', `${src.style} must not apply on ${path}`);
        assert.deepEqual(errors, []);
      } finally {
        await context.close();
      }
    }
  }

  test('the web app (signed in): its own code runs, the injected tags do not', async () => {
    await check('/browse/Pub/', async (page) => {
      await signIn(page, server, '/browse/Pub/');
    });
    // And the app itself still works under its policy, with nothing of its own refused: a fresh signed-in
    // page lists the folder and previews a text file (the preview suites cover images, video, PDF, markdown).
    const { context, page } = await newPage(browser);
    const refusals: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) refusals.push(m.text());
    });
    try {
      await signIn(page, server, '/browse/Pub/');
      await page.locator('.file-grid [data-name="note.txt"]').getByRole('button', { name: 'note.txt', exact: true }).click();
      await page.getByRole('dialog', { name: /note\.txt/ }).locator('pre.preview-text').filter({ hasText: 'hello' }).waitFor();
      assert.deepEqual(refusals, []);
    } finally {
      await context.close();
    }
  });

  test("a share link's public page", async () => {
    await check(`/s/${shareId}/`);
  });

  test('the basic HTML version', async () => {
    await check('/basic/login');
  });
});
