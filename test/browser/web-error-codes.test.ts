import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ERRORS } from '../../src/domain/errors.js';
import { CATALOGS } from '../../src/lib/i18n/catalogs.js';

test('the web client knows every error code the server can send, and no other', async () => {
  // The web client's sentence for a code is the catalog's `apiError.<code>` (web/src/api/errors.ts).
  const webCodes = Object.keys(CATALOGS.en).filter((k) => /^apiError\.[a-z_]+$/.test(k)).map((k) => k.slice('apiError.'.length));
  assert.deepEqual(webCodes.sort(), Object.keys(ERRORS).sort());
});
