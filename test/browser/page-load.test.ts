import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { bearer, login, postJson } from '../helpers/client.js';
import { launchBrowser, makePng, missingBrowser, newPage, PHONE, seed, signIn, startServer, waitForFolder, type PageGlobal, type ServerProcess } from './browser.js';
import { startAll } from '../helpers/start-all.js';

const skip = missingBrowser();

/** Runs in the page: what the focused element is (its role, or tag, and its text or name). */
const focusedIs = (): string => {
  const el = (globalThis as unknown as { document: { activeElement: { getAttribute(n: string): string | null; tagName: string; textContent: string | null } | null } }).document.activeElement;
  if (!el) return '';
  return `${el.getAttribute('role') ?? el.tagName.toLowerCase()}:${el.getAttribute('data-name') ?? (el.textContent ?? '').trim()}`;
};

describe('web UI: a clean page load and the skip link', { skip }, () => {
  let server: ServerProcess;
  let browser: Browser;

  before(async () => {
    // No banner files: the usual case, which must not log anything.
    [server, browser] = await startAll(startServer({ args: ['--dev'] }), launchBrowser());
    await seed(server, { 'Documents/': '', 'Music/': '', 'a.txt': 'a', 'b.txt': 'b' });
  });
  after(async () => {
    await browser?.close();
    await server?.dispose();
  });

  test('the sign-in page, a folder, Settings and Users load without a console error (no banner set)', async () => {
    const { context, page, errors, consoleErrors } = await newPage(browser);
    try {
      await page.goto(server.url + '/login');
      await page.getByLabel('Username').waitFor();
      // The banner is asked for once the page shows; give that request its answer.
      await page.waitForLoadState('networkidle');
      assert.deepEqual(consoleErrors, [], 'sign-in page');
      await signIn(page, server);
      await page.waitForLoadState('networkidle');
      assert.deepEqual(consoleErrors, [], 'file list');
      for (const path of ['/settings', '/admin/users', '/browse/Documents/']) {
        await page.goto(server.url + path);
        await page.locator('.app-header').waitFor();
        await page.waitForLoadState('networkidle');
        assert.deepEqual(consoleErrors, [], path);
      }
      assert.deepEqual(errors, []);
    } finally {
      await context.close();
    }
  });

  test('the file browser has its heading, as every page does: the folder\'s name', async () => {
    const { context, page, errors } = await newPage(browser);
    try {
      await signIn(page, server);
      const h1 = page.getByRole('heading', { level: 1 });
      assert.deepEqual(await h1.allInnerTexts(), ['My files']);
      await page.getByRole('link', { name: 'Documents', exact: true }).click();
      await page.waitForURL(/\/browse\/Documents\/$/);
      await h1.filter({ hasText: 'Documents' }).waitFor({ state: 'attached' });
      assert.equal(await h1.count(), 1);
      assert.deepEqual(errors, []);
    } finally {
      await context.close();
    }
  });

  const tabToSkipLink = async (page: Page) => {
    await page.keyboard.press('Tab');
    const link = page.getByRole('link', { name: 'Skip to the file list' });
    assert.equal(await link.evaluate((el) => el === (el.ownerDocument as unknown as PageGlobal['document']).activeElement), true, 'the first Tab reaches the skip link');
    const box = await link.boundingBox();
    assert.ok(box && box.y >= 0 && box.height > 20, `the skip link shows once focused (${JSON.stringify(box)})`);
    await page.keyboard.press('Enter');
  };

  test('the first Tab offers "Skip to the file list", which puts the focus on the list (rows or tiles)', async () => {
    const { context, page, errors } = await newPage(browser);
    try {
      await signIn(page, server);
      // Start from the top of the page, as a keyboard user arriving does.
      await page.goto(server.url + '/browse/');
      await waitForFolder(page);
      const hidden = await page.getByRole('link', { name: 'Skip to the file list' }).boundingBox();
      assert.ok(hidden && hidden.y + hidden.height <= 0, `off screen until focused (${JSON.stringify(hidden)})`);
      await tabToSkipLink(page);
      assert.equal(await page.evaluate(focusedIs), 'row:Documents');
      // Arrow keys work from there at once.
      await page.keyboard.press('ArrowDown');
      assert.equal(await page.evaluate(focusedIs), 'row:Music');
      await page.keyboard.press('Escape'); // the selection followed the cursor; the folder's actions come back

      await page.getByRole('button', { name: 'Grid view' }).click();
      await page.locator('.tile-view').waitFor();
      await page.goto(server.url + '/browse/');
      await page.locator('.tile-view').waitFor();
      await tabToSkipLink(page);
      assert.match(await page.evaluate(focusedIs), /^button:Documents/);
      await page.getByRole('button', { name: 'Grid view' }).click();
      assert.deepEqual(errors, []);
    } finally {
      await context.close();
    }
  });
});

/**
 * Issue 54: every page load and every navigation keeps a clean console. On a server with a trash and
 * versions (so every page of the app exists) and a folder shared by another account, each page is
 * reached by its link or menu item (a navigation inside the app) and loaded afresh, on a desktop in
 * light and on a phone in dark; a search result in another folder and a preview are opened too.
 */
