import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { jpeg, jpegOrientation6, BLUE, RED } from '../helpers/images.js';
import { garbage, missingMediaTools, pdf, video } from '../helpers/media.js';
import { launchBrowser, missingBrowser, newPage, openFolder, row, screenshot, signIn, startServer, type ServerProcess, seedIndexed } from './browser.js';
import { startAll } from '../helpers/start-all.js';

const skip = missingBrowser();
const noMediaTools = await missingMediaTools();

/** Runs in the page (serialized by Playwright, so self-contained): the image is loaded with that natural width (and height). */
const sizeIs = ([selector, width, height]: [string, number, number | undefined]): boolean => {
  const img = (globalThis as unknown as { document: { querySelector(s: string): { complete: boolean; naturalWidth: number; naturalHeight: number } | null } }).document.querySelector(selector);
  return !!img && img.complete && img.naturalWidth === width && (height === undefined || img.naturalHeight === height);
};

describe('web UI: thumbnails, grid view and gallery', { skip }, () => {
  let server: ServerProcess;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let errors: string[];
  const loaded = (selector: string, width: number, height?: number) => page.waitForFunction(sizeIs, [selector, width, height] as [string, number, number | undefined]);

  before(async () => {
    [server, browser] = await startAll(startServer({ args: ['--dev'] }), launchBrowser());
    await seedIndexed(server, {
      'Photos/a-wide.jpg': await jpeg(600, 300, RED),
      'Photos/b-rotated.jpg': await jpegOrientation6(),
      'Photos/c-tall.jpg': await jpeg(300, 600, BLUE),
      'Photos/notes.txt': 'not a picture',
      ...(noMediaTools
        ? {}
        : {
            'Media/report.pdf': pdf(200, 100),
            'Media/clip.mp4': await video(320, 240),
            'Media/broken.pdf': garbage(4000),
            'Gallery/broken.pdf': garbage(4000),
            'Gallery/clip.mp4': await video(320, 240),
            'Gallery/notes.txt': 'not a picture',
            'Gallery/photo.jpg': await jpeg(400, 300, RED),
            'Gallery/report.pdf': pdf(200, 100),
          }),
    });
    ({ context, page, errors } = await newPage(browser));
    await signIn(page, server, '/browse/Photos/');
  });
  after(async () => {
    await context?.close();
    await browser?.close();
    await server?.dispose();
  });

  test('list rows show a 64 px thumbnail for images and the icon for other files', async () => {
    await loaded('.file-grid [data-name="a-wide.jpg"] .thumb img', 64);
    await loaded('.file-grid [data-name="b-rotated.jpg"] .thumb img', 32);
    assert.equal(await row(page, 'notes.txt').locator('.thumb').getAttribute('data-thumb'), 'none');
    assert.equal(await row(page, 'notes.txt').locator('.thumb img').count(), 0);
  });

  test('the grid view shows 256 px thumbnails, and is remembered after a reload', async () => {
    await page.getByRole('button', { name: 'Grid view' }).click();
    await page.locator('.tile-view').waitFor();
    assert.equal(await page.getByRole('button', { name: 'Grid view' }).getAttribute('aria-pressed'), 'true');
    await loaded('.tile[data-name="a-wide.jpg"] .thumb img', 256);
    await loaded('.tile[data-name="c-tall.jpg"] .thumb img', 128);
    // EXIF orientation 6: the 400 × 200 pixels show as 200 × 400.
    await loaded('.tile[data-name="b-rotated.jpg"] .thumb img', 128);
    await screenshot(page, 'grid-view');
    await page.reload();
    await page.locator('.tile-view').waitFor();
    assert.equal(await page.evaluate("localStorage.getItem('file-cloud.view')"), 'grid');
    assert.equal(await page.locator('.file-grid').count(), 0, 'still the grid, not the list');
  });

  test('the gallery steps through the images only with the arrow keys, and Escape closes it', async () => {
    await page.locator('.tile[data-name="a-wide.jpg"] .tile-open').click();
    const dialog = (name: string) => page.getByRole('dialog', { name: new RegExp(name.replace('.', '\\.')) });
    await dialog('a-wide.jpg').waitFor();
    await loaded('.preview-gallery img', 600);
    assert.match(await page.locator('.preview-gallery .preview-note').innerText(), /^1 \/ 3/);
    await page.keyboard.press('ArrowRight');
    await dialog('b-rotated.jpg').waitFor();
    await loaded('.preview-gallery img', 200);
    await page.keyboard.press('ArrowRight');
    await dialog('c-tall.jpg').waitFor();
    await loaded('.preview-gallery img', 300);
    assert.match(await page.locator('.preview-gallery .preview-note').innerText(), /^3 \/ 3/);
    await page.keyboard.press('ArrowRight');
    await dialog('c-tall.jpg').waitFor();
    assert.equal(await page.getByRole('dialog', { name: /notes\.txt/ }).count(), 0, 'the text file is not in the gallery');
    await page.keyboard.press('ArrowLeft');
    await dialog('b-rotated.jpg').waitFor();
    await screenshot(page, 'gallery');
    await page.keyboard.press('Escape');
    await page.getByRole('dialog').waitFor({ state: 'hidden' });
  });

  test('the list view comes back with the toggle, remembered too', async () => {
    await page.getByRole('button', { name: 'Grid view' }).click();
    await page.locator('.file-grid').waitFor();
    assert.equal(await page.evaluate("localStorage.getItem('file-cloud.view')"), 'list');
    assert.deepEqual(errors, []);
  });

  test("list rows show a PDF's first page and a video's frame at 64 px", { skip: noMediaTools }, async () => {
    await openFolder(page, `${server.url}/browse/Media/`);
    await loaded('.file-grid [data-name="report.pdf"] .thumb img', 64, 32);
    await loaded('.file-grid [data-name="clip.mp4"] .thumb img', 64, 48);
  });

  test('the grid shows them at 256 px; a PDF the server cannot draw keeps its icon', { skip: noMediaTools }, async () => {
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

  test('the gallery takes videos and PDFs too: a video shows its frame until played, a PDF its first page with the whole PDF a click away, a PDF the server cannot draw the viewer', { skip: noMediaTools }, async () => {
    await openFolder(page, `${server.url}/browse/Gallery/`);
    await row(page, 'clip.mp4').click();
    await page.keyboard.press('Enter');
    const dialog = (name: string) => page.getByRole('dialog', { name: new RegExp(name.replace('.', '\\.')) });
    const note = () => page.locator('.preview-gallery .preview-note').innerText();
    await dialog('clip.mp4').waitFor();
    const poster = await page.locator('.preview-gallery video').getAttribute('poster');
    assert.match(poster ?? '', /[?&]thumbnail=1024$/);
    const frame = await fetch(new URL(poster ?? '', server.url));
    assert.equal(frame.status, 200, 'the poster is the frame the server draws');
    assert.match(frame.headers.get('content-type') ?? '', /^image\//);
    assert.match(await note(), /^2 \/ 4/);

    await page.keyboard.press('ArrowRight');
    await dialog('photo.jpg').waitFor();
    assert.match(await note(), /^3 \/ 4/, 'the text file between them is not in the gallery');
    await page.keyboard.press('ArrowRight');
    await dialog('report.pdf').waitFor();
    await page.waitForFunction(() => {
      const img = (globalThis as unknown as { document: { querySelector(s: string): { complete: boolean; naturalWidth: number } | null } }).document.querySelector('.preview-gallery img.preview-page');
      return !!img && img.complete && img.naturalWidth > 0;
    });
    assert.match(await note(), /^4 \/ 4/);
    const whole = page.locator('.preview-gallery').getByRole('link', { name: 'Open the whole PDF' });
    assert.doesNotMatch((await whole.getAttribute('href')) ?? '', /thumbnail/);
    assert.equal(await page.locator('.preview-pdf iframe').count(), 0, 'no viewer to take the arrow keys');
    await screenshot(page, 'gallery-pdf');

    for (const name of ['photo.jpg', 'clip.mp4', 'broken.pdf']) {
      await page.keyboard.press('ArrowLeft');
      await dialog(name).waitFor();
    }
    await page.locator('.preview-pdf iframe').waitFor();
    await page.keyboard.press('ArrowRight');
    await dialog('clip.mp4').waitFor();
    await page.keyboard.press('Escape');
    await page.getByRole('dialog').waitFor({ state: 'hidden' });
    assert.deepEqual(errors, []);
  });

  test("a share link's page shows the PDF's page and the video's frame over their icons; a broken PDF shows its icon", { skip: noMediaTools }, async () => {
    const login = await fetch(`${server.url}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: server.adminPassword }) });
    const { access_token } = (await login.json()) as { access_token: string };
    const made = await fetch(`${server.url}/api/shares`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${access_token}` }, body: JSON.stringify({ path: '/admin/Media' }) });
    assert.equal(made.status, 201);
    const { url } = (await made.json()) as { url: string };
    const visitor = await newPage(browser);
    try {
      const refused = visitor.page.waitForResponse((r) => r.url().includes('/broken.pdf?thumbnail=64'));
      await visitor.page.goto(server.url + url);
      const wait = (selector: string, width: number, height?: number) => visitor.page.waitForFunction(sizeIs, [selector, width, height] as [string, number, number | undefined]);
      await wait('a[href$="/report.pdf"] .pic img', 64, 32);
      await wait('a[href$="/clip.mp4"] .pic img', 64, 48);
      assert.equal((await refused).status(), 404);
      // share.js removes the image the server refused, so the visitor sees the file icon, not a broken-image mark.
      await visitor.page.locator('a[href$="/broken.pdf"] .pic img').waitFor({ state: 'detached' });
      assert.ok(await visitor.page.locator('a[href$="/broken.pdf"] .pic svg').isVisible());
      await screenshot(visitor.page, 'share-link-media');
      assert.deepEqual(visitor.errors, []);
    } finally {
      await visitor.context.close();
    }
  });
});
