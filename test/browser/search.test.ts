import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { runCli } from '../helpers/server.js';
import { launchBrowser, missingBrowser, newPage, row, screenshotAll, seed, signIn, startServer, type ServerProcess } from './browser.js';
import { startAll } from '../helpers/start-all.js';

const skip = missingBrowser();

describe('web UI: search', { skip }, () => {
  let server: ServerProcess;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let errors: string[];

  before(async () => {
    [server, browser] = await startAll(startServer({ args: ['--dev'] }), launchBrowser());
    // 400 files before the one we look for, so opening it must scroll the (virtualized) list.
    const files: Record<string, string> = { 'Notes/Zèbra Crossing.txt': 'z', 'zebra-top.txt': 'z', 'Other/unrelated.txt': 'u' };
    for (let i = 0; i < 400; i++) files[`Animals/animal-${String(i).padStart(3, '0')}.txt`] = 'a';
    files['Animals/zz Zebra Stripes.md'] = 'stripes';
    // Put on disk behind the server's back, then indexed the way an operator would.
    await seed(server, files);
    const indexed = await runCli(['index', '--data-dir', server.dataDir]);
    assert.equal(indexed.code, 0, indexed.stderr);
    ({ context, page, errors } = await newPage(browser));
    await signIn(page, server);
  });
  after(async () => {
    await context?.close();
    await browser?.close();
    await server?.dispose();
  });

  /** Polls `check` until it holds (the results arrive after a debounce and a request). */
  const until = async (what: string, check: () => Promise<boolean>) => {
    const end = Date.now() + 10_000;
    while (!(await check())) {
      if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const shownPaths = () => results().evaluateAll((els) => els.map((e) => (e as unknown as { dataset: { path: string } }).dataset.path));
  const box = () => page.getByRole('combobox', { name: 'Search files and folders' });
  const results = () => page.getByRole('listbox', { name: 'Search results' }).getByRole('option');

  test('"/" focuses the search box; results come accent- and case-insensitive, each with its folder', async () => {
    await page.locator('.file-grid').click({ position: { x: 5, y: 5 } }).catch(() => undefined);
    await page.keyboard.press('/');
    assert.equal(await box().evaluate((el) => el === (el.ownerDocument as unknown as { activeElement: unknown }).activeElement), true);
    await page.keyboard.type('ZEBRA');
    await results().first().waitFor();
    await until('three results', async () => (await results().count()) === 3);
    // Prefix matches before substring matches, shallower first.
    assert.deepEqual(await shownPaths(), ['/admin/zebra-top.txt', '/admin/Notes/Zèbra Crossing.txt', '/admin/Animals/zz Zebra Stripes.md']);
    assert.match(await results().nth(2).innerText(), /My files \/ Animals/);
    assert.match(await results().nth(0).innerText(), /My files$/m);
    await screenshotAll(page, 'search-results', async () => {
      await box().focus();
    });
  });

  test('choosing a result opens its folder with the file selected and in view', async () => {
    await box().fill('stripes');
    await until('the one result', async () => JSON.stringify(await shownPaths()) === JSON.stringify(['/admin/Animals/zz Zebra Stripes.md']));
    await results().first().click();
    await page.waitForURL(/\/browse\/Animals\/\?at=zz%20Zebra%20Stripes\.md$/);
    const target = row(page, 'zz Zebra Stripes.md');
    await target.waitFor();
    assert.equal(await target.getAttribute('aria-selected'), 'true');
    assert.equal(await target.isVisible(), true);
    const inView = await target.evaluate((el) => {
      const r = (el as unknown as { getBoundingClientRect(): { top: number; bottom: number } }).getBoundingClientRect();
      return r.top >= 0 && r.bottom <= (globalThis as unknown as { innerHeight: number }).innerHeight;
    });
    assert.equal(inView, true, 'the row was scrolled into view');
  });

  test('keyboard: arrows and Enter open a result; a folder result opens the folder itself', async () => {
    await page.keyboard.press('/');
    await page.keyboard.type('notes');
    await until('the folder first', async () => (await shownPaths())[0] === '/admin/Notes');
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/browse\/Notes\/$/);
    await row(page, 'Zèbra Crossing.txt').waitFor();
    await page.keyboard.press('/');
    await page.keyboard.type('nothing like this');
    await page.getByText('No file or folder name contains “nothing like this”.').waitFor();
    await page.keyboard.press('Escape');
    await page.keyboard.press('Escape');
    assert.equal(await box().inputValue(), '');
    assert.deepEqual(errors, []);
  });
});
