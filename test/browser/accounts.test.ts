import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { runCli } from '../helpers/server.js';
import { launchBrowser, missingBrowser, newPage, PHONE, screenshotAll, seed, signIn, startServer, waitForFolder, type ServerProcess } from './browser.js';
import { startAll } from '../helpers/start-all.js';

const skip = missingBrowser();
const run = promisify(execFile);

/** Real curl (Debian's), as a script would use an app password. */
const CURL = '/usr/bin/curl';
function missingCurl(): string | undefined {
  if (existsSync(CURL)) return undefined;
  if (process.env.CI) throw new Error(`curl not found at ${CURL}`);
  return `curl not found at ${CURL} (apt-get install curl)`;
}

/** curl's status code and body for a request; `args` are curl's own options. */
async function curl(args: string[]): Promise<{ status: number; body: string }> {
  const { stdout } = await run(CURL, ['-sS', '-w', '\n%{http_code}', ...args]);
  const i = stdout.lastIndexOf('\n');
  return { status: Number(stdout.slice(i + 1)), body: stdout.slice(0, i) };
}

// RFC 6238 (TOTP over RFC 4226 HOTP), computed here from the secret the page shows, independent of the server's code.
function base32Decode(text: string): Buffer {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = 0;
  let value = 0;
  const out: number[] = [];
  for (const ch of text.replace(/[\s=]/g, '').toUpperCase()) {
    const v = alphabet.indexOf(ch);
    if (v < 0) throw new Error(`not base32: ${ch}`);
    value = ((value << 5) | v) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}

type TotpParams = { key: Buffer; algorithm: string; digits: number; period: number };

function hotp(p: TotpParams, counter: number): string {
  const msg = Buffer.alloc(8);
  msg.writeBigUInt64BE(BigInt(counter));
  const h = createHmac(p.algorithm, p.key).update(msg).digest();
  const offset = (h[h.length - 1] ?? 0) & 0x0f;
  const n = (h.readUInt32BE(offset) & 0x7fffffff) % 10 ** p.digits;
  return String(n).padStart(p.digits, '0');
}

test('the test\'s own TOTP matches RFC 6238 appendix B (SHA-1)', () => {
  const p: TotpParams = { key: Buffer.from('12345678901234567890'), algorithm: 'sha1', digits: 8, period: 30 };
  const cases: [number, string][] = [
    [59, '94287082'],
    [1111111109, '07081804'],
    [1111111111, '14050471'],
    [1234567890, '89005924'],
    [2000000000, '69279037'],
    [20000000000, '65353130'],
  ];
  for (const [t, code] of cases) assert.equal(hotp(p, Math.floor(t / p.period)), code, String(t));
  assert.deepEqual([...base32Decode('GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ')], [...Buffer.from('12345678901234567890')]);
});

/** The otpauth:// URL's parameters (RFC 6238 defaults where absent). */
function totpParams(otpauthUrl: string, shownSecret: string): TotpParams {
  const u = new URL(otpauthUrl);
  assert.equal(u.protocol, 'otpauth:');
  assert.equal(u.host, 'totp');
  const secret = u.searchParams.get('secret') ?? '';
  assert.equal(secret.toUpperCase(), shownSecret.replace(/\s/g, '').toUpperCase(), 'the QR code and the text show the same secret');
  return {
    key: base32Decode(secret),
    algorithm: (u.searchParams.get('algorithm') ?? 'SHA1').toLowerCase().replace('-', ''),
    digits: Number(u.searchParams.get('digits') ?? 6),
    period: Number(u.searchParams.get('period') ?? 30),
  };
}

/**
 * Codes for successive sign-ins: the server accepts a time step once (and
 * none before it), within ±1 step of now, so each call takes the step after
 * the last one used, waiting for the clock when that is more than one ahead.
 */
function codeSource(p: TotpParams) {
  let last = -1;
  const now = () => Math.floor(Date.now() / 1000 / p.period);
  return {
    async next(): Promise<string> {
      const s = Math.max(now(), last + 1);
      while (s > now() + 1) await new Promise((r) => setTimeout(r, 250));
      last = s;
      return hotp(p, s);
    },
    /** A code that is valid for no step near now. */
    wrong(): string {
      const valid = new Set([-1, 0, 1].map((d) => hotp(p, now() + d)));
      for (let i = 0; ; i++) {
        const c = String(i).padStart(p.digits, '0');
        if (!valid.has(c)) return c;
      }
    },
  };
}

async function addUser(server: ServerProcess, name: string, password: string): Promise<void> {
  const r = await runCli(['user', 'add', name, '--password', password, '--data-dir', server.dataDir]);
  assert.equal(r.code, 0, r.stderr);
}

/** Signs in through the form as anyone and waits for their files. */
async function signInAs(page: Page, server: ServerProcess, username: string, password: string): Promise<void> {
  await page.goto(server.url + '/login');
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.waitForURL(/\/browse\//);
  await waitForFolder(page);
}

/** Settings through the account menu in the header. */
async function openSettings(page: Page): Promise<void> {
  await page.getByRole('button', { name: /^Account: / }).click();
  await page.getByRole('menu', { name: 'Account' }).getByRole('menuitem', { name: 'Settings' }).click();
  await page.waitForURL(/\/settings$/);
  await page.getByRole('heading', { name: 'Settings', level: 1 }).waitFor();
}

async function signOut(page: Page): Promise<void> {
  await page.getByRole('button', { name: 'Sign out', exact: true }).click();
  await page.waitForURL(/\/login/);
}

/** Nothing sticks out sideways at this width (the page does not scroll horizontally). */
async function fitsWidth(page: Page): Promise<void> {
  const [scroll, client] = (await page.evaluate('[document.documentElement.scrollWidth, document.documentElement.clientWidth]')) as [number, number];
  assert.ok(scroll <= client, `page is ${scroll}px wide in a ${client}px window`);
}

describe('web UI: Settings (password, app passwords, two-step verification)', { skip }, () => {
  let server: ServerProcess;
  let browser: Browser;
  let tmp: string;

  before(async () => {
    [server, browser] = await startAll(startServer({ args: ['--dev'] }), launchBrowser());
    tmp = await mkdtemp(join(tmpdir(), 'fc-accounts-ui-'));
  });
  after(async () => {
    await browser?.close();
    await server?.dispose();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  test('change password: mistakes shown in place, this session stays, the others end, then sign in with the new one', async () => {
    await addUser(server, 'alice', 'alice-old-password');
    // Another device signed in as alice: its session must end with the change.
    const other = (await (await fetch(`${server.url}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'alice', password: 'alice-old-password' }) })).json()) as { refresh_token: string };
    const { context, page, errors } = await newPage(browser);
    await signInAs(page, server, 'alice', 'alice-old-password');
    await openSettings(page);
    const sessions = page.getByRole('list', { name: 'Sessions' });
    await sessions.getByRole('listitem').first().waitFor();
    assert.equal(await sessions.getByRole('listitem').count(), 2);
    await sessions.getByRole('listitem', { name: /this device/ }).getByText('This device').waitFor();

    const form = page.getByRole('form', { name: 'Change password' });
    const alert = form.getByRole('alert');
    await form.getByLabel('Current password', { exact: true }).fill('alice-old-password');
    await form.getByLabel('New password', { exact: true }).fill('alice-new-password');
    await form.getByLabel('New password again', { exact: true }).fill('alice-new-passwort');
    await form.getByRole('button', { name: 'Change password' }).click();
    await alert.filter({ hasText: 'The two passwords do not match.' }).waitFor();

    await form.getByLabel('Current password', { exact: true }).fill('not-my-password');
    await form.getByLabel('New password again', { exact: true }).fill('alice-new-password');
    await form.getByRole('button', { name: 'Change password' }).click();
    await alert.filter({ hasText: 'Your current password is not right.' }).waitFor();
    assert.doesNotMatch(await alert.innerText(), /[{}]/);

    await form.getByLabel('Current password', { exact: true }).fill('alice-old-password');
    await form.getByRole('button', { name: 'Change password' }).click();
    await form.getByText('Password changed.').waitFor();
    // Said once: beside the button, not again in a toast (both were set in the same update, so a second would show now).
    assert.equal(await page.getByText('Password changed.').count(), 1, 'one "Password changed" on the page');
    assert.equal(await page.locator('.toast').count(), 0, 'no toast repeats it');
    assert.equal(await form.getByLabel('New password', { exact: true }).inputValue(), '', 'the fields are cleared');
    await screenshotAll(page, 'settings');

    // The other device's session ended; the list shows only this one.
    const refresh = await fetch(`${server.url}/auth/refresh`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'alice', refresh_token: other.refresh_token }) });
    assert.equal(refresh.status, 401, 'the other session stopped working');
    await page.getByRole('button', { name: 'Refresh sessions' }).click();
    await page.waitForFunction(() => (globalThis as unknown as { document: { querySelectorAll(s: string): { length: number } } }).document.querySelectorAll('[aria-label="Sessions"] > li').length === 1);

    // This one stays: a reload is still signed in.
    await page.reload();
    await page.getByRole('heading', { name: 'Settings', level: 1 }).waitFor();
    await page.getByRole('list', { name: 'Sessions' }).getByText('This device').waitFor();

    await signOut(page);
    await page.getByLabel('Username').fill('alice');
    await page.getByLabel('Password', { exact: true }).fill('alice-old-password');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.locator('.login-card [role="alert"]').filter({ hasText: 'Wrong username or password' }).waitFor();
    await page.getByLabel('Password', { exact: true }).fill('alice-new-password');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL(/\/browse\/$/);
    assert.deepEqual(errors, []);
    await context.close();
  });

  test('another session is signed out from the list (after asking); the page fits a phone', async () => {
    await addUser(server, 'bea', 'bea-password-1');
    const other = (await (await fetch(`${server.url}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json', 'user-agent': 'curl/8.0.0' }, body: JSON.stringify({ username: 'bea', password: 'bea-password-1' }) })).json()) as { refresh_token: string };
    const { context, page } = await newPage(browser);
    await signInAs(page, server, 'bea', 'bea-password-1');
    await openSettings(page);
    const sessions = page.getByRole('list', { name: 'Sessions' });
    const curlSession = sessions.getByRole('listitem').filter({ hasNotText: 'This device' });
    await curlSession.waitFor();
    assert.match(await curlSession.innerText(), /curl/);
    await curlSession.getByRole('button', { name: 'Sign out' }).click();
    const dialog = page.getByRole('dialog', { name: /^Sign out/ });
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
    await curlSession.getByRole('button', { name: 'Sign out' }).click();
    await dialog.getByRole('button', { name: 'Sign out session' }).click();
    await curlSession.waitFor({ state: 'detached' });
    const refresh = await fetch(`${server.url}/auth/refresh`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'bea', refresh_token: other.refresh_token }) });
    assert.equal(refresh.status, 401, 'the revoked session stopped working');

    await page.setViewportSize({ width: 360, height: 740 });
    await fitsWidth(page);
    await context.close();
  });

  test('an app password: created with a name, shown once with Copy, used by curl over WebDAV and as a Bearer token, read-only refused writes, revoked', async (t) => {
    const noCurl = missingCurl();
    if (noCurl) return t.skip(noCurl);
    await addUser(server, 'carl', 'carl-password-1');
    const { context, page, errors } = await newPage(browser);
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
    await signInAs(page, server, 'carl', 'carl-password-1');
    await openSettings(page);
    const section = page.getByRole('region', { name: 'App passwords' });
    await section.getByText('No app passwords yet').waitFor();

    await section.getByRole('button', { name: 'Create app password' }).click();
    let dialog = page.getByRole('dialog', { name: 'New app password' });
    await dialog.getByRole('button', { name: 'Create app password' }).click();
    await dialog.getByRole('alert').filter({ hasText: 'Give it a name' }).waitFor();
    await dialog.getByLabel('Name').fill('curl on the laptop');
    await dialog.getByRole('button', { name: 'Create app password' }).click();
    dialog = page.getByRole('dialog', { name: 'Your new app password' });
    const input = dialog.getByLabel('App password');
    await input.waitFor();
    const key = await input.inputValue();
    assert.ok(key.length >= 20, `a key: ${key}`);
    await dialog.getByText('Copy it now: you won’t see it again.').waitFor();
    await dialog.getByRole('button', { name: 'Copy' }).click();
    await dialog.getByText('Copied.').waitFor();
    assert.equal(await page.evaluate('navigator.clipboard.readText()'), key);
    await screenshotAll(page, 'settings-app-password');
    await dialog.getByRole('button', { name: 'Done' }).click();
    await dialog.waitFor({ state: 'detached' });

    const item = section.getByRole('listitem', { name: 'curl on the laptop' });
    await item.getByText('Full access').waitFor();
    assert.equal((await item.locator('.key-last-used').innerText()).trim(), 'Never');
    assert.ok(!(await page.content()).includes(key), 'the key is shown once, not in the list');

    // curl: WebDAV Basic with the app password, an upload, and Bearer on the API.
    const file = join(tmp, 'from-curl.txt');
    await writeFile(file, 'uploaded by curl with an app password\n');
    const propfind = await curl(['-u', `carl:${key}`, '-X', 'PROPFIND', '-H', 'Depth: 1', `${server.url}/dav/`]);
    assert.equal(propfind.status, 207, propfind.body);
    const put = await curl(['-u', `carl:${key}`, '-T', file, `${server.url}/dav/carl/from-curl.txt`]);
    assert.ok(put.status === 201 || put.status === 204, `PUT ${put.status} ${put.body}`);
    const me = await curl(['-H', `Authorization: Bearer ${key}`, `${server.url}/api/me`]);
    assert.equal(me.status, 200, me.body);
    assert.equal((JSON.parse(me.body) as { username: string }).username, 'carl');
    const wrong = await curl(['-u', `carl:${key}x`, '-X', 'PROPFIND', '-H', 'Depth: 1', `${server.url}/dav/`]);
    assert.equal(wrong.status, 401);

    // The upload is in carl's files, and the key shows it was used.
    await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'My files' }).click();
    await page.getByRole('button', { name: 'from-curl.txt', exact: true }).waitFor();
    await openSettings(page);
    await section.getByRole('listitem', { name: 'curl on the laptop' }).locator('.key-last-used').filter({ hasNotText: 'Never' }).waitFor();

    // A read-only key reads but cannot write.
    await section.getByRole('button', { name: 'Create app password' }).click();
    dialog = page.getByRole('dialog', { name: 'New app password' });
    await dialog.getByLabel('Name').fill('backup reader');
    await dialog.getByLabel(/^Read-only/).check();
    await dialog.getByLabel('Expires').selectOption('30d');
    await dialog.getByRole('button', { name: 'Create app password' }).click();
    dialog = page.getByRole('dialog', { name: 'Your new app password' });
    const readKey = await dialog.getByLabel('App password').inputValue();
    await dialog.getByText('Read-only: listing and downloads only').waitFor();
    await dialog.getByRole('button', { name: 'Done' }).click();
    const readItem = section.getByRole('listitem', { name: 'backup reader' });
    await readItem.getByText('Read-only').first().waitFor();
    assert.doesNotMatch(await readItem.innerText(), /Expires\s*Never/);
    const get = await curl(['-u', `carl:${readKey}`, `${server.url}/dav/carl/from-curl.txt`]);
    assert.equal(get.status, 200);
    assert.equal(get.body, 'uploaded by curl with an app password\n');
    const denied = await curl(['-u', `carl:${readKey}`, '-T', file, `${server.url}/dav/carl/not-allowed.txt`]);
    assert.equal(denied.status, 403, denied.body);

    // Revoke the first: asked first, then gone from the list, and curl is refused.
    await item.getByRole('button', { name: 'Revoke' }).click();
    const confirm = page.getByRole('dialog', { name: 'Revoke “curl on the laptop”?' });
    await confirm.getByText('Every program using this app password loses access at once.').waitFor();
    await confirm.getByRole('button', { name: 'Revoke app password' }).click();
    await item.waitFor({ state: 'detached' });
    const after = await curl(['-u', `carl:${key}`, '-X', 'PROPFIND', '-H', 'Depth: 1', `${server.url}/dav/`]);
    assert.equal(after.status, 401);
    const bearerAfter = await curl(['-H', `Authorization: Bearer ${key}`, `${server.url}/api/me`]);
    assert.equal(bearerAfter.status, 401);
    assert.deepEqual(errors, []);
    await context.close();
  });

  test('app passwords that cannot be loaded show an error with Try again', async () => {
    await addUser(server, 'dora', 'dora-password-1');
    const { context, page } = await newPage(browser);
    await signInAs(page, server, 'dora', 'dora-password-1');
    await page.route('**/api/keys', (route) => route.abort('connectionrefused'));
    await openSettings(page);
    const section = page.getByRole('region', { name: 'App passwords' });
    const alert = section.getByRole('alert');
    await alert.getByText('Your app passwords could not be loaded').waitFor();
    await alert.getByText('Cannot reach the server').waitFor();
    await page.unroute('**/api/keys');
    await alert.getByRole('button', { name: 'Try again' }).click();
    await section.getByText('No app passwords yet').waitFor();
    await context.close();
  });

  test('two-step verification: set up from the QR code and the secret, recovery codes once, then sign-in asks for a code; turned off with a code', async (t) => {
    await addUser(server, 'tess', 'tess-password-1');
    const { context, page, errors } = await newPage(browser);
    await signInAs(page, server, 'tess', 'tess-password-1');
    await openSettings(page);
    const section = page.getByRole('region', { name: 'Two-step verification' });
    await section.getByText('Off', { exact: true }).waitFor();
    await section.getByRole('button', { name: 'Set up' }).click();
    let dialog = page.getByRole('dialog', { name: 'Set up two-step verification' });
    const secretEl = dialog.locator('.totp-secret');
    await secretEl.waitFor();
    const shown = await secretEl.innerText();
    assert.match(shown, /^[A-Z2-7]{4}( [A-Z2-7]{1,4})+$/, `the secret in groups: ${shown}`);
    const qr = dialog.getByRole('img', { name: 'QR code for your authenticator app' });
    let otpauth = (await qr.getAttribute('data-text')) ?? '';
    if (existsSync('/usr/bin/zbarimg')) {
      // What a phone would scan.
      const png = join(tmp, 'totp-qr.png');
      await qr.screenshot({ path: png });
      otpauth = (await run('/usr/bin/zbarimg', ['--quiet', '--raw', png])).stdout.trim();
    } else if (process.env.CI) throw new Error('zbarimg not found at /usr/bin/zbarimg (apt-get install zbar-tools)');
    else t.diagnostic('QR code not decoded (zbarimg not installed): the page\'s own data-text used');
    assert.match(otpauth, /tess/, 'the account is named in the otpauth URL');
    const codes = codeSource(totpParams(otpauth, shown));
    await screenshotAll(page, 'settings-totp-setup');

    await dialog.getByLabel('Code from your app').fill(codes.wrong());
    await dialog.getByRole('button', { name: 'Turn on' }).click();
    await dialog.getByRole('alert').filter({ hasText: 'That code is not right.' }).waitFor();
    await dialog.getByLabel('Code from your app').fill(await codes.next());
    await dialog.getByRole('button', { name: 'Turn on' }).click();

    dialog = page.getByRole('dialog', { name: 'Save your recovery codes' });
    await dialog.getByText('Save these recovery codes now: you won’t see them again.').waitFor();
    const recovery = (await dialog.getByRole('list', { name: 'Recovery codes' }).getByRole('listitem').allInnerTexts()).map((s) => s.trim());
    assert.ok(recovery.length >= 5, `recovery codes: ${recovery.join(', ')}`);
    assert.equal(new Set(recovery).size, recovery.length);
    const [download] = await Promise.all([page.waitForEvent('download'), dialog.getByRole('link', { name: 'Download' }).click()]);
    assert.equal(download.suggestedFilename(), 'file-cloud-recovery-codes.txt');
    const saved = await readFile((await download.path()) ?? '', 'utf8');
    for (const c of recovery) assert.ok(saved.includes(c), `the download holds ${c}`);
    await screenshotAll(page, 'settings-totp-codes');
    await dialog.getByRole('button', { name: 'I have saved them' }).click();
    await section.getByText('On', { exact: true }).waitFor();

    // Sign in again: the password, then a code.
    await signOut(page);
    await page.getByLabel('Username').fill('tess');
    await page.getByLabel('Password', { exact: true }).fill('tess-password-1');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { name: 'Two-step verification' }).waitFor();
    await screenshotAll(page, 'login-totp');
    assert.equal(await page.evaluate('localStorage.getItem("file-cloud.session")'), null, 'not signed in with the password alone');
    await page.getByLabel('Authentication code').fill(codes.wrong());
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.locator('.login-card [role="alert"]').filter({ hasText: 'That code is not right.' }).waitFor();
    await page.getByLabel('Authentication code').fill(await codes.next());
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.waitForURL(/\/browse\/$/);
    await waitForFolder(page);

    // A recovery code signs in once.
    const stored = (await page.evaluate('localStorage.getItem("file-cloud.session")')) as string;
    assert.ok(!stored.includes('tess-password-1'), 'the password is not kept');
    await signOut(page);
    for (const expectOk of [true, false]) {
      await page.getByLabel('Username').fill('tess');
      await page.getByLabel('Password', { exact: true }).fill('tess-password-1');
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByLabel('Authentication code').fill(recovery[0] ?? '');
      await page.getByRole('button', { name: 'Verify' }).click();
      if (expectOk) {
        await page.waitForURL(/\/browse\/$/);
        await signOut(page);
      } else {
        await page.locator('.login-card [role="alert"]').filter({ hasText: 'That code is not right.' }).waitFor();
        await page.getByRole('button', { name: 'Back' }).click();
      }
    }

    // Turn it off (with a fresh code), then the password alone signs in.
    await page.getByLabel('Username').fill('tess');
    await page.getByLabel('Password', { exact: true }).fill('tess-password-1');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByLabel('Authentication code').fill(recovery[1] ?? '');
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.waitForURL(/\/browse\/$/);
    await openSettings(page);
    await section.getByRole('button', { name: 'Turn off…' }).click();
    const off = page.getByRole('dialog', { name: 'Turn off two-step verification?' });
    await off.getByLabel('Code from your app, or a recovery code').fill(codes.wrong());
    await off.getByRole('button', { name: 'Turn off' }).click();
    await off.getByRole('alert').filter({ hasText: 'That code is not right.' }).waitFor();
    await off.getByLabel('Code from your app, or a recovery code').fill(await codes.next());
    await off.getByRole('button', { name: 'Turn off' }).click();
    await off.waitFor({ state: 'detached' });
    await section.getByText('Off', { exact: true }).waitFor();
    await signOut(page);
    await signInAs(page, server, 'tess', 'tess-password-1');
    assert.deepEqual(errors, []);
    await context.close();
  });
});

describe('web UI: Users (admin)', { skip }, () => {
  let server: ServerProcess;
  let browser: Browser;

  before(async () => {
    [server, browser] = await startAll(startServer({ args: ['--dev'] }), launchBrowser());
  });
  after(async () => {
    await browser?.close();
    await server?.dispose();
  });

  const userItem = (page: Page, name: string) => page.getByRole('list', { name: 'Users' }).getByRole('listitem', { name, exact: true });

  /**
   * Waits until an open page of a user whose session the admin just ended is on the sign-in page: it
   * may find out by itself (the header's usage bar asks the server), or else on its next page.
   */
  async function signedOut(page: Page): Promise<void> {
    // The next page is another one than the current (a link to the page shown loads nothing new).
    const next = new URL(page.url()).pathname.endsWith('/shared') ? 'My files' : 'Shared by me';
    await Promise.any([page.waitForURL(/\/login/), page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: next }).click()]);
    await page.waitForURL(/\/login/);
  }

  /** Opens a user's actions menu and picks an item. */
  async function userAction(page: Page, name: string, action: string): Promise<void> {
    await page.getByRole('button', { name: `Actions for ${name}` }).click();
    await page.getByRole('menu', { name: `Actions for ${name}` }).getByRole('menuitem', { name: action }).click();
  }

  test('admin creates a user, the user signs in, admin disables them and their open session stops working; enable, password, quota, admin rights', async () => {
    const admin = await newPage(browser);
    const page = admin.page;
    await signIn(page, server);
    // The account menu by keyboard: Enter opens it on Settings, End goes to the last item (Audit log), Up past Groups to Users.
    await page.getByRole('button', { name: /^Account: / }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('menuitem', { name: 'Users' }).waitFor();
    await page.keyboard.press('End');
    await page.keyboard.press('ArrowUp');
    await page.keyboard.press('ArrowUp');
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/admin\/users$/);
    await userItem(page, 'admin').getByText('You').waitFor();
    await page.getByText('You are the only user').waitFor();

    // Create: mistakes first, then a real one.
    await page.getByRole('toolbar', { name: 'User actions' }).getByRole('button', { name: 'New user' }).click();
    const create = page.getByRole('dialog', { name: 'New user' });
    await create.getByLabel('Username').fill('admin');
    await create.getByLabel('Password', { exact: true }).fill('erin-password-1');
    await create.getByLabel('Password again', { exact: true }).fill('erin-password-1');
    await create.getByRole('button', { name: 'Create user' }).click();
    await create.getByRole('alert').filter({ hasText: 'A user named “admin” already exists.' }).waitFor();
    await create.getByLabel('Username').fill('erin');
    await create.getByLabel('Quota (optional)').fill('lots');
    await create.getByRole('button', { name: 'Create user' }).click();
    await create.getByRole('alert').filter({ hasText: '“lots” is not a size.' }).waitFor();
    await create.getByLabel('Quota (optional)').fill('');
    await create.getByRole('button', { name: 'Create user' }).click();
    await create.waitFor({ state: 'detached' });
    await userItem(page, 'erin').getByText('· no quota').waitFor();
    await page.getByText('You are the only user').waitFor({ state: 'detached' });

    // erin signs in, in another browser.
    const user = await newPage(browser);
    await signInAs(user.page, server, 'erin', 'erin-password-1');
    await user.page.getByRole('button', { name: 'Account: erin' }).click();
    assert.equal(await user.page.getByRole('menuitem', { name: 'Users' }).count(), 0, 'no Users page for a non-admin');
    await user.page.keyboard.press('Escape');
    await user.page.goto(server.url + '/admin/users');
    await user.page.getByRole('heading', { name: 'Only administrators can manage users' }).waitFor();

    // Disable (asked first): erin's open session ends at once.
    await user.page.goto(server.url + '/browse/');
    await waitForFolder(user.page);
    await userAction(page, 'erin', 'Disable…');
    const disable = page.getByRole('dialog', { name: 'Disable “erin”?' });
    await disable.getByText(/signed out at once/).waitFor();
    await disable.getByRole('button', { name: 'Disable user' }).click();
    await disable.waitFor({ state: 'detached' });
    await userItem(page, 'erin').getByText('Disabled').waitFor();
    await screenshotAll(page, 'users');

    await signedOut(user.page);
    await user.page.getByText('Your session has ended. Sign in again.').waitFor();
    await user.page.getByLabel('Password', { exact: true }).fill('erin-password-1');
    await user.page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await user.page.locator('.login-card [role="alert"]').filter({ hasText: /\S/ }).waitFor();
    assert.match(user.page.url(), /\/login/);
    assert.equal(await user.page.evaluate('localStorage.getItem("file-cloud.session")'), null, 'a disabled user cannot sign in');

    // Enable: erin signs in again.
    await userAction(page, 'erin', 'Enable');
    await userItem(page, 'erin').getByText('Disabled').waitFor({ state: 'detached' });
    await signInAs(user.page, server, 'erin', 'erin-password-1');

    // Reset the password: erin is signed out, the new one works.
    await userAction(page, 'erin', 'Reset password…');
    const reset = page.getByRole('dialog', { name: 'Reset the password of “erin”' });
    await reset.getByRole('button', { name: 'Generate a password' }).click();
    const generated = (await reset.locator('.generated-password').innerText()).trim();
    assert.equal(generated.length, 16);
    await reset.getByRole('button', { name: 'Set password' }).click();
    await reset.waitFor({ state: 'detached' });
    await signedOut(user.page);
    await signInAs(user.page, server, 'erin', generated);

    // Quota: 1.5 GB, then none again.
    await userAction(page, 'erin', 'Set quota…');
    let quota = page.getByRole('dialog', { name: 'Quota of “erin”' });
    assert.equal(await quota.getByLabel('Quota').inputValue(), '');
    await quota.getByLabel('Quota').fill('1.5 gb');
    await quota.getByText('1.5 GB', { exact: true }).waitFor();
    await quota.getByRole('button', { name: 'Set quota' }).click();
    await userItem(page, 'erin').getByText('of 1.5 GB').waitFor();
    await userAction(page, 'erin', 'Set quota…');
    quota = page.getByRole('dialog', { name: 'Quota of “erin”' });
    assert.equal(await quota.getByLabel('Quota').inputValue(), '1536M');
    await quota.getByLabel('Quota').fill('');
    await quota.getByText('No quota: as much as the server has room for.').waitFor();
    await quota.getByRole('button', { name: 'Set quota' }).click();
    await userItem(page, 'erin').getByText('· no quota').waitFor();

    // Admin rights: given, then the last-admin rule when taking them from the only other admin, refused with a readable error.
    await userAction(page, 'erin', 'Make admin');
    await userItem(page, 'erin').getByText('Admin', { exact: true }).waitFor();
    await page.getByRole('button', { name: 'Actions for erin' }).click();
    assert.equal(await page.getByRole('menuitem', { name: 'Disable…' }).getAttribute('aria-disabled'), 'true', 'an admin cannot be disabled');
    await page.keyboard.press('Escape');
    await userAction(page, 'erin', 'Remove admin rights');
    await userItem(page, 'erin').getByText('Admin', { exact: true }).waitFor({ state: 'detached' });
    await userAction(page, 'admin', 'Remove admin rights');
    const toast = page.locator('.toast-error');
    await toast.waitFor();
    assert.doesNotMatch(await toast.innerText(), /[{}]/);
    await page.getByRole('toolbar', { name: 'User actions' }).getByRole('button', { name: 'Refresh' }).click();
    await userItem(page, 'admin').getByText('Admin', { exact: true }).waitFor();
    // Yourself: neither disabled nor removed from here.
    await page.getByRole('button', { name: 'Actions for admin' }).click();
    assert.equal(await page.getByRole('menuitem', { name: 'Remove…' }).getAttribute('aria-disabled'), 'true');
    await page.keyboard.press('Escape');

    await page.setViewportSize({ width: 360, height: 740 });
    await fitsWidth(page);
    await page.setViewportSize(PHONE);
    await admin.context.close();
    await user.context.close();
    assert.deepEqual([...admin.errors, ...user.errors], []);
  });

  test('remove a user keeping their files, and another with their files; the dialog says which', async () => {
    await addUser(server, 'keeper', 'keeper-password-1');
    await addUser(server, 'goner', 'goner-password-1');
    await seed(server, { 'notes.txt': 'kept' }, 'keeper');
    await seed(server, { 'notes.txt': 'gone' }, 'goner');
    const { context, page, errors } = await newPage(browser);
    await signIn(page, server);
    await page.goto(server.url + '/admin/users');

    await userAction(page, 'keeper', 'Remove…');
    let dialog = page.getByRole('dialog', { name: 'Remove “keeper”?' });
    await dialog.getByText(/Their files stay in the server's storage/).waitFor();
    await dialog.getByRole('button', { name: 'Remove user, keep files' }).click();
    await userItem(page, 'keeper').waitFor({ state: 'detached' });
    assert.equal(await readFile(join(server.dataDir, 'storage', 'keeper', 'notes.txt'), 'utf8'), 'kept');

    await userAction(page, 'goner', 'Remove…');
    dialog = page.getByRole('dialog', { name: 'Remove “goner”?' });
    await dialog.getByLabel('Delete them too').check();
    await dialog.getByText(/all their files are deleted\. This cannot be undone\./).waitFor();
    await screenshotAll(page, 'users-remove');
    await dialog.getByRole('button', { name: 'Remove user and delete files' }).click();
    await userItem(page, 'goner').waitFor({ state: 'detached' });
    assert.equal(existsSync(join(server.dataDir, 'storage', 'goner', 'notes.txt')), false, 'the files are gone');

    const login = await fetch(`${server.url}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'goner', password: 'goner-password-1' }) });
    assert.equal(login.status, 401);
    assert.deepEqual(errors, []);
    await context.close();
  });

  test('a network failure on the Users page shows an error with Try again', async () => {
    const { context, page } = await newPage(browser);
    await signIn(page, server);
    await page.route('**/api/admin/users', (route) => route.abort('connectionrefused'));
    await page.goto(server.url + '/admin/users');
    await page.getByRole('heading', { name: 'The users could not be loaded' }).waitFor();
    await page.getByText('Cannot reach the server').waitFor();
    await page.unroute('**/api/admin/users');
    await page.getByRole('button', { name: 'Try again' }).click();
    await userItem(page, 'admin').waitFor();
    await context.close();
  });
});
