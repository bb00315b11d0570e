import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { ERRORS } from '../../src/domain/errors.js';
import { REPO_ROOT } from '../helpers/server.js';

test('the web client knows every error code the server can send, and no other', async () => {
  // web/ is built by Vite, not by this tsconfig: read its table as text.
  const source = await readFile(join(REPO_ROOT, 'web', 'src', 'api', 'errors.ts'), 'utf8');
  const block = /export const ERROR_MESSAGES = \{([\s\S]*?)\n\} as const;/.exec(source)?.[1];
  assert.ok(block, 'ERROR_MESSAGES found in web/src/api/errors.ts');
  const webCodes = [...block.matchAll(/^\s{2}([a-z_]+):/gm)].map((m) => m[1]).sort();
  assert.deepEqual(webCodes, Object.keys(ERRORS).sort());
});
