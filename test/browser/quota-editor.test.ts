// The web UI's usage bar (figures from `file-cloud index` and `user quota`, updated after uploads and
// deletes, a 507 shown on upload) and its text editor (edit and save; a change made behind the editor
// with curl → 412 → "Reload" or "Save as copy"; the unsaved-changes guard), in Chromium.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { runCli } from '../helpers/server.js';
import { launchBrowser, missingBrowser, newPage, pickFiles, row, screenshotAll, seed, signIn, startServer, waitForFolder, type ServerProcess } from './browser.js';
import { startAll } from '../helpers/start-all.js';

const skip = missingBrowser();
const run = promisify(execFile);
/** Kilobytes (1024 bytes) as the UI writes them (web/src/lib/format.ts): one decimal, none when it is .0. */
const kib = (bytes: number) => `${(bytes / 1024).toFixed(1).replace(/\.0$/, '')} KB`;

describe('web UI: usage bar and text editor', { skip }, () => {
  let server: ServerProcess;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let errors: string[];
  let local: string;
  let token: string;
  const disk = (p: string) => join(server.dataDir, 'storage', 'admin', ...p.split('/'));
  const usageText = () => page.getByTestId('usage').innerText();
  const editor = () => page.getByRole('textbox', { name: /^Contents of / });
  /** Changes a file behind the editor's back, as another client would: curl with the admin's token. */
  const curlPut = (path: string, text: string) =>
    run('curl', ['-sS', '-f', '-X', 'PUT', '-H', `Authorization: Bearer ${token}`, '-H', 'Content-Type: text/plain', '--data-binary', text, `${server.url}/storage/admin/${path}`]);
  const openEditor = async (name: string) => {
    await row(page, name).click({ button: 'right' });
    await page.getByRole('menuitem', { name: 'Edit' }).click();
    await editor().waitFor();
  };

  before(async () => {
    [server, browser] = await startAll(startServer({ args: ['--dev'] }), launchBrowser());
    local = await mkdtemp(join(tmpdir(), 'fc-web-quota-'));
    await writeFile(join(local, 'small.bin'), Buffer.alloc(10 * 1024, 1));
    await writeFile(join(local, 'big.bin'), Buffer.alloc(200 * 1024, 2));
    // Files put there behind the server's back: counted only once `file-cloud index` has run.
    await seed(server, { 'notes.txt': 'first line\n', 'code.js': 'const a = 1;\n', 'blob.bin': Buffer.alloc(20 * 1024, 3) });
    const index = await runCli(['index', '--data-dir', server.dataDir]);
    assert.equal(index.code, 0, index.stderr);
    const quota = await runCli(['user', 'quota', 'admin', '100K', '--data-dir', server.dataDir]);
    assert.equal(quota.code, 0, quota.stderr);
    const res = await fetch(`${server.url}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: server.adminPassword }) });
    token = ((await res.json()) as { access_token: string }).access_token;
    ({ context, page, errors } = await newPage(browser));
    await signIn(page, server);
  });
  after(async () => {
    await context?.close();
    await browser?.close();
    await server?.dispose();
    if (local) await rm(local, { recursive: true, force: true });
  });

  test('the usage bar shows used of quota and follows uploads and deletes; an upload past the quota says so', async () => {
    const seeded = 'first line\n'.length + 'const a = 1;\n'.length + 20 * 1024;
    await page.getByTestId('usage').getByText(`${kib(seeded)} of 100 KB used`).waitFor();
    const bar = page.getByRole('progressbar', { name: 'Storage used' });
    assert.equal(await bar.getAttribute('aria-valuenow'), String(Math.round((seeded / (100 * 1024)) * 100)));

    await pickFiles(page, 'Upload files', join(local, 'small.bin'));
    await row(page, 'small.bin').waitFor();
    await page.getByTestId('usage').getByText(`${kib(seeded + 10 * 1024)} of 100 KB used`).waitFor();

    await pickFiles(page, 'Upload files', join(local, 'big.bin'));
    const panel = page.getByRole('region', { name: 'Uploads' });
    const failed = panel.locator('.upload-item[data-name="big.bin"] .upload-status');
    await failed.getByText('Not enough space left in your storage quota', { exact: false }).waitFor();
    assert.equal(await row(page, 'big.bin').count(), 0);
    await assert.rejects(readFile(disk('big.bin')), 'nothing written');
    await screenshotAll(page, 'usage-quota-exceeded');

    await row(page, 'blob.bin').click({ button: 'right' });
    await page.getByRole('menuitem', { name: 'Delete' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await row(page, 'blob.bin').waitFor({ state: 'detached' });
    await page.getByTestId('usage').getByText(`${kib(seeded - 20 * 1024 + 10 * 1024)} of 100 KB used`).waitFor();
    assert.match(await usageText(), /of 100 KB used/);
  });

  test('edit a text file and save it: the file on disk has the new text', async () => {
    await openEditor('notes.txt');
    assert.equal(await editor().inputValue(), 'first line\n');
    await editor().press('End');
    await editor().press('Control+End');
    await editor().type('second');
    await editor().press('Tab');
    await editor().type('line');
    await screenshotAll(page, 'text-editor');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('status').getByText('Saved.').waitFor();
    assert.equal(await readFile(disk('notes.txt'), 'utf8'), 'first line\nsecond\tline');
    await page.getByRole('button', { name: 'Close', exact: true }).last().click();
    await editor().waitFor({ state: 'detached' });
  });

  test('a change made behind the editor (curl) → the save is refused; "Save as copy" keeps both texts', async () => {
    await openEditor('notes.txt');
    await editor().press('Control+End');
    await editor().type('\nmine');
    await curlPut('notes.txt', 'changed by curl\n');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    const alert = page.getByRole('alert').filter({ hasText: 'Someone else changed' });
    await alert.waitFor();
    assert.equal(await readFile(disk('notes.txt'), 'utf8'), 'changed by curl\n', 'the other change is not overwritten');
    await screenshotAll(page, 'text-editor-conflict');
    await alert.getByRole('button', { name: 'Save as copy' }).click();
    await editor().waitFor({ state: 'detached' });
    await row(page, 'notes (1).txt').waitFor();
    assert.equal(await readFile(disk('notes (1).txt'), 'utf8'), 'first line\nsecond\tline\nmine');
    assert.equal(await readFile(disk('notes.txt'), 'utf8'), 'changed by curl\n');
  });

  test('a change made behind the editor → "Reload" shows the other text, and saving then works', async () => {
    await openEditor('code.js');
    await editor().press('Control+End');
    await editor().type('// mine');
    await curlPut('code.js', 'const b = 2;\n');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    const alert = page.getByRole('alert').filter({ hasText: 'Someone else changed' });
    await alert.getByRole('button', { name: 'Reload' }).click();
    for (let i = 0; i < 100 && (await editor().inputValue()) !== 'const b = 2;\n'; i++) await page.waitForTimeout(50);
    assert.equal(await editor().inputValue(), 'const b = 2;\n');
    await editor().press('Control+End');
    await editor().type('const c = 3;');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('status').getByText('Saved.').waitFor();
    assert.equal(await readFile(disk('code.js'), 'utf8'), 'const b = 2;\nconst c = 3;');
    await page.getByRole('button', { name: 'Close', exact: true }).last().click();
    await editor().waitFor({ state: 'detached' });
  });

  test('closing with unsaved changes asks first; "Keep editing" keeps the text, "Discard changes" closes without saving', async () => {
    await openEditor('code.js');
    await editor().press('Control+End');
    await editor().type('\nunsaved');
    await page.keyboard.press('Escape');
    const alert = page.getByRole('alert').filter({ hasText: 'You have unsaved changes' });
    await alert.waitFor();
    await alert.getByRole('button', { name: 'Keep editing' }).click();
    assert.match(await editor().inputValue(), /unsaved$/);
    await page.getByRole('button', { name: 'Close', exact: true }).last().click();
    await alert.getByRole('button', { name: 'Discard changes' }).click();
    await editor().waitFor({ state: 'detached' });
    assert.equal(await readFile(disk('code.js'), 'utf8'), 'const b = 2;\nconst c = 3;');
    await waitForFolder(page);
    assert.deepEqual(errors, []);
  });
});
