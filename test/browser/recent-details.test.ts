import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { PHONE, launchBrowser, missingBrowser, newPage, openFolder, row, screenshot, signIn, startServer, type ServerProcess } from './browser.js';
import { bearer, encodePath, login, postJson } from '../helpers/client.js';
import { startAll } from '../helpers/start-all.js';

const skip = missingBrowser();

/**
 * Recent (the newest changes of one's own files and of what others share
 * with one, from GET /api/changes/recent) and the details of one item: its
 * size and time, who it is shared with and how, its links, its versions and
 * its recent changes. Everything is written through the API, so the change
 * feed records it as it would any user's writes.
 */
describe('web UI: recent and details', { skip }, () => {
  let server: ServerProcess;
  let browser: Browser;
  let admin: Record<string, string>;
  let bea: Record<string, string>;
  const put = async (auth: Record<string, string>, user: string, path: string, body: string) => {
    const res = await fetch(`${server.url}/storage/${user}/${encodePath(path)}`, { method: 'PUT', headers: { ...auth, 'content-type': 'application/octet-stream' }, body });
    assert.equal(res.status, 201, await res.text());
  };

  before(async () => {
    [server, browser] = await startAll(startServer({ args: ['--dev', '--versions'] }), launchBrowser());
    admin = bearer((await login(server.url, 'admin', server.adminPassword)).access_token);
    assert.equal((await postJson(`${server.url}/api/admin/users`, { username: 'bea', password: 'bea-password-1' }, admin)).status, 201);
    bea = bearer((await login(server.url, 'bea', 'bea-password-1')).access_token);
    await put(bea, 'bea', 'team/plan.txt', 'the plan');
    assert.equal((await postJson(`${server.url}/api/grants`, { path: '/bea/team', to: 'user:admin', permission: 'write' }, bea)).status, 201);
    await put(admin, 'admin', 'Work/old-name.txt', 'moved later');
    await put(admin, 'admin', 'Work/gone.txt', 'deleted later');
    await put(admin, 'admin', 'Work/report.txt', 'first report');
    await put(admin, 'admin', 'Work/report.txt', 'second report, longer');
    assert.equal((await postJson(`${server.url}/storage/admin/Work/old-name.txt`, { action: 'Move', new_path: '/admin/Work/new-name.txt' }, admin)).status, 204);
    assert.equal((await fetch(`${server.url}/storage/admin/Work/gone.txt`, { method: 'DELETE', headers: admin })).status, 204);
    await put(bea, 'bea', 'team/plan.txt', 'the plan, edited by bea');
    assert.equal((await postJson(`${server.url}/api/grants`, { path: '/admin/Work/report.txt', to: 'user:bea', permission: 'read' }, admin)).status, 201);
    assert.equal((await postJson(`${server.url}/api/shares`, { path: '/admin/Work/report.txt' }, admin)).status, 201);
  });
  after(async () => {
    await browser?.close();
    await server?.dispose();
  });

  test('Recent: the newest changed files first, one row each, others\' shared files with their owner; a moved file at its new place, a deleted one gone; a row opens its folder on it', async () => {
    const { context, page, errors, consoleErrors } = await newPage(browser);
    try {
      await signIn(page, server, '/browse/');
      await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Recent' }).click();
      await page.getByRole('heading', { level: 1, name: 'Recent' }).waitFor();
      const list = page.getByRole('list', { name: 'Recently changed files' });
      await list.getByRole('listitem').first().waitFor();
      const names = await list.getByRole('listitem').locator('.with-me-name').allInnerTexts();
      assert.deepEqual(names, ['plan.txt', 'new-name.txt', 'report.txt'], 'newest first, each file once, nothing moved away or deleted');
      const plan = list.getByRole('listitem').filter({ hasText: 'plan.txt' });
      await plan.getByText('bea / team').waitFor();
      await plan.getByText(/Changed/).waitFor();
      await list.getByRole('listitem').filter({ hasText: 'new-name.txt' }).getByText(/Moved/).waitFor();
      await list.getByRole('listitem').filter({ hasText: 'report.txt' }).getByText('My files / Work').waitFor();
      await screenshot(page, 'recent');
      await list.getByRole('link', { name: 'report.txt' }).click();
      await page.waitForURL(/\/browse\/Work\//);
      await row(page, 'report.txt').and(page.locator('[aria-selected="true"]')).waitFor();
      await page.goBack();
      await list.getByRole('link', { name: 'plan.txt' }).click();
      await page.waitForURL(/\/with-me\/bea\/team\//);
      await row(page, 'plan.txt').waitFor();
      assert.deepEqual(consoleErrors, []);
      assert.deepEqual(errors, []);
    } finally {
      await context.close();
    }
  });

  test('details of a file: size and time, shared with bea (can view) and by a link, its earlier version, its recent changes', async () => {
    const { context, page, errors, consoleErrors } = await newPage(browser);
    try {
      await signIn(page, server, '/browse/Work/');
      await row(page, 'report.txt').getByRole('button', { name: 'Actions for report.txt', exact: true }).click();
      await page.getByRole('menuitem', { name: 'Details' }).click();
      const dialog = page.getByRole('dialog', { name: 'Details of report.txt' });
      await dialog.getByText('21 B').waitFor();
      const people = dialog.getByRole('list', { name: 'Shared with' });
      await people.getByRole('listitem').filter({ hasText: 'bea' }).getByText('Can view').waitFor();
      const links = dialog.getByRole('list', { name: 'Links' });
      assert.equal(await links.getByRole('listitem').count(), 1);
      await links.getByText(/Anyone with the link/).waitFor();
      const versions = dialog.getByRole('list', { name: 'Earlier versions' });
      await versions.getByRole('listitem').first().waitFor();
      assert.equal(await versions.getByRole('listitem').count(), 1);
      const changes = dialog.getByRole('list', { name: 'Recent changes' });
      await changes.getByRole('listitem').nth(1).waitFor();
      assert.deepEqual((await changes.getByRole('listitem').allInnerTexts()).map((t) => t.split(' · ')[0]), ['Changed', 'Added']);
      assert.match((await dialog.locator('time').first().getAttribute('datetime')) ?? '', /^\d{4}-\d\d-\d\dT/);
      await screenshot(page, 'details');
      assert.deepEqual(consoleErrors, []);
      assert.deepEqual(errors, []);
    } finally {
      await context.close();
    }
  });

  test('details of a file in a folder shared with me: no sharing sections (they are its owner\'s), its recent changes by either of us', async () => {
    const { context, page, errors, consoleErrors } = await newPage(browser);
    try {
      await signIn(page, server, '/browse/');
      await openFolder(page, `${server.url}/with-me/bea/team/`);
      await row(page, 'plan.txt').getByRole('button', { name: 'Actions for plan.txt', exact: true }).click();
      await page.getByRole('menuitem', { name: 'Details' }).click();
      const dialog = page.getByRole('dialog', { name: 'Details of plan.txt' });
      const changes = dialog.getByRole('list', { name: 'Recent changes' });
      await changes.getByRole('listitem').nth(1).waitFor();
      assert.equal(await dialog.getByRole('list', { name: 'Shared with' }).count(), 0);
      assert.equal(await dialog.getByRole('list', { name: 'Links' }).count(), 0);
      assert.deepEqual(consoleErrors, []);
      assert.deepEqual(errors, []);
    } finally {
      await context.close();
    }
  });

  test('on a phone Recent and the details fit the screen', async () => {
    const { context, page, errors } = await newPage(browser, { viewport: PHONE });
    try {
      await signIn(page, server, '/browse/Work/');
      await row(page, 'report.txt').getByRole('button', { name: 'Actions for report.txt', exact: true }).click();
      await page.getByRole('menuitem', { name: 'Details' }).click();
      const dialog = page.getByRole('dialog', { name: 'Details of report.txt' });
      await dialog.getByRole('list', { name: 'Recent changes' }).getByRole('listitem').first().waitFor();
      const box = await dialog.locator('.dialog-panel').boundingBox();
      assert.ok(box && box.x >= 0 && box.x + box.width <= PHONE.width, JSON.stringify(box));
      await dialog.getByRole('button', { name: 'Close' }).click();
      await page.goto(`${server.url}/recent`);
      await page.getByRole('list', { name: 'Recently changed files' }).getByRole('listitem').first().waitFor();
      assert.equal(await page.evaluate('document.documentElement.scrollWidth'), PHONE.width);
      assert.deepEqual(errors, []);
    } finally {
      await context.close();
    }
  });
});
