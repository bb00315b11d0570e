import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchBrowser, makePng, missingBrowser, newPage, row, screenshot, screenshotAll, shownNames, signIn, startServer, waitForFolder, type PageGlobal, type ServerProcess, seedIndexed } from './browser.js';
import { startAll } from '../helpers/start-all.js';

const skip = missingBrowser();

describe('web UI: browsing and changing files', { skip }, () => {
  let server: ServerProcess;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let errors: string[];
  const disk = (p: string) => join(server.dataDir, 'storage', 'admin', ...p.split('/'));

  before(async () => {
    [server, browser] = await startAll(startServer({ args: ['--dev'] }), launchBrowser());
    await seedIndexed(server, {
      'Projects/Website/index.html': '<h1>hi</h1>',
      'Projects/Website/style.css': 'body{}',
      'Projects/Odd #1 ?%/inner.txt': 'inside',
      'Projects/plan.md': '# Plan\n\n- **ship** it\n- test `it`\n',
      'Photos/beach.png': makePng(320, 200, [40, 120, 200]),
      'Photos/forest.png': makePng(200, 320, [30, 140, 70]),
      'Archive/': '',
      'Music/': '',
      'a #odd name?%.txt': 'odd',
      'budget 2024.csv': 'a,b\n1,2\n',
      'big-video.mp4': Buffer.alloc(3 * 1024 * 1024),
      'readme.md': '# Hello\n\nThis is *File Cloud*.\n',
      'zeta.txt': 'z',
      'alpha.txt': 'a'.repeat(5000),
    });
    ({ context, page, errors } = await newPage(browser));
    await signIn(page, server);
  });
  after(async () => {
    await context?.close();
    await browser?.close();
    await server?.dispose();
  });

  test('the root lists folders first, sorted by name, with readable sizes', async () => {
    assert.deepEqual(await shownNames(page), ['Archive', 'Music', 'Photos', 'Projects', 'a #odd name?%.txt', 'alpha.txt', 'big-video.mp4', 'budget 2024.csv', 'readme.md', 'zeta.txt']);
    assert.equal(await row(page, 'big-video.mp4').locator('.cell.size').innerText(), '3 MB');
    assert.equal(await row(page, 'alpha.txt').locator('.cell.size').innerText(), '4.9 KB');
    assert.equal(await row(page, 'Archive').locator('.cell.size').innerText(), '—');
    await screenshotAll(page, 'browse');

    // 360 px wide: nothing overflows sideways, the actions are still there.
    await page.setViewportSize({ width: 360, height: 740 });
    await row(page, 'Archive').click();
    await page.getByRole('toolbar', { name: 'Selection actions' }).getByRole('button', { name: 'Delete', exact: true }).waitFor();
    assert.equal(await page.evaluate('document.documentElement.scrollWidth'), 360);
    await screenshot(page, 'browse-selection-360-light');
    await page.getByRole('toolbar', { name: 'Selection actions' }).getByRole('button', { name: 'Clear selection', exact: true }).click();
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  test('sorting by size and by name descending keeps folders first', async () => {
    await page.getByRole('button', { name: 'Size', exact: true }).click();
    const bySize = await shownNames(page);
    assert.deepEqual(bySize.slice(4), ['zeta.txt', 'a #odd name?%.txt', 'budget 2024.csv', 'readme.md', 'alpha.txt', 'big-video.mp4']);
    assert.equal(await page.locator('[role="columnheader"][aria-sort="ascending"]').innerText(), 'Size');
    await page.getByRole('button', { name: 'Name', exact: true }).click();
    await page.getByRole('button', { name: 'Name', exact: true }).click();
    const desc = await shownNames(page);
    assert.deepEqual(desc.slice(0, 4), ['Projects', 'Photos', 'Music', 'Archive']);
    assert.equal(desc[4], 'zeta.txt');
    await page.getByRole('button', { name: 'Name', exact: true }).click();
  });

  test('browse into folders; the URL follows; deep link, reload, back and forward work', async () => {
    await page.getByRole('link', { name: 'Projects', exact: true }).click();
    await page.waitForURL(/\/browse\/Projects\/$/);
    await page.getByRole('link', { name: 'Website', exact: true }).click();
    await page.waitForURL(/\/browse\/Projects\/Website\/$/);
    await row(page, 'index.html').waitFor();
    assert.equal(await page.locator('nav[aria-label="Breadcrumb"] [aria-current="page"]').innerText(), 'Website');
    assert.equal(await page.title(), 'Website · File Cloud');

    await page.reload();
    await row(page, 'style.css').waitFor();

    await page.goBack();
    await page.waitForURL(/\/browse\/Projects\/$/);
    await row(page, 'plan.md').waitFor();
    await page.goForward();
    await row(page, 'index.html').waitFor();

    // Breadcrumb back to the root.
    await page.locator('nav[aria-label="Breadcrumb"]').getByRole('link', { name: 'My files', exact: true }).click();
    await page.waitForURL(/\/browse\/$/);
    await row(page, 'Projects').waitFor();

    // A deep link in a fresh tab of the same session; the page does not shift while it loads.
    const tab = await context.newPage();
    await tab.addInitScript(`window.__shift = 0; new PerformanceObserver((list) => { for (const e of list.getEntries()) if (!e.hadRecentInput) window.__shift += e.value; }).observe({ type: 'layout-shift', buffered: true });`);
    await tab.goto(`${server.url}/browse/Projects/Website/`);
    await row(tab, 'index.html').waitFor();
    await tab.waitForTimeout(300);
    const shift = (await tab.evaluate('window.__shift')) as number;
    console.log(`cumulative layout shift while loading a folder: ${shift.toFixed(4)}`);
    assert.ok(shift < 0.05, `layout shift ${shift}`);
    await tab.close();

    // A folder whose name needs percent-encoding: clicking it and deep-linking to it agree.
    await page.goto(`${server.url}/browse/Projects/`);
    await page.getByRole('link', { name: 'Odd #1 ?%', exact: true }).click();
    await page.waitForURL(`${server.url}/browse/Projects/Odd%20%231%20%3F%25/`);
    await row(page, 'inner.txt').waitFor();
    await page.reload();
    await row(page, 'inner.txt').waitFor();
    await page.goto(`${server.url}/browse/`);
    await row(page, 'Projects').waitFor();
  });

  test('a missing folder shows a not-found state; an empty folder says so', async () => {
    await page.goto(`${server.url}/browse/No%20such%20folder/`);
    await page.getByRole('heading', { name: 'This folder does not exist' }).waitFor();
    await page.getByRole('link', { name: 'Go to My files', exact: true }).click();
    await row(page, 'Archive').waitFor();
    await page.getByRole('link', { name: 'Archive', exact: true }).click();
    await page.getByRole('heading', { name: 'This folder is empty' }).waitFor();
    await screenshotAll(page, 'empty-folder');
    await page.goBack();
    await waitForFolder(page);
    await row(page, 'Archive').waitFor();
  });

  test('new folder', async () => {
    await page.getByRole('button', { name: 'New folder', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'New folder' });
    await dialog.getByLabel('Folder name').fill('Music');
    await dialog.getByRole('button', { name: 'Create', exact: true }).click();
    await dialog.getByText('already here').waitFor();
    await dialog.getByLabel('Folder name').fill('Reports 2025');
    await dialog.getByRole('button', { name: 'Create', exact: true }).click();
    await dialog.waitFor({ state: 'detached' });
    await row(page, 'Reports 2025').waitFor();
    assert.ok(existsSync(disk('Reports 2025')));
  });

  test('rename with F2 and with the menu', async () => {
    await row(page, 'zeta.txt').click();
    await page.keyboard.press('F2');
    const dialog = page.getByRole('dialog', { name: 'Rename “zeta.txt”' });
    // The stem is selected, so typing replaces the name but keeps the extension.
    await page.keyboard.type('omega');
    assert.equal(await dialog.getByLabel('New name').inputValue(), 'omega.txt');
    await page.keyboard.press('Enter');
    await dialog.waitFor({ state: 'detached' });
    await row(page, 'omega.txt').waitFor();
    assert.equal(await readFile(disk('omega.txt'), 'utf8'), 'z');
    assert.ok(!existsSync(disk('zeta.txt')));

    await row(page, 'budget 2024.csv').getByRole('button', { name: 'Actions for budget 2024.csv', exact: true }).click();
    await page.getByRole('menuitem', { name: 'Rename' }).click();
    const d2 = page.getByRole('dialog', { name: /Rename/ });
    await d2.getByLabel('New name').fill('budget 2025.csv');
    await d2.getByRole('button', { name: 'Rename', exact: true }).click();
    await row(page, 'budget 2025.csv').waitFor();
  });

  test('move a file and a folder with the destination picker', async () => {
    // The renamed file stayed selected: start from no selection.
    await page.getByRole('toolbar', { name: 'Selection actions' }).getByRole('button', { name: 'Clear selection', exact: true }).click();
    await row(page, 'omega.txt').locator('input[type="checkbox"]').check();
    await row(page, 'Music').locator('input[type="checkbox"]').check();
    assert.equal(await page.locator('.selection-count').innerText(), '2 selected');
    await page.getByRole('toolbar', { name: 'Selection actions' }).getByRole('button', { name: 'Move', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Move 2 items' });
    // Music cannot go into itself.
    assert.equal(await dialog.getByRole('button', { name: 'Music', exact: true }).isDisabled(), true);
    assert.equal(await dialog.getByRole('button', { name: 'Move here', exact: true }).isDisabled(), true);
    await dialog.getByRole('button', { name: 'Projects', exact: true }).click();
    await dialog.getByRole('button', { name: 'Website', exact: true }).click();
    await dialog.getByRole('button', { name: 'Move here', exact: true }).click();
    await dialog.waitFor({ state: 'detached' });
    await page.getByText('Moved 2 items to “Website”.').waitFor();
    await row(page, 'omega.txt').waitFor({ state: 'detached' });
    assert.ok(existsSync(disk('Projects/Website/omega.txt')));
    assert.ok(existsSync(disk('Projects/Website/Music')));
  });

  test('delete asks first, says folders go with their contents and there is no trash', async () => {
    await row(page, 'Projects').click();
    await page.keyboard.press('Delete');
    const dialog = page.getByRole('dialog', { name: 'Delete “Projects”?' });
    await dialog.getByText('This folder and everything in it will be deleted.').waitFor();
    await dialog.getByText('There is no trash: this cannot be undone.').waitFor();
    await screenshotAll(page, 'delete-confirm');
    await dialog.getByRole('button', { name: 'Cancel', exact: true }).click();
    await dialog.waitFor({ state: 'detached' });
    assert.ok(existsSync(disk('Projects')), 'cancel deletes nothing');

    // Multi-select with Shift+click, then delete both.
    await row(page, 'alpha.txt').click();
    await row(page, 'big-video.mp4').click({ modifiers: ['Shift'] });
    assert.equal(await page.locator('.selection-count').innerText(), '2 selected');
    await page.getByRole('toolbar', { name: 'Selection actions' }).getByRole('button', { name: 'Delete', exact: true }).click();
    const d2 = page.getByRole('dialog', { name: 'Delete 2 items?' });
    await d2.getByRole('button', { name: 'Delete', exact: true }).click();
    await d2.waitFor({ state: 'detached' });
    await row(page, 'alpha.txt').waitFor({ state: 'detached' });
    assert.ok(!existsSync(disk('alpha.txt')));
    assert.ok(!existsSync(disk('big-video.mp4')));
  });

  test('keyboard: arrows move, Enter opens, Backspace goes up, Escape clears', async () => {
    await row(page, 'Archive').click();
    await page.keyboard.press('ArrowDown');
    assert.equal(await page.evaluate('document.activeElement.dataset.name'), 'Photos');
    assert.equal(await row(page, 'Photos').getAttribute('aria-selected'), 'true');
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/browse\/Photos\/$/);
    await row(page, 'beach.png').waitFor();
    await page.locator('.file-grid [role="row"][tabindex="0"]').focus();
    await page.keyboard.press('Backspace');
    await page.waitForURL(/\/browse\/$/);
    // Coming back up focuses the folder we came from.
    await page.waitForFunction((name) => (globalThis as unknown as PageGlobal).document.activeElement?.dataset?.name === name, 'Photos');
    await page.keyboard.press('Control+a');
    assert.match(await page.locator('.selection-count').innerText(), /^\d+ selected$/);
    await page.keyboard.press('Escape');
    assert.equal(await page.locator('.selection-count').count(), 0);
    assert.deepEqual(errors, []);
  });
});
