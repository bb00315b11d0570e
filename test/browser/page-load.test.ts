import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, missingBrowser, newPage, seed, signIn, startServer, waitForFolder, type PageGlobal, type ServerProcess } from './browser.js';
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
