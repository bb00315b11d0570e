import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchBrowser, makePng, missingBrowser, newPage, row, screenshot, screenshotAll, signIn, startServer, type PageGlobal, type ServerProcess, seedIndexed } from './browser.js';
import { startAll } from '../helpers/start-all.js';

const skip = missingBrowser();

describe('web UI: previews and downloads', { skip }, () => {
  let server: ServerProcess;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let errors: string[];

  before(async () => {
    [server, browser] = await startAll(startServer({ args: ['--dev'] }), launchBrowser());
    await seedIndexed(server, {
      'Shared/report #1.txt': 'quarterly numbers',
      'Shared/sunset.png': makePng(480, 300, [230, 120, 50]),
      'Shared/README.md': '# Read me\n\nSome **bold** text and `code`.\n\n- one\n- two\n',
      'Shared/data.bin': Buffer.from([0, 1, 2, 3]),
      'Docs/tables.md': [
        '# Prices',
        '',
        '| Plan | Price | Notes |',
        '|:-----|------:|-------|',
        '| Basic | 1 € | ~~old~~ new |',
        '| Pro | 5 € | see https://example.com/pro |',
        '',
        '- [x] done',
        '- [ ] to do',
        '',
        '<script>window.__md = 1</script><img src=x onerror="window.__md = 2">',
        '',
        '[bad](javascript:alert(1)) [good](https://example.com/) ![pic](https://example.com/p.png)',
        '',
      ].join('\n'),
    });
    ({ context, page, errors } = await newPage(browser));
    await signIn(page, server, '/browse/Shared/');
  });
  after(async () => {
    await context?.close();
    await browser?.close();
    await server?.dispose();
  });

  test('an image previews inline through a path token', async () => {
    await row(page, 'sunset.png').getByRole('button', { name: 'sunset.png', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: /sunset\.png/ });
    const img = dialog.locator('img.preview-media');
    await img.waitFor();
    await page.waitForFunction(() => {
      const img = (globalThis as unknown as PageGlobal).document.querySelector('img.preview-media');
      return !!img && img.complete && img.naturalWidth === 480;
    });
    assert.match((await img.getAttribute('src')) ?? '', /^\/storage\/admin\/Shared\/sunset\.png\?token=/);
    await screenshotAll(page, 'preview-image');
    // From an image the arrow keys step through the folder's images (a gallery), and sunset.png is the only one.
    await page.keyboard.press('ArrowLeft');
    await dialog.waitFor();
    assert.equal(await dialog.getByRole('button', { name: 'Previous file' }).isDisabled(), true);
    await page.keyboard.press('Escape');
    await page.getByRole('dialog').waitFor({ state: 'detached' });
    // From another file they go to the neighbouring files; Escape closes.
    await row(page, 'report #1.txt').getByRole('button', { name: 'report #1.txt', exact: true }).click();
    await page.getByRole('dialog', { name: /report #1\.txt/ }).locator('pre.preview-text').waitFor();
    await page.keyboard.press('ArrowLeft');
    await page.getByRole('dialog', { name: /README\.md/ }).locator('.markdown h1').filter({ hasText: 'Read me' }).waitFor();
    await page.keyboard.press('Escape');
    await page.getByRole('dialog').waitFor({ state: 'detached' });

    // Share from the preview: the share-link dialog for that file (share-links.test.ts covers the links).
    await row(page, 'sunset.png').getByRole('button', { name: 'sunset.png', exact: true }).click();
    await dialog.getByRole('button', { name: 'Share', exact: true }).click();
    const share = page.getByRole('dialog', { name: 'Share “sunset.png”' });
    await share.getByRole('button', { name: 'Create link' }).waitFor();
    await share.getByRole('button', { name: 'Cancel' }).click();
    await share.waitFor({ state: 'detached' });
  });

  test('Markdown: GFM tables, strikethrough, task lists and links render; HTML, script URLs and remote images do not', async () => {
    await page.goto(server.url + '/browse/Docs/');
    await row(page, 'tables.md').getByRole('button', { name: 'tables.md', exact: true }).click();
    const md = page.getByRole('dialog', { name: /tables\.md/ }).locator('.markdown');
    const table = md.getByRole('table');
    await table.waitFor();
    assert.deepEqual(await table.getByRole('columnheader').allInnerTexts(), ['Plan', 'Price', 'Notes']);
    assert.deepEqual(await table.getByRole('row').nth(2).getByRole('cell').allInnerTexts(), ['Pro', '5 €', 'see https://example.com/pro']);
    assert.equal(await table.locator('td').nth(1).evaluate((el) => (globalThis as unknown as { getComputedStyle(e: unknown): { textAlign: string } }).getComputedStyle(el).textAlign), 'right');
    assert.equal(await md.locator('del').innerText(), 'old');
    assert.equal(await md.locator('input[type="checkbox"]').count(), 2);
    // Raw HTML shows as text; nothing of it runs or loads.
    assert.match(await md.innerText(), /<script>window\.__md = 1<\/script>/);
    assert.equal(await md.locator('script, img, iframe').count(), 0);
    assert.equal(await page.evaluate('window.__md'), undefined);
    assert.equal(await md.getByRole('link', { name: 'bad' }).count(), 0, 'a javascript: link is no link');
    const good = md.getByRole('link', { name: 'good' });
    assert.equal(await good.getAttribute('href'), 'https://example.com/');
    assert.equal(await good.getAttribute('target'), '_blank');
    assert.match((await good.getAttribute('rel')) ?? '', /noopener/);
    assert.equal(await md.getByRole('link', { name: 'https://example.com/pro' }).count(), 1, 'a bare URL becomes a link');
    assert.match(await md.innerText(), /pic/, 'a remote image shows as its text');
    await screenshot(page, 'preview-markdown-table');
    await page.keyboard.press('Escape');
    await page.goto(server.url + '/browse/Shared/');
    await row(page, 'README.md').waitFor();
  });

  test('Markdown renders as text, not markup; unknown types offer a download', async () => {
    await row(page, 'README.md').getByRole('button', { name: 'README.md', exact: true }).click();
    const md = page.getByRole('dialog', { name: /README\.md/ });
    await md.locator('.markdown h1', { hasText: 'Read me' }).waitFor();
    assert.equal(await md.locator('.markdown strong').innerText(), 'bold');
    assert.equal(await md.locator('.markdown li').count(), 2);
    await screenshotAll(page, 'preview-markdown');
    await page.keyboard.press('Escape');

    await row(page, 'data.bin').getByRole('button', { name: 'data.bin', exact: true }).click();
    const bin = page.getByRole('dialog', { name: /data\.bin/ });
    await bin.getByText('There is no preview for this kind of file.').waitFor();
    const [download] = await Promise.all([page.waitForEvent('download'), bin.locator('.preview-message').getByRole('button', { name: /Download/ }).click()]);
    assert.equal(download.suggestedFilename(), 'data.bin');
    assert.match(download.url(), /download=1/);
    await page.keyboard.press('Escape');
    assert.deepEqual(errors, []);
  });

  test('several selected files download with ?download=1, one after another', async () => {
    await row(page, 'report #1.txt').locator('input[type="checkbox"]').check();
    await row(page, 'sunset.png').locator('input[type="checkbox"]').check();
    const names: string[] = [];
    const done = new Promise<void>((resolve) => {
      page.on('download', (d) => {
        names.push(d.suggestedFilename());
        if (names.length === 2) resolve();
      });
    });
    await page.getByRole('toolbar', { name: 'Selection actions' }).getByRole('button', { name: 'Download', exact: true }).click();
    await done;
    assert.deepEqual(names.sort(), ['report #1.txt', 'sunset.png']);
  });
});
