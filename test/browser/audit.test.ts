// The Audit log page (issue 33, docs/web-ui.md): an admin opens it from the account menu, sees the
// events the server recorded (who, what, target, outcome, address), filters them by user and by
// family, and pages back to older ones; a user who is not an admin is told it is admins only.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { PHONE, launchBrowser, missingBrowser, newPage, screenshotAll, signIn, startServer, waitForFolder, type ServerProcess } from './browser.js';
import { startAll } from '../helpers/start-all.js';

const skip = missingBrowser();

describe('web UI: the audit log page', { skip }, () => {
  let server: ServerProcess;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let errors: string[];
  const api = (path: string, body: unknown, token?: string) =>
    fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: JSON.stringify(body) });

  before(async () => {
    [server, browser] = await startAll(startServer({ args: ['--dev'] }), launchBrowser());
    const token = ((await (await api('/auth/login', { username: 'admin', password: server.adminPassword })).json()) as { access_token: string }).access_token;
    assert.equal((await api('/api/admin/users', { username: 'dana', password: 'dana-password' }, token)).status, 201);
    // More than a page (50) of failed sign-ins, so older ones are a click away.
    for (let i = 0; i < 55; i++) assert.equal((await api('/auth/login', { username: `mallory${i}`, password: 'guessing-password' })).status, 401);
    ({ context, page, errors } = await newPage(browser));
    await signIn(page, server);
  });
  after(async () => {
    await context?.close();
    await browser?.close();
    await server?.dispose();
  });

  const rows = () => page.locator('.audit-table tbody tr');

  test('an admin opens it from the account menu and sees who did what, filters by family and user, and loads older events', async () => {
    await page.getByRole('button', { name: /^Account:/ }).click();
    await page.getByRole('menuitem', { name: 'Audit log' }).click();
    await page.waitForURL(/\/admin\/audit$/);
    await page.getByRole('heading', { name: 'Audit log' }).waitFor();
    await rows().first().waitFor();
    // Newest first: the admin's own sign-in through the page just now.
    const first = rows().first();
    assert.equal(await first.getAttribute('data-type'), 'login.succeeded');
    assert.match(await first.innerText(), /admin[\s\S]*success[\s\S]*127\.0\.0\.1/);
    assert.equal(await rows().count(), 50);
    await page.getByRole('button', { name: 'Older events' }).click();
    await page.waitForFunction(() => (globalThis as unknown as { document: { querySelectorAll(s: string): { length: number } } }).document.querySelectorAll('.audit-table tbody tr').length > 50);
    assert.ok((await rows().count()) >= 58, 'all events: 55 failures, the user, two sign-ins');
    assert.equal(await page.getByRole('button', { name: 'Older events' }).count(), 0, 'no more pages');

    await page.getByRole('combobox', { name: 'Event type' }).selectOption('user.*');
    await page.waitForFunction(() => (globalThis as unknown as { document: { querySelectorAll(s: string): { length: number } } }).document.querySelectorAll('.audit-table tbody tr').length === 1);
    const made = rows().first();
    assert.equal(await made.getAttribute('data-type'), 'user.created');
    assert.match(await made.innerText(), /admin[\s\S]*dana[\s\S]*success/);

    await page.getByRole('combobox', { name: 'Event type' }).selectOption('login.*');
    await page.getByRole('searchbox', { name: 'User' }).fill('mallory7');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForFunction(() => (globalThis as unknown as { document: { querySelectorAll(s: string): { length: number } } }).document.querySelectorAll('.audit-table tbody tr').length === 1);
    const failed = rows().first();
    assert.equal(await failed.getAttribute('data-type'), 'login.failed');
    assert.match(await failed.innerText(), /mallory7[\s\S]*failure[\s\S]*reason: invalid_credentials/);
    assert.equal((await page.content()).includes('guessing-password'), false, 'no password is ever shown');
    await page.getByRole('searchbox', { name: 'User' }).fill('');
    await page.getByRole('button', { name: 'Apply' }).click();
    await rows().nth(1).waitFor();
    await screenshotAll(page, 'audit-log');
    assert.deepEqual(errors, []);
  });

  test('on a phone the log fits the screen: each event a block, a session id on one line (whole on hover)', async () => {
    // A session ended from the list: its event's target is the session's long id.
    const token = ((await (await api('/auth/login', { username: 'dana', password: 'dana-password' })).json()) as { access_token: string }).access_token;
    await api('/auth/login', { username: 'dana', password: 'dana-password' });
    const sessions = ((await (await fetch(`${server.url}/api/sessions`, { headers: { authorization: `Bearer ${token}` } })).json()) as { sessions: { id: string; current: boolean }[] }).sessions;
    const other = sessions.find((x) => !x.current);
    assert.ok(other);
    assert.equal((await fetch(`${server.url}/api/sessions/${other.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${token}` } })).status, 204);

    const phone = await newPage(browser, { viewport: PHONE });
    try {
      await signIn(phone.page, server);
      await phone.page.goto(`${server.url}/admin/audit`);
      const revoked = phone.page.locator('.audit-table tbody tr[data-type="session.revoked"]');
      await revoked.waitFor();
      assert.equal(await phone.page.evaluate('document.documentElement.scrollWidth'), PHONE.width, 'nothing scrolls sideways');
      const table = await phone.page.locator('.audit-table').boundingBox();
      assert.ok(table && table.x >= 0 && table.x + table.width <= PHONE.width, `the events lie on the screen (${JSON.stringify(table)})`);
      const wrap = await phone.page.locator('.audit-table-wrap').evaluate((el) => (el as unknown as { scrollWidth: number; clientWidth: number }).scrollWidth - (el as unknown as { clientWidth: number }).clientWidth);
      assert.ok(wrap <= 1, `the events need no sideways scrolling (${wrap}px more)`);
      const target = revoked.locator('.audit-target');
      // Lines of its text: a text node that wraps has one client rect per line.
      const lines = await target.evaluate((el) => {
        type Text = { textContent: string | null };
        const doc = (globalThis as unknown as { document: { createTreeWalker(root: unknown, what: number): { nextNode(): Text | null }; createRange(): { selectNodeContents(n: Text): void; getClientRects(): { top: number; width: number }[] } } }).document;
        const tops = new Set<number>();
        const texts = doc.createTreeWalker(el, 4 /* NodeFilter.SHOW_TEXT */);
        for (let n = texts.nextNode(); n; n = texts.nextNode()) {
          const range = doc.createRange();
          range.selectNodeContents(n);
          for (const r of range.getClientRects()) if (r.width > 0) tops.add(Math.round(r.top));
        }
        return tops.size;
      });
      assert.equal(lines, 1, 'the session id is one line, not a character a line');
      assert.equal(await target.locator('[title]').getAttribute('title'), other.id, 'the whole id on hover');
      assert.deepEqual(phone.consoleErrors, []);
      assert.deepEqual(phone.errors, []);
    } finally {
      await phone.context.close();
    }
  });

  test('a user who is not an admin gets "admins only", not the log', async () => {
    const other = await newPage(browser);
    try {
      await other.page.goto(`${server.url}/login`);
      await other.page.getByLabel('Username').fill('dana');
      await other.page.getByLabel('Password', { exact: true }).fill('dana-password');
      await other.page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await other.page.waitForURL(/\/browse\//);
      await waitForFolder(other.page);
      await other.page.getByRole('button', { name: /^Account:/ }).click();
      assert.equal(await other.page.getByRole('menuitem', { name: 'Audit log' }).count(), 0, 'not in the menu');
      await other.page.keyboard.press('Escape');
      await other.page.goto(`${server.url}/admin/audit`);
      await other.page.getByRole('heading', { name: 'Only administrators can read the audit log' }).waitFor();
      assert.equal(await other.page.locator('.audit-table').count(), 0);
    } finally {
      await other.context.close();
    }
  });
});
