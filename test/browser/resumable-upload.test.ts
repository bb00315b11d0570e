// The web UI sends big files through tus (CONTRACT "Resumable uploads"): they survive the network
// going away, a page reload (the same file picked again continues where the server stopped),
// pause and resume, and access tokens that expire between chunks.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page, Request } from 'playwright-core';
import { startNetworkSwitch, type NetworkSwitch } from '../helpers/cutting-proxy.js';
import { launchBrowser, missingBrowser, newPage, pickFiles, row, seed, signIn, startServer, throttleUploads, type ServerProcess } from './browser.js';
import { startAll } from '../helpers/start-all.js';

const skip = missingBrowser();
const MB = 1024 * 1024;
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

const pick = (page: Page, files: string | string[]) => pickFiles(page, 'Upload files', files);

/** Waits until the file's progress bar shows more than `pct` percent. */
async function progressAbove(page: Page, name: string, pct: number): Promise<void> {
  const bar = page.getByRole('region', { name: 'Uploads' }).locator(`[role="progressbar"][aria-label="Progress of ${name}"]`);
  await page.waitForFunction(([el, p]) => Number((el as unknown as { getAttribute(n: string): string | null }).getAttribute('aria-valuenow')) > (p as number), [await bar.elementHandle(), pct] as const, { polling: 50, timeout: 30_000 });
}

/** The tus requests the page sends, with their method and Upload-Offset. */
function recordTus(page: Page): { method: string; offset: number | undefined }[] {
  const seen: { method: string; offset: number | undefined }[] = [];
  page.on('request', (r: Request) => {
    if (!new URL(r.url()).pathname.startsWith('/tus/')) return;
    const offset = r.headers()['upload-offset'];
    seen.push({ method: r.method(), offset: offset === undefined ? undefined : Number(offset) });
  });
  return seen;
}

