import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { launchBrowser, missingBrowser, newPage, screenshotAll, seed, signIn, startServer, type ServerProcess } from './browser.js';

const skip = missingBrowser();

describe('web UI: signing in and out', { skip }, () => {
  let server: ServerProcess;
  let browser: Browser;

  before(async () => {
    [server, browser] = await Promise.all([startServer({ args: ['--dev'] }), launchBrowser()]);
    await seed(server, { 'Documents/notes.txt': 'hello', 'Photos/': '', 'report.pdf': '%PDF-1.4\n' });
  });
  after(async () => {
    await browser?.close();
    await server?.dispose();
  });

  test('a wrong password shows a readable message, not JSON', async () => {
    const { context, page, errors } = await newPage(browser);
    await page.goto(server.url + '/');
    await page.waitForURL(/\/login/);
    await screenshotAll(page, 'login');
    await page.getByLabel('Username').fill('admin');
    await page.getByLabel('Password', { exact: true }).fill('not-the-password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    const alert = page.locator('.login-card [role="alert"]');
    await alert.filter({ hasText: 'Wrong username or password' }).waitFor();
    assert.doesNotMatch(await alert.innerText(), /[{}]|invalid_credentials/);
    assert.equal(await page.evaluate('localStorage.length'), 0, 'nothing is stored after a failed sign-in');
    await screenshotAll(page, 'login-error');
    assert.deepEqual(errors, []);
    await context.close();
  });

  test('an unreachable server is reported as such', async () => {
    const { context, page } = await newPage(browser);
    await page.goto(server.url + '/login');
    await page.route('**/auth/login', (route) => route.abort('connectionrefused'));
    await page.getByLabel('Username').fill('admin');
    await page.getByLabel('Password', { exact: true }).fill(server.adminPassword);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('.login-card [role="alert"]').filter({ hasText: 'Cannot reach the server' }).waitFor();
    await context.close();
  });

  test('sign in keeps only the refresh token; sign out revokes the session', async () => {
    const { context, page, errors } = await newPage(browser);
    await signIn(page, server);
    assert.match(page.url(), /\/browse\/$/);
    await page.getByRole('link', { name: 'Documents' }).waitFor();

    const stored = (await page.evaluate('JSON.stringify(Object.assign({}, localStorage))')) as string;
    const values = JSON.parse(stored) as Record<string, string>;
    assert.deepEqual(Object.keys(values), ['file-cloud.session']);
    const session = JSON.parse(values['file-cloud.session'] ?? '{}') as Record<string, string>;
    assert.deepEqual(Object.keys(session).sort(), ['refresh_token', 'username']);
    assert.ok(!stored.includes(server.adminPassword), 'the password is never stored');
    assert.ok(!stored.includes('fca_'), 'the access token is not stored');

    // Reload: still signed in, without the password.
    await page.reload();
    await page.getByRole('link', { name: 'Documents' }).waitFor();

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/login/);
    assert.equal(await page.evaluate('localStorage.getItem("file-cloud.session")'), null);
    const refresh = await fetch(`${server.url}/auth/refresh`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'admin', refresh_token: session.refresh_token }),
    });
    assert.equal(refresh.status, 401, 'the refresh token no longer works after sign out');

    // A deep link while signed out goes to the login page and back after signing in.
    await page.goto(server.url + '/browse/Documents/');
    await page.waitForURL(/\/login\?next=/);
    await page.getByLabel('Username').fill('admin');
    await page.getByLabel('Password', { exact: true }).fill(server.adminPassword);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/browse\/Documents\/$/);
    await page.getByRole('button', { name: 'notes.txt' }).waitFor();
    assert.deepEqual(errors, []);
    await context.close();
  });
});

describe('web UI: login throttle', { skip }, () => {
  let server: ServerProcess;
  let browser: Browser;
  before(async () => {
    [server, browser] = await Promise.all([startServer({ args: ['--login-rate-limit', '2'] }), launchBrowser()]);
  });
  after(async () => {
    await browser?.close();
    await server?.dispose();
  });

  test('a throttled sign-in says how long to wait and disables the button', async () => {
    const { context, page } = await newPage(browser);
    await page.goto(server.url + '/login');
    const alert = page.locator('.login-card [role="alert"]');
    for (let i = 0; i < 3; i++) {
      await page.getByLabel('Username').fill('admin');
      await page.getByLabel('Password', { exact: true }).fill('wrong-password');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await alert.filter({ hasText: /Wrong username|Too many/ }).waitFor();
      if ((await alert.innerText()).includes('Too many')) break;
    }
    await alert.filter({ hasText: /Too many sign-in attempts\. Try again in \d+ (seconds?|minutes?)\./ }).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Sign in' }).isDisabled(), true);
    await context.close();
  });
});

describe('web UI: token refresh', { skip }, () => {
  let server: ServerProcess;
  let browser: Browser;
  before(async () => {
    [server, browser] = await Promise.all([startServer({ args: ['--dev', '--access-token-ttl', '5'] }), launchBrowser()]);
    await seed(server, { 'Inbox/today.txt': 'fresh', 'Inbox/Later/': '' });
  });
  after(async () => {
    await browser?.close();
    await server?.dispose();
  });

  test('after 8 s idle with 5 s access tokens the app still works without signing in again', async () => {
    const { context, page, errors } = await newPage(browser);
    await signIn(page, server);
    const refreshes: number[] = [];
    const refused: string[] = [];
    page.on('response', (r) => {
      if (r.url().endsWith('/auth/refresh')) refreshes.push(r.status());
      else if (r.status() === 401) refused.push(r.url());
    });
    await page.waitForTimeout(8000);
    await page.getByRole('link', { name: 'Inbox' }).click();
    await page.getByRole('button', { name: 'today.txt' }).waitFor();
    await page.getByRole('link', { name: 'Later' }).waitFor();
    assert.match(page.url(), /\/browse\/Inbox\/$/);
    assert.ok(refreshes.length >= 1, 'the access token was refreshed');
    assert.ok(refreshes.every((s) => s === 200), `refreshes succeeded: ${refreshes.join(',')}`);
    assert.deepEqual(refused, [], 'refreshed ahead of expiry: no request was refused');

    // A reload starts with no access token in memory: the refresh token gets one.
    await page.reload();
    await page.getByRole('button', { name: 'today.txt' }).waitFor();
    assert.deepEqual(errors, []);
    await context.close();
  });
});
