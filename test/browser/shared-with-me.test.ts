import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { bearer, login, postJson } from '../helpers/client.js';
import { launchBrowser, missingBrowser, newPage, pickFiles, row, seed, signIn, startServer, waitForFolder, type ServerProcess } from './browser.js';
import { startAll } from '../helpers/start-all.js';

const skip = missingBrowser();

/**
 * The recipient's side of sharing between accounts (issue 29): "Shared with me" lists what others granted;
 * a writable shared folder works like one's own (an upload lands in the owner's tree), a read-only one offers
 * no write action; the owner's own list marks what is shared with people.
 */
describe('web UI: shared with me', { skip }, () => {
  let server: ServerProcess;
  let browser: Browser;
  const contexts: BrowserContext[] = [];
  let admin: Record<string, string>;
  let home: string;

  before(async () => {
    [server, browser] = await startAll(startServer({ args: ['--dev'] }), launchBrowser());
    home = await mkdtemp(join(tmpdir(), 'fc-shared-with-me-'));
    await seed(server, { 'Team/plan.txt': 'the plan\n', 'Team/sub/deep.txt': 'deep\n', 'Archive/old.txt': 'old\n', 'Private/secret.txt': 'no\n', 'notes.txt': 'shared notes\n' });
    admin = bearer((await login(server.url, 'admin', server.adminPassword)).access_token);
    assert.equal((await postJson(`${server.url}/api/admin/users`, { username: 'bob', password: 'bob-password' }, admin)).status, 201);
    for (const [path, permission] of [['/admin/Team', 'write'], ['/admin/Archive', 'read'], ['/admin/notes.txt', 'read']]) {
      assert.equal((await postJson(`${server.url}/api/grants`, { path, to: 'user:bob', permission }, admin)).status, 201);
    }
  });
  after(async () => {
    for (const c of contexts) await c.close();
    await browser?.close();
    await server?.dispose();
    if (home) await rm(home, { recursive: true, force: true });
  });

  async function open(): Promise<{ page: Page; errors: string[] }> {
    const { context, page, errors } = await newPage(browser);
    contexts.push(context);
    return { page, errors };
  }

  async function signInAsBob(page: Page): Promise<void> {
    await page.goto(`${server.url}/login`);
    await page.getByLabel('Username').fill('bob');
    await page.getByLabel('Password', { exact: true }).fill('bob-password');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL(/\/browse\//);
    await waitForFolder(page);
  }

  test('the owner sees a badge on the items shared with people, and on no other', async () => {
    const { page, errors } = await open();
    await signIn(page, server, '/browse/');
    await row(page, 'Team').locator('.badge-shared').waitFor();
    await row(page, 'Archive').locator('.badge-shared').waitFor();
    assert.equal(await row(page, 'Private').locator('.badge-shared').count(), 0);
    assert.deepEqual(errors, []);
  });

  test('bob: Shared with me lists both; the writable folder takes an upload that lands in the owner\'s tree; the read-only one offers no write action', async () => {
    const { page, errors } = await open();
    await signInAsBob(page);
    await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Shared with me' }).click();
    await page.waitForURL(/\/with-me$/);
    const list = page.getByRole('list', { name: 'Shared with me' });
    const team = list.locator('li[data-name="Team"]');
    const archive = list.locator('li[data-name="Archive"]');
    await team.waitFor();
    assert.match(await team.innerText(), /Folder · from admin/);
    assert.match(await team.innerText(), /Can edit/);
    assert.match(await archive.innerText(), /Can view/);
    // A shared file downloads, its bytes read through the owner's path.
    const notes = list.locator('li[data-name="notes.txt"]');
    assert.match(await notes.innerText(), /File · from admin/);
    const [download] = await Promise.all([page.waitForEvent('download'), notes.getByRole('button', { name: 'notes.txt' }).click()]);
    assert.equal(download.suggestedFilename(), 'notes.txt');
    const saved = join(home, 'notes-downloaded.txt');
    await download.saveAs(saved);
    assert.equal(await readFile(saved, 'utf8'), 'shared notes\n');

    // The writable one: breadcrumbs start at the shared folder, and it works like one's own.
    await team.getByRole('link', { name: 'Team' }).click();
    await page.waitForURL(/\/with-me\/admin\/Team\/$/);
    await row(page, 'plan.txt').waitFor();
    const crumbs = page.getByRole('navigation', { name: 'Breadcrumb' });
    assert.deepEqual((await crumbs.locator('.crumb-text').allInnerTexts()).map((s) => s.trim()), ['Team']);
    const file = join(home, 'from-bob.txt');
    await writeFile(file, 'written by bob\n');
    await pickFiles(page, 'Upload files', file);
    await row(page, 'from-bob.txt').waitFor();
    const landed = await fetch(`${server.url}/storage/admin/Team/from-bob.txt`, { headers: admin });
    assert.equal(landed.status, 200);
    assert.equal(await landed.text(), 'written by bob\n');
    await row(page, 'plan.txt').getByRole('button', { name: 'Actions for plan.txt', exact: true }).click();
    const menu = page.getByRole('menu', { name: 'Actions for plan.txt' });
    for (const item of ['Rename', 'Move', 'Delete']) await menu.getByRole('menuitem', { name: item }).waitFor();
    await page.keyboard.press('Escape');
    // A file inside a shared folder downloads as in one's own folders.
    await row(page, 'plan.txt').getByRole('button', { name: 'Actions for plan.txt', exact: true }).click();
    const [plan] = await Promise.all([page.waitForEvent('download'), page.getByRole('menu', { name: 'Actions for plan.txt' }).getByRole('menuitem', { name: 'Download' }).click()]);
    const planSaved = join(home, 'plan-downloaded.txt');
    await plan.saveAs(planSaved);
    assert.equal(await readFile(planSaved, 'utf8'), 'the plan\n');
    // Deleting inside the writable folder works, and the owner's file is gone.
    await row(page, 'from-bob.txt').getByRole('checkbox').click();
    await page.getByRole('toolbar', { name: 'Selection actions' }).getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByRole('dialog', { name: 'Delete “from-bob.txt”?' }).getByRole('button', { name: 'Delete', exact: true }).click();
    await row(page, 'from-bob.txt').waitFor({ state: 'detached' });
    assert.equal((await fetch(`${server.url}/storage/admin/Team/from-bob.txt`, { headers: admin })).status, 404);
    // Inside a sub-folder the trail still starts at the shared folder, never above it.
    await row(page, 'sub').getByRole('link', { name: 'sub' }).click();
    await page.waitForURL(/\/with-me\/admin\/Team\/sub\/$/);
    await row(page, 'deep.txt').waitFor();
    assert.deepEqual((await crumbs.locator('.crumb-text').allInnerTexts()).map((s) => s.trim()), ['Team', 'sub']);

    // The read-only one: no upload, no new folder, and no rename, move or delete on its items.
    await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Shared with me' }).click();
    await archive.getByRole('link', { name: 'Archive' }).click();
    await page.waitForURL(/\/with-me\/admin\/Archive\/$/);
    await row(page, 'old.txt').waitFor();
    const actions = page.getByRole('toolbar', { name: 'Folder actions' });
    for (const b of ['Upload files', 'Upload folder', 'New folder']) assert.equal(await actions.getByRole('button', { name: b }).count(), 0, b);
    await actions.getByText('View only').waitFor();
    await row(page, 'old.txt').getByRole('button', { name: 'Actions for old.txt', exact: true }).click();
    const roMenu = page.getByRole('menu', { name: 'Actions for old.txt' });
    await roMenu.getByRole('menuitem', { name: 'Download' }).waitFor();
    assert.deepEqual((await roMenu.getByRole('menuitem').allInnerTexts()).map((s) => s.trim()), ['Open', 'Download', 'Details']);
    await page.keyboard.press('Escape');
    await row(page, 'old.txt').getByRole('checkbox').click();
    const bar = page.getByRole('toolbar', { name: 'Selection actions' });
    await bar.getByRole('button', { name: 'Download' }).waitFor();
    for (const b of ['Rename', 'Move', 'Delete', 'Share']) assert.equal(await bar.getByRole('button', { name: b }).count(), 0, b);
    // The Delete key does nothing either.
    await row(page, 'old.txt').focus();
    await page.keyboard.press('Delete');
    assert.equal(await page.getByRole('dialog').count(), 0);
    assert.equal((await fetch(`${server.url}/storage/admin/Archive/old.txt`, { headers: admin })).status, 200);
    assert.deepEqual(errors, []);
  });
});
