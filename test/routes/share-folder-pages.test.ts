import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { bearer } from '../helpers/client.js';

/**
 * The anonymous share page of a folder shows it a page at a time
 * (docs/api.md "Share links": 200 entries a page, `?page=N`, next and
 * previous as plain links): a visitor never makes the server hold a whole
 * large folder, and a page costs what lies before it in the listing, read
 * as a stream, never the folder.
 */
const PAGE = 200;
const FILES = 2_500;
const name = (i: number) => `f${String(i).padStart(4, '0')}.txt`;

for (const [storage, skip] of BACKENDS) {
  describe(`share folder pages of a ${FILES}-entry folder (${storage})`, { skip }, () => {
    let t: TestApp;
    let id: string;
    let pulled = 0;
    let restore: (() => void) | undefined;

    before(async () => {
      t = await startApp({ storage, users: ['alice'] });
      const token = (await t.login('alice')).access_token;
      const all = Array.from({ length: FILES }, (_, i) => i);
      for (let i = 0; i < all.length; i += 50) await Promise.all(all.slice(i, i + 50).map((n) => t.fs.put(`big/${name(n)}`, '')));
      const res = await fetch(`${t.url}/api/shares`, { method: 'POST', headers: { ...bearer(token), 'content-type': 'application/json' }, body: JSON.stringify({ path: '/alice/big' }) });
      const created = await res.text();
      assert.equal(res.status, 201, created);
      id = (JSON.parse(created) as { id: string }).id;
      if (storage !== 'cluster') {
        // Counts the entries the backend's sorted listing hands out, on the object the app calls.
        const b = t.backend as unknown as { listSorted: (...a: unknown[]) => AsyncIterable<unknown[]> };
        const original = b.listSorted;
        b.listSorted = (...args: unknown[]) =>
          (async function* () {
            for await (const page of original.apply(t.backend, args)) {
              pulled += page.length;
              yield page;
            }
          })();
        restore = () => (b.listSorted = original);
      }
    });
    after(async () => {
      restore?.();
      await t?.close();
    });

    const entriesOf = (html: string) => [...html.matchAll(/<span class="ename">([^<]*)<\/span>/g)].map((m) => m[1]);
    const link = (html: string, rel: 'next' | 'prev') => /<a\b[^>]*\brel="(next|prev)"[^>]*>/g.exec(html) && [...html.matchAll(/<a\b([^>]*)>/g)].map((m) => m[1] as string).find((a) => a.includes(`rel="${rel}"`))?.match(/href="([^"]*)"/)?.[1]?.replace(/&amp;/g, '&');
    const get = async (path: string) => {
      const res = await fetch(`${t.url}${path}`);
      assert.equal(res.status, 200);
      return res.text();
    };

    test('page 1: the first entries, a next link and no previous one, without reading the whole folder', async () => {
      pulled = 0;
      const html = await get(`/s/${id}/`);
      assert.deepEqual(entriesOf(html), Array.from({ length: PAGE }, (_, i) => name(i)));
      assert.equal(link(html, 'prev'), undefined);
      assert.ok(link(html, 'next'), 'a next link');
      // The answer is one page's worth, not the folder's (2,500 rows would be over 1 MB).
      assert.ok(html.length < 300_000, `page 1 is ${html.length} characters`);
      if (storage !== 'cluster') assert.ok(pulled < FILES / 2, `page 1 read ${pulled} entries of ${FILES} from the backend`);
    });

    test('next and previous links walk the pages without JavaScript; the last page has no next', async () => {
      const page1 = await get(`/s/${id}/`);
      const next = link(page1, 'next') as string;
      const page2 = await get(new URL(next, `${t.url}/s/${id}/`).pathname + new URL(next, `${t.url}/s/${id}/`).search);
      assert.deepEqual(entriesOf(page2), Array.from({ length: PAGE }, (_, i) => name(PAGE + i)));
      const prev = link(page2, 'prev') as string;
      assert.ok(prev);
      const back = new URL(prev, `${t.url}/s/${id}/`);
      assert.deepEqual(entriesOf(await get(back.pathname + back.search)), entriesOf(page1));
      const lastNumber = Math.ceil(FILES / PAGE);
      const last = await get(`/s/${id}/?page=${lastNumber}`);
      assert.deepEqual(entriesOf(last), Array.from({ length: FILES - (lastNumber - 1) * PAGE }, (_, i) => name((lastNumber - 1) * PAGE + i)));
      assert.equal(link(last, 'next'), undefined);
      // Past the end: the last page, as in the basic HTML version.
      assert.deepEqual(entriesOf(await get(`/s/${id}/?page=999`)), entriesOf(last));
    });
  });
}
