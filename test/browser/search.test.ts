import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchBrowser, makePng, missingBrowser, newPage, row, screenshotAll, signIn, startServer, waitForFolder, type ServerProcess, seedIndexed } from './browser.js';
import { startAll } from '../helpers/start-all.js';

const skip = missingBrowser();

describe('web UI: search', { skip }, () => {
  let server: ServerProcess;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let errors: string[];
  let consoleErrors: string[];

  before(async () => {
    [server, browser] = await startAll(startServer({ args: ['--dev'] }), launchBrowser());
    // 400 files before the one we look for, so opening it must scroll the (virtualized) list.
    const files: Record<string, string | Buffer> = { 'Notes/Zèbra Crossing.txt': 'z', 'zebra-top.txt': 'z', 'Other/unrelated.txt': 'u' };
    // Pictures at the top, so a row drawn in the wrong folder would ask for a thumbnail there.
    for (let i = 0; i < 4; i++) files[`pic-${i}.png`] = makePng(40, 30, [60 * i, 90, 120]);
    for (let i = 0; i < 400; i++) files[`Animals/animal-${String(i).padStart(3, '0')}.txt`] = 'a';
    files['Animals/zz Zebra Stripes.md'] = 'stripes';
    // Put on disk behind the server's back, then indexed the way an operator would.
    await seedIndexed(server, files);
    ({ context, page, errors, consoleErrors } = await newPage(browser));
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

  test('opening a result in another folder never draws this folder\'s rows under that folder\'s path', async () => {
    await page.goto(`${server.url}/browse/`);
    await waitForFolder(page);
    await page.locator('.file-grid [data-name="pic-3.png"] .thumb img').waitFor();
    consoleErrors.length = 0;
    // Every state of the list the page goes through, with the address it was drawn under (a MutationObserver
    // sees each commit of the DOM, before the next one replaces it).
    await page.evaluate(() => {
      type El = { dataset: { name: string } };
      const g = globalThis as unknown as {
        seen: { path: string; names: string[] }[];
        location: { pathname: string };
        document: { body: unknown; querySelectorAll(s: string): Iterable<El> };
        MutationObserver: new (cb: () => void) => { observe(n: unknown, o: Record<string, boolean>): void };
      };
      g.seen = [];
      const snap = () => g.seen.push({ path: g.location.pathname, names: [...g.document.querySelectorAll('.file-grid [role="row"][data-name], .tile-view [data-name]')].map((e) => e.dataset.name) });
      new g.MutationObserver(snap).observe(g.document.body, { childList: true, subtree: true, attributes: true, characterData: true });
    });
    const thumbnailsAsked: string[] = [];
    page.on('request', (r) => {
      if (r.url().includes('thumbnail=')) thumbnailsAsked.push(decodeURIComponent(new URL(r.url()).pathname));
    });
    await box().fill('stripes');
    await until('the one result', async () => JSON.stringify(await shownPaths()) === JSON.stringify(['/admin/Animals/zz Zebra Stripes.md']));
    await results().first().click();
    await page.waitForURL(/\/browse\/Animals\/\?at=/);
    await row(page, 'zz Zebra Stripes.md').waitFor();
    const seen = (await page.evaluate(() => (globalThis as unknown as { seen: { path: string; names: string[] }[] }).seen)) as { path: string; names: string[] }[];
    const inAnimals = /^(animal-\d{3}\.txt|zz Zebra Stripes\.md)$/;
    const wrong = seen.filter((s) => s.path === '/browse/Animals/').flatMap((s) => s.names.filter((n) => !inAnimals.test(n)));
    assert.deepEqual([...new Set(wrong)], [], 'rows of My files drawn under /browse/Animals/');
    assert.deepEqual(thumbnailsAsked.filter((p) => p.startsWith('/storage/admin/Animals/')), [], 'thumbnails asked for under the new path');
    assert.deepEqual(consoleErrors, []);
    assert.deepEqual(errors, []);
  });
});
