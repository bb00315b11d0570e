import assert from 'node:assert/strict';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { launchBrowser, missingBrowser, newPage, row, screenshotAll, seed, signIn, startServer, waitForFolder, type ServerProcess } from './browser.js';
import { startAll } from '../helpers/start-all.js';

const skip = missingBrowser();

describe('web UI under --base-path /files, with operator banners', { skip }, () => {
  let server: ServerProcess;
  let browser: Browser;
  const bannerDir = () => join(server.dataDir, 'banner');

  before(async () => {
    [server, browser] = await startAll(startServer({ args: ['--dev', '--base-path', '/files', '--public-url', 'https://files.example.org/files'] }), launchBrowser());
    assert.match(server.url, /\/files$/);
    await seed(server, { 'Documents/notes.txt': 'hello' });
    await mkdir(bannerDir(), { recursive: true });
  });
  after(async () => {
    await browser?.close();
    await server?.dispose();
  });

  test('the login banner shows as plain text and an edit is picked up without a restart', async () => {
    await writeFile(join(bannerDir(), 'login.txt'), 'Authorised users only.\n<b>Not bold</b> <img src=x onerror="window.pwned=1">');
    const { context, page, errors } = await newPage(browser);
    await page.goto(`${server.url}/`);
    await page.waitForURL(/\/files\/login/);
    const banner = page.locator('[data-banner="login"]');
    await banner.waitFor();
    assert.equal(await banner.innerText(), 'Authorised users only.\n<b>Not bold</b> <img src=x onerror="window.pwned=1">');
    assert.equal(await banner.locator('b, img').count(), 0, 'banner markup is text, never HTML');
    assert.equal(await page.evaluate('window.pwned'), undefined);
    await screenshotAll(page, 'login-banner');

    await writeFile(join(bannerDir(), 'login.txt'), 'Maintenance on Sunday 02:00 UTC.');
    await page.reload();
    await page.locator('[data-banner="login"]', { hasText: 'Maintenance on Sunday' }).waitFor();
    await rm(join(bannerDir(), 'login.txt'));
    await page.reload();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    assert.equal(await page.locator('[data-banner="login"]').count(), 0, 'no banner when the file is gone');
    assert.deepEqual(errors, []);
    await context.close();
  });

  test('signing in, browsing and sharing work under /files, with the page banner on every page', async () => {
    await writeFile(join(bannerDir(), 'page.txt'), 'Quota: 10 GB per user.');
    const { context, page, errors } = await newPage(browser);
    await signIn(page, server, '/');
    assert.match(page.url(), /\/files\/browse\/$/);
    await page.locator('[data-banner="page"]', { hasText: 'Quota: 10 GB per user.' }).waitFor();

    // Into a folder by its link: the URL keeps the prefix, the listing loads through the prefixed API.
    await row(page, 'Documents').locator('a').first().click();
    await page.waitForURL(/\/files\/browse\/Documents\/$/);
    await waitForFolder(page);
    await row(page, 'notes.txt').waitFor();
    await page.locator('[data-banner="page"]').waitFor();

    // A deep link loads the app (assets from /files/assets/) and the same folder.
    await page.goto(`${server.url}/browse/Documents/`);
    await row(page, 'notes.txt').waitFor();

    // Share links are built on --public-url, which includes the base path.
    await row(page, 'notes.txt').click();
    await page.getByRole('toolbar', { name: 'Selection actions' }).getByRole('button', { name: 'Share', exact: true }).click();
    await page.getByRole('dialog', { name: 'Share “notes.txt”' }).getByRole('button', { name: 'Create link' }).click();
    const url = await page.getByLabel('Share link').inputValue();
    assert.match(url, /^https:\/\/files\.example\.org\/files\/s\/[A-Za-z0-9_-]{20,}$/);
    // The same link on this server's own address works.
    const local = url.replace('https://files.example.org/files', server.url);
    const res = await fetch(local);
    assert.equal(res.status, 200);
    assert.match(await res.text(), /notes\.txt/);
    // Shared by me lives under the prefix too.
    await page.getByRole('dialog', { name: 'Share “notes.txt”' }).getByRole('link', { name: 'See all my links' }).click();
    await page.waitForURL(/\/files\/shared$/);
    await page.getByRole('listitem', { name: 'notes.txt' }).waitFor();
    await page.locator('[data-banner="page"]').waitFor();
    await screenshotAll(page, 'page-banner');
    assert.deepEqual(errors, []);
    await context.close();
  });
});
