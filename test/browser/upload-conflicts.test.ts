import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { PHONE, launchBrowser, missingBrowser, newPage, openFolder, pickFiles, row, screenshot, signIn, startServer, type ServerProcess, seedIndexed } from './browser.js';
import { bearer, login } from '../helpers/client.js';
import { startAll } from '../helpers/start-all.js';

const skip = missingBrowser();
const MB = 1024 * 1024;

/**
 * An upload whose name is taken asks, once for the batch: Replace, Keep both
 * or Skip, with "apply to all" for the other taken names. On a server that
 * keeps versions a Replace keeps the replaced file as a version — both for a
 * small file (one multipart PUT) and a big one (tus).
 */
describe('web UI: upload into a taken name', { skip }, () => {
  let server: ServerProcess;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let errors: string[];
  let consoleErrors: string[];
  let local: string;
  const disk = (p: string) => join(server.dataDir, 'storage', 'admin', ...p.split('/'));
  const text = (p: string) => readFile(disk(p), 'utf8');
  const panel = () => page.getByRole('region', { name: 'Uploads' });
  const ask = () => page.getByRole('dialog', { name: /already exists/ });
  const versions = async (path: string) => {
    const auth = bearer((await login(server.url, 'admin', server.adminPassword)).access_token);
    const res = await fetch(`${server.url}/storage/admin/${path}?versions`, { headers: auth });
    const list = ((await res.json()) as { versions: { id: string }[] }).versions;
    return Promise.all(list.map(async (v) => (await fetch(`${server.url}/storage/admin/${path}?version=${encodeURIComponent(v.id)}`, { headers: auth })).text()));
  };

  before(async () => {
    [server, browser] = await startAll(startServer({ args: ['--dev', '--versions'] }), launchBrowser());
    local = await mkdtemp(join(tmpdir(), 'fc-web-conflict-'));
    for (const name of ['a.txt', 'b.txt', 'c.txt', 'new.txt']) await writeFile(join(local, name), `new ${name}\n`);
    await mkdir(join(local, 'Trip'));
    await writeFile(join(local, 'Trip', 'day.txt'), 'new day\n');
    await writeFile(join(local, 'big.bin'), Buffer.alloc(9 * MB, 2));
    await seedIndexed(server, {
      'All/a.txt': 'old a\n',
      'All/b.txt': 'old b\n',
      'Both/a.txt': 'old a\n',
      'Each/a.txt': 'old a\n',
      'Each/b.txt': 'old b\n',
      'Each/c.txt': 'old c\n',
      'Deep/Trip/day.txt': 'old day\n',
      'Big/big.bin': Buffer.alloc(9 * MB, 1),
      'Phone/a.txt': 'old a\n',
    });
    ({ context, page, errors, consoleErrors } = await newPage(browser));
    await signIn(page, server, '/browse/All/');
  });
  after(async () => {
    await context?.close();
    await browser?.close();
    await server?.dispose();
    if (local) await rm(local, { recursive: true, force: true });
  });

  test('Replace with "apply to all": asked once, both taken names replaced, the old contents kept as versions, the free name uploaded', async () => {
    await openFolder(page, server.url + '/browse/All/');
    await pickFiles(page, 'Upload files', ['a.txt', 'b.txt', 'new.txt'].map((n) => join(local, n)));
    await ask().getByText('“a.txt” is already in “All”.').waitFor();
    await ask().getByText('Replace keeps the current file as a version.').waitFor();
    await ask().getByRole('checkbox', { name: 'Do the same for the other taken name (1)' }).check();
    await screenshot(page, 'upload-conflict');
    await ask().getByRole('button', { name: 'Replace', exact: true }).click();
    await ask().waitFor({ state: 'detached' });
    await panel().getByText('3 uploads complete').waitFor({ timeout: 20_000 });
    assert.equal(await text('All/a.txt'), 'new a.txt\n');
    assert.equal(await text('All/b.txt'), 'new b.txt\n');
    assert.equal(await text('All/new.txt'), 'new new.txt\n');
    assert.deepEqual((await readdir(disk('All'))).sort(), ['a.txt', 'b.txt', 'new.txt']);
    assert.deepEqual(await versions('All/a.txt'), ['old a\n']);
    assert.deepEqual(await versions('All/b.txt'), ['old b\n']);
    await panel().getByRole('listitem').filter({ hasText: 'a.txt' }).getByText('Replaced the earlier file').waitFor();
    await panel().getByRole('button', { name: 'Close' }).click();
  });

  test('Keep both: the upload is stored under a free name, the old file stays', async () => {
    await openFolder(page, server.url + '/browse/Both/');
    await pickFiles(page, 'Upload files', join(local, 'a.txt'));
    // One taken name: nothing to apply to others.
    await ask().getByRole('button', { name: 'Keep both', exact: true }).waitFor();
    assert.equal(await ask().getByRole('checkbox').count(), 0);
    await ask().getByRole('button', { name: 'Keep both', exact: true }).click();
    await panel().getByText('Saved as “a (1).txt” (the name was taken)').waitFor();
    await row(page, 'a (1).txt').waitFor();
    assert.equal(await text('Both/a.txt'), 'old a\n');
    assert.equal(await text('Both/a (1).txt'), 'new a.txt\n');
    await panel().getByRole('button', { name: 'Close' }).click();
  });

  test('without "apply to all" each taken name is asked in turn: Skip, Replace, Keep both', async () => {
    await openFolder(page, server.url + '/browse/Each/');
    await pickFiles(page, 'Upload files', ['a.txt', 'b.txt', 'c.txt', 'new.txt'].map((n) => join(local, n)));
    await ask().getByText('“a.txt” is already in “Each”.').waitFor();
    await ask().getByRole('checkbox', { name: 'Do the same for the other taken names (2)' }).waitFor();
    await ask().getByRole('button', { name: 'Skip', exact: true }).click();
    await ask().getByText('“b.txt” is already in “Each”.').waitFor();
    await ask().getByRole('button', { name: 'Replace', exact: true }).click();
    await ask().getByText('“c.txt” is already in “Each”.').waitFor();
    assert.equal(await ask().getByRole('checkbox').count(), 0, 'the last one has no others');
    await ask().getByRole('button', { name: 'Keep both', exact: true }).click();
    await ask().waitFor({ state: 'detached' });
    await panel().getByText('3 uploads complete').waitFor({ timeout: 20_000 });
    assert.equal(await text('Each/a.txt'), 'old a\n', 'skipped');
    assert.equal(await text('Each/b.txt'), 'new b.txt\n', 'replaced');
    assert.equal(await text('Each/c.txt'), 'old c\n');
    assert.equal(await text('Each/c (1).txt'), 'new c.txt\n', 'kept both');
    assert.equal(await text('Each/new.txt'), 'new new.txt\n');
    assert.equal(existsSync(disk('Each/a (1).txt')), false);
    await panel().getByRole('button', { name: 'Close' }).click();
  });

  test('a picked folder: a taken name inside an existing sub-folder is asked about too; Skip uploads nothing of it', async () => {
    await openFolder(page, server.url + '/browse/Deep/');
    await pickFiles(page, 'Upload folder', join(local, 'Trip'));
    await ask().getByText('“day.txt” is already in “Trip”.').waitFor();
    await ask().getByRole('button', { name: 'Skip', exact: true }).click();
    await ask().waitFor({ state: 'detached' });
    assert.deepEqual(await readdir(disk('Deep/Trip')), ['day.txt']);
    assert.equal(await text('Deep/Trip/day.txt'), 'old day\n');
  });

  test('a big file (tus) replaced keeps the old one as a version', async () => {
    await openFolder(page, server.url + '/browse/Big/');
    await pickFiles(page, 'Upload files', join(local, 'big.bin'));
    await ask().getByRole('button', { name: 'Replace', exact: true }).click();
    await panel().getByText('1 upload complete').waitFor({ timeout: 60_000 });
    assert.deepEqual((await readdir(disk('Big'))), ['big.bin']);
    assert.equal((await readFile(disk('Big/big.bin')))[0], 2);
    const [old] = await versions('Big/big.bin');
    assert.equal(old?.length, 9 * MB);
    assert.equal(old?.charCodeAt(0), 1);
    assert.deepEqual(consoleErrors, []);
    assert.deepEqual(errors, []);
  });

  test('on a phone the question fits the screen and its three answers can be pressed', async () => {
    const phone = await newPage(browser, { viewport: PHONE });
    try {
      await signIn(phone.page, server, '/browse/Phone/');
      await pickFiles(phone.page, 'Upload files', join(local, 'a.txt'));
      const dialog = phone.page.getByRole('dialog', { name: /already exists/ });
      for (const name of ['Replace', 'Keep both', 'Skip']) {
        const box = await dialog.getByRole('button', { name, exact: true }).boundingBox();
        assert.ok(box && box.x >= 0 && box.x + box.width <= PHONE.width, `${name} is on screen (${JSON.stringify(box)})`);
      }
      assert.equal(await phone.page.evaluate('document.documentElement.scrollWidth'), PHONE.width);
      await dialog.getByRole('button', { name: 'Skip', exact: true }).click();
      await dialog.waitFor({ state: 'detached' });
      assert.equal(await readFile(join(server.dataDir, 'storage', 'admin', 'Phone', 'a.txt'), 'utf8'), 'old a\n');
      assert.deepEqual(phone.errors, []);
      assert.deepEqual(phone.consoleErrors, []);
    } finally {
      await phone.context.close();
    }
  });
});
