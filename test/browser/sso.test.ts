import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { startIdp, type TestIdp } from '../helpers/oidc-idp.js';
import { launchBrowser, missingBrowser, newPage, screenshot, seed, signIn, startServer, waitForFolder, type ServerProcess } from './browser.js';

const skip = missingBrowser();

/** At the test provider's own sign-in form: a person types their login and secret there. */
async function atProvider(page: Page, idp: TestIdp, login: string): Promise<void> {
  await page.waitForURL((u) => u.href.startsWith(idp.issuer));
  await page.getByLabel('Login').fill(login);
  await page.getByLabel('Secret').fill(`${login}-secret`);
  await page.getByRole('button', { name: 'Continue' }).click();
}

describe('web UI: single sign-on with a real provider', { skip }, () => {
  let idp: TestIdp;
  let server: ServerProcess;
  let only: ServerProcess;
  let browser: Browser;

  before(async () => {
    idp = await startIdp();
    for (const login of ['sam', 'tess']) idp.accounts.set(login, { login, sub: `sub-${login}`, password: `${login}-secret`, claims: { preferred_username: login } });
    const oidc = ['--oidc-issuer', idp.issuer, '--oidc-client-id', idp.clientId, '--oidc-button-label', 'Test IdP'];
    const env = { FILE_CLOUD_OIDC_CLIENT_SECRET: idp.clientSecret };
    [server, only, browser] = await Promise.all([
      startServer({ args: ['--dev', ...oidc], env }),
      startServer({ args: ['--dev', ...oidc, '--oidc-only'], env }),
      launchBrowser(),
    ]);
  });
  after(async () => {
    await browser?.close();
    await Promise.all([server?.dispose(), only?.dispose()]);
    await idp?.stop();
  });

  test('click the button, sign in at the provider, land in the file list; sign out also signs out at the provider', async () => {
    const { context, page, errors } = await newPage(browser);
    await page.goto(`${server.url}/`);
    await page.waitForURL(/\/login/);
    await screenshot(page, 'sso-login');
    await page.getByRole('button', { name: 'Sign in with Test IdP' }).click();
    await atProvider(page, idp, 'sam');
    await page.waitForURL(/\/browse\/$/);
    await waitForFolder(page);
    await page.getByRole('heading', { name: 'This folder is empty' }).waitFor();
    assert.doesNotMatch(page.url(), /sso=/, 'the one-time code is gone from the address bar');
    const stored = JSON.parse((await page.evaluate('localStorage.getItem("file-cloud.session")')) as string) as { username: string; sso?: boolean };
    assert.equal(stored.username, 'sam');
    assert.equal(stored.sso, true);
    await screenshot(page, 'sso-signed-in');

    await page.getByRole('button', { name: 'Sign out' }).click();
    // RP-initiated logout: the provider asks, then sends the browser back to the sign-in page.
    await page.waitForURL((u) => u.href.startsWith(idp.issuer));
    await page.getByRole('button', { name: /Yes, sign me out/ }).click();
    await page.waitForURL((u) => u.href.startsWith(server.url) && u.pathname.endsWith('/login'));
    await page.getByRole('button', { name: 'Sign in with Test IdP' }).waitFor();
    assert.equal(await page.evaluate('localStorage.getItem("file-cloud.session")'), null);
    assert.deepEqual(errors, []);
    await context.close();
  });

  test('the admin Users page shows who signs in through the provider', async () => {
    const { context, page } = await newPage(browser);
    await signIn(page, server);
    await page.goto(`${server.url}/admin/users`);
    const sam = page.locator('[data-user="sam"]');
    await sam.getByText('SSO', { exact: true }).waitFor();
    assert.equal(await page.locator('[data-user="admin"]').getByText('SSO', { exact: true }).count(), 0);
    await screenshot(page, 'sso-users');
    await context.close();
  });

  test('/basic/ has the link too, and it ends signed in to /basic/', async () => {
    const { context, page } = await newPage(browser);
    await seed(server, { 'notes.txt': 'hello' }, 'admin');
    await page.goto(`${server.url}/basic/`);
    await page.getByRole('link', { name: 'Sign in with Test IdP' }).click();
    await atProvider(page, idp, 'tess');
    await page.waitForURL((u) => u.pathname === '/basic/');
    await page.getByText('Signed in as').waitFor();
    assert.match(await page.locator('header').innerText(), /tess/);
    await context.close();
  });

  test('--oidc-only: the sign-in page goes to the provider by itself; ?local shows the password form', async () => {
    const { context, page } = await newPage(browser);
    await page.goto(`${only.url}/`);
    await atProvider(page, idp, 'sam');
    await page.waitForURL((u) => u.href.startsWith(only.url) && u.pathname === '/browse/');
    await waitForFolder(page);
    await context.close();

    const second = await newPage(browser);
    await second.page.goto(`${only.url}/login?local`);
    await second.page.getByLabel('Username').waitFor();
    assert.ok(second.page.url().startsWith(only.url));
    await second.context.close();
  });
});
