import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Locator, Page } from 'playwright-core';
import { DESKTOP, PHONE, launchBrowser, makePng, missingBrowser, newPage, signIn, startServer, type ServerProcess, seedIndexed } from './browser.js';
import { startAll } from '../helpers/start-all.js';

const skip = missingBrowser();

type Box = { x: number; y: number; width: number; height: number };

/** Computed style properties of the element (runs in the page). */
function styleOf(el: Locator, names: string[]): Promise<Record<string, string>> {
  return el.evaluate((node, props) => {
    const s = (globalThis as unknown as { getComputedStyle(e: unknown): Record<string, string> }).getComputedStyle(node);
    return Object.fromEntries(props.map((p) => [p, s[p] ?? '']));
  }, names);
}

async function boxOf(el: Locator): Promise<Box> {
  const b = await el.boundingBox();
  assert.ok(b, 'element is laid out');
  return b;
}

/** `inner` lies within `outer` (1 px of rounding allowed). */
function inside(inner: Box, outer: Box): boolean {
  return inner.x >= outer.x - 1 && inner.y >= outer.y - 1 && inner.x + inner.width <= outer.x + outer.width + 1 && inner.y + inner.height <= outer.y + outer.height + 1;
}

/** List items inside `scope` that show a marker (a bullet or a number). */
function bulleted(page: Page, scope: string): Promise<string[]> {
  return page.locator(`${scope} li`).evaluateAll((els) =>
    els
      .filter((e) => {
        const s = (globalThis as unknown as { getComputedStyle(e: unknown): { display: string; listStyleType: string } }).getComputedStyle(e);
        return s.display === 'list-item' && s.listStyleType !== 'none';
      })
      .map((e) => ((e as unknown as { textContent: string }).textContent ?? '').trim().slice(0, 40)),
  );
}

