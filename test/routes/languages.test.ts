import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { BasicClient, notice } from '../helpers/basic-client.js';
import { bearer } from '../helpers/client.js';

/**
 * The server-rendered pages (/basic/ and share links) speak the reader's language
 * (docs/web-ui.md "Languages"): the web UI's setting (the fc_lang cookie) first, then
 * Accept-Language, else English; words, plurals, sizes and <html lang> alike.
 */
for (const [storage, skip] of BACKENDS) {
  describe(`server-rendered pages in the reader's language (${storage})`, { skip }, () => {
    let t: TestApp;
    let token: string;
    const share = async (body: Record<string, unknown>) => {
      const res = await fetch(`${t.url}/api/shares`, { method: 'POST', headers: { ...bearer(token), 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const text = await res.text();
      assert.equal(res.status, 201, text);
      return (JSON.parse(text) as { id: string }).id;
    };
    const page = async (path: string, headers: Record<string, string>, status = 200) => {
      const res = await fetch(`${t.url}${path}`, { headers });
      const html = await res.text();
      assert.equal(res.status, status, html.slice(0, 500));
      return html;
    };

    before(async () => {
      t = await startApp({ storage, users: ['alice'] });
      token = (await t.login('alice')).access_token;
      await t.fs.put('Fotos/a.txt', 'a');
      await t.fs.put('Fotos/b.txt', 'b');
      await t.fs.put('Fotos/big.bin', Buffer.alloc(1536));
      await t.fs.mkdir('Eingang/');
    });
    after(() => t?.close());

    test('/basic/ in German for Accept-Language de, in English for en, and the setting\'s cookie before the header', async () => {
      const cases: [Record<string, string>, 'de' | 'en'][] = [
        [{ 'accept-language': 'de-DE,de;q=0.9,en;q=0.8' }, 'de'],
        [{ 'accept-language': 'fr, de;q=0.5' }, 'de'],
        [{ 'accept-language': 'en-US,en;q=0.9' }, 'en'],
        [{}, 'en'],
        [{ 'accept-language': 'en', cookie: 'fc_lang=de' }, 'de'],
        [{ 'accept-language': 'de', cookie: 'fc_lang=en' }, 'en'],
        [{ 'accept-language': 'de', cookie: 'fc_lang=xx' }, 'de'],
      ];
      for (const [headers, want] of cases) {
        const html = await page('/basic/login', headers);
        assert.match(html, new RegExp(`<html lang="${want}">`), JSON.stringify(headers));
        assert.ok(html.includes(want === 'de' ? '<h1>Anmelden</h1>' : '<h1>Sign in</h1>'), JSON.stringify(headers));
      }
    });

    test('a signed-in German reader\'s folder page: words, a plural, a size and a date in German', async () => {
      const alice = new BasicClient(t.url);
      assert.equal((await alice.login('alice', 'alice-password', { 'accept-language': 'de' })).status, 303);
      const res = await alice.fetch('/basic/Fotos/', { headers: { 'accept-language': 'de', cookie: alice.cookieHeader() } });
      const html = await res.text();
      assert.equal(res.status, 200);
      assert.match(html, /<html lang="de">/);
      assert.match(html, /<caption>3 Einträge<\/caption>/);
      assert.match(html, /1,5 KiB/);
      assert.match(html, /\d\d\.\d\d\.\d{4}, \d\d:\d\d UTC/);
      assert.match(html, /Angemeldet als <strong>alice<\/strong>/);
      for (const english of ['Sign out', 'Upload files', 'New folder', 'Rename', 'Delete', 'Modified']) assert.ok(!html.includes(english), english);
      const wrong = await new BasicClient(t.url).post('/basic/login', { username: 'alice', password: 'nope' }, { 'accept-language': 'de' });
      assert.equal(wrong.status, 401);
      assert.match(await wrong.text(), /Benutzername oder Passwort ist falsch\./);
    });

    test('/basic/ changes, its own refusals and errors from below in German; the same in English keeps the server\'s sentence', async () => {
      const alice = new BasicClient(t.url);
      assert.equal((await alice.login('alice', 'alice-password')).status, 303);
      alice.jar.set('fc_lang', { value: 'de', attributes: '' });
      const csrf = await alice.csrf();
      assert.equal((await alice.post('/basic/', { csrf, action: 'mkdir', name: 'Berichte' })).status, 303);
      assert.equal(notice((await alice.page('/basic/')).html), 'Ordner Berichte erstellt.');
      assert.equal((await alice.upload('/basic/Berichte/', [{ name: 'a.txt', content: 'A' }, { name: 'b.txt', content: 'B' }], csrf)).status, 303);
      assert.equal(notice((await alice.page('/basic/Berichte/')).html), '2 Dateien hochgeladen: a.txt, b.txt.');
      assert.equal((await alice.post('/basic/Berichte/', { csrf, action: 'rename', name: 'a.txt', new_name: 'c.txt' })).status, 303);
      assert.equal(notice((await alice.page('/basic/Berichte/')).html), 'a.txt in c.txt umbenannt.');
      assert.equal((await alice.post('/basic/Berichte/', { csrf, action: 'delete', name: 'c.txt' })).status, 303);
      assert.equal(notice((await alice.page('/basic/Berichte/')).html), 'c.txt gelöscht.');
      const refusals: [Record<string, string>, number, string][] = [
        [{ action: 'mkdir', name: 'x' }, 403, 'Abgelehnt: Das Formular hat kein gültiges Sicherheits-Token'],
        [{ csrf, action: 'explode' }, 400, 'Unbekannte Aktion: Das Formular stammt vielleicht von einer älteren Version'],
        [{ csrf, action: 'delete', name: 'gibt-es-nicht' }, 404, 'Das gibt es nicht mehr. Es wurde vielleicht verschoben oder gelöscht.'],
        [{ csrf, action: 'mkdir', name: 'Berichte' }, 409, 'Hier gibt es bereits etwas mit diesem Namen.'],
        // The server's precise sentence for bad input, worded in German (src/lib/i18n/sentences.ts).
        [{ csrf, action: 'mkdir', name: 'a\\b' }, 400, 'ein Name darf keinen umgekehrten Schrägstrich („\\“) enthalten.'],
      ];
      for (const [fields, status, german] of refusals) {
        const res = await alice.post('/basic/', fields);
        const html = await res.text();
        assert.equal(res.status, status, html.slice(0, 300));
        assert.ok(html.includes(german), `${JSON.stringify(fields)}: ${html.slice(0, 2000)}`);
        assert.match(html, /<html lang="de">/);
      }
      alice.jar.set('fc_lang', { value: 'en', attributes: '' });
      const english = await alice.post('/basic/', { csrf, action: 'delete', name: 'gibt-es-nicht' });
      assert.equal(english.status, 404);
      assert.doesNotMatch(await english.text(), /Das gibt es nicht mehr/);
      const refusedInEnglish = await alice.post('/basic/', { csrf, action: 'mkdir', name: 'a\\b' });
      assert.equal(refusedInEnglish.status, 400);
      assert.match(await refusedInEnglish.text(), /a name cannot contain a backslash\./);
    });

    test('share pages in German for a German visitor: a folder, an upload-only link and a dead link', async () => {
      const de = { 'accept-language': 'de-AT' };
      const folder = await page(`/s/${await share({ path: '/alice/Fotos' })}/`, de);
      assert.match(folder, /<html lang="de">/);
      for (const german of ['Alles herunterladen (ZIP)', '1,5 KiB', 'Geteilt mit File Cloud', '>Herunterladen<']) assert.ok(folder.includes(german), german);
      assert.ok(!folder.includes('Download'));
      const english = await page(`/s/${await share({ path: '/alice/Fotos' })}/`, { 'accept-language': 'en' });
      assert.ok(english.includes('Download all (zip)') && english.includes('<html lang="en">'));
      const drop = await share({ path: '/alice/Eingang', upload_only: true });
      const thanks = await page(`/s/${drop}/?uploaded=3`, de);
      assert.ok(thanks.includes('3 Dateien hochgeladen. Vielen Dank!'));
      assert.ok(thanks.includes('Dateien hochladen nach <span class="name">Eingang</span>'));
      const dead = await page('/s/AAAAAAAAAAAAAAAAAAAAAA/', de, 404);
      assert.match(dead, /Dieser Link ist nicht verfügbar/);
    });
  });
}
