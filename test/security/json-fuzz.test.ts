import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import fc from 'fast-check';
import { startApp, type TestApp } from '../helpers/app.js';
import { bearer } from '../helpers/client.js';

/**
 * Route-level fuzzing: random JSON (and not-quite-JSON) bodies for login,
 * refresh, logout and the storage POST actions never get a 5xx, and every
 * error answer has the contract body.
 */

let t: TestApp;
let token: string;
let refresh: string;
before(async () => {
  t = await startApp({ users: ['alice'] });
  const tokens = await t.login('alice');
  token = tokens.access_token;
  refresh = tokens.refresh_token;
});
after(() => t.close());

const jsonish = fc.jsonValue({ maxDepth: 4 });
/** A value for a field: mostly strings (sometimes the right one), else any JSON value. */
const fieldValue = (...good: string[]) => fc.oneof(fc.constantFrom(...good), fc.string({ unit: 'binary', maxLength: 80 }), jsonish);
const text = fc.oneof(
  jsonish.map((v) => JSON.stringify(v)),
  fc.string({ unit: 'binary', maxLength: 200 }),
  jsonish.map((v) => JSON.stringify(v).slice(0, -1)),
);

async function check(path: string, body: string, headers: Record<string, string> = {}): Promise<void> {
  const res = await fetch(`${t.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  const answer = await res.text();
  assert.ok(res.status < 500, `${path} ${JSON.stringify(body).slice(0, 300)} → ${res.status} ${answer}`);
  if (res.status >= 400) {
    const parsed = JSON.parse(answer) as Record<string, unknown>;
    assert.deepEqual(Object.keys(parsed).sort(), ['error', 'message'], answer);
  }
}

test('random bodies for login never give a 5xx', async () => {
  const body = fc.oneof(text, fc.record({ username: fieldValue('alice', 'nobody'), password: fieldValue('alice-password', 'x') }, { requiredKeys: [] }).map((o) => JSON.stringify(o)));
  await fc.assert(fc.asyncProperty(body, (b) => check('/auth/login', b)), { numRuns: 300 });
});

test('random bodies for refresh and logout never give a 5xx', async () => {
  const body = fc.oneof(text, fc.record({ username: fieldValue('alice', ''), refresh_token: fieldValue(refresh, 'fcr_x', token) }, { requiredKeys: [] }).map((o) => JSON.stringify(o)));
  await fc.assert(fc.asyncProperty(body, (b) => check('/auth/refresh', b)), { numRuns: 300 });
  // Logout last: a lucky valid body ends the session the other tests use.
  await fc.assert(fc.asyncProperty(body, (b) => check('/auth/logout', b.replace(refresh, 'fcr_not-this-one'))), { numRuns: 200 });
});

test('random bodies for storage POST actions never give a 5xx', async () => {
  for (const name of ['a.txt', 'b.txt']) await fetch(`${t.url}/storage/alice/${name}`, { method: 'PUT', headers: bearer(token), body: name });
  const action = fc.record(
    {
      action: fieldValue('MakePathToken', 'CreateFolder', 'Move'),
      new_path: fc.oneof(fieldValue('/alice/m.txt', 'alice/d/', '/alice/a.txt', '/bob/x'), fc.string({ unit: 'binary', maxLength: 30 }).map((s) => `/alice/${s}`)),
      overwrite: fc.oneof(fc.boolean(), jsonish),
      valid_for_seconds: fc.oneof(fc.integer({ min: -10, max: 100_000 }), fc.double(), jsonish),
    },
    { requiredKeys: ['action'] },
  );
  const target = fc.constantFrom('a.txt', 'b.txt', 'd', 'd/', 'missing', '', 'x%20y');
  await fc.assert(
    fc.asyncProperty(fc.oneof(text, action.map((o) => JSON.stringify(o))), target, (b, p) => check(`/storage/alice/${p}`, b, bearer(token))),
    { numRuns: 500 },
  );
  assert.deepEqual(await readdir(t.paths.tmp), []);
});
