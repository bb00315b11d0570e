import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { bearer, login, postJson } from '../helpers/client.js';
import { launchBrowser, missingBrowser, newPage, pickFiles, row, seed, signIn, startServer, waitForFolder, type ServerProcess } from './browser.js';
import { startAll } from '../helpers/start-all.js';

const skip = missingBrowser();
const RCLONE = '/usr/bin/rclone';
const noRclone = existsSync(RCLONE) || process.env.CI ? undefined : 'rclone is not installed (scripts/test-services.sh installs it); this test runs in CI';

function rclone(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(RCLONE, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out }));
  });
}

/**
 * "Share with people" in the share dialog (issue 29): the owner shares a folder with another account for
 * editing, sees it listed, changes it to view only and stops sharing; the server's grants follow each step,
 * and the recipient's access with them.
 */
describe('web UI: share with people', { skip }, () => {
  let server: ServerProcess;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let errors: string[];
  let admin: Record<string, string>;
  let bob: Record<string, string>;

  before(async () => {
    [server, browser] = await startAll(startServer({ args: ['--dev'] }), launchBrowser());
    await seed(server, { 'Team/plan.txt': 'the plan\n' });
    admin = bearer((await login(server.url, 'admin', server.adminPassword)).access_token);
    assert.equal((await postJson(`${server.url}/api/admin/users`, { username: 'bob', password: 'bob-password' }, admin)).status, 201);
    bob = bearer((await login(server.url, 'bob', 'bob-password')).access_token);
    ({ context, page, errors } = await newPage(browser));
    await signIn(page, server, '/browse/');
  });
  after(async () => {
    await context?.close();
    await browser?.close();
    await server?.dispose();
  });

  const grants = async () => ((await (await fetch(`${server.url}/api/grants`, { headers: admin })).json()) as { grants: { to: string; permission: string; path: string }[] }).grants;
  const bobPut = async () => (await fetch(`${server.url}/storage/admin/Team/from-bob.txt`, { method: 'PUT', headers: bob, body: 'bob' })).status;

  test('share a folder with a user for editing, change it to view only, stop sharing', async () => {
    await row(page, 'Team').getByRole('button', { name: 'Actions for Team', exact: true }).click();
    await page.getByRole('menuitem', { name: 'Share…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Share “Team”' });
    const people = dialog.getByRole('region', { name: 'Share with people' });
    await people.getByText('Not shared with anyone yet.').waitFor();
    // An unknown name is refused in words, and nothing is shared.
    await people.getByLabel('Person or group').fill('nobody');
    await people.getByRole('button', { name: 'Share', exact: true }).click();
    await people.getByRole('alert').filter({ hasText: 'There is no user or group of this name that you can share with.' }).waitFor();
    assert.deepEqual(await grants(), []);

    await people.getByLabel('Person or group').fill('bob');
    await people.getByLabel('Permission', { exact: true }).selectOption({ label: 'Can edit' });
    await people.getByRole('button', { name: 'Share', exact: true }).click();
    const shared = people.getByRole('list', { name: 'Shared with' });
    await shared.getByText('bob', { exact: true }).waitFor();
    assert.equal(await shared.getByLabel('Permission of user:bob').inputValue(), 'write');
    assert.deepEqual((await grants()).map((g) => [g.path, g.to, g.permission]), [['/admin/Team', 'user:bob', 'write']]);
    assert.equal(await bobPut(), 201, 'bob writes into the shared folder');

    // The change is sent at once, then the list is read again from the server.
    const patched = page.waitForResponse((r) => r.request().method() === 'PATCH' && r.url().includes('/api/grants/'));
    const reread = page.waitForResponse((r) => r.request().method() === 'GET' && r.url().endsWith('/api/grants'));
    await shared.getByLabel('Permission of user:bob').selectOption({ label: 'Can view' });
    assert.equal((await patched).status(), 200);
    assert.equal((await reread).status(), 200);
    assert.deepEqual((await grants()).map((g) => g.permission), ['read']);
    assert.equal(await bobPut(), 403, 'view only: bob\'s write is refused');

    await shared.getByRole('button', { name: 'Stop sharing with bob' }).click();
    await people.getByText('Not shared with anyone yet.').waitFor();
    assert.deepEqual(await grants(), []);
    assert.equal((await fetch(`${server.url}/storage/admin/Team/plan.txt`, { headers: bob })).status, 401);
    assert.deepEqual(errors, []);
  });

  test('two clients at once: rclone as bob syncs into the shared folder while its owner uploads in the browser; rclone check agrees', { skip: noRclone }, async () => {
    const made = await postJson(`${server.url}/api/grants`, { path: '/admin/Team', to: 'user:bob', permission: 'write' }, admin);
    assert.equal(made.status, 201);
    const home = await mkdtemp(join(tmpdir(), 'fc-share-people-'));
    try {
      const up = join(home, 'up');
      for (const [p, content] of Object.entries({ 'a.txt': 'from bob', 'deep/b.txt': 'x'.repeat(50_000) })) {
        await mkdir(join(up, p, '..'), { recursive: true });
        await writeFile(join(up, p), content);
      }
      await writeFile(join(home, 'minutes.txt'), 'minutes\n');
      const env = {
        ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('RCLONE_'))),
        RCLONE_CONFIG: '/dev/null',
        RCLONE_CONFIG_FC_TYPE: 'webdav',
        RCLONE_CONFIG_FC_URL: `${server.url}/dav/Shared%20with%20me/Team%20(admin)/`,
        RCLONE_CONFIG_FC_VENDOR: 'other',
        RCLONE_CONFIG_FC_USER: 'bob',
        RCLONE_CONFIG_FC_PASS: (await promisify(execFile)(RCLONE, ['obscure', 'bob-password'])).stdout.trim(),
      };
      await page.goto(`${server.url}/browse/Team/`);
      await waitForFolder(page);
      const syncing = rclone(['sync', up, 'fc:bob'], env);
      await pickFiles(page, 'Upload files', join(home, 'minutes.txt'));
      await row(page, 'minutes.txt').waitFor();
      const synced = await syncing;
      assert.equal(synced.code, 0, synced.out);
      const checked = await rclone(['check', up, 'fc:bob'], env);
      assert.equal(checked.code, 0, checked.out);
      // The owner sees bob's folder in the browser; bob sees the owner's upload through WebDAV.
      await page.reload();
      await row(page, 'bob').waitFor();
      const listed = await rclone(['lsf', 'fc:'], env);
      assert.match(listed.out, /^minutes\.txt$/m);
      assert.deepEqual(errors, []);
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });
});