describe('web UI: a clean console on every page and every navigation', { skip }, () => {
  let server: ServerProcess;
  let browser: Browser;

  before(async () => {
    [server, browser] = await startAll(startServer({ args: ['--dev', '--trash-days', '7', '--versions'] }), launchBrowser());
    const admin = bearer((await login(server.url, 'admin', server.adminPassword)).access_token);
    assert.equal((await postJson(`${server.url}/api/admin/users`, { username: 'bea', password: 'bea-password-1' }, admin)).status, 201);
    const bea = bearer((await login(server.url, 'bea', 'bea-password-1')).access_token);
    assert.equal((await fetch(`${server.url}/storage/bea/team/plan.txt`, { method: 'PUT', headers: bea, body: 'plan\n' })).status, 201);
    assert.equal((await postJson(`${server.url}/api/grants`, { path: '/bea/team', to: 'user:admin', permission: 'write' }, bea)).status, 201);
    for (const [path, body] of [['Photos/red.png', makePng(40, 30, [220, 30, 30])], ['Work/report.txt', 'one\n'], ['Work/report.txt', 'two\n'], ['notes.md', '# Notes\n']] as const) {
      assert.equal((await fetch(`${server.url}/storage/admin/${path}`, { method: 'PUT', headers: admin, body })).status, 201);
    }
    assert.equal((await fetch(`${server.url}/storage/admin/notes.md`, { method: 'DELETE', headers: admin })).status, 204);
    assert.equal((await postJson(`${server.url}/api/shares`, { path: '/admin/Work/report.txt' }, admin)).status, 201);
  });
  after(async () => {
    await browser?.close();
    await server?.dispose();
  });

  /** Waits until the page has no request on its way but the change feed's stream (which never ends), for half a second. */
  async function settled(page: Page, pending: Set<unknown>): Promise<void> {
    for (let quiet = 0; quiet < 5; ) {
      await page.waitForTimeout(100);
      quiet = pending.size === 0 ? quiet + 1 : 0;
    }
  }

  for (const [label, viewport, colorScheme] of [['desktop, light', undefined, 'light'], ['phone, dark', PHONE, 'dark']] as const) {
    test(`${label}: each page by its link and loaded afresh, a search result in another folder, a preview; no console error`, async () => {
      const { context, page, errors, consoleErrors } = await newPage(browser, { ...(viewport ? { viewport } : {}), colorScheme });
      const pending = new Set<unknown>();
      page.on('request', (r) => void (r.url().includes('/api/changes/stream') || pending.add(r)));
      page.on('requestfinished', (r) => void pending.delete(r));
      page.on('requestfailed', (r) => void pending.delete(r));
      const clean = async (where: string) => {
        await settled(page, pending);
        assert.deepEqual(consoleErrors, [], where);
        assert.deepEqual(errors, [], where);
      };
      try {
        await signIn(page, server);
        await clean('My files');
        const nav = page.getByRole('navigation', { name: 'Pages' });
        for (const [name, url, ready] of [
          ['Recent', /\/recent$/, page.locator('main [data-name], main .empty-state, main ul').first()],
          ['Shared by me', /\/shared$/, page.getByText('report.txt').first()],
          ['Shared with me', /\/with-me$/, page.getByText('team').first()],
          ['Trash', /\/trash$/, page.getByText('notes.md').first()],
          ['My files', /\/browse\/$/, page.locator('.file-grid, .tile-view').first()],
        ] as const) {
          await nav.getByRole('link', { name }).click();
          await page.waitForURL(url);
          await ready.waitFor();
          await clean(`${name}, by its link`);
        }
        for (const item of ['Settings', 'Users', 'Groups', 'Audit log']) {
          await page.getByRole('button', { name: 'Account: admin' }).click();
          await page.getByRole('menuitem', { name: item }).click();
          await page.getByRole('heading', { level: 1 }).first().waitFor();
          await clean(`${item}, from the account menu`);
        }
        // Into a folder and a shared folder by their rows, back and forward, a preview, a search result elsewhere.
        await page.goto(`${server.url}/browse/`);
        await page.getByRole('link', { name: 'Photos', exact: true }).click();
        await page.waitForURL(/\/browse\/Photos\/$/);
        await page.locator('.file-grid [data-name="red.png"]').waitFor();
        await clean('a folder by its row, with a thumbnail');
        await page.goBack();
        await page.locator('.file-grid [data-name="Work"]').waitFor();
        await page.goForward();
        await page.locator('.file-grid [data-name="red.png"]').waitFor();
        await clean('back and forward');
        await page.locator('.file-grid [data-name="red.png"]').getByRole('button', { name: 'red.png', exact: true }).click();
        await page.getByRole('dialog').waitFor();
        await clean('an image preview');
        await page.keyboard.press('Escape');
        await page.getByRole('combobox', { name: 'Search files and folders' }).fill('report');
        await page.getByRole('listbox', { name: 'Search results' }).getByRole('option').filter({ hasText: 'report.txt' }).first().click();
        await page.waitForURL(/\/browse\/Work\/\?at=report\.txt$/);
        await page.locator('.file-grid [data-name="report.txt"]').waitFor();
        await clean('a search result in another folder');
        await page.goto(`${server.url}/with-me/bea/team/`);
        await page.locator('.file-grid [data-name="plan.txt"]').waitFor();
        await clean('a shared folder, loaded afresh');
        for (const path of ['/recent', '/shared', '/with-me', '/trash', '/settings', '/admin/users', '/admin/groups', '/admin/audit', '/browse/Work/']) {
          await page.goto(server.url + path);
          await page.getByRole('heading', { level: 1 }).first().waitFor({ state: 'attached' });
          await clean(`${path}, loaded afresh`);
        }
      } finally {
        await context.close();
      }
    });
  }
});
