import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchBrowser, missingBrowser, newPage, row, seed, signIn, startServer, type ServerProcess } from './browser.js';
import { startAll } from '../helpers/start-all.js';

const skip = missingBrowser();

/**
 * With --changes off (docs/sync.md "Without the feed") the file manager asks for the stream once,
 * gets 404 changes_disabled, and stops: no retry loop, nothing more in the console, the folder
 * still works.
 */
describe('web UI: a server with --changes off', { skip }, () => {
  let server: ServerProcess;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let consoleErrors: string[];
  const streamRequests: string[] = [];

  before(async () => {
    [server, browser] = await startAll(startServer({ args: ['--dev', '--changes', 'off'] }), launchBrowser());
    await seed(server, { 'Quiet/first.txt': 'one' });
    ({ context, page, consoleErrors } = await newPage(browser));
    page.on('request', (r) => {
      if (r.url().includes('/api/changes/stream')) streamRequests.push(r.url());
    });
    await signIn(page, server, '/browse/Quiet/');
    await row(page, 'first.txt').waitFor();
  });
  after(async () => {
    await context?.close();
    await browser?.close();
    await server?.dispose();
  });

  test('the stream is asked for once, refused with changes_disabled, and never again', async () => {
    // The stream starts 2 s after the page shows; a retrying client would ask again after 0.5, 1, 2 and 5 s.
    await new Promise((r) => setTimeout(r, 2000 + 9000));
    assert.equal(streamRequests.length, 1, `stream requests: ${streamRequests.join(', ')}`);
    // The one refused request is the browser's own "Failed to load resource" line, and only that.
    assert.ok(consoleErrors.length <= 1, consoleErrors.join('\n'));
    for (const e of consoleErrors) assert.match(e, /404/);
    await row(page, 'first.txt').waitFor();
  });
});
