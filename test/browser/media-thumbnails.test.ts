import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { garbage, missingMediaTools, pdf, video } from '../helpers/media.js';
import { launchBrowser, missingBrowser, newPage, row, screenshot, seed, signIn, startServer, type ServerProcess } from './browser.js';
import { startAll } from '../helpers/start-all.js';

const skip = missingBrowser() ?? (await missingMediaTools());

/** Runs in the page (serialized by Playwright, so self-contained): the image is loaded with that natural size. */
const sizeIs = ([selector, width, height]: [string, number, number]): boolean => {
  const img = (globalThis as unknown as { document: { querySelector(s: string): { complete: boolean; naturalWidth: number; naturalHeight: number } | null } }).document.querySelector(selector);
  return !!img && img.complete && img.naturalWidth === width && img.naturalHeight === height;
};

describe('web UI: thumbnails of PDFs and videos', { skip }, () => {
  let server: ServerProcess;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let errors: string[];
  const loaded = (selector: string, width: number, height: number) => page.waitForFunction(sizeIs, [selector, width, height] as [string, number, number]);

  before(async () => {
    [server, browser] = await startAll(startServer({ args: ['--dev'] }), launchBrowser());
    await seed(server, {
      'Media/report.pdf': pdf(200, 100),
      'Media/clip.mp4': await video(320, 240),
      'Media/broken.pdf': garbage(4000),
    });
    ({ context, page, errors } = await newPage(browser));
    await signIn(page, server, '/browse/Media/');
  });
  after(async () => {
    await context?.close();
    await browser?.close();
    await server?.dispose();
  });

  test("list rows show a PDF's first page and a video's frame at 64 px", async () => {
    await loaded('.file-grid [data-name="report.pdf"] .thumb img', 64, 32);
    await loaded('.file-grid [data-name="clip.mp4"] .thumb img', 64, 48);
  });

  test('the grid shows them at 256 px; a PDF the server cannot draw keeps its icon, with no console error', async () => {
    const refused = page.waitForResponse((r) => r.url().includes('/broken.pdf?thumbnail=256'));
    await page.getByRole('button', { name: 'Grid view' }).click();
    await page.locator('.tile-view').waitFor();
    assert.equal((await refused).status(), 404);
    await loaded('.tile[data-name="report.pdf"] .thumb img', 256, 128);
    await loaded('.tile[data-name="clip.mp4"] .thumb img', 256, 192);
    const broken = page.locator('.tile[data-name="broken.pdf"] .thumb');
    await broken.locator('svg').waitFor();
    assert.equal(await broken.locator('img').count(), 0);
    await screenshot(page, 'grid-media');
    await page.getByRole('button', { name: 'Grid view' }).click();
    await page.locator('.file-grid').waitFor();
    assert.equal(await row(page, 'broken.pdf').locator('.thumb img').count(), 0);
    assert.deepEqual(errors, []);
  });
});
