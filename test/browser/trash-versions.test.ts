import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { bearer, login } from '../helpers/client.js';
import { launchBrowser, missingBrowser, newPage, row, seed, signIn, startServer, waitForFolder, type ServerProcess } from './browser.js';
import { startAll } from '../helpers/start-all.js';

const skip = missingBrowser();

/**
 * The trash and file versions in the web UI (issue 34), on a server started with --trash-days and
 * --versions: a deleted file is listed on the Trash page and restored from it, deleted forever, the trash
 * emptied; a replaced file's row menu offers Versions, and restoring one brings its content back. On a
 * server without the flags neither the Trash page link nor the Versions item is shown.
 */
describe('web UI: trash and versions', { skip }, () => {
  let server: ServerProcess;
  let plain: ServerProcess;
  let browser: Browser;
  const contexts: BrowserContext[] = [];

  before(async () => {
    [server, plain, browser] = await startAll(startServer({ args: ['--dev', '--trash-days', '30', '--versions'] }), startServer({ args: ['--dev'] }), launchBrowser());
    await seed(server, { 'keep.txt': 'keep\n', 'gone.txt': 'gone\n', 'other.txt': 'other\n' });
    await seed(plain, { 'a.txt': 'a\n' });
  });
  after(async () => {
    for (const c of contexts) await c.close();
    await browser?.close();
    await server?.dispose();
    await plain?.dispose();
  });

  async function open(): Promise<{ page: Page; errors: string[]; consoleErrors: string[] }> {
    const { context, page, errors, consoleErrors } = await newPage(browser);
    contexts.push(context);
    return { page, errors, consoleErrors };
  }
  const trashLink = (page: Page) => page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Trash' });

  test('delete → the Trash page lists it → Restore puts it back; Delete forever and Empty trash remove for good', async () => {
    const { page, errors } = await open();
    await signIn(page, server, '/browse/');
    await waitForFolder(page);
    for (const name of ['gone.txt', 'other.txt']) {
      await row(page, name).getByRole('button', { name: `Actions for ${name}`, exact: true }).click();
      await page.getByRole('menuitem', { name: 'Delete' }).click();
      await page.getByText('It goes to the trash, where it can be restored for 30 days.').waitFor();
      await page.getByRole('dialog').getByRole('button', { name: 'Delete', exact: true }).click();
      await row(page, name).waitFor({ state: 'detached' });
    }
    await trashLink(page).click();
    await page.waitForURL(/\/trash$/);
    const list = page.getByRole('list', { name: 'Trash' });
    await list.locator('[data-name="gone.txt"]').waitFor();
    await list.locator('[data-name="gone.txt"]').getByRole('button', { name: 'Restore' }).click();
    await list.locator('[data-name="gone.txt"]').waitFor({ state: 'detached' });
    await list.locator('[data-name="other.txt"]').getByRole('button', { name: 'Delete forever' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete forever' }).click();
    await page.getByText('The trash is empty').waitFor();
    // Restored on the server: the file is back with its content.
    const auth = bearer((await login(server.url, 'admin', server.adminPassword)).access_token);
    assert.equal(await (await fetch(`${server.url}/storage/admin/gone.txt`, { headers: auth })).text(), 'gone\n');
    assert.equal((await fetch(`${server.url}/storage/admin/other.txt`, { headers: auth })).status, 404);
    // Empty trash: one more item, then emptied.
    assert.equal((await fetch(`${server.url}/storage/admin/keep.txt`, { method: 'DELETE', headers: auth })).status, 204);
    await page.getByRole('button', { name: 'Refresh' }).click();
    await list.locator('[data-name="keep.txt"]').waitFor();
    await page.getByRole('button', { name: 'Empty trash' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Empty trash' }).click();
    await page.getByText('The trash is empty').waitFor();
    assert.deepEqual(((await (await fetch(`${server.url}/api/trash`, { headers: auth })).json()) as { items: unknown[] }).items, []);

    // The trash counts against the storage figure, and emptying it lowers the header's figure at once.
    assert.equal((await fetch(`${server.url}/storage/admin/bulky.bin`, { method: 'PUT', headers: auth, body: Buffer.alloc(3 * 1024 * 1024, 1) })).status, 201);
    assert.equal((await fetch(`${server.url}/storage/admin/bulky.bin`, { method: 'DELETE', headers: auth })).status, 204);
    await page.reload();
    await list.locator('[data-name="bulky.bin"]').waitFor();
    const usage = page.getByTestId('usage').locator('.usage-label');
    const says = async (text: RegExp) => usage.filter({ hasText: text }).waitFor().catch(async (e: unknown) => assert.fail(`the storage figure says "${await usage.innerText()}", not ${text}: ${String(e)}`));
    await says(/^3 MB used$/);
    await page.getByRole('button', { name: 'Empty trash' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Empty trash' }).click();
    await page.getByText('The trash is empty').waitFor();
    await says(/^\d+ B used$/);
    assert.deepEqual(errors, []);
  });

  test('a replaced file\'s row menu offers Versions; restoring one brings its content back', async () => {
    const auth = bearer((await login(server.url, 'admin', server.adminPassword)).access_token);
    for (const body of ['first draft\n', 'second draft\n']) {
      assert.equal((await fetch(`${server.url}/storage/admin/draft.txt`, { method: 'PUT', headers: { ...auth, 'content-type': 'application/octet-stream' }, body })).status, 201);
    }
    const { page, errors } = await open();
    await signIn(page, server, '/browse/');
    await waitForFolder(page);
    await row(page, 'draft.txt').getByRole('button', { name: 'Actions for draft.txt', exact: true }).click();
    await page.getByRole('menuitem', { name: 'Versions' }).click();
    const versions = page.getByRole('list', { name: 'Versions of draft.txt' });
    const earlier = versions.locator('li:not([data-current])');
    await earlier.first().waitFor();
    assert.equal(await earlier.count(), 1);
    const download = page.waitForEvent('download');
    await earlier.getByRole('button', { name: 'Download' }).click();
    const saved = await download;
    assert.equal(saved.suggestedFilename(), 'draft.txt');
    await earlier.getByRole('button', { name: 'Restore' }).click();
    await earlier.nth(1).waitFor();
    assert.equal(await (await fetch(`${server.url}/storage/admin/draft.txt`, { headers: auth })).text(), 'first draft\n');
    assert.deepEqual(errors, []);
  });

  test('versions can be told apart: the current one is marked, each shows its full date and time, a text version previews', async () => {
    const auth = bearer((await login(server.url, 'admin', server.adminPassword)).access_token);
    // Three replacements of the same size within moments: a time to the minute would read the same on every row.
    const bodies = ['plan A one\n', 'plan B two\n', 'plan C 333\n', 'plan D now\n'];
    for (const body of bodies) {
      assert.equal((await fetch(`${server.url}/storage/admin/plan.txt`, { method: 'PUT', headers: { ...auth, 'content-type': 'application/octet-stream' }, body })).status, 201);
    }
    const { page, errors, consoleErrors } = await open();
    await signIn(page, server, '/browse/');
    await row(page, 'plan.txt').getByRole('button', { name: 'Actions for plan.txt', exact: true }).click();
    await page.getByRole('menuitem', { name: 'Versions' }).click();
    const versions = page.getByRole('list', { name: 'Versions of plan.txt' });
    const items = versions.getByRole('listitem');
    await items.nth(3).waitFor();
    assert.equal(await items.count(), 4, 'the current content and three earlier ones');

    // The first row is what the file holds now, marked so; it cannot be "restored".
    const current = items.first();
    assert.equal(await current.getAttribute('data-current'), 'true');
    await current.getByText('Current', { exact: true }).waitFor();
    assert.equal(await current.getByRole('button', { name: 'Restore' }).count(), 0);
    assert.equal(await versions.locator('[data-current]').count(), 1);

    // Every row: the full date (with the year) and the time to the second, and how long ago; the exact time on hover.
    for (let i = 0; i < 4; i++) {
      const time = items.nth(i).locator('time').first();
      const text = await time.innerText();
      const iso = (await time.getAttribute('datetime')) ?? '';
      assert.ok(text.includes(String(new Date(iso).getFullYear())), `row ${i} shows the year: ${text}`);
      assert.match(text, /\d:\d\d:\d\d/, `row ${i} shows the seconds: ${text}`);
      assert.match(await items.nth(i).innerText(), /\bago\b|\bnow\b/, `row ${i} says how long ago`);
    }

    // A list without bullets, and its buttons alike.
    const markers = await items.evaluateAll((els) =>
      els.map((e) => (globalThis as unknown as { getComputedStyle(e: unknown): { listStyleType: string } }).getComputedStyle(e).listStyleType),
    );
    assert.deepEqual([...new Set(markers)], ['none']);
    const look = (name: string) =>
      items.nth(1).getByRole('button', { name, exact: true }).evaluate((el) => {
        const st = (globalThis as unknown as { getComputedStyle(e: unknown): Record<string, string> }).getComputedStyle(el);
        return [st.backgroundColor, st.color, st.borderTopColor, st.borderTopWidth, st.height, st.fontWeight].join(' ');
      });
    assert.equal(await look('Restore'), await look('Download'), 'Download and Restore look alike');

    // Preview: the oldest earlier version's text, then the current one's, inside the dialog.
    const oldest = items.nth(3);
    await oldest.getByRole('button', { name: 'Preview' }).click();
    const shown = page.getByRole('dialog').getByRole('region', { name: /^Preview of the version of/ });
    await shown.getByText('plan A one').waitFor();
    await current.getByRole('button', { name: 'Preview' }).click();
    await shown.getByText('plan D now').waitFor();
    assert.equal(await shown.getByText('plan A one').count(), 0);
    assert.deepEqual(consoleErrors, []);
    assert.deepEqual(errors, []);
  });

  test('without --trash-days and --versions: no Trash link, no Versions item', async () => {
    const { page, errors } = await open();
    await signIn(page, plain, '/browse/');
    await waitForFolder(page);
    await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Shared with me' }).waitFor();
    assert.equal(await trashLink(page).count(), 0);
    await row(page, 'a.txt').getByRole('button', { name: 'Actions for a.txt', exact: true }).click();
    await page.getByRole('menuitem', { name: 'Download' }).waitFor();
    assert.equal(await page.getByRole('menuitem', { name: 'Versions' }).count(), 0);
    assert.deepEqual(errors, []);
  });
});
