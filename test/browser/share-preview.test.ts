import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchBrowser, makePng, missingBrowser, newPage, row, screenshotAll, seed, signIn, startServer, type PageGlobal, type ServerProcess } from './browser.js';

const skip = missingBrowser();

describe('web UI: share links, previews and downloads', { skip }, () => {
  let server: ServerProcess;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let errors: string[];

  before(async () => {
    [server, browser] = await Promise.all([startServer({ args: ['--dev'] }), launchBrowser()]);
    await seed(server, {
      'Shared/report #1.txt': 'quarterly numbers',
      'Shared/sunset.png': makePng(480, 300, [230, 120, 50]),
      'Shared/README.md': '# Read me\n\nSome **bold** text and `code`.\n\n- one\n- two\n',
      'Shared/data.bin': Buffer.from([0, 1, 2, 3]),
    });
    ({ context, page, errors } = await newPage(browser));
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
    await signIn(page, server, '/browse/Shared/');
  });
  after(async () => {
    await context?.close();
    await browser?.close();
    await server?.dispose();
  });

  test('Copy link makes a URL that opens the file without a session, and says how long it works', async () => {
    await row(page, 'report #1.txt').click();
    await page.getByRole('toolbar', { name: 'Selection actions' }).getByRole('button', { name: 'Copy link', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Share “report #1.txt”' });
    const input = dialog.getByLabel('Share link');
    await page.waitForFunction(() => String((globalThis as unknown as PageGlobal).document.querySelector('.share-url')?.value).startsWith('http'));
    const url = await input.inputValue();
    assert.match(url, new RegExp(`^${server.url}/storage/admin/Shared/report%20%231\\.txt\\?token=`));
    await dialog.getByText(/Valid for 24 hours, until .+\./).waitFor();
    await dialog.getByText('Link copied.').waitFor();
    assert.equal(await page.evaluate('navigator.clipboard.readText()'), url);
    await screenshotAll(page, 'share');

    // A shorter lifetime makes a new link.
    await dialog.getByLabel('Link works for').selectOption({ label: '1 hour' });
    await dialog.getByText(/Valid for (1 hour|60 minutes), until/).waitFor();
    assert.notEqual(await input.inputValue(), url);
    await dialog.getByRole('button', { name: 'Close', exact: true }).click();

    // A fresh context: no localStorage, no session.
    const stranger = await browser.newContext();
    const p = await stranger.newPage();
    const res = await p.goto(url);
    assert.equal(res?.status(), 200);
    assert.equal(await res?.text(), 'quarterly numbers');
    // The token is for that path only.
    const other = await p.goto(url.replace('report%20%231.txt', 'sunset.png'));
    assert.equal(other?.status(), 401);
    await stranger.close();
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
    // Arrow keys go to the neighbouring files; Escape closes.
    await page.keyboard.press('ArrowLeft');
    await dialog.locator('.markdown h1').filter({ hasText: 'Read me' }).or(page.getByRole('dialog').locator('pre.preview-text')).first().waitFor();
    await page.keyboard.press('Escape');
    await page.getByRole('dialog').waitFor({ state: 'detached' });
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