/** WCAG contrast ratio of two computed `rgb(...)` colours. */
function contrast(a: string, b: string): number {
  const lum = (c: string) => {
    const [r, g, bl] = (c.match(/[\d.]+/g) ?? []).slice(0, 3).map((v) => {
      const x = Number(v) / 255;
      return x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * (r ?? 0) + 0.7152 * (g ?? 0) + 0.0722 * (bl ?? 0);
  };
  const [hi, lo] = [lum(a), lum(b)].sort((x, y) => y - x) as [number, number];
  return (hi + 0.05) / (lo + 0.05);
}

// The look, measured: a stylesheet that stops applying (as a missing "}" once
// did to 111 rules) fails here, in both themes, at desktop and phone width.
describe('web UI: layout in both themes, desktop and phone', { skip }, () => {
  let server: ServerProcess;
  let browser: Browser;

  before(async () => {
    // With a trash, as many servers run: four page links share the header with the search box and the storage figure.
    [server, browser] = await startAll(startServer({ args: ['--dev', '--trash-days', '30'] }), launchBrowser());
    const files: Record<string, string | Buffer> = { 'Documents/': '', 'Music/': '', 'notes.txt': 'n', 'readme.md': '# Hi\n' };
    for (let i = 0; i < 8; i++) files[`photo-${i}.png`] = makePng(120 + i * 20, 90, [30 * i, 120, 200 - 20 * i]);
    await seedIndexed(server, files);
  });
  after(async () => {
    await browser?.close();
    await server?.dispose();
  });

  for (const colorScheme of ['light', 'dark'] as const) {
    for (const [label, viewport] of [['desktop', DESKTOP], ['phone', PHONE]] as const) {
      test(`${colorScheme}, ${label} (${viewport.width}×${viewport.height}): header, list, grid, search, Settings and Users are laid out`, async () => {
        const { context, page, errors, consoleErrors } = await newPage(browser, { viewport, colorScheme });
        // Every finding is collected, so one run shows all that is off.
        const problems: string[] = [];
        const check = (ok: boolean, what: string) => {
          if (!ok) problems.push(what);
        };
        const checkEqual = (actual: unknown, expected: unknown, what: string) => check(JSON.stringify(actual) === JSON.stringify(expected), `${what}: ${JSON.stringify(actual)}`);
        try {
          await signIn(page, server);
          const header = page.locator('header.app-header');
          const headerBox = await boxOf(header);
          check(headerBox.height <= 64, `the header is one bar (${headerBox.height}px tall)`);
          // The name and each page link are one line of text: a crowded bar squeezes the search box, never wraps them.
          for (const [what, locator] of [['the brand', page.locator('header.app-header .brand')], ...(await page.locator('header.app-header nav a').all()).map((a, i) => [`page link ${i}`, a] as const)] as const) {
            // A text node that wraps has one client rect per line.
            const lines = await locator.evaluate((el) => {
              type Rect = { top: number; width: number };
              type Text = { textContent: string | null };
              const doc = (globalThis as unknown as { document: { createTreeWalker(root: unknown, what: number): { nextNode(): Text | null }; createRange(): { selectNodeContents(n: Text): void; getClientRects(): Rect[] } } }).document;
              let most = 0;
              const texts = doc.createTreeWalker(el, 4 /* NodeFilter.SHOW_TEXT */);
              for (let n = texts.nextNode(); n; n = texts.nextNode()) {
                if (!n.textContent?.trim()) continue;
                const r = doc.createRange();
                r.selectNodeContents(n);
                most = Math.max(most, new Set([...r.getClientRects()].filter((b) => b.width > 0).map((b) => Math.round(b.top))).size);
              }
              return most;
            });
            check(lines <= 1, `${what} is one line (${lines} lines)`);
          }

          // The search box and its icon sit inside the header, and the box is wide enough to read its placeholder.
          const search = page.getByRole('combobox', { name: 'Search files and folders' });
          const searchBox = await boxOf(search);
          check(inside(searchBox, headerBox), `search box ${JSON.stringify(searchBox)} inside the header ${JSON.stringify(headerBox)}`);
          check(inside(await boxOf(page.locator('.search-box .search-icon')), searchBox), 'the search icon sits in the box');
          check(searchBox.width >= (label === 'phone' ? 110 : 240), `search box ${searchBox.width}px wide`);
          // Its placeholder is read whole: its text, in the box's font, fits the room between the paddings (and the "/" hint).
          const room = await search.evaluate((el) => {
            type Input = { placeholder: string; clientWidth: number };
            type Ctx = { font: string; measureText(s: string): { width: number } };
            const g = globalThis as unknown as {
              getComputedStyle(e: unknown): { font: string; paddingLeft: string; paddingRight: string };
              document: { createElement(tag: 'canvas'): { getContext(kind: '2d'): Ctx }; querySelector(s: string): { getBoundingClientRect(): { left: number } } | null };
            };
            const input = el as unknown as Input;
            const style = g.getComputedStyle(el);
            const ctx = g.document.createElement('canvas').getContext('2d');
            ctx.font = style.font;
            const key = g.document.querySelector('.search-box .search-key');
            const box = (el as unknown as { getBoundingClientRect(): { left: number; right: number } }).getBoundingClientRect();
            const right = key ? key.getBoundingClientRect().left - 4 : box.right - parseFloat(style.paddingRight);
            return { text: input.placeholder, width: ctx.measureText(input.placeholder).width, room: right - box.left - parseFloat(style.paddingLeft) };
          });
          check(room.width <= room.room, `placeholder "${room.text}" is ${Math.round(room.width)}px in ${Math.round(room.room)}px of room`);

          // The storage figure stays in the header at every width (in short on a phone), with a number in it.
          const usage = page.getByTestId('usage');
          await usage.waitFor();
          const usageText = (await usage.innerText()).trim();
          check(/\d/.test(usageText), `the storage figure shows a number ("${usageText}")`);
          check(inside(await boxOf(usage), headerBox), 'the storage figure sits in the header');
          // The account button: round, no native button chrome, its letter readable on the header.
          const account = page.getByRole('button', { name: 'Account: admin' });
          check(inside(await boxOf(account), headerBox), 'account button inside the header');
          const accountStyle = await styleOf(account, ['backgroundColor', 'borderTopStyle', 'borderTopLeftRadius']);
          checkEqual(accountStyle.backgroundColor, 'rgba(0, 0, 0, 0)', 'no native button background');
          checkEqual(accountStyle.borderTopStyle, 'none', 'no native button border');
          check(parseFloat(accountStyle.borderTopLeftRadius ?? '0') >= 18, 'a round button');
          const avatar = await styleOf(page.locator('.account-button .avatar'), ['color', 'backgroundColor', 'borderTopLeftRadius']);
          check(contrast(avatar.color ?? '', avatar.backgroundColor ?? '') >= 3, `avatar letter readable (${JSON.stringify(avatar)})`);
          checkEqual(avatar.borderTopLeftRadius, '50%', 'a round avatar');
          // Signing out stays one step away: in the header, or on a phone in the account menu.
          if (label === 'phone') {
            await account.click();
            await page.getByRole('menuitem', { name: 'Sign out' }).waitFor();
            await page.keyboard.press('Escape');
          } else await page.getByRole('button', { name: 'Sign out', exact: true }).waitFor();

          // List view: every row's thumbnail stays inside its row.
          const rows = page.locator('.file-grid [role="row"][data-name]');
          await rows.first().waitFor();
          await page.locator('.file-grid [data-name="photo-0.png"] .thumb img').waitFor();
          const n = await rows.count();
          check(n >= 10, `${n} rows rendered`);
          for (let i = 0; i < n; i++) {
            const r = rows.nth(i);
            const rb = await boxOf(r);
            check(rb.height <= 64, `row ${i} is one line (${rb.height}px)`);
            const tb = await boxOf(r.locator('.thumb'));
            check(inside(tb, rb), `thumbnail of row ${i} ${JSON.stringify(tb)} inside its row ${JSON.stringify(rb)}`);
            check(tb.width <= 40 && tb.height <= 40, `thumbnail of row ${i} is small (${tb.width}×${tb.height})`);
          }
          checkEqual(await page.evaluate('document.documentElement.scrollWidth'), viewport.width, 'nothing scrolls sideways');

          // Grid view: tiles side by side in rows, no bullets.
          await page.getByRole('button', { name: 'Grid view' }).click();
          const tiles = page.locator('.tile-view .tile');
          await tiles.first().waitFor();
          const tops = new Map<number, number>();
          for (const b of await Promise.all((await tiles.all()).slice(0, 8).map(boxOf))) {
            tops.set(Math.round(b.y), (tops.get(Math.round(b.y)) ?? 0) + 1);
            check(b.width <= viewport.width / 2, `a tile is at most half the screen wide (${b.width}px)`);
          }
          check(Math.max(...tops.values()) >= 2, `tiles share rows (rows at ${JSON.stringify([...tops])})`);
          checkEqual(await bulleted(page, '.tile-view'), [], 'no bullets in the grid');
          await page.getByRole('button', { name: 'Grid view' }).click();
          await rows.first().waitFor();

          // Search results: a panel under the header, on screen, no bullets.
          await search.fill('photo');
          const results = page.getByRole('listbox', { name: 'Search results' });
          await results.getByRole('option').first().waitFor();
          const panel = await boxOf(page.locator('.search-panel'));
          check(panel.y >= headerBox.y + headerBox.height - 8, 'results drop below the header');
          check(panel.x >= 0 && panel.x + panel.width <= viewport.width, `results on screen (${JSON.stringify(panel)})`);
          checkEqual(await bulleted(page, '.search-panel'), [], 'no bullets in the results');
          await search.press('Escape');

          // Settings and Users: sections laid out, no bullets anywhere.
          for (const [link, scope, heading] of [['Settings', '.settings-page', 'Settings'], ['Users', '.users-page', 'Users']] as const) {
            await account.click();
            await page.getByRole('menuitem', { name: link }).click();
            await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
            await page.locator(`${scope} li`).first().waitFor();
            checkEqual(await bulleted(page, scope), [], `no bullets on ${link}`);
            checkEqual(await page.evaluate('document.documentElement.scrollWidth'), viewport.width, `${link}: nothing scrolls sideways`);
            const main = await boxOf(page.locator(scope));
            check(main.y >= headerBox.y + headerBox.height - 1, `${link} starts below the header`);
          }
          checkEqual(errors, [], 'page errors');
          checkEqual(consoleErrors, [], 'console errors');
          assert.deepEqual(problems, []);
        } finally {
          await context.close();
        }
      });
    }
  }
});
