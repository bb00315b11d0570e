import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { DESKTOP, PHONE, launchBrowser, missingBrowser, newPage, seed, signIn, startServer, waitForFolder, type ServerProcess } from './browser.js';
import { startAll } from '../helpers/start-all.js';

const skip = missingBrowser();

/**
 * The file manager's controls at desktop (1280×800) and phone (390×844) width:
 * a sort control in the grid view as in the list, one and only one on a
 * phone, and a deep folder's trail that never cuts a name on its left.
 */
describe('web UI: sort controls and the trail, desktop and phone', { skip }, () => {
  let server: ServerProcess;
  let browser: Browser;

  before(async () => {
    [server, browser] = await startAll(startServer({ args: ['--dev'] }), launchBrowser());
    await seed(server, {
      'Kinds/Folder A/': '',
      'Kinds/big.bin': Buffer.alloc(30_000),
      'Kinds/medium.txt': 'm'.repeat(3000),
      'Kinds/small.txt': 's',
      'Some Files/Project/images/a.txt': 'a',
    });
  });
  after(async () => {
    await browser?.close();
    await server?.dispose();
  });

  /** The sort controls a person can see: column header buttons and "Sort by" menus. */
  const visibleSortControls = (page: Page) =>
    page.locator('.sort-button, select[aria-label="Sort by"]').evaluateAll((els) =>
      els
        .filter((e) => {
          const r = (e as unknown as { getBoundingClientRect(): { width: number; height: number } }).getBoundingClientRect();
          return r.width > 0 && r.height > 0;
        })
        .map((e) => ((e as unknown as { tagName: string }).tagName === 'SELECT' ? 'Sort by' : ((e as unknown as { textContent: string }).textContent ?? '').trim())),
    );
  const tileNames = (page: Page) => page.locator('.tile-view .tile').evaluateAll((els) => els.map((e) => (e as unknown as { dataset: { name: string } }).dataset.name));

  for (const [label, viewport] of [['desktop', DESKTOP], ['phone', PHONE]] as const) {
    test(`${label}: the grid view has a sort control, and the list shows ${label === 'phone' ? 'one "Sort by"' : 'its column headers'}`, async () => {
      const { context, page, errors, consoleErrors } = await newPage(browser, { viewport });
      try {
        await signIn(page, server, '/browse/Kinds/');
        // The list: column headers on a desktop; on a phone one "Sort by" and nothing else.
        assert.deepEqual(await visibleSortControls(page), label === 'phone' ? ['Sort by'] : ['Name', 'Size', 'Modified']);

        await page.getByRole('button', { name: 'Grid view' }).click();
        await page.locator('.tile-view').waitFor();
        assert.deepEqual(await visibleSortControls(page), ['Sort by'], 'the grid view has one sort control');
        assert.deepEqual(await tileNames(page), ['Folder A', 'big.bin', 'medium.txt', 'small.txt']);
        await page.getByRole('combobox', { name: 'Sort by' }).selectOption({ label: 'Smallest first' });
        await page.waitForFunction(() => (globalThis as unknown as { document: { querySelector(s: string): { dataset: { name: string } } | null } }).document.querySelector('.tile-view .tile:nth-child(2)')?.dataset.name === 'small.txt');
        assert.deepEqual(await tileNames(page), ['Folder A', 'small.txt', 'medium.txt', 'big.bin']);
        // The choice is the list's too.
        await page.getByRole('button', { name: 'Grid view' }).click();
        await page.locator('.file-grid').waitFor();
        if (label === 'desktop') assert.equal(await page.getByRole('columnheader', { name: 'Size' }).getAttribute('aria-sort'), 'ascending');
        else assert.equal(await page.getByRole('combobox', { name: 'Sort by' }).evaluate((el) => (el as unknown as { selectedOptions: { text: string }[] }).selectedOptions[0]?.text), 'Smallest first');
        assert.deepEqual(consoleErrors, []);
        assert.deepEqual(errors, []);
      } finally {
        await context.close();
      }
    });

    test(`${label}: a deep folder's trail shows whole names, starting with "…" when it does not fit`, async () => {
      const { context, page, errors, consoleErrors } = await newPage(browser, { viewport });
      try {
        await signIn(page, server, '/browse/Some%20Files/Project/images/');
        const trail = page.getByRole('navigation', { name: 'Breadcrumb' });
        const crumbs = trail.getByRole('listitem');
        const texts = (await crumbs.allInnerTexts()).map((t) => t.trim());
        const navBox = await trail.boundingBox();
        assert.ok(navBox);
        // Nothing of the trail is cut or scrolled away: every crumb lies inside it, whole.
        for (let i = 0; i < texts.length; i++) {
          const b = await crumbs.nth(i).boundingBox();
          assert.ok(b && b.x >= navBox.x - 1 && b.x + b.width <= navBox.x + navBox.width + 1, `crumb "${texts[i]}" ${JSON.stringify(b)} inside the trail ${JSON.stringify(navBox)}`);
        }
        const cut = await trail.locator('.crumb-text').evaluateAll((els) => els.filter((e) => (e as unknown as { scrollWidth: number; clientWidth: number }).scrollWidth > (e as unknown as { clientWidth: number }).clientWidth + 1).length);
        assert.equal(cut, 0, 'no name is cut');
        assert.equal(texts.at(-1), 'images');
        if (label === 'desktop') assert.deepEqual(texts, ['My files', 'Some Files', 'Project', 'images']);
        else {
          assert.equal(texts[0], '…', `the trail starts with "…" (${JSON.stringify(texts)})`);
          // "…" goes up to the last folder it stands for.
          const up = trail.getByRole('link', { name: /^Up to / });
          const to = ((await up.getAttribute('aria-label')) ?? '').replace(/^Up to /, '');
          await up.click();
          await page.waitForURL((u) => !u.pathname.endsWith('/images/'));
          await waitForFolder(page);
          assert.equal((await trail.getByRole('listitem').last().innerText()).trim(), to);
        }
        assert.deepEqual(consoleErrors, []);
        assert.deepEqual(errors, []);
      } finally {
        await context.close();
      }
    });
  }
});
