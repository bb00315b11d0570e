import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchBrowser, missingBrowser, newPage, row, screenshotAll, signIn, startServer, type ServerProcess, seedIndexed } from './browser.js';
import { startAll } from '../helpers/start-all.js';

const skip = missingBrowser();
const run = promisify(execFile);

/** Debian's zbarimg (zbar-tools) reads the QR code back; CI installs it (scripts/test-services.sh). */
const ZBARIMG = '/usr/bin/zbarimg';
function missingZbar(): string | undefined {
  if (existsSync(ZBARIMG)) return undefined;
  const why = `zbarimg not found at ${ZBARIMG} (apt-get install zbar-tools)`;
  if (process.env.CI) throw new Error(why);
  return why;
}

describe('web UI: share links, Shared by me', { skip }, () => {
  let server: ServerProcess;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let errors: string[];
  let tmp: string;
  const PASSWORD = 'correct horse 42';
  const links: { file?: string; folder?: string } = {};

  before(async () => {
    [server, browser] = await startAll(startServer({ args: ['--dev'] }), launchBrowser());
    await seedIndexed(server, {
      'Shared/report.txt': 'quarterly numbers\n',
      'Shared/Drop box/': '',
      'Shared/Holiday/beach.txt': 'sand',
    });
    tmp = await mkdtemp(join(tmpdir(), 'fc-share-ui-'));
    ({ context, page, errors } = await newPage(browser));
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
    await signIn(page, server, '/browse/Shared/');
  });
  after(async () => {
    await context?.close();
    await browser?.close();
    await server?.dispose();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  /**
   * What a visitor without an account gets at `url`: its status and body, in a fresh context; the
   * nonce of a page's script and style sheet (fresh in every answer) is blanked, so pages compare.
   */
  async function visit(url: string): Promise<{ status: number; body: string }> {
    const res = await fetch(url, { redirect: 'manual' });
    return { status: res.status, body: (await res.text()).replace(/ nonce="[^"]*"/g, ' nonce=""') };
  }

  test('Shared by me starts empty, reachable from the header; a network failure shows an error with Try again', async () => {
    await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Shared by me' }).click();
    await page.waitForURL(/\/shared$/);
    await page.getByRole('heading', { name: 'You have not shared anything yet' }).waitFor();
    assert.equal(await page.title(), 'Shared by me · File Cloud');
    assert.equal(await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Shared by me' }).getAttribute('aria-current'), 'page');
    // The network goes away: an error state in words with Try again, which recovers.
    await context.setOffline(true);
    await page.getByRole('toolbar', { name: 'Share actions' }).getByRole('button', { name: 'Refresh' }).click();
    const failed = page.getByRole('alert').filter({ hasText: 'Your share links could not be loaded' });
    await failed.getByText('Cannot reach the server', { exact: false }).waitFor();
    await context.setOffline(false);
    await failed.getByRole('button', { name: 'Try again' }).click();
    await page.getByRole('heading', { name: 'You have not shared anything yet' }).waitFor();
    await page.getByRole('link', { name: 'Go to My files' }).click();
    await page.waitForURL(/\/browse\/$/);
    await page.goto(`${server.url}/browse/Shared/`);
    await row(page, 'report.txt').waitFor();
  });

  test('upload-only is offered for folders only', async () => {
    await row(page, 'report.txt').getByRole('button', { name: 'Actions for report.txt', exact: true }).click();
    await page.getByRole('menuitem', { name: 'Share…' }).click();
    const fileDialog = page.getByRole('dialog', { name: 'Share “report.txt”' });
    await fileDialog.getByLabel('Expires').waitFor();
    assert.equal(await fileDialog.getByLabel('Expires').inputValue(), '7d', '7 days is the default');
    assert.equal(await fileDialog.getByRole('checkbox', { name: /Upload only/ }).count(), 0);
    await fileDialog.getByRole('button', { name: 'Cancel' }).click();
    await fileDialog.waitFor({ state: 'detached' });

    await row(page, 'Drop box').getByRole('button', { name: 'Actions for Drop box', exact: true }).click();
    await page.getByRole('menuitem', { name: 'Share…' }).click();
    const folderDialog = page.getByRole('dialog', { name: 'Share “Drop box”' });
    await folderDialog.getByRole('checkbox', { name: /Upload only/ }).check();
    // A download limit means nothing for a link that reads nothing.
    assert.equal(await folderDialog.getByLabel('Download limit (optional)').count(), 0);
    // A date in the past is refused before asking the server.
    await folderDialog.getByLabel('Expires').selectOption({ label: 'On a date…' });
    await folderDialog.getByLabel('Last day').waitFor();
    assert.match((await folderDialog.getByLabel('Last day').getAttribute('min')) ?? '', /^\d{4}-\d{2}-\d{2}$/);
    await folderDialog.getByLabel('Expires').selectOption({ label: 'Never' });
    await folderDialog.getByRole('button', { name: 'Create link' }).click();
    const url = await folderDialog.getByLabel('Share link').inputValue();
    assert.match(url, new RegExp(`^${server.url}/s/[A-Za-z0-9_-]{20,}$`));
    await folderDialog.getByText(/Never expires · upload only\./).waitFor();
    links.folder = url;
    await folderDialog.getByRole('button', { name: 'Done' }).click();
    await folderDialog.waitFor({ state: 'detached' });
  });

  test('a password-protected, download-limited link: copy, QR code, then a visitor downloads it until it is used up', async (t) => {
    await row(page, 'report.txt').click();
    await page.getByRole('toolbar', { name: 'Selection actions' }).getByRole('button', { name: 'Share', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Share “report.txt”' });
    await dialog.getByLabel('Password (optional)').fill(PASSWORD);
    await dialog.getByLabel('Download limit (optional)').fill('2');
    await screenshotAll(page, 'share-options');
    await dialog.getByRole('button', { name: 'Create link' }).click();
    const input = dialog.getByLabel('Share link');
    await input.waitFor();
    const url = await input.inputValue();
    links.file = url;
    assert.match(url, new RegExp(`^${server.url}/s/[A-Za-z0-9_-]{20,}$`));
    assert.ok(!url.includes('report') && !url.includes('admin'), 'the link names neither owner nor path');
    await dialog.getByText(/Works until .+ · password protected · at most 2 downloads\./).waitFor();

    await dialog.getByRole('button', { name: 'Copy link' }).click();
    await dialog.getByText('Link copied.').waitFor();
    assert.equal(await page.evaluate('navigator.clipboard.readText()'), url);

    // The QR code: drawn, square, big enough to scan, and it says the link.
    const qr = dialog.getByRole('img', { name: 'QR code of the link' });
    const box = await qr.boundingBox();
    assert.ok(box && box.width >= 150 && Math.abs(box.width - box.height) < 1, `QR code size ${JSON.stringify(box)}`);
    const noZbar = missingZbar();
    if (noZbar) t.diagnostic(`QR code not decoded: ${noZbar}`);
    else {
      const png = join(tmp, 'qr.png');
      await qr.screenshot({ path: png });
      const { stdout } = await run(ZBARIMG, ['--quiet', '--raw', png]);
      assert.equal(stdout.trim(), url);
    }
    await screenshotAll(page, 'share');
    await dialog.getByRole('button', { name: 'Done' }).click();

    // A visitor: a fresh context, no session. The password comes first.
    const stranger = await browser.newContext({ acceptDownloads: true });
    const v = await stranger.newPage();
    v.setDefaultTimeout(10_000);
    await v.goto(url);
    const downloadLink = v.getByRole('link', { name: /download/i }).or(v.getByRole('button', { name: /download/i })).first();
    const pw = v.locator('input[type="password"]');
    await pw.fill('wrong password');
    await pw.press('Enter');
    await v.waitForLoadState();
    await v.locator('input[type="password"]').waitFor();
    assert.equal(await downloadLink.count(), 0, 'nothing to download with a wrong password');
    await v.locator('input[type="password"]').fill(PASSWORD);
    await v.locator('input[type="password"]').press('Enter');
    await downloadLink.waitFor();

    for (let i = 1; i <= 2; i++) {
      const [download] = await Promise.all([v.waitForEvent('download'), downloadLink.click()]);
      const saved = join(tmp, `report-${i}.txt`);
      await download.saveAs(saved);
      assert.deepEqual(await readFile(saved), Buffer.from('quarterly numbers\n'));
      assert.equal(download.suggestedFilename(), 'report.txt');

      // The owner sees the count at once.
      await page.goto(`${server.url}/shared`);
      const item = page.getByRole('listitem', { name: 'report.txt' });
      await item.locator('.share-downloads', { hasText: `${i} / 2` }).waitFor();
      await item.getByText(i < 2 ? 'Active' : 'Used up', { exact: true }).waitFor();
      assert.equal(await item.locator('dd', { hasText: /^Yes$/ }).count(), 1, 'password: yes; upload only: no');
    }

    // Used up: the visitor now gets the dead-link page, the same as for a link that never existed.
    const dead = await v.goto(url);
    assert.equal(dead?.status(), 404);
    const unknown = await visit(`${server.url}/s/AAAAAAAAAAAAAAAAAAAAAAAAAA`);
    assert.equal(unknown.status, 404);
    assert.equal((await visit(url)).body, unknown.body);
    await stranger.close();
  });

  test('Shared by me lists every link with its state; revoking ends one at once', async () => {
    await page.goto(`${server.url}/shared`);
    const list = page.getByRole('list', { name: 'Share links' });
    await list.waitFor();
    assert.equal(await list.getByRole('listitem').count(), 2);
    const folder = list.getByRole('listitem', { name: 'Drop box' });
    await folder.getByText('Active', { exact: true }).waitFor();
    await folder.getByText('Never expires').waitFor();
    assert.equal(await folder.locator('.share-downloads').innerText(), '—');
    await screenshotAll(page, 'shared-by-me');

    // Copy from the list.
    await page.evaluate('navigator.clipboard.writeText("")');
    await folder.getByRole('button', { name: 'Copy link' }).click();
    await page.getByText('Link to “Drop box” copied.').waitFor();
    assert.equal(await page.evaluate('navigator.clipboard.readText()'), links.folder);

    assert.ok(links.folder);
    assert.equal((await visit(links.folder)).status, 200, 'the upload-only link works before revoking');
    await folder.getByRole('button', { name: 'Revoke' }).click();
    const confirm = page.getByRole('dialog', { name: 'Revoke the link to “Drop box”?' });
    // Cancel keeps it.
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await confirm.waitFor({ state: 'detached' });
    assert.equal(await list.getByRole('listitem').count(), 2);
    await folder.getByRole('button', { name: 'Revoke' }).click();
    await confirm.getByRole('button', { name: 'Revoke link' }).click();
    await confirm.waitFor({ state: 'detached' });
    // Gone from the list without a reload, and dead for visitors.
    await folder.waitFor({ state: 'detached' });
    assert.equal(await list.getByRole('listitem').count(), 1);
    const gone = await visit(links.folder);
    assert.equal(gone.status, 404);
    assert.equal(gone.body, (await visit(`${server.url}/s/AAAAAAAAAAAAAAAAAAAAAAAAAA`)).body);
    await page.reload();
    await list.waitFor();
    assert.equal(await list.getByRole('listitem').count(), 1);
    assert.deepEqual(errors, []);
  });
});
