import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, missingBrowser, newPage, row, seed, startServer, waitForFolder, type ServerProcess } from './browser.js';
import { startAll } from '../helpers/start-all.js';
import { CATALOGS } from '../../src/lib/i18n/catalogs.js';

const skip = missingBrowser();

/**
 * The UI in the browser's language (docs/web-ui.md "Languages"): a German Chromium (navigator.languages
 * and Accept-Language de-DE) gets the file browser, the upload panel, plurals, dates and sizes in German,
 * the Settings switch changes the page at once, and /basic/ and share pages follow.
 */

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const asWord = (s: string) => new RegExp(`(^|[^\\p{L}])${escape(s)}($|[^\\p{L}])`, 'u');
const GERMAN = Object.values(CATALOGS.de);

/**
 * The English catalog's texts that German says otherwise: none of them may be seen on a German page.
 * A text German uses itself ("Upload", "Download" in "Download-Link") is no sign of English.
 */
const ENGLISH_ONLY = Object.entries(CATALOGS.en)
  .filter(([key, en]) => !en.includes('{') && CATALOGS.de[key as keyof typeof CATALOGS.de] !== en && !key.startsWith('share.js.'))
  .map(([, en]) => en)
  .filter((en) => !GERMAN.some((de) => asWord(en).test(de)));

/** The English catalog values among the page's visible text and its labels (aria-label, title, placeholder). */
async function englishOn(page: Page): Promise<string[]> {
  const text = await page.evaluate(`[document.body.innerText, ...[...document.querySelectorAll('[aria-label],[title],[placeholder]')].flatMap((e) => [e.getAttribute('aria-label'), e.getAttribute('title'), e.getAttribute('placeholder')])].filter(Boolean).join('\\n')`) as string;
  const lines = text.split('\n').map((l) => l.trim());
  return ENGLISH_ONLY.filter((en) => lines.some((l) => asWord(en).test(l)));
}

/** /basic/ links no icon, so Chromium asks for /favicon.ico: a 404 of its own, nothing to do with the language. */
const notBasicFavicon = (e: string) => !/ \(http:\/\/[^/]+\/favicon\.ico\)$/.test(e);

