import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Download, Page } from 'playwright-core';
import { launchBrowser, missingBrowser, newPage, row, seed, signIn, startServer, type ServerProcess } from './browser.js';
import { startAll } from '../helpers/start-all.js';

const skip = missingBrowser();
const run = promisify(execFile);

/** The entry names of a zip and whether its CRCs check out, read by Python's zipfile (a real client, not ours). */
async function zipEntries(file: string): Promise<string[]> {
  const script = 'import json,sys,zipfile\nz=zipfile.ZipFile(sys.argv[1])\nassert z.testzip() is None\nprint(json.dumps(sorted(z.namelist())))';
  const { stdout } = await run('python3', ['-c', script, file]);
  return JSON.parse(stdout) as string[];
}

describe('web UI: folder and selection downloads as zip', { skip }, () => {
  let server: ServerProcess;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let errors: string[];
  let tmp: string;
  const accessTokens: string[] = [];

  before(async () => {
    [server, browser] = await startAll(startServer({ args: ['--dev'] }), launchBrowser());
    await seed(server, {
      'Projects/plan.md': '# Plan\n',
      'Projects/Website/index.html': '<h1>hi</h1>',
      'Projects/Website/css/style.css': 'body{}',
      'Projects/Website/empty/': '',
      'Projects/Café ☕/menu.txt': 'espresso',
      'Projects/notes.txt': 'notes',
    });
    tmp = await mkdtemp(join(tmpdir(), 'fc-zip-ui-'));
    ({ context, page, errors } = await newPage(browser));
    // Remember every access token the app holds, to prove none of them ends up in a download URL.
    page.on('request', (r) => {
      const auth = r.headers().authorization;
      if (auth?.startsWith('Bearer ')) accessTokens.push(auth.slice(7));
    });
    await signIn(page, server, '/browse/Projects/');
  });
  after(async () => {
    await context?.close();
    await browser?.close();
    await server?.dispose();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  async function save(download: Download, name: string): Promise<string> {
    const file = join(tmp, name);
    await download.saveAs(file);
    return file;
  }

  function assertNoAccessToken(url: string): void {
    assert.ok(accessTokens.length > 0);
    for (const t of accessTokens) assert.ok(!url.includes(t), 'the access token is not in the download URL');
    assert.match(url, /[?&]token=fcp1\./, 'a path token for the folder');
  }

  test('a folder downloads as a zip from its row menu', async () => {
    await row(page, 'Website').getByRole('button', { name: 'Actions for Website', exact: true }).click();
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('menuitem', { name: 'Download as zip' }).click()]);
    assert.equal(download.suggestedFilename(), 'Website.zip');
    assert.match(download.url(), /\/storage\/admin\/Projects\/Website\/\?zip=1&token=/);
    assertNoAccessToken(download.url());
    const entries = await zipEntries(await save(download, 'website.zip'));
    assert.deepEqual(entries, ['Website/', 'Website/css/', 'Website/css/style.css', 'Website/empty/', 'Website/index.html']);
    // A file's menu has no zip entry.
    await page.keyboard.press('Escape');
    await row(page, 'notes.txt').getByRole('button', { name: 'Actions for notes.txt', exact: true }).click();
    assert.equal(await page.getByRole('menuitem', { name: 'Download as zip' }).count(), 0);
    await page.keyboard.press('Escape');
  });

  test('several selected entries download as one zip of just those entries', async () => {
    await row(page, 'notes.txt').locator('input[type="checkbox"]').check();
    await row(page, 'Café ☕').locator('input[type="checkbox"]').check();
    await row(page, 'Website').locator('input[type="checkbox"]').check();
    const bar = page.getByRole('toolbar', { name: 'Selection actions' });
    const [download] = await Promise.all([page.waitForEvent('download'), bar.getByRole('button', { name: 'Download as zip', exact: true }).click()]);
    assert.equal(download.suggestedFilename(), 'Projects.zip');
    const url = new URL(download.url());
    assert.equal(url.pathname, '/storage/admin/Projects/');
    assert.deepEqual(url.searchParams.getAll('name').sort(), ['Café ☕', 'Website', 'notes.txt']);
    assertNoAccessToken(download.url());
    const entries = await zipEntries(await save(download, 'projects.zip'));
    const files = entries.filter((e) => !e.endsWith('/'));
    assert.deepEqual(files, ['Projects/Café ☕/menu.txt', 'Projects/Website/css/style.css', 'Projects/Website/index.html', 'Projects/notes.txt']);
    assert.ok(entries.includes('Projects/Website/empty/'), 'empty folders are entries');
    assert.ok(!entries.some((e) => e.includes('plan.md')), 'unselected entries stay out');
    // `unzip -l` agrees (unicode names kept).
    const { stdout } = await run('unzip', ['-l', join(tmp, 'projects.zip')]);
    assert.match(stdout, /Projects\/Café ☕\/menu\.txt/);
    assert.deepEqual(errors, []);
  });
});
