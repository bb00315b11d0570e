import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core';
import { launchBrowser, missingBrowser, newPage, openFolder, row, screenshot, signIn, startServer, type PageGlobal, type ServerProcess, seedIndexed } from './browser.js';
import { startAll } from '../helpers/start-all.js';

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
  const open = (path: string) => openFolder(page, server.url + path);

  before(async () => {
    [server, browser] = await startAll(startServer({ args: ['--dev'] }), launchBrowser());
    await seedIndexed(server, {
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
      'Inbox/g.txt': 'g',
      'Inbox/h.txt': 'h',
      // A folder longer than a phone's screen, for swiping.
      ...Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`Long/file-${String(i).padStart(2, '0')}.txt`, `long ${i}`])),
      'Long/Sub/': '',
      // For the keyboard.
      ...Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`Keys/k${i + 1}.txt`, `k${i + 1}`])),
      'KeyDest/': '',
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

  test('keyboard: Shift+arrows select a range, Ctrl+arrows move without selecting, Space toggles; Shift+F10 → Move moves the selection', async () => {
    await open('/browse/Keys/');
    await row(page, 'k1.txt').locator('.cell.size').click();
    await page.keyboard.press('Shift+ArrowDown');
    await page.keyboard.press('Shift+ArrowDown');
    assert.deepEqual(await selectedNames(), ['k1.txt', 'k2.txt', 'k3.txt']);
    await page.keyboard.press('Control+ArrowDown');
    assert.deepEqual(await selectedNames(), ['k1.txt', 'k2.txt', 'k3.txt'], 'Ctrl moves the cursor and leaves the selection');
    await page.keyboard.press('Control+ArrowDown');
    await page.keyboard.press('Space');
    assert.deepEqual(await selectedNames(), ['k1.txt', 'k2.txt', 'k3.txt', 'k5.txt']);
    // The actions menu of a selected row acts on the whole selection, as the selection bar's Move does.
    await page.keyboard.press('Shift+F10');
    await page.getByRole('menuitem', { name: 'Move' }).press('Enter');
    const dialog = page.getByRole('dialog', { name: /^Move/ });
    await dialog.getByRole('list', { name: 'Folders' }).getByRole('button', { name: 'KeyDest', exact: true }).press('Enter');
    await dialog.getByText('Move to “KeyDest”').waitFor();
    await dialog.getByRole('button', { name: 'Move here' }).press('Enter');
    await dialog.waitFor({ state: 'detached' });
    for (const k of ['k1', 'k2', 'k3', 'k5']) assert.equal(existsSync(disk(`KeyDest/${k}.txt`)), true, `${k} moved`);
    assert.equal(existsSync(disk('Keys/k4.txt')), true, 'k4, not selected, stays');
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

  /**
   * A finger on a touch screen, through DevTools' Input.dispatchTouchEvent: the
   * touches go through Chromium's real input pipeline (gestures, scrolling,
   * pointer events), as a phone's would. Press at `from`, hold `holdMs`, move
   * to `to` in small steps, run `before` while still down, lift.
   */
  async function finger(cdp: CDPSession, page: Page, from: { x: number; y: number }, to: { x: number; y: number }, holdMs: number, before?: () => Promise<void>): Promise<void> {
    await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: [{ x: from.x, y: from.y }] });
    try {
      await page.waitForTimeout(holdMs);
      const steps = 12;
      for (let i = 1; i <= steps; i++) {
        const x = from.x + ((to.x - from.x) * i) / steps;
        const y = from.y + ((to.y - from.y) * i) / steps;
        await cdp.send('Input.dispatchTouchEvent', { type: 'touchMove', touchPoints: [{ x, y }] });
        await page.waitForTimeout(16);
      }
      await before?.();
    } finally {
      await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] });
    }
  }
  const centre = async (page: Page, selector: string) => {
    const box = await page.locator(selector).boundingBox();
    assert.ok(box, `${selector} is on screen`);
    return { x: box.x + box.width / 2, y: box.y + box.height / 2 };
  };
  const rowSel = (name: string) => `.file-grid [role="row"][data-name="${name}"]`;
  /** A phone with a touch screen, signed in, showing `path`; DevTools for the finger. */
  async function phone(path: string) {
    const touch = await newPage(browser, { viewport: { width: 390, height: 844 }, hasTouch: true });
    await signIn(touch.page, server, path);
    const cdp = await touch.context.newCDPSession(touch.page);
    return { ...touch, cdp };
  }

  test('on a touch screen: a row long-pressed and dragged onto a folder row moves there, a tile onto a folder tile', async () => {
    const { context: ctx, page: p, errors: errs, cdp } = await phone('/browse/Inbox/');
    try {
      await finger(cdp, p, await centre(p, rowSel('g.txt')), await centre(p, rowSel('Target')), 700, async () => {
        // While the finger is down: the ghost follows it, the folder under it is outlined; no menu, no text selected.
        await p.locator('.touch-drag-ghost', { hasText: 'g.txt' }).waitFor();
        await p.locator(`${rowSel('Target')}.drop-target`).waitFor();
        assert.equal(await p.getByRole('menu').count(), 0, 'no actions menu');
        assert.equal(await p.evaluate(() => String((globalThis as unknown as { getSelection(): unknown }).getSelection())), '', 'no text selected');
      });
      await p.getByText('Moved “g.txt” to “Target”.').waitFor();
      assert.equal(await readFile(disk('Inbox/Target/g.txt'), 'utf8'), 'g');
      assert.equal(existsSync(disk('Inbox/g.txt')), false);
      assert.equal(await p.locator('.touch-drag-ghost').count(), 0, 'the ghost is gone');
      assert.equal(await p.locator('.drop-target').count(), 0);
      // The grid view's tiles: the same, onto a folder tile.
      await p.getByRole('button', { name: 'Grid view' }).tap();
      const tile = (name: string) => `.tile-view .tile[data-name="${name}"]`;
      await finger(cdp, p, await centre(p, tile('h.txt')), await centre(p, tile('Deep')), 700, () => p.locator(`${tile('Deep')}.drop-target`).waitFor());
      await p.getByText('Moved “h.txt” to “Deep”.').waitFor();
      assert.equal(await readFile(disk('Inbox/Deep/h.txt'), 'utf8'), 'h');
      assert.deepEqual(errs, []);
    } finally {
      await ctx.close();
    }
  });

  test('on a touch screen: a colliding drop says what the Move dialog says, and replaces nothing', async () => {
    const { context: ctx, page: p, errors: errs, cdp } = await phone('/browse/Inbox/');
    try {
      // The menu's way first, by taps: its error sentence.
      await row(p, 'c.txt').getByRole('button', { name: 'Actions for c.txt' }).tap();
      await p.getByRole('menuitem', { name: 'Move' }).tap();
      const dialog = p.getByRole('dialog', { name: 'Move “c.txt”' });
      const folders = dialog.getByRole('list', { name: 'Folders' });
      await folders.getByRole('button', { name: 'Inbox', exact: true }).tap();
      await folders.getByRole('button', { name: 'Target', exact: true }).tap();
      await dialog.getByRole('button', { name: 'Move here' }).tap();
      const alert = dialog.getByRole('alert').filter({ hasText: /same name is already there/ });
      await alert.waitFor();
      const sentence = (await alert.innerText()).trim();
      await dialog.getByRole('button', { name: 'Cancel' }).tap();
      await dialog.waitFor({ state: 'detached' });
      // The finger's way: the same sentence, nothing replaced.
      await finger(cdp, p, await centre(p, rowSel('c.txt')), await centre(p, rowSel('Target')), 700);
      await p.locator('.toast-error', { hasText: sentence }).waitFor();
      assert.equal(await readFile(disk('Inbox/c.txt'), 'utf8'), 'c from Inbox');
      assert.equal(await readFile(disk('Inbox/Target/c.txt'), 'utf8'), 'c already in Target');
      assert.deepEqual(errs, []);
    } finally {
      await ctx.close();
    }
  });

  test('on a touch screen: a swipe scrolls and moves nothing; a long press let go away from a folder moves nothing, let go in place opens the menu', async () => {
    const { context: ctx, page: p, errors: errs, cdp } = await phone('/browse/Long/');
    const scrolled = () => p.locator('.grid-scroll').evaluate((el: { scrollTop: number }) => el.scrollTop);
    try {
      assert.equal(await scrolled(), 0);
      // A quick swipe up from a row (no hold): the list scrolls.
      const start = await centre(p, rowSel('file-05.txt'));
      await finger(cdp, p, start, { x: start.x, y: start.y - 300 }, 0);
      await p.waitForFunction(() => ((globalThis as unknown as PageGlobal).document.querySelector('.grid-scroll') as unknown as { scrollTop: number }).scrollTop > 100);
      assert.equal(await p.locator('.touch-drag-ghost').count(), 0);
      // A swipe flings: the list goes on scrolling for a moment, and a finger put down meanwhile stops
      // the fling instead of pressing a row (on a busy machine the press came during it, and no ghost
      // followed). So the press waits until the list rests, as a person's thumb does.
      for (let last = -1, now = await scrolled(); now !== last; last = now, now = await scrolled()) await p.waitForTimeout(150);
      // A long press on a file, dragged onto another file and let go there: no move, no menu.
      await finger(cdp, p, await centre(p, rowSel('file-10.txt')), await centre(p, rowSel('file-12.txt')), 700, async () => {
        await p.locator('.touch-drag-ghost').waitFor();
        assert.equal(await p.locator('.drop-target').count(), 0, 'a file takes no drop');
      });
      await p.locator('.touch-drag-ghost').waitFor({ state: 'detached' });
      await p.waitForTimeout(300);
      assert.equal(await p.locator('.toast').count(), 0);
      assert.equal(await p.getByRole('menu').count(), 0);
      // A long press let go where it started: the row's actions menu (as the browser's long press gave), nothing else.
      const held = await centre(p, rowSel('file-11.txt'));
      await finger(cdp, p, held, held, 700);
      await p.getByRole('menu').getByRole('menuitem', { name: 'Move' }).waitFor();
      // The lift was no tap on the menu that opened under the finger: it is still open, its first item focused (Escape closes it).
      assert.equal(await p.locator('.file-grid [role="row"][aria-selected="true"]').count(), 0, 'nothing selected');
      await p.keyboard.press('Escape');
      await p.getByRole('menu').waitFor({ state: 'detached' });
      for (let i = 0; i < 40; i++) assert.equal(existsSync(disk(`Long/file-${String(i).padStart(2, '0')}.txt`)), true);
      assert.equal((await readdir(disk('Long/Sub'))).length, 0, 'nothing moved into Sub');
      assert.deepEqual(errs, []);
    } finally {
      await ctx.close();
    }
  });
});