async function signInGerman(page: Page, server: ServerProcess): Promise<void> {
  await page.goto(`${server.url}/`);
  await page.getByLabel('Benutzername').fill('admin');
  await page.getByLabel('Passwort', { exact: true }).fill(server.adminPassword);
  await page.getByRole('button', { name: 'Anmelden', exact: true }).click();
  await page.waitForURL(/\/browse\//);
  await waitForFolder(page);
}

describe('languages: a German browser', { skip }, () => {
  let server: ServerProcess;
  let browser: Browser;
  let local: string;
  let token: string;

  before(async () => {
    [server, browser] = await startAll(startServer(), launchBrowser());
    await seed(server, { 'Berichte/eins.txt': 'a', 'Berichte/zwei.txt': 'b', 'Berichte/drei.txt': 'c', 'Berichte/Alt/': '', 'Berichte/gross.bin': Buffer.alloc(1536), 'Eingang/': '' });
    local = await mkdtemp(join(tmpdir(), 'fc-languages-'));
    for (const n of ['x.txt', 'y.txt', 'z.txt']) await writeFile(join(local, n), n);
    const res = await fetch(`${server.url}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: server.adminPassword }) });
    token = ((await res.json()) as { access_token: string }).access_token;
  });
  after(async () => {
    await browser?.close();
    await server?.dispose();
    if (local) await rm(local, { recursive: true, force: true });
  });

  test('the file browser, a plural, a date, a size and the upload panel in German; no English word of the catalog; console clean', async () => {
    const { context, page, errors, consoleErrors } = await newPage(browser, { locale: 'de-DE' });
    try {
      await signInGerman(page, server);
      assert.equal(await page.evaluate('document.documentElement.lang'), 'de');
      await page.goto(`${server.url}/browse/Berichte/`);
      await waitForFolder(page);
      await page.locator('.status-line', { hasText: '1 Ordner, 4 Dateien' }).waitFor();
      const big = page.locator('.file-grid [role="row"][data-name="gross.bin"]');
      assert.equal((await big.locator('.cell.size').innerText()).trim(), '1,5 KB');
      // Seeded today: the time alone, on the 24-hour clock; the full date on hover, with German day and month names.
      assert.match((await big.locator('.cell.modified').innerText()).trim(), /^\d{1,2}:\d{2}$/);
      assert.match((await big.locator('.cell.modified').getAttribute('title')) ?? '', /^(Montag|Dienstag|Mittwoch|Donnerstag|Freitag|Samstag|Sonntag), \d{1,2}\. (Januar|Februar|März|April|Mai|Juni|Juli|August|September|Oktober|November|Dezember) \d{4}/);
      assert.deepEqual(await englishOn(page), [], 'English words on the German file browser');

      const [chooser] = await Promise.all([page.waitForEvent('filechooser'), page.getByRole('toolbar', { name: 'Ordneraktionen' }).getByRole('button', { name: 'Dateien hochladen' }).click()]);
      await chooser.setFiles(['x.txt', 'y.txt', 'z.txt'].map((n) => join(local, n)));
      const panel = page.getByRole('region', { name: 'Uploads' });
      await panel.getByText('3 Uploads abgeschlossen').waitFor();
      await page.locator('.status-line', { hasText: '1 Ordner, 7 Dateien' }).waitFor();
      assert.deepEqual(await englishOn(page), [], 'English words beside the upload panel');

      await row(page, 'eins.txt').click({ button: 'right' });
      const menu = page.getByRole('menu', { name: 'Aktionen für eins.txt' });
      for (const item of ['Herunterladen', 'Umbenennen', 'Verschieben', 'Kopieren', 'Löschen']) await menu.getByRole('menuitem', { name: item }).waitFor();
      await page.keyboard.press('Escape');
      await page.keyboard.press('?');
      await page.getByRole('dialog', { name: 'Tastenkürzel' }).waitFor();
      assert.deepEqual(await englishOn(page), [], 'English words in the shortcuts sheet');
      await page.keyboard.press('Escape');
      await page.goto(`${server.url}/gibt-es-nicht`);
      await page.getByRole('heading', { name: 'Seite nicht gefunden' }).waitFor();
      assert.deepEqual(await englishOn(page), [], 'English words on the not-found page');
      assert.deepEqual(errors, []);
      // The not-found page answers 404 by design (CONTRACT "Web UI"): that one console line is expected.
      assert.deepEqual(consoleErrors.filter((e) => !e.includes('/gibt-es-nicht')), []);
    } finally {
      await context.close();
    }
  });

  test('the language setting changes the page at once, is kept, and the server-rendered pages follow it', async () => {
    const { context, page, errors, consoleErrors } = await newPage(browser, { locale: 'de-DE' });
    try {
      await signInGerman(page, server);
      await page.goto(`${server.url}/settings`);
      await page.getByRole('heading', { name: 'Einstellungen', level: 1 }).waitFor();
      assert.deepEqual(await englishOn(page), [], 'English words on the German settings page');
      await page.getByRole('combobox', { name: 'Sprache', exact: true }).selectOption('en');
      await page.getByRole('heading', { name: 'Settings', level: 1 }).waitFor();
      assert.equal(await page.evaluate('document.documentElement.lang'), 'en');
      await page.reload();
      await page.getByRole('heading', { name: 'Settings', level: 1 }).waitFor();
      await page.goto(`${server.url}/basic/login`);
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
      await page.goto(`${server.url}/settings`);
      await page.getByRole('combobox', { name: 'Language', exact: true }).selectOption('auto');
      await page.getByRole('heading', { name: 'Einstellungen', level: 1 }).waitFor();
      await page.goto(`${server.url}/basic/login`);
      await page.getByRole('heading', { name: 'Anmelden' }).waitFor();
      assert.deepEqual(errors, []);
      assert.deepEqual(consoleErrors.filter(notBasicFavicon), []);
    } finally {
      await context.close();
    }
  });

  test('/basic/ and share pages in German, share.js\'s words too', async () => {
    const { context, page, errors, consoleErrors } = await newPage(browser, { locale: 'de-DE' });
    const share = async (body: Record<string, unknown>) => {
      const res = await fetch(`${server.url}/api/shares`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify(body) });
      assert.equal(res.status, 201);
      return ((await res.json()) as { url: string }).url;
    };
    try {
      await page.goto(`${server.url}/basic/login`);
      await page.getByRole('heading', { name: 'Anmelden' }).waitFor();
      assert.equal(await page.evaluate('document.documentElement.lang'), 'de');
      assert.deepEqual(await englishOn(page), []);
      await page.goto(`${server.url}${await share({ path: '/admin/Berichte' })}`);
      await page.getByRole('link', { name: 'Alles herunterladen (ZIP)' }).waitFor();
      await page.getByText('1,5 KiB').waitFor();
      assert.equal(await page.evaluate('document.documentElement.lang'), 'de');
      assert.deepEqual(await englishOn(page), []);
      await page.goto(`${server.url}${await share({ path: '/admin/Eingang', upload_only: true })}`);
      await page.getByRole('button', { name: 'Dateien auswählen' }).waitFor();
      assert.deepEqual(await englishOn(page), []);
      assert.deepEqual(errors, []);
      assert.deepEqual(consoleErrors.filter(notBasicFavicon), []);
    } finally {
      await context.close();
    }
  });
});


