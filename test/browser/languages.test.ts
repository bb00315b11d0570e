import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, missingBrowser, newPage, row, seed, startServer, waitForFolder, type ServerProcess } from './browser.js';
import { startAll } from '../helpers/start-all.js';
import { englishOn, noEnglish } from './english-on.js';
import { bearer, login, postJson } from '../helpers/client.js';

const skip = missingBrowser();

/**
 * The UI in the browser's language (docs/web-ui.md "Languages"): a German Chromium (navigator.languages
 * and Accept-Language de-DE) gets the file browser, the upload panel, plurals, dates and sizes in German,
 * the Settings switch changes the page at once, and /basic/ and share pages follow.
 */

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
      assert.deepEqual(consoleErrors, []);
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
      assert.deepEqual(consoleErrors, []);
    } finally {
      await context.close();
    }
  });
});

/**
 * Every page and dialog of the web UI in a German browser (issue 54, "Languages"): the share dialog and a
 * new link, details, versions with a preview, the preview and the editor, Shared by me, Shared with me,
 * Recent, Trash, Users (with a user's menu and the new-user dialog), Groups (with the new-group dialog),
 * the audit log, and Settings with the two-step, app-password and SSH-key dialogs. None shows a text of
 * the English catalog, whole or in part; a rule the page checks itself (a name with "/") answers in German.
 */
