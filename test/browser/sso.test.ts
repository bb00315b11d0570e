import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { startIdp, type TestIdp } from '../helpers/oidc-idp.js';
import { launchBrowser, missingBrowser, newPage, screenshot, seed, signIn, startServer, waitForFolder, type ServerProcess } from './browser.js';
import { noEnglish } from './english-on.js';

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

/**
 * The single sign-on pages walked in a German browser (docs/web-ui.md "Languages"), as languages.test.ts
 * walks the rest: the sign-in page with the provider's button, the way back signed in and out, the page
 * of a failed sign-in (with the server's precise sentence in German) and its way back, /basic/'s link,
 * and a provider that is down. None shows English of ours; the provider's own pages are not ours.
 */
describe('web UI: single sign-on in German', { skip }, () => {
  let idp: TestIdp;
  let downIdp: TestIdp;
  let server: ServerProcess;
  let down: ServerProcess;
  let browser: Browser;

  before(async () => {
    [idp, downIdp] = await Promise.all([startIdp(), startIdp({ down: true })]);
    idp.accounts.set('sam', { login: 'sam', sub: 'sub-sam', password: 'sam-secret', claims: { preferred_username: 'sam' } });
    // Someone at the provider whose username is a local password account's: the server refuses to join them.
    idp.accounts.set('imposter', { login: 'imposter', sub: 'sub-imposter', password: 'imposter-secret', claims: { preferred_username: 'admin' } });
    const oidc = (p: TestIdp) => ['--oidc-issuer', p.issuer, '--oidc-client-id', p.clientId, '--oidc-button-label', 'Test IdP'];
    [server, down, browser] = await Promise.all([
      startServer({ args: ['--dev', ...oidc(idp)], env: { FILE_CLOUD_OIDC_CLIENT_SECRET: idp.clientSecret } }),
      startServer({ args: ['--dev', ...oidc(downIdp)], env: { FILE_CLOUD_OIDC_CLIENT_SECRET: downIdp.clientSecret } }),
      launchBrowser(),
    ]);
  });
  after(async () => {
    await browser?.close();
    await Promise.all([server?.dispose(), down?.dispose()]);
    await Promise.all([idp?.stop(), downIdp?.stop()]);
  });

  test('sign in and out through the provider, a refused sign-in and its way back, /basic/\'s link: all German', async () => {
    const { context, page, errors, consoleErrors } = await newPage(browser, { locale: 'de-DE' });
    try {
      await page.goto(`${server.url}/`);
      await page.waitForURL(/\/login/);
      await page.getByRole('button', { name: 'Mit Test IdP anmelden' }).waitFor();
      assert.equal(await page.evaluate('document.documentElement.lang'), 'de');
      await noEnglish(page, 'the sign-in page');
      await page.getByRole('button', { name: 'Mit Test IdP anmelden' }).click();
      await atProvider(page, idp, 'sam');
      await page.waitForURL(/\/browse\/$/);
      await page.getByRole('heading', { name: 'Dieser Ordner ist leer' }).waitFor();
      await noEnglish(page, 'the file list after single sign-on');
      await page.getByRole('button', { name: 'Abmelden' }).click();
      await page.waitForURL((u) => u.href.startsWith(idp.issuer));
      await page.getByRole('button', { name: /Yes, sign me out/ }).click();
      await page.getByRole('button', { name: 'Mit Test IdP anmelden' }).waitFor();
      await noEnglish(page, 'the sign-in page after signing out');

      await page.getByRole('button', { name: 'Mit Test IdP anmelden' }).click();
      await atProvider(page, idp, 'imposter');
      await page.getByRole('heading', { name: 'Anmeldung fehlgeschlagen', level: 1 }).waitFor();
      assert.equal(await page.evaluate('document.documentElement.lang'), 'de');
      assert.equal(
        await page.getByRole('alert').innerText(),
        'Ein Konto namens „admin“ gibt es schon, und es meldet sich mit einem Passwort an; es wird nicht über den Namen mit Single Sign-on verbunden. Bitte die Administration, es zu erlauben (file-cloud user sso admin on).',
      );
      await noEnglish(page, 'the page of a refused sign-in');
      await screenshot(page, 'sso-failed-de');
      await page.getByRole('link', { name: 'Zurück zur Anmeldung' }).click();
      await page.waitForURL((u) => u.pathname.endsWith('/login') && u.searchParams.has('sso_failed'));
      await page.getByLabel('Benutzername').waitFor();
      await noEnglish(page, 'the sign-in page after a refused sign-in');

      await page.goto(`${server.url}/basic/login`);
      await page.getByRole('link', { name: 'Mit Test IdP anmelden' }).waitFor();
      await noEnglish(page, '/basic/login');

      assert.deepEqual(errors, []);
      // Of our server's answers, the refused sign-in's page is the one that failed (403): no icon request
      // of that page's fails. The provider's own pages (their icon, their web font) are not ours.
      const ours = consoleErrors.filter((e) => e.includes(server.url));
      assert.equal(ours.length, 1, ours.join('\n'));
      assert.match(ours[0] ?? '', /status of 403 .*\/auth\/oidc\/callback/);
    } finally {
      await context.close();
    }
  });

  test('a provider that is down: why, on the sign-in page and on the page of a sign-in tried anyway, in German', async () => {
    const { context, page, errors } = await newPage(browser, { locale: 'de-DE' });
    try {
      await page.goto(`${down.url}/login`);
      const hint = page.getByText(/^Single Sign-on ist gerade nicht verfügbar: /);
      await hint.waitFor();
      assert.match(await hint.innerText(), new RegExp(`^Single Sign-on ist gerade nicht verfügbar: (noch nicht erreicht|der Anbieter unter ${downIdp.issuer.replace(/[.]/g, '\\.')} kann nicht genutzt werden: .+)$`));
      await noEnglish(page, 'the sign-in page with the provider down');
      await page.goto(`${down.url}/auth/oidc/login`);
      await page.getByRole('heading', { name: 'Anmeldung fehlgeschlagen', level: 1 }).waitFor();
      assert.match(await page.getByRole('alert').innerText(), /^Single Sign-on ist nicht verfügbar: .+\. Melde dich mit einem Passwort an oder versuch es später noch einmal\.$/);
      await noEnglish(page, 'the page of a sign-in while the provider is down');
      assert.deepEqual(errors, []);
    } finally {
      await context.close();
    }
  });
});
