import assert from 'node:assert/strict';
import { IntlMessageFormat } from 'intl-messageformat';
import type { Page } from 'playwright-core';
import { CATALOGS } from '../../src/lib/i18n/catalogs.js';

/**
 * Whether a page shown in German holds English words of ours: the English catalog's texts German says
 * otherwise, whole or (for messages with arguments) by their pieces of two or more words. Used by the
 * German walks (languages.test.ts, sso.test.ts); docs/web-ui.md "Languages".
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

type Node = { type: number; value?: unknown; options?: Record<string, { value: Node[] }>; children?: Node[] };
/** A message's literal text, also inside plural and select branches. */
const literals = (nodes: readonly Node[]): string[] =>
  nodes.flatMap((n) => [...(n.type === 0 && typeof n.value === 'string' ? [n.value] : []), ...Object.values(n.options ?? {}).flatMap((o) => literals(o.value)), ...literals(n.children ?? [])]);
const GERMAN_TEXT = Object.values(CATALOGS.de).flatMap((m) => literals(new IntlMessageFormat(m, 'de').getAst() as Node[]));

/**
 * Of the English messages with arguments ("Delete {name} forever?", "{count, plural, …}"), the pieces
 * of at least two words that German does not use itself ("deleted for good").
 */
const ENGLISH_PIECES = Object.entries(CATALOGS.en)
  .filter(([key, en]) => en.includes('{') && !key.startsWith('share.js.'))
  .flatMap(([, en]) => literals(new IntlMessageFormat(en, 'en').getAst() as Node[]))
  .map((piece) => piece.trim().replace(/^[^\p{L}]+|[^\p{L}]+$/gu, ''))
  .filter((piece) => /\p{L}+ \p{L}+/u.test(piece) && !GERMAN_TEXT.some((de) => de.includes(piece)));

/**
 * The English catalog values among the page's visible text and its labels (aria-label, title, placeholder).
 * What the page marks translate="no" (the audit log's event names and details: data, not words) is not read.
 */
export async function englishOn(page: Page): Promise<string[]> {
  const text = (await page.evaluate(`(() => {
    const skip = (e) => !e || e.closest('[translate="no"]') !== null || !e.checkVisibility();
    const out = [];
    const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walk.nextNode(); n; n = walk.nextNode()) if (!skip(n.parentElement)) out.push(n.textContent);
    for (const e of document.querySelectorAll('[aria-label],[title],[placeholder]')) if (!e.closest('[translate="no"]')) out.push(e.getAttribute('aria-label'), e.getAttribute('title'), e.getAttribute('placeholder'));
    return out.filter(Boolean).join('\\n');
  })()`)) as string;
  const lines = text.split('\n').map((l) => l.trim());
  return [...ENGLISH_ONLY, ...ENGLISH_PIECES].filter((en) => lines.some((l) => asWord(en).test(l)));
}

export async function noEnglish(page: Page, where: string): Promise<void> {
  assert.deepEqual(await englishOn(page), [], `English on ${where}`);
}
