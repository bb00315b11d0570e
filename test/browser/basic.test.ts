import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { DESKTOP, launchBrowser, missingBrowser, screenshot, seed, startServer, type ServerProcess } from './browser.js';
import { startAll } from '../helpers/start-all.js';

const skip = missingBrowser();

/** The basic HTML version (/basic/) in Chromium with JavaScript turned off: everything is plain forms and links. */
describe('basic HTML version with JavaScript disabled', { skip }, () => {
  let server: ServerProcess;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let local: string;
  const disk = (p: string) => join(server.dataDir, 'storage', 'admin', ...p.split('/'));
  const notice = () => page.getByRole('status');

  before(async () => {
    [server, browser] = await startAll(startServer({ args: ['--dev'] }), launchBrowser());
    local = await mkdtemp(join(tmpdir(), 'fc-basic-browser-'));
    await writeFile(join(local, 'notes.txt'), 'basic notes\n');
    await writeFile(join(local, 'second file.md'), '# second\n');
    await seed(server, { 'hello.txt': 'Hello from the seed' });
    context = await browser.newContext({ viewport: DESKTOP, javaScriptEnabled: false, acceptDownloads: true });
    page = await context.newPage();
    page.setDefaultTimeout(10_000);
  });
  after(async () => {
    await context?.close();
    await browser?.close();
    await server?.dispose();
    if (local) await rm(local, { recursive: true, force: true });
  });

  test('the app’s login page links to the basic version, and without JavaScript the shell says so', async () => {
    await page.goto(`${server.url}/`);
    const link = page.locator('noscript a');
    assert.equal(await link.getAttribute('href'), '/basic/');
  });

  test('with JavaScript on, the app’s login page links to the basic version', async () => {
    const withJs = await browser.newContext({ viewport: DESKTOP });
    try {
      const p = await withJs.newPage();
      await p.goto(`${server.url}/`);
      const link = p.getByRole('link', { name: 'Basic HTML version' });
      assert.equal(await link.getAttribute('href'), '/basic/');
      await link.click();
      await p.waitForURL(/\/basic\/login$/);
      await p.getByRole('heading', { name: 'Sign in' }).waitFor();
    } finally {
      await withJs.close();
    }
  });

  test('sign in through the form', async () => {
    await page.goto(`${server.url}/basic/`);
    await page.waitForURL(/\/basic\/login$/);
    await page.getByLabel('Username').fill('admin');
    await page.getByLabel('Password').fill('wrong password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'The username or password is wrong.' }).waitFor();
    await page.getByLabel('Password').fill(server.adminPassword);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/basic\/$/);
    await page.getByRole('heading', { name: 'My files' }).waitFor();
    await page.getByText('Signed in as').waitFor();
    const cookies = await context.cookies();
    const session = cookies.find((c) => c.name === 'fc_basic');
    assert.ok(session, 'session cookie');
    assert.equal(session.httpOnly, true);
    assert.equal(session.sameSite, 'Lax');
    assert.equal(session.path, '/basic/');
  });

  test('create a folder, open it, upload two files through the form', async () => {
    await page.getByLabel('New folder').fill('Reports 2026');
    await page.getByRole('button', { name: 'Create folder' }).click();
    await notice().filter({ hasText: 'Created folder Reports 2026.' }).waitFor();
    assert.ok(existsSync(disk('Reports 2026')));
    await page.getByRole('link', { name: 'Reports 2026/' }).click();
    await page.waitForURL(/\/basic\/Reports%202026\/$/);
    await page.getByLabel('Upload files').setInputFiles([join(local, 'notes.txt'), join(local, 'second file.md')]);
    await page.getByRole('button', { name: 'Upload', exact: true }).click();
    await notice().filter({ hasText: 'Uploaded 2 files: notes.txt, second file.md.' }).waitFor();
    assert.equal(await readFile(disk('Reports 2026/notes.txt'), 'utf8'), 'basic notes\n');
    assert.equal(await readFile(disk('Reports 2026/second file.md'), 'utf8'), '# second\n');
    await screenshot(page, 'basic-folder-nojs');
  });

  test('rename a file', async () => {
    await page.getByRole('row', { name: /second file\.md/ }).getByRole('link', { name: 'Rename' }).click();
    await page.getByLabel('New name').fill('renamed.md');
    await page.getByRole('button', { name: 'Rename', exact: true }).click();
    await notice().filter({ hasText: 'Renamed second file.md to renamed.md.' }).waitFor();
    assert.ok(existsSync(disk('Reports 2026/renamed.md')));
    assert.ok(!existsSync(disk('Reports 2026/second file.md')));
  });

  test('download a file', async () => {
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'notes.txt' }).click()]);
    assert.equal(download.suggestedFilename(), 'notes.txt');
    assert.equal(await readFile((await download.path()) as string, 'utf8'), 'basic notes\n');
  });

  test('delete a file after the confirmation page', async () => {
    await page.getByRole('row', { name: /renamed\.md/ }).getByRole('link', { name: 'Delete' }).click();
    await page.getByRole('heading', { name: 'Delete file “renamed.md”?' }).waitFor();
    assert.ok(existsSync(disk('Reports 2026/renamed.md')), 'nothing deleted before confirming');
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await notice().filter({ hasText: 'Deleted renamed.md.' }).waitFor();
    assert.ok(!existsSync(disk('Reports 2026/renamed.md')));
  });

  test('sign out: the session ends and the folder pages need a new sign-in', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/basic\/login$/);
    await notice().filter({ hasText: 'You are signed out.' }).waitFor();
    await page.goto(`${server.url}/basic/Reports%202026/`);
    await page.waitForURL(/\/basic\/login\?next=%2Fbasic%2FReports%25202026%2F$/);
    assert.equal((await context.cookies()).some((c) => c.name === 'fc_basic'), false);
  });
});
