import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { ERRORS } from '../../src/domain/errors.js';
import { CATALOGS } from '../../src/lib/i18n/catalogs.js';
import { REPO_ROOT } from '../helpers/server.js';
import { sources } from '../helpers/source-files.js';

test('the web client knows every error code the server can send, and no other', async () => {
  // The web client's sentence for a code is the catalog's `apiError.<code>` (web/src/api/errors.ts).
  const webCodes = Object.keys(CATALOGS.en).filter((k) => /^apiError\.[a-z_]+$/.test(k)).map((k) => k.slice('apiError.'.length));
  assert.deepEqual(webCodes.sort(), Object.keys(ERRORS).sort());
});

/**
 * Where the server may still write a bad_request / invalid_path / invalid_name sentence of its own (English only):
 * protocols and fields the web app and the server's pages never get wrong, so no reader of another
 * language meets them. Everything else writes it from the catalog (`sentence('apiDetail.…')`), so the
 * web app and the server's pages can show it in the reader's language (src/lib/i18n/sentences.ts).
 */
const ENGLISH_ONLY: Record<string, string> = {
  'src/app/auth-plugin.ts': 'HTTP headers',
  'src/app/build-app.ts': 'HTTP headers',
  'src/http/client-error.ts': 'HTTP framing',
  'src/dav/': 'WebDAV',
  'src/routes/dav.ts': 'WebDAV',
  'src/services/dav.ts': 'WebDAV',
  'src/routes/tus.ts': 'tus headers',
  'src/services/tus.ts': 'tus headers',
  'src/routes/sync-fields.ts': 'digest headers of sync clients',
  'src/services/webhook-target.ts': 'the webhook API, which has no page',
  'src/services/webhooks.ts': 'the webhook API, which has no page',
  'src/sftp/': 'SFTP',
  'src/services/path-token-service.ts': 'a field the web app always forms itself',
  'src/thumbnails/sizes.ts': 'a size the web app always forms itself',
  'src/routes/admin-audit.ts': 'query fields the audit page always forms itself',
  'src/routes/share-links.ts': 'the link API\'s JSON password body, which share.js always forms itself',
};

test('the server writes its bad_request, invalid_path and invalid_name sentences from the catalog, but for protocols no reader meets', async () => {
  const literal = /AppError\('(bad_request|invalid_path|invalid_name)', ['"`]/;
  const offenders: string[] = [];
  for (const file of await sources(join(REPO_ROOT, 'src'))) {
    const name = relative(REPO_ROOT, file).split('\\').join('/');
    if (Object.keys(ENGLISH_ONLY).some((allowed) => name.startsWith(allowed))) continue;
    (await readFile(file, 'utf8')).split('\n').forEach((line, i) => {
      if (literal.test(line)) offenders.push(`${name}:${i + 1}`);
    });
  }
  assert.deepEqual(offenders, []);
});
