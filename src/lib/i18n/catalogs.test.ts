import { test } from 'node:test';
import assert from 'node:assert/strict';
import { IntlMessageFormat } from 'intl-messageformat';
import { CATALOGS, LANGUAGE_NAMES } from './catalogs.js';
import { LOCALES } from './negotiate.js';
import { translator } from './translate.js';

type Node = { type: number; value?: unknown; options?: Record<string, { value: Node[] }>; children?: Node[] };

/** The names of a message's arguments ({name}, {count, plural, …}, <tag>…</tag>), from the library's own parse. */
function argumentsOf(nodes: readonly Node[], into = new Set<string>()): Set<string> {
  for (const n of nodes) {
    // 0 is literal text, 7 the `#` of a plural: neither names an argument.
    if (n.type !== 0 && n.type !== 7 && typeof n.value === 'string') into.add(n.value);
    for (const option of Object.values(n.options ?? {})) argumentsOf(option.value, into);
    if (n.children) argumentsOf(n.children, into);
  }
  return into;
}

const en = CATALOGS.en;

for (const locale of LOCALES) {
  const catalog = CATALOGS[locale];
  test(`${locale}: every key of en and no other`, () => {
    assert.deepEqual(Object.keys(catalog).filter((k) => !(k in en)), [], 'keys en does not have');
    assert.deepEqual(Object.keys(en).filter((k) => !(k in catalog)), [], 'keys missing');
    assert.ok(LANGUAGE_NAMES[locale]);
  });

  test(`${locale}: each message parses as ICU MessageFormat and takes the arguments the en message takes`, () => {
    for (const [key, message] of Object.entries(catalog)) {
      assert.equal(typeof message, 'string', key);
      assert.notEqual(message.trim(), '', `${key} is empty`);
      let mf: IntlMessageFormat;
      try {
        mf = new IntlMessageFormat(message, locale);
      } catch (e) {
        assert.fail(`${locale} ${key} does not parse: ${(e as Error).message}`);
      }
      const want = argumentsOf(new IntlMessageFormat(en[key as keyof typeof en], 'en').getAst() as Node[]);
      assert.deepEqual([...argumentsOf(mf.getAst() as Node[])].sort(), [...want].sort(), `${locale} ${key}: arguments`);
    }
  });
}

test('plurals follow each language\'s rules', () => {
  const cases: [(typeof LOCALES)[number], number, string][] = [
    ['en', 1, '1 entry'],
    ['en', 3, '3 entries'],
    ['en', 1234, '1,234 entries'],
    ['de', 1, '1 Eintrag'],
    ['de', 3, '3 Einträge'],
    ['de', 1234, '1.234 Einträge'],
  ];
  for (const [locale, count, want] of cases) assert.equal(translator(locale)('basic.entryCount', { count }), want, `${locale} ${count}`);
});

test('the documented way to add a language (docs/web-ui.md) names the files and the places that hold the languages, and they are all there is', async () => {
  const { readFile, access } = await import('node:fs/promises');
  const root = new URL('../../../../', import.meta.url);
  const doc = await readFile(new URL('docs/web-ui.md', root), 'utf8');
  const start = doc.indexOf('**Adding a language**');
  assert.ok(start >= 0, 'docs/web-ui.md has the section');
  const section = doc.slice(start, doc.indexOf('\n**', start + 1));
  // Every file it names exists (a rename would leave the recipe pointing nowhere).
  const paths = [...section.matchAll(/`((?:src|test|web|scripts)\/[\w./-]+)`/g)].map((m) => m[1] as string);
  assert.ok(paths.length >= 4, `paths named: ${paths.join(', ')}`);
  for (const p of paths) await access(new URL(p, root));
  // The places it says to add the language to are the ones the code reads the languages from.
  assert.match(section, /`LOCALES` in `src\/lib\/i18n\/negotiate\.ts`/);
  assert.match(section, /`src\/lib\/i18n\/catalogs\.ts`/);
  assert.deepEqual(Object.keys(CATALOGS).sort(), [...LOCALES].sort(), 'one catalog per language of LOCALES');
  assert.deepEqual(Object.keys(LANGUAGE_NAMES).sort(), [...LOCALES].sort(), 'one name per language of LOCALES');
  // The step that checks a new catalog runs this very file.
  assert.match(section, /node scripts\/run-tests\.mjs src\/lib\/i18n/);
  // The language setting lists the languages from there, not a list of its own.
  const setting = await readFile(new URL('web/src/lib/i18n.ts', root), 'utf8');
  assert.match(setting, /LANGUAGE_NAMES/);
});
