import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchBrowser, makePng, missingBrowser, newPage, pickFiles, row, screenshotAll, seed, signIn, startServer, throttleUploads, type ServerProcess } from './browser.js';
import { startAll } from '../helpers/start-all.js';

const skip = missingBrowser();
const MB = 1024 * 1024;

const pick = pickFiles;

describe('web UI: uploads', { skip }, () => {
  let server: ServerProcess;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let errors: string[];
  let local: string;
  const disk = (p: string) => join(server.dataDir, 'storage', 'admin', ...p.split('/'));
  const panel = () => page.getByRole('region', { name: 'Uploads' });

  before(async () => {
    [server, browser] = await startAll(startServer({ args: ['--dev'] }), launchBrowser());
    local = await mkdtemp(join(tmpdir(), 'fc-web-upload-'));
    await writeFile(join(local, 'one.txt'), 'first file\n');
    await writeFile(join(local, 'two.bin'), Buffer.alloc(3 * MB, 7));
    await writeFile(join(local, 'three.png'), makePng(64, 64, [200, 80, 40]));
    await mkdir(join(local, 'Trip', 'day 1'), { recursive: true });
    await mkdir(join(local, 'Trip', 'day 2'), { recursive: true });
    await writeFile(join(local, 'Trip', 'day 1', 'a.txt'), 'A');
    await writeFile(join(local, 'Trip', 'day 2', 'b.txt'), 'B');
    await writeFile(join(local, 'Trip', 'notes.md'), '# Trip');
    // Below the resumable threshold (8 MiB): this one is a multipart PUT; resumable-upload.test.ts cancels a tus upload.
    await writeFile(join(local, 'huge.bin'), Buffer.alloc(6 * MB, 1));
    // Many small files and a big one: the files are done long before the bytes are.
    await mkdir(join(local, 'many'));
    for (let i = 0; i < 30; i++) await writeFile(join(local, 'many', `small-${String(i).padStart(2, '0')}.txt`), `small ${i}\n`);
    await seed(server, { 'Uploads/': '', 'Counted/': '' });
    ({ context, page, errors } = await newPage(browser));
    await signIn(page, server, '/browse/Uploads/');
  });
  after(async () => {
    await context?.close();
    await browser?.close();
    await server?.dispose();
    if (local) await rm(local, { recursive: true, force: true });
  });

  test('three files upload with per-file and total progress and speed; the finished ones are listed and counted meanwhile', async () => {
    const unthrottle = await throttleUploads(page, 768 * 1024);
    await pick(page, 'Upload files', [join(local, 'one.txt'), join(local, 'two.bin'), join(local, 'three.png')]);
    await panel().waitFor();
    // While the 3 MB file is on its way: a bar part-way, and a speed.
    const partial = panel().locator('[role="progressbar"][aria-label="Progress of two.bin"]');
    await page.waitForFunction(
      (el) => {
        const v = Number((el as unknown as { getAttribute(n: string): string | null }).getAttribute('aria-valuenow'));
        return v > 0 && v < 100;
      },
      await partial.elementHandle(),
      { polling: 50, timeout: 10_000 },
    );
    await panel().locator('.upload-stats').filter({ hasText: /\d+% · .* of .* · .*\/s/ }).waitFor();
    // What a user sees meanwhile: the two small files in the list, and in the storage figure.
    await row(page, 'one.txt').waitFor();
    await row(page, 'three.png').waitFor();
    await page.getByTestId('usage').filter({ hasText: '345 B used' }).waitFor();
    assert.notEqual(await partial.getAttribute('aria-valuenow'), '100', 'two.bin is still on its way (the throttle is slow enough for this test)');
    await screenshotAll(page, 'upload-progress');
    await unthrottle();
    await panel().getByText('3 uploads complete').waitFor({ timeout: 20_000 });
    assert.equal(await panel().getByRole('progressbar', { name: 'Total upload progress' }).getAttribute('aria-valuenow'), '100');
    for (const name of ['one.txt', 'two.bin', 'three.png']) await row(page, name).waitFor();
    assert.equal((await readFile(disk('Uploads/two.bin'))).length, 3 * MB);
    assert.equal(await readFile(disk('Uploads/one.txt'), 'utf8'), 'first file\n');
  });

  test('a taken name, kept both, is stored as name (1).ext and the panel says so', async () => {
    await pick(page, 'Upload files', join(local, 'one.txt'));
    await page.getByRole('dialog', { name: '“one.txt” already exists' }).getByRole('button', { name: 'Keep both', exact: true }).click();
    await panel().getByText('Saved as “one (1).txt” (the name was taken)').waitFor();
    await row(page, 'one (1).txt').waitFor();
    assert.ok(existsSync(disk('Uploads/one (1).txt')));
    await panel().getByRole('button', { name: 'Close uploads', exact: true }).click();
    await panel().waitFor({ state: 'detached' });
  });

  test('a folder upload keeps its structure', async () => {
    await pick(page, 'Upload folder', join(local, 'Trip'));
    await panel().getByText('3 uploads complete').waitFor();
    await row(page, 'Trip').waitFor();
    assert.equal(await readFile(disk('Uploads/Trip/day 1/a.txt'), 'utf8'), 'A');
    assert.equal(await readFile(disk('Uploads/Trip/day 2/b.txt'), 'utf8'), 'B');
    assert.equal(await readFile(disk('Uploads/Trip/notes.md'), 'utf8'), '# Trip');
    await page.getByRole('link', { name: 'Trip', exact: true }).click();
    await row(page, 'day 1').waitFor();
    await page.goBack();
    await row(page, 'Trip').waitFor();
    await panel().getByRole('button', { name: 'Close uploads', exact: true }).click();
  });

  test('files dropped on the page are uploaded', async () => {
    await page.evaluate(`(() => {
      const dt = new DataTransfer();
      dt.items.add(new File(['dropped text'], 'dropped.txt', { type: 'text/plain' }));
      dt.items.add(new File(['second'], 'second drop.txt', { type: 'text/plain' }));
      const target = document.querySelector('.browser');
      for (const type of ['dragenter', 'dragover', 'drop']) target.dispatchEvent(new DragEvent(type, { dataTransfer: dt, bubbles: true, cancelable: true }));
    })()`);
    await row(page, 'dropped.txt').waitFor();
    await row(page, 'second drop.txt').waitFor();
    assert.equal(await readFile(disk('Uploads/dropped.txt'), 'utf8'), 'dropped text');
    await panel().getByRole('button', { name: 'Close uploads', exact: true }).click();
  });

  test('the panel counts files as well as bytes, and after Cancel all says what was cancelled', async () => {
    await page.goto(`${server.url}/browse/Counted/`);
    await page.locator('.empty-state').waitFor();
    const unthrottle = await throttleUploads(page, 256 * 1024);
    try {
      const small = (await readdir(join(local, 'many'))).sort().map((n) => join(local, 'many', n));
      await pick(page, 'Upload files', [join(local, 'huge.bin'), ...small]);
      // The 30 small files go through the other two lanes while the 6 MB one crawls: 30 of 31 files done,
      // with the bytes still under a few per cent.
      const stats = panel().locator('.upload-stats');
      await stats.filter({ hasText: /^30 of 31 files · (<1|\d+)% · / }).waitFor({ timeout: 20_000 });
      assert.match(await stats.innerText(), /^30 of 31 files · (<1|\d+)% · .* of 6 MB/);
      await panel().getByRole('button', { name: 'Cancel all' }).click();
      await panel().locator('.upload-title strong').filter({ hasText: '30 uploads complete, 1 cancelled' }).waitFor();
      assert.equal(await panel().getByText('0 uploads complete', { exact: true }).count(), 0);
      await row(page, 'small-00.txt').waitFor();
      assert.equal((await readdir(disk('Counted'))).filter((n) => n.startsWith('small-')).length, 30);
      assert.ok(!existsSync(disk('Counted/huge.bin')));
      await panel().getByRole('button', { name: 'Close uploads', exact: true }).click();

      // Cancelled before anything finished: said as cancelled, not as "0 uploads complete".
      await pick(page, 'Upload files', [join(local, 'two.bin'), join(local, 'huge.bin')]);
      await panel().getByRole('button', { name: 'Cancel all' }).click();
      await panel().locator('.upload-title strong').filter({ hasText: '2 uploads cancelled' }).waitFor();
      assert.equal(await panel().getByText('0 uploads complete', { exact: true }).count(), 0);
      await panel().getByRole('button', { name: 'Close uploads', exact: true }).click();
    } finally {
      await unthrottle();
      // The next test starts with no upload listed, whatever happened here.
      await panel().getByRole('button', { name: 'Cancel all' }).click({ timeout: 1000 }).catch(() => undefined);
      await panel().getByRole('button', { name: 'Close uploads', exact: true }).click({ timeout: 1000 }).catch(() => undefined);
    }
    await page.goto(`${server.url}/browse/Uploads/`);
    await row(page, 'one.txt').waitFor();
    assert.deepEqual(errors, []);
  });

  test('cancel stops an upload and leaves no partial file', async () => {
    const unthrottle = await throttleUploads(page, 512 * 1024);
    await pick(page, 'Upload files', join(local, 'huge.bin'));
    const bar = panel().locator('[role="progressbar"][aria-label="Progress of huge.bin"]');
    await page.waitForFunction((el) => Number((el as unknown as { getAttribute(n: string): string | null }).getAttribute('aria-valuenow')) > 0, await bar.elementHandle(), { polling: 50 });
    await panel().getByRole('button', { name: 'Cancel upload of huge.bin', exact: true }).click();
    await panel().locator('.upload-item[data-name="huge.bin"]').getByText('Cancelled').waitFor();
    await unthrottle();
    // The server notices the aborted request and removes its staging file, soon but not at once.
    const staging = async () => (await readdir(join(server.dataDir, 'tmp'))).filter((n) => !n.startsWith('.'));
    for (let i = 0; i < 50 && (await staging()).length > 0; i++) await page.waitForTimeout(100);
    assert.deepEqual(await staging(), [], 'no staging file is left');
    assert.ok(!existsSync(disk('Uploads/huge.bin')));
    assert.deepEqual(errors, []);
  });
});

