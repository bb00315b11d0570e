// The public share pages (/s/<id>) in Chromium, as a visitor without an account sees them: in a
// fresh context, with JavaScript on and off: password form, download, folder browsing, the
// upload-only drop zone (drag and drop with JS, the plain form without), and the image gallery.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { DESKTOP, PHONE, launchBrowser, makePng, missingBrowser, screenshot, seed, startServer, type ServerProcess } from './browser.js';
import { startAll } from '../helpers/start-all.js';

const skip = missingBrowser();

/** The page-side globals these tests touch (the test tsconfig has no DOM types). */
type DropGlobal = {
  DataTransfer: new () => { items: { add(file: unknown): void } };
  File: new (parts: string[], name: string, opts: { type: string }) => unknown;
  DragEvent: new (type: string, init: Record<string, unknown>) => unknown;
  document: { querySelector(selector: string): { dispatchEvent(e: unknown): boolean } };
};

/** Runs in the page (serialized by Playwright, so self-contained): the image is loaded with that natural width. */
const widthIs = ([selector, want]: [string, number]): boolean => {
  const img = (globalThis as unknown as { document: { querySelector(s: string): { complete: boolean; naturalWidth: number } | null } }).document.querySelector(selector);
  return !!img && img.complete && img.naturalWidth === want;
};

type Share = { id: string; url: string };

