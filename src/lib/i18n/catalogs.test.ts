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
