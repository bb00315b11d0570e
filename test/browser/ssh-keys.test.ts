// The SSH keys section of Settings (issue 52; docs/sftp.md "Keys in the web UI"), in Chromium against
// the real binary with SFTP on: a key is added with a name, listed with the fingerprint ssh-keygen
// prints for it, signs OpenSSH's sftp in, and once removed signs in no more.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { launchBrowser, missingBrowser, newPage, screenshotAll, signIn, startServer, type ServerProcess } from './browser.js';
import { startAll } from '../helpers/start-all.js';
import { freePort, run, toolSkip } from '../helpers/sftp.js';

describe('web UI: SSH keys in Settings', { skip: missingBrowser() ?? toolSkip('sftp') }, () => {
  let server: ServerProcess;
  let browser: Browser;
  let port: number;
  let dir: string;
  before(async () => {
    port = await freePort();
    [server, browser] = await startAll(startServer({ args: ['--dev', '--sftp-port', String(port)] }), launchBrowser());
    dir = await mkdtemp(join(tmpdir(), 'fc-ssh-keys-ui-'));
  });
  after(async () => {
    await browser?.close();
    await server?.dispose();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** `ls` over SFTP as admin with the key at `key`: its exit code and output. */
  const sftpLs = (key: string) =>
    run('sftp', ['-P', String(port), '-i', key, '-o', 'IdentitiesOnly=yes', '-o', 'BatchMode=yes', '-o', 'StrictHostKeyChecking=no', '-o', `UserKnownHostsFile=${join(dir, 'known_hosts')}`, '-b', '-', 'admin@127.0.0.1'], { input: 'ls\n', timeoutMs: 60_000 });

  test('a key is added with a name, listed with its fingerprint, signs sftp in, and is removed', async () => {
    const key = join(dir, 'id_ed25519');
    assert.equal((await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'admin@laptop', '-f', key])).code, 0);
    const fingerprint = (await run('ssh-keygen', ['-lf', `${key}.pub`])).out.split(' ')[1] ?? '';
    assert.match(fingerprint, /^SHA256:/);
    assert.notEqual((await sftpLs(key)).code, 0, 'not added yet: refused');

    const { context, page, errors } = await newPage(browser);
    await signIn(page, server);
    await page.goto(`${server.url}/settings`);
    const section = page.getByRole('region', { name: 'SSH keys' });
    await section.getByText('No SSH keys yet').waitFor();
    await section.getByRole('button', { name: 'Add SSH key' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add SSH key' });
    await dialog.getByLabel('Name').fill('laptop');
    await dialog.getByLabel('Public key').fill('ssh-dss AAAAB3NzaC1kc3MAAACBAP not a key');
    await dialog.getByRole('button', { name: 'Add SSH key' }).click();
    await dialog.getByRole('alert').waitFor();
    await dialog.getByLabel('Public key').fill(await readFile(`${key}.pub`, 'utf8'));
    await dialog.getByRole('button', { name: 'Add SSH key' }).click();
    await dialog.waitFor({ state: 'detached' });
    const item = section.getByRole('listitem', { name: 'laptop' });
    await item.getByText(fingerprint, { exact: true }).waitFor();
    await item.getByText('ssh-ed25519').waitFor();
    await screenshotAll(page, 'settings-ssh-keys');

    const signedIn = await sftpLs(key);
    assert.equal(signedIn.code, 0, signedIn.out);

    await item.getByRole('button', { name: 'Remove' }).click();
    await page.getByRole('dialog', { name: 'Remove “laptop”?' }).getByRole('button', { name: 'Remove SSH key' }).click();
    await item.waitFor({ state: 'detached' });
    await section.getByText('No SSH keys yet').waitFor();
    assert.notEqual((await sftpLs(key)).code, 0, 'removed: refused again');
    assert.deepEqual(errors, []);
    await context.close();
  });
});
