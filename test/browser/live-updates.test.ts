import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { bearer, login } from '../helpers/client.js';
import { startNetworkSwitch, type NetworkSwitch } from '../helpers/cutting-proxy.js';
import { launchBrowser, missingBrowser, newPage, row, seed, signIn, startServer, type ServerProcess } from './browser.js';
import { startAll } from '../helpers/start-all.js';

const skip = missingBrowser();

/**
 * The open folder follows changes made elsewhere (issue 31): another tab's
 * upload, a WebDAV rename, a deletion — and after the network comes back,
 * what happened meanwhile. The page talks to the server through a switch
 * that can drop every connection, as a lost network does.
 */
describe('web UI: live updates of the open folder', { skip }, () => {
  let server: ServerProcess;
  let net: NetworkSwitch;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let token: string;
  /** How long a change may take to show: the stream's wake-up (≤ 1 s) plus a reload. */
  const SHOWN_MS = 5000;

  before(async () => {
    [server, browser] = await startAll(startServer({ args: ['--dev'] }), launchBrowser());
    await seed(server, { 'Live/first.txt': 'one', 'Elsewhere/': '' });
    net = await startNetworkSwitch(server.url);
    token = (await login(server.url, 'admin', server.adminPassword)).access_token;
    ({ context, page } = await newPage(browser));
    await signIn(page, { ...server, url: net.url }, '/browse/Live/');
    await row(page, 'first.txt').waitFor();
  });
  after(async () => {
    await context?.close();
    await browser?.close();
    await net?.close();
    await server?.dispose();
  });

  const put = async (path: string, body: string) => {
    const res = await fetch(`${server.url}/storage/admin/${path}`, { method: 'PUT', headers: { ...bearer(token), 'content-type': 'application/octet-stream' }, body });
    assert.equal(res.status, 201);
  };

  test('an upload, a WebDAV rename and a deletion made elsewhere show up without a reload', async () => {
    await put('Live/from-another-tab.txt', 'hello');
    await row(page, 'from-another-tab.txt').waitFor({ timeout: SHOWN_MS });
    const moved = await fetch(`${server.url}/dav/admin/Live/from-another-tab.txt`, { method: 'MOVE', headers: { ...bearer(token), destination: `${server.url}/dav/admin/Live/renamed.txt` } });
    assert.equal(moved.status, 201);
    await row(page, 'renamed.txt').waitFor({ timeout: SHOWN_MS });
    await row(page, 'from-another-tab.txt').waitFor({ state: 'detached', timeout: SHOWN_MS });
    assert.equal((await fetch(`${server.url}/storage/admin/Live/first.txt`, { method: 'DELETE', headers: bearer(token) })).status, 204);
    await row(page, 'first.txt').waitFor({ state: 'detached', timeout: SHOWN_MS });
    // A change in another folder does not touch this one.
    await put('Elsewhere/not-here.txt', 'x');
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(await row(page, 'not-here.txt').count(), 0);
  });

  test('after a network loss the page says the server is out of reach, then catches up with what happened meanwhile', async () => {
    const notice = page.getByRole('status').filter({ hasText: 'Cannot reach the server' });
    assert.equal(await notice.count(), 0, 'no notice while the server answers');
    net.offline();
    await put('Live/while-offline.txt', 'missed?');
    // The stream drops; the first try to connect again (after 0.5 to 1 s) fails, and the idle page says so.
    await notice.waitFor({ timeout: SHOWN_MS });
    assert.equal(await row(page, 'while-offline.txt').count(), 0, 'nothing can arrive while offline');
    net.online();
    // Reconnects back off up to 10 s while the network is gone; then Last-Event-ID brings the change.
    await row(page, 'while-offline.txt').waitFor({ timeout: 15_000 });
    await notice.waitFor({ state: 'detached' });
  });
});
