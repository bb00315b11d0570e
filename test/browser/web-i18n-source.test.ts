import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { CATALOGS } from '../../src/lib/i18n/catalogs.js';
import { REPO_ROOT } from '../helpers/server.js';
import { sources } from '../helpers/source-files.js';

/**
 * The web UI's words live in the catalogs (src/lib/i18n/*.json), not in the code: a sentence typed into
 * a component would stay English on a German page. These checks read the sources as text (web/ is built
 * by Vite, not by this tsconfig); the German browser walk (languages.test.ts) checks what is drawn.
 */

/** Names and notations that read the same in every language. */
const SAME_IN_EVERY_LANGUAGE = new Set(['File Cloud', 'SSO', '2FA', 'WebDAV', 'Authorization: Bearer …', '/api/', '/storage/', 'bea, carl', '…', '—']);

const PROSE = /^[\p{L}\p{N}“„‘"(][\p{L}\p{N}’'“”„‘"()/ ,.…!?:;–—-]*$/u;

/** Text between tags on one line (`<p>Save</p>`), text alone on a line inside JSX, and label-like attributes with a literal value. */
function literalsIn(source: string): string[] {
  const found: string[] = [];
  const lines = source.split('\n');
  lines.forEach((line, i) => {
    if (/^\s*(\/\/|\*|\/\*)/.test(line)) return;
    // Not the `>` of an arrow or a comparison, and only text that reads as words (code has operators).
    for (const m of line.matchAll(/(?<![=\-\s])>([^<>{}`]*\p{L}{2,}[^<>{}`]*)</gu)) if (PROSE.test(m[1]?.trim() ?? '')) found.push(m[1]?.trim() ?? '');
    for (const m of line.matchAll(/\b(?:aria-label|title|placeholder|label|busyLabel|alt|text|warning|hint)="([^"]*\p{L}{2,}[^"]*)"/gu)) found.push(m[1] ?? '');
    const before = lines.slice(0, i).reverse().find((l) => l.trim() !== '') ?? '';
    const alone = line.trim();
    if (/>\s*$/.test(before) && /^\p{Lu}[\p{L}’' ,.…!?:-]*$/u.test(alone)) found.push(alone);
  });
  return found.filter((s) => s !== '' && !SAME_IN_EVERY_LANGUAGE.has(s) && !/^(?:=>|&&|\|\|)/.test(s));
}

test('no component holds a user-visible English text of its own: each reads it from the catalogs', async () => {
  const web = join(REPO_ROOT, 'web', 'src');
  const offenders: string[] = [];
  for (const file of await sources(web)) {
    if (!file.endsWith('.tsx')) continue;
    for (const text of literalsIn(await readFile(file, 'utf8'))) offenders.push(`${relative(web, file)}: ${text}`);
  }
  assert.deepEqual(offenders, []);
});

test('the check above finds a text typed into a component', () => {
  const sample = ['<button type="button" onClick={close}>', '  Discard changes', '</button>', '<p className="x">Nothing here.</p>', '<input aria-label="Search files" />', '<span>{t(\'a.b\')}</span>'].join('\n');
  assert.deepEqual(literalsIn(sample), ['Discard changes', 'Nothing here.', 'Search files']);
});

test('every catalog key is used: by name in the code, or as one of the families named from data (an error code, a change, a link state, an audit outcome)', async () => {
  const code = (await Promise.all([...(await sources(join(REPO_ROOT, 'web', 'src'))), ...(await sources(join(REPO_ROOT, 'src')))].map((f) => readFile(f, 'utf8')))).join('\n');
  const composed = /^(apiError|change|shareState|audit\.outcome)\./;
  const unused = Object.keys(CATALOGS.en).filter((k) => !composed.test(k) && !code.includes(`'${k}'`) && !code.includes(`"${k}"`));
  assert.deepEqual(unused, []);
});
