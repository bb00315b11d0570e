import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { checkCssBlocks } from '../helpers/css-blocks.js';
import { REPO_ROOT } from '../helpers/server.js';

// A missing "}" once turned 111 rules of web/src/styles.css into nested rules
// that matched nothing; the build and every test still passed. No browser here.

test('the stylesheet check finds an unclosed block, a stray brace and accidental nesting', () => {
  assert.deepEqual(checkCssBlocks('.a { color: red; }\n@media (max-width: 1px) { .b { top: 0 } }\n@keyframes k { from { opacity: 0 } to { opacity: 1 } }\n'), []);
  const unclosed = checkCssBlocks('.a {\n  color: red;\n\n.b { top: 0 }\n.c { top: 1px }\n');
  assert.ok(unclosed.some((p) => p.line === 1 && /never closed/.test(p.message)), JSON.stringify(unclosed));
  assert.ok(unclosed.some((p) => p.line === 4 && /nested inside "\.a"/.test(p.message)), JSON.stringify(unclosed));
  assert.ok(checkCssBlocks('.a { top: 0 }\n}\n').some((p) => p.line === 2 && /closes nothing/.test(p.message)));
  assert.ok(checkCssBlocks('.a { @media print { top: 0 } }').some((p) => /nested/.test(p.message)), 'an at-rule inside a style rule is nesting too');
  assert.deepEqual(checkCssBlocks('.a { /* allow-nesting */ &:hover { top: 0 } }'), [], 'nesting said to be meant');
  assert.deepEqual(checkCssBlocks('.a::after { content: "{"; }\n/* } { */\n.b { background: url("x}.png") }'), [], 'braces in strings and comments do not count');
  assert.ok(checkCssBlocks('.a { top: 0 } /* open').some((p) => /comment never closed/.test(p.message)));
});

test('every stylesheet of the web UI closes each block and nests nothing by accident', async () => {
  const dir = join(REPO_ROOT, 'web', 'src');
  const files = (await readdir(dir)).filter((f) => f.endsWith('.css'));
  assert.ok(files.includes('styles.css'), 'web/src/styles.css is checked');
  for (const f of files) {
    // The unclosed block first: the nesting that follows from it is only its echo.
    const problems = checkCssBlocks(await readFile(join(dir, f), 'utf8')).sort((a, b) => Number(/never closed/.test(b.message)) - Number(/never closed/.test(a.message)));
    assert.deepEqual(problems.map((p) => `web/src/${f}:${p.line}: ${p.message}`).slice(0, 5), [], `web/src/${f}: ${problems.length} problems`);
  }
});