describe('languages: every page and dialog in German', { skip }, () => {
  let server: ServerProcess;
  let browser: Browser;

  before(async () => {
    [server, browser] = await startAll(startServer({ args: ['--dev', '--trash-days', '30', '--versions'] }), launchBrowser());
    const admin = bearer((await login(server.url, 'admin', server.adminPassword)).access_token);
    const put = async (path: string, body: string, auth: Record<string, string>) => assert.equal((await fetch(`${server.url}/storage/${path}`, { method: 'PUT', headers: { ...auth, 'content-type': 'text/plain' }, body })).status < 300, true);
    assert.equal((await postJson(`${server.url}/api/admin/users`, { username: 'bea', password: 'bea-password-1' }, admin)).status, 201);
    assert.equal((await postJson(`${server.url}/api/admin/groups`, { name: 'team', members: ['admin', 'bea'] }, admin)).status, 201);
    const bea = bearer((await login(server.url, 'bea', 'bea-password-1')).access_token);
    await put('bea/Pläne/p.txt', 'p', bea);
    assert.equal((await postJson(`${server.url}/api/grants`, { path: '/bea/Pläne', to: 'group:team', permission: 'read' }, bea)).status, 201);
    await put('admin/Notizen/eins.txt', 'erste Fassung', admin);
    await put('admin/Notizen/eins.txt', 'zweite Fassung', admin);
    await put('admin/Notizen/weg.txt', 'w', admin);
    assert.equal((await fetch(`${server.url}/storage/admin/Notizen/weg.txt`, { method: 'DELETE', headers: admin })).status, 204);
    assert.equal((await postJson(`${server.url}/api/grants`, { path: '/admin/Notizen', to: 'user:bea', permission: 'write' }, admin)).status, 201);
  });
  after(async () => {
    await browser?.close();
    await server?.dispose();
  });

  test('no English on any page or in any dialog; console clean', async () => {
    const { context, page, errors, consoleErrors } = await newPage(browser, { locale: 'de-DE' });
    const none = async (where: string) => noEnglish(page, where);
    const dialog = (name: string | RegExp) => page.getByRole('dialog', { name });
    const close = async (name: string | RegExp) => {
      await page.keyboard.press('Escape');
      await dialog(name).waitFor({ state: 'detached' });
    };
    const menu = async (name: string, item: string) => {
      await row(page, name).click({ button: 'right' });
      await page.getByRole('menu', { name: `Aktionen für ${name}` }).getByRole('menuitem', { name: item }).click();
    };
    try {
      await signInGerman(page, server);
      await page.goto(`${server.url}/browse/Notizen/`);
      await waitForFolder(page);
      await none('the folder');

      await menu('eins.txt', 'Teilen…');
      await dialog('„eins.txt“ teilen').getByRole('button', { name: 'Link erstellen' }).waitFor();
      await none('the share dialog');
      await dialog('„eins.txt“ teilen').getByRole('button', { name: 'Link erstellen' }).click();
      await dialog('„eins.txt“ teilen').getByText('Der Link ist fertig.').waitFor();
      await none('a new link');
      await close('„eins.txt“ teilen');

      await menu('eins.txt', 'Details');
      await dialog('Details zu eins.txt').getByText('Letzte Änderungen').waitFor();
      await dialog('Details zu eins.txt').getByText('Läuft ab am', { exact: false }).waitFor();
      await none('the details');
      await close('Details zu eins.txt');

      await menu('eins.txt', 'Versionen');
      const versions = dialog('Versionen von eins.txt');
      await versions.getByText('Aktuell', { exact: true }).waitFor();
      await versions.getByRole('button', { name: 'Vorschau', exact: true }).last().click();
      await versions.getByText('erste Fassung').waitFor();
      await none('the versions');
      await close('Versionen von eins.txt');

      await row(page, 'eins.txt').click();
      await page.keyboard.press('Enter');
      await page.locator('.preview-dialog').getByText('zweite Fassung').waitFor();
      await none('the preview');
      await page.locator('.preview-dialog').getByRole('button', { name: 'Bearbeiten' }).click();
      await page.locator('.editor-dialog').getByRole('textbox', { name: 'Inhalt von eins.txt' }).waitFor();
      await none('the editor');
      await page.keyboard.press('Escape');
      await page.locator('.editor-dialog').waitFor({ state: 'detached' });

      await row(page, 'eins.txt').click();
      await page.keyboard.press('F2');
      await page.keyboard.type('a/b');
      await page.keyboard.press('Enter');
      await dialog(/umbenennen/).getByText('Ein Name darf kein „/“ enthalten.').waitFor();
      await close(/umbenennen/);

      const pages: [string, string][] = [
        ['/shared', 'Von mir geteilt'],
        ['/with-me', 'Mit mir geteilt'],
        ['/recent', 'Zuletzt'],
        ['/trash', 'Papierkorb'],
        ['/admin/users', 'Benutzer'],
        ['/admin/groups', 'Gruppen'],
        ['/admin/audit', 'Prüfprotokoll'],
      ];
      for (const [path, heading] of pages) {
        await page.goto(`${server.url}${path}`);
        await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
        await page.locator('[aria-busy="true"]').waitFor({ state: 'detached' });
        await none(path);
      }
      await page.goto(`${server.url}/shared`);
      await page.getByRole('list', { name: 'Freigabelinks' }).getByText('Läuft ab:', { exact: false }).waitFor();
      await page.goto(`${server.url}/with-me`);
      await page.getByText('über die Gruppe team').waitFor();
      await page.goto(`${server.url}/trash`);
      await page.getByRole('button', { name: 'Endgültig löschen' }).waitFor();
      await none('the trash with an item');

      await page.goto(`${server.url}/admin/users`);
      await page.getByRole('button', { name: 'Aktionen für bea' }).click();
      await page.getByRole('menuitem', { name: 'Kontingent festlegen…' }).waitFor();
      await none('a user\'s menu');
      await page.keyboard.press('Escape');
      await page.getByRole('toolbar', { name: 'Benutzeraktionen' }).getByRole('button', { name: 'Neuer Benutzer' }).click();
      await dialog('Neuer Benutzer').getByRole('button', { name: 'Benutzer erstellen' }).click();
      await dialog('Neuer Benutzer').getByText('Gib einen Benutzernamen ein.').waitFor();
      await none('the new-user dialog');
      await close('Neuer Benutzer');

      await page.goto(`${server.url}/admin/groups`);
      await page.getByRole('toolbar', { name: 'Gruppenaktionen' }).getByRole('button', { name: 'Neue Gruppe' }).click();
      await dialog('Neue Gruppe').getByRole('button', { name: 'Gruppe erstellen' }).waitFor();
      await none('the new-group dialog');
      await close('Neue Gruppe');

      await page.goto(`${server.url}/settings`);
      await page.getByRole('heading', { name: 'Einstellungen', level: 1 }).waitFor();
      await page.getByRole('button', { name: 'Einrichten' }).click();
      await dialog('Bestätigung in zwei Schritten einrichten').getByRole('button', { name: 'Einschalten' }).waitFor();
      await none('the two-step dialog');
      await close('Bestätigung in zwei Schritten einrichten');
      await page.getByRole('button', { name: 'App-Passwort erstellen' }).first().click();
      await dialog('Neues App-Passwort').getByLabel('Läuft ab').waitFor();
      await none('the app-password dialog');
      await close('Neues App-Passwort');
      await page.getByRole('button', { name: 'SSH-Schlüssel hinzufügen' }).first().click();
      await dialog('SSH-Schlüssel hinzufügen').getByLabel('Öffentlicher Schlüssel').waitFor();
      await none('the SSH-key dialog');
      await close('SSH-Schlüssel hinzufügen');

      assert.deepEqual(errors, []);
      assert.deepEqual(consoleErrors, []);
    } finally {
      await context.close();
    }
  });

  test('a refusal from the server (bad_request, invalid_path) shows its precise sentence worded in German, not the general one', async () => {
    const { context, page, errors, consoleErrors } = await newPage(browser, { locale: 'de-DE' });
    try {
      await signInGerman(page, server);
      // A typed or bookmarked address whose folder name the server refuses (invalid_path).
      await page.goto(`${server.url}/browse/a%5Cb/`);
      await page.getByText('Der Pfad ist ungültig: ein Name darf keinen umgekehrten Schrägstrich („\\“) enthalten.').waitFor();
      await noEnglish(page, 'a refused folder address');

      // A key the server refuses (bad_request), with the types it takes named.
      await page.goto(`${server.url}/settings`);
      await page.getByRole('button', { name: 'SSH-Schlüssel hinzufügen' }).first().click();
      const dialog = page.getByRole('dialog', { name: 'SSH-Schlüssel hinzufügen' });
      await dialog.getByLabel('Name').fill('laptop');
      await dialog.getByLabel('Öffentlicher Schlüssel').fill('ssh-dss AAAAB3NzaC1kc3MAAACBAP not a key');
      await dialog.getByRole('button', { name: 'SSH-Schlüssel hinzufügen' }).click();
      await dialog.getByText(/^Schlüssel vom Typ „ssh-dss“ werden nicht angenommen; nimm einen dieser Typen: ssh-ed25519, /).waitFor();
      await noEnglish(page, 'a refused key');

      assert.deepEqual(errors, []);
      // The two refusals themselves are the only failed requests.
      assert.equal(consoleErrors.length, 2, consoleErrors.join('\n'));
      assert.ok(consoleErrors.every((e) => e.includes('400')), consoleErrors.join('\n'));
    } finally {
      await context.close();
    }
  });
});
