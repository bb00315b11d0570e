import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchBrowser, missingBrowser, newPage, openFolder, row, seed, signIn, startServer, type ServerProcess } from './browser.js';
import { startAll } from '../helpers/start-all.js';

const skip = missingBrowser();

/**
 * Undo in the toast after a rename, a move (the picker's and a drag's) and a
 * delete — the delete only when the server keeps a trash (--trash-days), from
 * which Undo restores it; without a trash no Undo is offered. Each checked on
 * disk.
 */
describe('web UI: undo from the toast', { skip }, () => {
  let server: ServerProcess;
  let plain: ServerProcess;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let errors: string[];
  let consoleErrors: string[];
  const disk = (p: string, s = server) => join(s.dataDir, 'storage', 'admin', ...p.split('/'));
  const toast = (text: string) => page.locator('.toast').filter({ hasText: text });
  const undo = (text: string) => toast(text).getByRole('button', { name: 'Undo' });
  const open = (path: string) => openFolder(page, server.url + path);

  before(async () => {
    [server, plain, browser] = await startAll(startServer({ args: ['--dev', '--trash-days', '30'] }), startServer({ args: ['--dev'] }), launchBrowser());
    await seed(server, { 'Desk/report.txt': 'report', 'Desk/memo.txt': 'memo', 'Desk/draft.txt': 'draft', 'Desk/old.txt': 'old', 'Desk/Shelf/': '' });
    await seed(plain, { 'gone.txt': 'gone' });
    ({ context, page, errors, consoleErrors } = await newPage(browser));
    await signIn(page, server, '/browse/Desk/');
  });
  after(async () => {
    await context?.close();
    await browser?.close();
    await server?.dispose();
    await plain?.dispose();
  });

  test('a rename: Undo gives the name back', async () => {
    await open('/browse/Desk/');
    await row(page, 'report.txt').click();
    await page.keyboard.press('F2');
    const field = page.getByRole('dialog').getByLabel('New name');
    await field.fill('final report.txt');
    await field.press('Enter');
    await undo('Renamed to “final report.txt”.').click();
    await toast('“report.txt” has its name back.').waitFor();
    await row(page, 'report.txt').waitFor();
    assert.equal(await readFile(disk('Desk/report.txt'), 'utf8'), 'report');
    assert.equal(existsSync(disk('Desk/final report.txt')), false);
  });

  test('a move through the picker, and one by dragging: Undo brings them back', async () => {
    await open('/browse/Desk/');
    await row(page, 'memo.txt').getByRole('button', { name: 'Actions for memo.txt', exact: true }).click();
    await page.getByRole('menuitem', { name: 'Move', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: /^Move/ });
    await dialog.getByRole('button', { name: 'Current folder: Desk' }).click();
    await dialog.getByRole('list', { name: 'Folders' }).getByRole('button', { name: 'Shelf', exact: true }).click();
    await dialog.getByRole('button', { name: 'Move here' }).click();
    await undo('Moved “memo.txt” to “Shelf”.').click();
    await toast('“memo.txt” is back in “Desk”.').waitFor();
    await row(page, 'memo.txt').waitFor();
    assert.equal(await readFile(disk('Desk/memo.txt'), 'utf8'), 'memo');
    assert.equal(existsSync(disk('Desk/Shelf/memo.txt')), false);

    await row(page, 'draft.txt').dragTo(row(page, 'Shelf'));
    await undo('Moved “draft.txt” to “Shelf”.').click();
    await toast('“draft.txt” is back in “Desk”.').waitFor();
    await row(page, 'draft.txt').waitFor();
    assert.equal(await readFile(disk('Desk/draft.txt'), 'utf8'), 'draft');
    assert.equal(existsSync(disk('Desk/Shelf/draft.txt')), false);
  });

  test('a delete with a trash: Undo restores it from the trash', async () => {
    await open('/browse/Desk/');
    await row(page, 'old.txt').click();
    await page.keyboard.press('Delete');
    await page.getByRole('dialog').getByRole('button', { name: 'Delete', exact: true }).click();
    await row(page, 'old.txt').waitFor({ state: 'detached' });
    assert.equal(existsSync(disk('Desk/old.txt')), false);
    await undo('Deleted “old.txt”.').click();
    await toast('Restored “old.txt”.').waitFor();
    await row(page, 'old.txt').waitFor();
    assert.equal(await readFile(disk('Desk/old.txt'), 'utf8'), 'old');
    assert.deepEqual(consoleErrors, []);
    assert.deepEqual(errors, []);
  });

  test('a delete without a trash offers no Undo', async () => {
    const other = await newPage(browser);
    try {
      await signIn(other.page, plain, '/browse/');
      await row(other.page, 'gone.txt').click();
      await other.page.keyboard.press('Delete');
      await other.page.getByRole('dialog').getByRole('button', { name: 'Delete', exact: true }).click();
      const said = other.page.locator('.toast').filter({ hasText: 'Deleted “gone.txt”.' });
      await said.waitFor();
      assert.equal(await said.getByRole('button', { name: 'Undo' }).count(), 0);
      assert.equal(existsSync(disk('gone.txt', plain)), false);
      assert.deepEqual(other.errors, []);
    } finally {
      await other.context.close();
    }
  });
});