describe('public share pages in a browser', { skip }, () => {
  let server: ServerProcess;
  let browser: Browser;
  let token: string;

  before(async () => {
    [server, browser] = await startAll(startServer({ args: ['--dev'] }), launchBrowser());
    await seed(server, {
      'report.txt': 'quarterly numbers',
      'Photos/a-red.png': makePng(300, 200, [220, 40, 40]),
      'Photos/b-green.png': makePng(200, 300, [40, 200, 40]),
      'Photos/c-blue.png': makePng(320, 240, [40, 40, 220]),
      'Photos/notes.txt': 'not an image',
      'Photos/Trip/inside.txt': 'deeper',
      'Inbox/': '',
    });
    const res = await fetch(`${server.url}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: server.adminPassword }) });
    token = ((await res.json()) as { access_token: string }).access_token;
  });
  after(async () => {
    await browser?.close();
    await server?.dispose();
  });

  const share = async (body: Record<string, unknown>): Promise<Share> => {
    const res = await fetch(`${server.url}/api/shares`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify(body) });
    assert.equal(res.status, 201);
    return (await res.json()) as Share;
  };

  /** A visitor: a fresh context with no cookies, JavaScript on or off. */
  async function visitor(js: boolean, viewport = DESKTOP): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
    const context = await browser.newContext({ javaScriptEnabled: js, viewport, acceptDownloads: true });
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    // Any failed answer but the page's own (its status is the link's state): a missing icon, a broken asset.
    page.on('response', (r) => {
      if (r.status() >= 400 && r.request().resourceType() !== 'document') errors.push(`${r.status()} ${new URL(r.url()).pathname}`);
    });
    page.on('console', (m) => {
      // A page's own status (401 password page, 404 dead link) is reported as a failed load: expected.
      if (m.type() === 'error' && !m.text().startsWith('Failed to load resource: the server responded with a status of 40')) errors.push(m.text());
    });
    return { context, page, errors };
  }

  for (const js of [true, false]) {
    test(`a password share opens after the password and downloads (JavaScript ${js ? 'on' : 'off'})`, async () => {
      const s = await share({ path: '/admin/report.txt', password: 'let me in', max_downloads: 3 });
      const { context, page, errors } = await visitor(js);
      try {
        const first = await page.goto(server.url + s.url);
        assert.equal(first?.status(), 401);
        assert.equal(await page.getByText('quarterly numbers').count(), 0);
        await page.getByLabel('Password').fill('wrong one');
        await page.getByRole('button', { name: 'Open' }).click();
        await page.getByText('That password is not right').waitFor();
        await page.getByLabel('Password').fill('let me in');
        await page.getByRole('button', { name: 'Open' }).click();
        await page.getByRole('heading', { name: 'report.txt' }).waitFor();
        await page.getByText('17 B').waitFor();
        if (js) await screenshot(page, 'share-link-file');
        const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download' }).click()]);
        assert.equal(download.suggestedFilename(), 'report.txt');
        assert.equal(await readFile((await download.path()) as string, 'utf8'), 'quarterly numbers');
        assert.deepEqual(errors, []);
      } finally {
        await context.close();
      }
    });

    test(`a folder share is browsable, with breadcrumb, previews and downloads (JavaScript ${js ? 'on' : 'off'})`, async () => {
      const s = await share({ path: '/admin/Photos' });
      const { context, page, errors } = await visitor(js, js ? DESKTOP : PHONE);
      try {
        await page.goto(server.url + s.url);
        await page.getByRole('heading', { name: 'Photos' }).waitFor();
        assert.equal(await page.getByRole('link', { name: 'Download all (zip)' }).getAttribute('href'), `/share/${s.id}/?zip=1`);
        await page.getByRole('link', { name: 'Trip', exact: true }).click();
        await page.getByRole('heading', { name: 'Trip' }).waitFor();
        await page.getByRole('link', { name: 'inside.txt', exact: true }).click();
        await page.locator('pre.text').filter({ hasText: 'deeper' }).waitFor();
        await page.locator('nav.crumbs').getByRole('link', { name: 'Photos', exact: true }).click();
        await page.getByRole('heading', { name: 'Photos' }).waitFor();
        if (!js) {
          await screenshot(page, 'share-link-folder-phone-nojs');
          // Without JavaScript an image link opens its page with the image inline.
          await page.getByRole('link', { name: 'a-red.png', exact: true }).click();
          // Polled on a timer, not on animation frames: a page without JavaScript need not draw any.
          await page.waitForFunction(widthIs, ['figure.preview img', 300] as [string, number], { polling: 100 });
        }
        const [download] = await Promise.all([page.waitForEvent('download'), page.goto(server.url + s.url).then(() => page.getByRole('link', { name: 'Download notes.txt', exact: true }).click())]);
        assert.equal(await readFile((await download.path()) as string, 'utf8'), 'not an image');
        assert.deepEqual(errors, []);
      } finally {
        await context.close();
      }
    });

    test(`an upload-only link takes files from a visitor (JavaScript ${js ? 'on: drag and drop and the picker' : 'off: the plain form'})`, async () => {
      const s = await share({ path: '/admin/Inbox', upload_only: true });
      const { context, page, errors } = await visitor(js);
      try {
        await page.goto(server.url + s.url);
        await page.getByRole('heading', { name: /Upload files to/ }).waitFor();
        const tag = js ? 'js' : 'form';
        if (js) {
          // Drag and drop: a real DataTransfer with a File, dropped on the zone.
          await page.evaluate((name) => {
            const g = globalThis as unknown as DropGlobal;
            const dt = new g.DataTransfer();
            dt.items.add(new g.File(['dropped bytes'], name, { type: 'text/plain' }));
            const zone = g.document.querySelector('.dropzone');
            zone.dispatchEvent(new g.DragEvent('dragover', { dataTransfer: dt, bubbles: true, cancelable: true }));
            zone.dispatchEvent(new g.DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
          }, `dropped-${tag}.txt`);
          await page.getByText('1 file uploaded.').waitFor();
          // With JavaScript a file goes as soon as it is chosen: no Upload button, no "No file chosen" left behind,
          // and what this visitor sent is listed (by the names they chose: the folder's own names stay unseen).
          assert.equal(await page.getByRole('button', { name: 'Upload', exact: true }).isVisible(), false);
          assert.equal(await page.locator('input[type=file]').isVisible(), false);
          const received = page.getByRole('list', { name: 'Received' });
          await received.getByText(`dropped-${tag}.txt`).waitFor();
          await screenshot(page, 'share-link-upload');
          const [chooser] = await Promise.all([page.waitForEvent('filechooser'), page.getByRole('button', { name: 'Choose files' }).click()]);
          await chooser.setFiles([
            { name: `picked-${tag}.txt`, mimeType: 'text/plain', buffer: Buffer.from('picked') },
            { name: `dropped-${tag}.txt`, mimeType: 'text/plain', buffer: Buffer.from('second') },
          ]);
          await page.getByText('2 files uploaded.').waitFor();
          assert.equal(await page.locator('progress').getAttribute('value'), '100');
          assert.equal(await received.getByRole('listitem').count(), 3);
          await received.getByText(`picked-${tag}.txt`).waitFor();
        } else {
          await page.locator('input[type=file]').setInputFiles([
            { name: `picked-${tag}.txt`, mimeType: 'text/plain', buffer: Buffer.from('picked') },
            { name: `dropped-${tag}.txt`, mimeType: 'text/plain', buffer: Buffer.from('dropped bytes') },
          ]);
          await page.getByRole('button', { name: 'Upload' }).click();
          await page.getByText('2 files uploaded. Thank you!').waitFor();
          await page.locator('input[type=file]').setInputFiles([{ name: `dropped-${tag}.txt`, mimeType: 'text/plain', buffer: Buffer.from('second') }]);
          await page.getByRole('button', { name: 'Upload' }).click();
          await page.getByText('1 file uploaded. Thank you!').waitFor();
        }
        const inbox = join(server.dataDir, 'storage', 'admin', 'Inbox');
        assert.equal(await readFile(join(inbox, `dropped-${tag}.txt`), 'utf8'), 'dropped bytes', 'never replaced');
        assert.equal(await readFile(join(inbox, `dropped-${tag} (1).txt`), 'utf8'), 'second');
        assert.equal(await readFile(join(inbox, `picked-${tag}.txt`), 'utf8'), 'picked');
        assert.equal(await page.getByText(`dropped-${tag} (1)`).count(), 0, 'the page lists nothing of the folder, not even the name a file was stored under');
        assert.deepEqual(errors, []);
      } finally {
        await context.close();
      }
    });
  }

  test('a folder of images is a gallery: arrow keys, Escape', async () => {
    const s = await share({ path: '/admin/Photos' });
    const { context, page, errors } = await visitor(true);
    try {
      await page.goto(server.url + s.url);
      await page.getByRole('link', { name: 'a-red.png', exact: true }).click();
      const box = page.getByRole('dialog', { name: 'Image viewer' });
      await box.waitFor();
      // Functions, not strings: a string predicate is eval'd in the page, which the pages' CSP forbids.
      const loaded = (w: number) => page.waitForFunction(widthIs, ['.lightbox img', w] as [string, number]);
      await loaded(300);
      await box.getByText('a-red.png (1 / 3)').waitFor();
      await screenshot(page, 'share-link-gallery');
      await page.keyboard.press('ArrowRight');
      await box.getByText('b-green.png (2 / 3)').waitFor();
      await loaded(200);
      await page.keyboard.press('ArrowRight');
      await box.getByText('c-blue.png (3 / 3)').waitFor();
      await page.keyboard.press('ArrowRight');
      await box.getByText('a-red.png (1 / 3)').waitFor();
      await page.keyboard.press('ArrowLeft');
      await box.getByText('c-blue.png (3 / 3)').waitFor();
      await loaded(320);
      await page.keyboard.press('Escape');
      await box.waitFor({ state: 'hidden' });
      assert.equal(new URL(page.url()).pathname, s.url, 'the gallery stayed on the folder page');
      assert.deepEqual(errors, []);
    } finally {
      await context.close();
    }
  });

  test('a dead link shows the same page whatever the cause', async () => {
    const s = await share({ path: '/admin/report.txt' });
    await fetch(`${server.url}/api/shares/${s.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${token}` } });
    const { context, page } = await visitor(true);
    try {
      const res = await page.goto(server.url + s.url);
      assert.equal(res?.status(), 404);
      // The same page but for the nonce of its script and style sheet, fresh in every answer (docs/security.md).
      const sameBut = (html: string | undefined) => html?.replace(/ nonce="[^"]*"/g, ' nonce=""');
      const revoked = sameBut(await res?.text());
      await page.getByRole('heading', { name: 'This link is not available' }).waitFor();
      const unknown = await page.goto(`${server.url}/s/${'x'.repeat(32)}`);
      assert.equal(sameBut(await unknown?.text()), revoked);
    } finally {
      await context.close();
    }
  });
});
