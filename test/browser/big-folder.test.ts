import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { launchBrowser, missingBrowser, newPage, row, screenshotAll, signIn, startServer, type PageGlobal, type ServerProcess } from './browser.js';
import { startAll } from '../helpers/start-all.js';

const skip = missingBrowser();
const COUNT = 10_000;

describe('web UI: a 10,000-entry folder', { skip }, () => {
  let server: ServerProcess;
  let browser: Browser;

  before(async () => {
    [server, browser] = await startAll(startServer({ args: ['--dev'] }), launchBrowser());
    const dir = join(server.dataDir, 'storage', 'admin', 'Big');
    await mkdir(dir, { recursive: true });
    const names = Array.from({ length: COUNT }, (_, i) => `file-${String(i).padStart(5, '0')}.txt`);
    for (let i = 0; i < names.length; i += 500) await Promise.all(names.slice(i, i + 500).map((n) => writeFile(join(dir, n), n)));
  });
  after(async () => {
    await browser?.close();
    await server?.dispose();
  });

  test('shows its first rows promptly, renders only what is in view, and scrolls to the end', async () => {
    const { context, page, errors } = await newPage(browser);
    await signIn(page, server);
    const started = Date.now();
    await page.getByRole('link', { name: 'Big', exact: true }).click();
    await row(page, 'file-00000.txt').waitFor();
    const firstRowsMs = Date.now() - started;
    const serverMs = Number(await page.locator('.status-line').getAttribute('data-loaded-ms'));
    console.log(`10,000-entry folder: first rows after ${firstRowsMs} ms (listing request ${serverMs} ms)`);
    assert.ok(firstRowsMs < 8000, `first rows took ${firstRowsMs} ms`);
    assert.equal(await page.locator('.file-grid').getAttribute('aria-rowcount'), String(COUNT + 1));
    assert.equal(await page.locator('.status-line').innerText(), '0 folders, 10,000 files');

    const rendered = await page.locator('.file-grid [role="row"][data-name]').count();
    assert.ok(rendered > 10 && rendered < 120, `only the rows in view are in the DOM (${rendered})`);

    // End jumps to the last entry; it is focused and rendered.
    await row(page, 'file-00000.txt').click();
    const t = Date.now();
    await page.keyboard.press('End');
    await row(page, 'file-09999.txt').waitFor();
    await page.waitForFunction((name) => (globalThis as unknown as PageGlobal).document.activeElement?.dataset?.name === name, 'file-09999.txt');
    console.log(`10,000-entry folder: End key to last row in ${Date.now() - t} ms`);
    assert.equal(await row(page, 'file-09999.txt').getAttribute('aria-rowindex'), String(COUNT + 1));

    // Scrolling by wheel renders rows further down.
    await page.locator('.grid-scroll').evaluate((el: { scrollTop: number; scrollHeight: number }) => {
      el.scrollTop = el.scrollHeight / 2;
    });
    await row(page, 'file-05000.txt').or(row(page, 'file-04999.txt')).first().waitFor();
    await screenshotAll(page, 'big-folder');
    assert.deepEqual(errors, []);
    await context.close();
  });
});