describe('web UI: resumable uploads (tus)', { skip }, () => {
  let server: ServerProcess;
  // The page reaches the server through this, so the network can go away under it.
  let network: NetworkSwitch;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let errors: string[];
  let local: string;
  const contents = new Map<string, Buffer>();
  const disk = (p: string) => join(server.dataDir, 'storage', 'admin', ...p.split('/'));
  const panel = () => page.getByRole('region', { name: 'Uploads' });
  const staging = async () => (existsSync(join(server.dataDir, 'tmp', 'tus')) ? await readdir(join(server.dataDir, 'tmp', 'tus')) : []);

  before(async () => {
    // A 5 s access token: the first 32 MiB chunk of each 40 MiB file (throttled to 6 MB/s) outlives it,
    // so the second chunk needs a refreshed token.
    [server, browser] = await startAll(startServer({ args: ['--dev', '--access-token-ttl', '5'] }), launchBrowser());
    local = await mkdtemp(join(tmpdir(), 'fc-web-tus-'));
    for (const name of ['offline.bin', 'reload.bin', 'pause.bin', 'cancel.bin']) {
      const bytes = randomBytes(40 * MB);
      contents.set(name, bytes);
      await writeFile(join(local, name), bytes);
    }
    await seed(server, { 'Big/': '' });
    network = await startNetworkSwitch(server.url);
    ({ context, page, errors } = await newPage(browser));
    await signIn(page, { ...server, url: network.url }, '/browse/Big/');
  });
  after(async () => {
    await context?.close();
    await browser?.close();
    await network?.close();
    await server?.dispose();
    if (local) await rm(local, { recursive: true, force: true });
  });

  test('the network goes away mid-upload and comes back: the upload continues and the bytes are right', async () => {
    const requests = recordTus(page);
    const failed = (path: string) => page.waitForEvent('requestfailed', { predicate: (r) => new URL(r.url()).pathname.startsWith(path), timeout: 30_000 });
    const unthrottle = await throttleUploads(page, 6 * MB);
    try {
      await pick(page, join(local, 'offline.bin'));
      await progressAbove(page, 'offline.bin', 25);
      // The PATCH in flight is cut mid-way. The network stays away until a token refresh has failed
      // too (the page refreshes its 5 s token every 4 s), so the upload must also live through that.
      const [patchFailed, refreshFailed] = [failed('/tus/'), failed('/auth/refresh')];
      network.offline();
      await Promise.all([patchFailed, refreshFailed]);
    } finally {
      network.online();
      await unthrottle();
    }
    await panel().getByText('1 upload complete').waitFor({ timeout: 90_000 });
    await row(page, 'offline.bin').waitFor();
    assert.equal(sha256(await readFile(disk('Big/offline.bin'))), sha256(contents.get('offline.bin') as Buffer));
    assert.equal(requests.filter((r) => r.method === 'POST').length, 1, 'one upload was created');
    assert.ok(requests.some((r) => r.method === 'HEAD'), 'after the failure the client asked the server for its offset');
    assert.ok(requests.filter((r) => r.method === 'PATCH').length >= 2, 'the file went in several chunks');
    assert.deepEqual(await staging(), []);
    await panel().getByRole('button', { name: 'Close uploads', exact: true }).click();
  });

  test('a reload mid-upload: picking the same file again resumes where the server stopped', async () => {
    const unthrottle = await throttleUploads(page, 6 * MB);
    await pick(page, join(local, 'reload.bin'));
    await progressAbove(page, 'reload.bin', 50);
    // The page warns before leaving with uploads in flight; accept, as a user who reloads does.
    // Still throttled while it reloads: unthrottled, the rest of the file could arrive before the page goes.
    page.once('dialog', (d) => void d.accept());
    await page.reload();
    await unthrottle();
    const requests = recordTus(page);
    await page.getByRole('toolbar', { name: 'Folder actions' }).waitFor();
    assert.ok(!existsSync(disk('Big/reload.bin')), 'nothing is visible before the last byte');
    await pick(page, join(local, 'reload.bin'));
    await panel().getByText('1 upload complete').waitFor({ timeout: 90_000 });
    assert.equal(sha256(await readFile(disk('Big/reload.bin'))), sha256(contents.get('reload.bin') as Buffer));
    assert.equal(requests.filter((r) => r.method === 'POST').length, 0, 'no new upload was created after the reload');
    const firstPatch = requests.find((r) => r.method === 'PATCH');
    assert.ok(firstPatch && (firstPatch.offset ?? 0) > 10 * MB, `the first PATCH after the reload starts where the server stopped, far from 0 (offset ${firstPatch?.offset})`);
    assert.equal(await row(page, 'reload (1).bin').count(), 0);
    await panel().getByRole('button', { name: 'Close uploads', exact: true }).click();
  });

  test('pause holds the upload where it is; resume finishes it', async () => {
    const unthrottle = await throttleUploads(page, 6 * MB);
    await pick(page, join(local, 'pause.bin'));
    await progressAbove(page, 'pause.bin', 10);
    await panel().getByRole('button', { name: 'Pause upload of pause.bin', exact: true }).click();
    const status = panel().locator('.upload-item[data-name="pause.bin"] .upload-status');
    await status.filter({ hasText: /^Paused at \d+% of/ }).waitFor();
    const paused = await status.innerText();
    await page.waitForTimeout(1500);
    assert.equal(await status.innerText(), paused, 'nothing moves while paused');
    await unthrottle();
    await panel().getByRole('button', { name: 'Resume upload of pause.bin', exact: true }).click();
    await panel().getByText('1 upload complete').waitFor({ timeout: 90_000 });
    assert.equal(sha256(await readFile(disk('Big/pause.bin'))), sha256(contents.get('pause.bin') as Buffer));
    await panel().getByRole('button', { name: 'Close uploads', exact: true }).click();
  });

  test('cancel ends a resumable upload on the server too: no file, no staging', async () => {
    const unthrottle = await throttleUploads(page, 4 * MB);
    await pick(page, join(local, 'cancel.bin'));
    await progressAbove(page, 'cancel.bin', 5);
    assert.ok((await staging()).length > 0, 'the partial upload is staged on the server');
    await panel().getByRole('button', { name: 'Cancel upload of cancel.bin', exact: true }).click();
    await panel().locator('.upload-item[data-name="cancel.bin"]').getByText('Cancelled').waitFor();
    await unthrottle();
    for (let i = 0; i < 50 && (await staging()).length > 0; i++) await page.waitForTimeout(100);
    assert.deepEqual(await staging(), [], 'the termination removed the staging');
    assert.ok(!existsSync(disk('Big/cancel.bin')));
    assert.deepEqual(errors, []);
  });
});
