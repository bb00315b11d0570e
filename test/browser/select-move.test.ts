import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchBrowser, missingBrowser, newPage, row, screenshot, seed, signIn, startServer, waitForFolder, type ServerProcess } from './browser.js';

const skip = missingBrowser();

describe('web UI: selecting with modifier keys, drag to move, the move picker', { skip }, () => {
  let server: ServerProcess;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let errors: string[];
  const disk = (p: string) => join(server.dataDir, 'storage', 'admin', ...p.split('/'));
  const selectedNames = () =>
    page.locator('.file-grid [role="row"][aria-selected="true"]').evaluateAll((els) => els.map((e) => (e as unknown as { dataset: { name: string } }).dataset.name).sort());
  const nameButton = (name: string) => row(page, name).locator('.entry-link');
  const open = async (path: string) => {
    await page.goto(server.url + path);
    await waitForFolder(page);
  };

  before(async () => {
    [server, browser] = await Promise.all([startServer({ args: ['--dev'] }), launchBrowser()]);
    await seed(server, {
      'Inbox/a.txt': 'a',
      'Inbox/b.txt': 'b',
      'Inbox/c.txt': 'c from Inbox',
      'Inbox/d.txt': 'd',
      'Inbox/e.txt': 'e',
      'Inbox/f.txt': 'f',
      'Inbox/Target/c.txt': 'c already in Target',
      'Inbox/Deep/Leaf/x.txt': 'x',
      'Inbox/Deep/Leaf/y.txt': 'y',
      'Elsewhere/': '',
    });
    ({ context, page, errors } = await newPage(browser));
    await signIn(page, server, '/browse/Inbox/');
  });
  after(async () => {
    await context?.close();
    await browser?.close();
    await server?.dispose();
  });

  test('Ctrl- and Cmd-click on a name toggles it, Shift-click selects the range: nothing opens', async () => {
    await open('/browse/Inbox/');
    await row(page, 'b.txt').locator('.cell.size').click();
    assert.deepEqual(await selectedNames(), ['b.txt']);
    await nameButton('d.txt').click({ modifiers: ['Shift'] });
    assert.deepEqual(await selectedNames(), ['b.txt', 'c.txt', 'd.txt']);
    await nameButton('a.txt').click({ modifiers: ['Control'] });
    assert.deepEqual(await selectedNames(), ['a.txt', 'b.txt', 'c.txt', 'd.txt']);
    await nameButton('c.txt').click({ modifiers: ['Meta'] });
    assert.deepEqual(await selectedNames(), ['a.txt', 'b.txt', 'd.txt']);
    // A folder's name is a link: Ctrl-click selects it too, and stays in this folder (no new tab, no navigation).
    await nameButton('Target').click({ modifiers: ['Control'] });
    assert.deepEqual(await selectedNames(), ['Target', 'a.txt', 'b.txt', 'd.txt']);
    assert.match(page.url(), /\/browse\/Inbox\/$/);
    assert.equal(context.pages().length, 1, 'no new tab');
    assert.equal(await page.getByRole('dialog').count(), 0, 'no preview opened');
    // A plain click on a name still opens it.
    await nameButton('a.txt').click();
    await page.getByRole('dialog', { name: /a\.txt/ }).waitFor();
    await page.keyboard.press('Escape');
    await page.getByRole('dialog').waitFor({ state: 'detached' });
  });

  test('Shift-click on a row check box selects the range from the last one clicked', async () => {
    await open('/browse/Inbox/');
    await row(page, 'a.txt').getByRole('checkbox').click();
    assert.deepEqual(await selectedNames(), ['a.txt']);
    await row(page, 'd.txt').getByRole('checkbox').click({ modifiers: ['Shift'] });
    assert.deepEqual(await selectedNames(), ['a.txt', 'b.txt', 'c.txt', 'd.txt']);
    await row(page, 'd.txt').getByRole('checkbox').click();
    assert.deepEqual(await selectedNames(), ['a.txt', 'b.txt', 'c.txt']);
  });

  test('rows dragged onto a folder row move there, the whole selection when a selected row is dragged', async () => {
    await open('/browse/Inbox/');
    await row(page, 'a.txt').getByRole('checkbox').click();
    await row(page, 'b.txt').getByRole('checkbox').click();
    await row(page, 'a.txt').dragTo(row(page, 'Target'));
    await page.getByText('Moved 2 items to “Target”.').waitFor();
    await row(page, 'a.txt').waitFor({ state: 'detached' });
    assert.equal(await row(page, 'b.txt').count(), 0);
    assert.equal(await readFile(disk('Inbox/Target/a.txt'), 'utf8'), 'a');
    assert.equal(await readFile(disk('Inbox/Target/b.txt'), 'utf8'), 'b');
    // An unselected row dragged moves just itself.
    await row(page, 'd.txt').getByRole('checkbox').click();
    await row(page, 'e.txt').dragTo(row(page, 'Deep'));
    await page.getByText('Moved “e.txt” to “Deep”.').waitFor();
    assert.equal(existsSync(disk('Inbox/Deep/e.txt')), true);
    assert.equal(existsSync(disk('Inbox/d.txt')), true, 'the selected row stayed');
  });

  test('a row dropped on a breadcrumb moves to that folder', async () => {
    await open('/browse/Inbox/Deep/');
    await row(page, 'e.txt').dragTo(page.getByRole('navigation', { name: 'Breadcrumb' }).getByRole('link', { name: 'My files' }));
    await page.getByText('Moved “e.txt” to “My files”.').waitFor();
    assert.equal(existsSync(disk('e.txt')), true);
    assert.equal(existsSync(disk('Inbox/Deep/e.txt')), false);
  });

  test('a drop that collides says what the Move dialog says, and keeps both files', async () => {
    await open('/browse/Inbox/');
    // The menu's way first: its error sentence.
    await row(page, 'c.txt').getByRole('button', { name: 'Actions for c.txt' }).click();
    await page.getByRole('menuitem', { name: 'Move' }).click();
    const dialog = page.getByRole('dialog', { name: 'Move “c.txt”' });
    const folders = dialog.getByRole('list', { name: 'Folders' });
    await folders.getByRole('button', { name: 'Inbox', exact: true }).click();
    await folders.getByRole('button', { name: 'Target', exact: true }).click();
    await dialog.getByRole('button', { name: 'Move here' }).click();
    const alert = dialog.getByRole('alert').filter({ hasText: /same name is already there/ });
    await alert.waitFor();
    const sentence = (await alert.innerText()).trim();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    // The drag's way: the same sentence, nothing replaced.
    await row(page, 'c.txt').dragTo(row(page, 'Target'));
    const toast = page.locator('.toast-error', { hasText: sentence });
    await toast.waitFor();
    assert.match(await toast.innerText(), /c\.txt/);
    assert.equal(await readFile(disk('Inbox/c.txt'), 'utf8'), 'c from Inbox');
    assert.equal(await readFile(disk('Inbox/Target/c.txt'), 'utf8'), 'c already in Target');
  });

  test('in the grid view, a tile dragged onto a folder tile moves there; Ctrl-click selects', async () => {
    await open('/browse/Inbox/');
    await page.getByRole('button', { name: 'Grid view' }).click();
    const tile = (name: string) => page.locator(`.tile-view .tile[data-name="${name}"]`);
    try {
      await tile('f.txt').locator('.tile-open').click({ modifiers: ['Control'] });
      assert.equal(await tile('f.txt').getAttribute('class'), 'tile selected');
      assert.equal(await page.getByRole('dialog').count(), 0);
      await tile('f.txt').dragTo(tile('Deep'));
      await page.getByText('Moved “f.txt” to “Deep”.').waitFor();
      assert.equal(existsSync(disk('Inbox/Deep/f.txt')), true);
    } finally {
      await page.getByRole('toolbar', { name: 'Selection actions' }).getByRole('button', { name: 'Clear selection', exact: true }).click().catch(() => undefined);
      await page.getByRole('button', { name: 'Grid view' }).click();
      await page.locator('.file-grid').waitFor();
    }
  });

  test('a folder dropped on itself, or rows on a file, move nothing', async () => {
    await open('/browse/Inbox/');
    await row(page, 'Target').dragTo(row(page, 'Target'));
    await row(page, 'd.txt').dragTo(row(page, 'c.txt'));
    await page.waitForTimeout(300);
    assert.equal(existsSync(disk('Inbox/Target/c.txt')), true);
    assert.equal(existsSync(disk('Inbox/d.txt')), true);
    assert.equal(await page.locator('.toast').count(), 0);
  });

  test('the move picker starts at My files (not in a leaf folder) and offers recent destinations', async () => {
    await open('/browse/Inbox/Deep/Leaf/');
    await row(page, 'x.txt').getByRole('button', { name: 'Actions for x.txt' }).click();
    await page.getByRole('menuitem', { name: 'Move' }).click();
    let dialog = page.getByRole('dialog', { name: 'Move “x.txt”' });
    const folders = dialog.getByRole('list', { name: 'Folders' });
    await folders.getByRole('button', { name: 'Inbox', exact: true }).waitFor();
    assert.equal(await folders.getByRole('button', { name: 'Elsewhere', exact: true }).count(), 1);
    assert.equal(await dialog.getByText('No folders here.').count(), 0);
    // The folder it is in is one click away.
    await dialog.getByRole('button', { name: 'Current folder: Leaf' }).waitFor();
    await folders.getByRole('button', { name: 'Elsewhere', exact: true }).click();
    await dialog.getByRole('button', { name: 'Move here' }).click();
    await dialog.waitFor({ state: 'detached' });
    assert.equal(existsSync(disk('Elsewhere/x.txt')), true);

    // Next time, Elsewhere is a recent destination: one click, then Move here.
    await row(page, 'y.txt').getByRole('button', { name: 'Actions for y.txt' }).click();
    await page.getByRole('menuitem', { name: 'Move' }).click();
    dialog = page.getByRole('dialog', { name: 'Move “y.txt”' });
    const recent = dialog.getByRole('list', { name: 'Recent destinations' });
    await recent.waitFor();
    await dialog.getByRole('list', { name: 'Folders' }).getByRole('button', { name: 'Inbox', exact: true }).waitFor();
    await screenshot(page, 'move-picker');
    await recent.getByRole('button', { name: /Elsewhere/ }).click();
    await dialog.getByText('Move to “Elsewhere”').waitFor();
    await dialog.getByRole('button', { name: 'Move here' }).click();
    await dialog.waitFor({ state: 'detached' });
    assert.equal(existsSync(disk('Elsewhere/y.txt')), true);
    assert.deepEqual(errors, []);
  });

  test('on a touch screen: tap check boxes, then Move in the selection bar', async () => {
    const touch = await newPage(browser, { viewport: { width: 390, height: 844 }, hasTouch: true });
    try {
      await signIn(touch.page, server, '/browse/Inbox/');
      await row(touch.page, 'd.txt').getByRole('checkbox').tap();
      await touch.page.getByRole('toolbar', { name: 'Selection actions' }).getByRole('button', { name: 'Move', exact: true }).tap();
      const dialog = touch.page.getByRole('dialog', { name: 'Move “d.txt”' });
      await dialog.getByRole('list', { name: 'Folders' }).getByRole('button', { name: 'Elsewhere', exact: true }).tap();
      await dialog.getByRole('button', { name: 'Move here' }).tap();
      await dialog.waitFor({ state: 'detached' });
      assert.equal(existsSync(disk('Elsewhere/d.txt')), true);
      assert.deepEqual(touch.errors, []);
    } finally {
      await touch.context.close();
    }
  });
});
