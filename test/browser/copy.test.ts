import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { PHONE, launchBrowser, missingBrowser, newPage, openFolder, row, seed, signIn, startServer, type ServerProcess } from './browser.js';
import { startAll } from '../helpers/start-all.js';

const skip = missingBrowser();

/**
 * Copy in the file manager (the API's Copy action): from the row menu, the
 * selection bar and the keyboard, into any folder through the move picker —
 * the folder the items are in too, where each copy gets a free name. Nothing
 * is ever replaced; the sources stay.
 */
describe('web UI: copy', { skip }, () => {
  let server: ServerProcess;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let errors: string[];
  let consoleErrors: string[];
  const disk = (p: string) => join(server.dataDir, 'storage', 'admin', ...p.split('/'));
  const text = (p: string) => readFile(disk(p), 'utf8');
  const picker = () => page.getByRole('dialog', { name: /^Copy / });
  const open = (path: string) => openFolder(page, server.url + path);

  before(async () => {
    [server, browser] = await startAll(startServer({ args: ['--dev'] }), launchBrowser());
    await seed(server, {
      'Work/plan.txt': 'the plan',
      'Work/notes.md': '# notes',
      'Work/Drafts/one.txt': 'one',
      'Work/Drafts/Deeper/two.txt': 'two',
      'Archive/plan.txt': 'an older plan',
      'Keys/k1.txt': 'k1',
      'Keys/k2.txt': 'k2',
      'KeyDest/': '',
    });
    ({ context, page, errors, consoleErrors } = await newPage(browser));
    await signIn(page, server, '/browse/Work/');
  });
  after(async () => {
    await context?.close();
    await browser?.close();
    await server?.dispose();
  });

  test('row menu → Copy → another folder: the copy there, the file still here; a taken name gets a free one', async () => {
    await open('/browse/Work/');
    await row(page, 'plan.txt').getByRole('button', { name: 'Actions for plan.txt', exact: true }).click();
    await page.getByRole('menuitem', { name: 'Copy', exact: true }).click();
    await picker().getByRole('list', { name: 'Folders' }).getByRole('button', { name: 'Archive', exact: true }).click();
    await picker().getByText('Copy to “Archive”').waitFor();
    await picker().getByRole('button', { name: 'Copy here' }).click();
    await picker().waitFor({ state: 'detached' });
    await page.getByText('Copied “plan.txt” to “Archive” as “plan (1).txt”.').waitFor();
    assert.equal(await text('Archive/plan (1).txt'), 'the plan');
    assert.equal(await text('Archive/plan.txt'), 'an older plan', 'nothing replaced');
    assert.equal(await text('Work/plan.txt'), 'the plan', 'the source stays');
    await row(page, 'plan.txt').waitFor();
  });

  test('selection bar → Copy into the same folder: duplicates with free names; a folder is copied whole and cannot go into itself', async () => {
    await open('/browse/Work/');
    await row(page, 'Drafts').getByRole('checkbox').click();
    await row(page, 'notes.md').getByRole('checkbox').click();
    await page.getByRole('toolbar', { name: 'Selection actions' }).getByRole('button', { name: 'Copy', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Copy 2 items' });
    // Into itself: the picker refuses Drafts and what is below it.
    await dialog.getByRole('button', { name: 'Current folder: Work' }).click();
    assert.equal(await dialog.getByRole('list', { name: 'Folders' }).getByRole('button', { name: 'Drafts', exact: true }).isDisabled(), true);
    await dialog.getByText('Copy to “Work”').waitFor();
    await dialog.getByRole('button', { name: 'Copy here' }).click();
    await dialog.waitFor({ state: 'detached' });
    await page.getByText('Copied 2 items to “Work”.').waitFor();
    await row(page, 'Drafts (1)').waitFor();
    await row(page, 'notes (1).md').waitFor();
    assert.equal(await text('Work/Drafts (1)/Deeper/two.txt'), 'two');
    assert.deepEqual((await readdir(disk('Work/Drafts (1)'))).sort(), ['Deeper', 'one.txt']);
    assert.equal(await text('Work/notes (1).md'), '# notes');
    assert.equal(await text('Work/Drafts/one.txt'), 'one', 'the source stays');
  });

  test('keyboard: Shift+F10 → Copy copies the selection through the picker', async () => {
    await open('/browse/Keys/');
    await row(page, 'k1.txt').locator('.cell.size').click();
    await page.keyboard.press('Shift+ArrowDown');
    await page.keyboard.press('Shift+F10');
    await page.getByRole('menuitem', { name: 'Copy', exact: true }).press('Enter');
    const dialog = picker();
    await dialog.getByRole('list', { name: 'Folders' }).getByRole('button', { name: 'KeyDest', exact: true }).press('Enter');
    await dialog.getByText('Copy to “KeyDest”').waitFor();
    await dialog.getByRole('button', { name: 'Copy here' }).press('Enter');
    await dialog.waitFor({ state: 'detached' });
    for (const k of ['k1', 'k2']) {
      assert.equal(await text(`KeyDest/${k}.txt`), k, `${k} copied`);
      assert.equal(existsSync(disk(`Keys/${k}.txt`)), true, `${k} stays`);
    }
    assert.deepEqual(consoleErrors, []);
    assert.deepEqual(errors, []);
  });

  test('on a phone the selection bar with Copy fits the screen', async () => {
    const phone = await newPage(browser, { viewport: PHONE });
    try {
      await signIn(phone.page, server, '/browse/Work/');
      await row(phone.page, 'Drafts').getByRole('checkbox').click();
      await phone.page.getByRole('toolbar', { name: 'Selection actions' }).getByRole('button', { name: 'Copy', exact: true }).waitFor();
      assert.equal(await phone.page.evaluate('document.documentElement.scrollWidth'), PHONE.width);
      const bar = await phone.page.getByRole('toolbar', { name: 'Selection actions' }).boundingBox();
      assert.ok(bar && bar.x + bar.width <= PHONE.width, `the bar is on screen (${JSON.stringify(bar)})`);
      assert.deepEqual(phone.errors, []);
    } finally {
      await phone.context.close();
    }
  });
});