describe('web UI: upload errors', { skip }, () => {
  let server: ServerProcess;
  let browser: Browser;
  let local: string;
  before(async () => {
    [server, browser] = await startAll(startServer({ args: ['--dev', '--max-upload-size', '1024'] }), launchBrowser());
    local = await mkdtemp(join(tmpdir(), 'fc-web-upload-'));
    await writeFile(join(local, 'small.txt'), 'fits');
    await writeFile(join(local, 'large.bin'), Buffer.alloc(64 * 1024));
  });
  after(async () => {
    await browser?.close();
    await server?.dispose();
    if (local) await rm(local, { recursive: true, force: true });
  });

  test('each file reports its own error in words; the others still upload', async () => {
    const { context, page } = await newPage(browser);
    await signIn(page, server);
    await pick(page, 'Upload files', [join(local, 'small.txt'), join(local, 'large.bin')]);
    const panel = page.getByRole('region', { name: 'Uploads' });
    await panel.getByText('1 upload complete, 1 failed').waitFor();
    const failed = panel.locator('.upload-item[data-name="large.bin"] .upload-status');
    assert.equal(await failed.innerText(), 'The file is larger than this server accepts.');
    await row(page, 'small.txt').waitFor();
    assert.equal(await row(page, 'large.bin').count(), 0);
    await context.close();
  });
});
