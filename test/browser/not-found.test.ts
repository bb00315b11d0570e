// The web UI's not-found view (CONTRACT "Web UI"): a page path the app does not have comes with
// status 404 and shows "Page not found" with the way back, signed in or not, instead of silently
// redirecting somewhere else.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { launchBrowser, missingBrowser, newPage, screenshotAll, signIn, startServer, type ServerProcess } from './browser.js';
import { startAll } from '../helpers/start-all.js';

const skip = missingBrowser();

describe('web UI: unknown page paths', { skip }, () => {
  let server: ServerProcess;
  let browser: Browser;
  before(async () => {
    [server, browser] = await startAll(startServer({ args: ['--dev'] }), launchBrowser());
  });
  after(async () => {
    await browser?.close();
    await server?.dispose();
  });

  test('an unknown path answers 404 and shows the not-found view with a link to sign in, then to My files', async () => {
    const { context, page, errors } = await newPage(browser);
    const res = await page.goto(`${server.url}/no/such/page`);
    assert.equal(res?.status(), 404);
    await page.getByRole('heading', { name: 'Page not found' }).waitFor();
    assert.match(page.url(), /\/no\/such\/page$/, 'no redirect away from what was asked for');
    await page.getByRole('link', { name: 'Go to sign-in' }).click();
    await page.waitForURL(/\/login$/);
    await signIn(page, server);
    await page.goto(`${server.url}/settingsx`);
    await page.getByRole('heading', { name: 'Page not found' }).waitFor();
    await screenshotAll(page, 'not-found');
    await page.getByRole('link', { name: 'Go to My files' }).click();
    await page.waitForURL(/\/browse\/$/);
    assert.deepEqual(errors.filter((e) => !/404/.test(e)), []);
    await context.close();
  });
});
