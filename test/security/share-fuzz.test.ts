import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { startApp, type TestApp } from '../helpers/app.js';
import { bearer, postJson } from '../helpers/client.js';

/**
 * Route-level fuzzing of share links: random JSON (and not-quite-JSON) bodies
 * for POST /api/shares, /share/<id>/auth and the password form, and random
 * sub-paths under a folder link, never get a 5xx; JSON errors have the
 * contract body; nothing outside the shared folder is ever served.
 */
let t: TestApp;
let auth: Record<string, string>;
let folderId: string;
let passwordId: string;
before(async () => {
  t = await startApp({ users: ['alice'] });
  auth = bearer((await t.login('alice')).access_token);
  await t.fs.put('shared/in.txt', 'inside');
  await t.fs.put('outside.txt', 'OUTSIDE-SECRET');
  folderId = ((await (await postJson(`${t.url}/api/shares`, { path: '/alice/shared' }, auth)).json()) as { id: string }).id;
  passwordId = ((await (await postJson(`${t.url}/api/shares`, { path: '/alice/shared', password: 'pw' }, auth)).json()) as { id: string }).id;
});
after(() => t.close());

const jsonish = fc.jsonValue({ maxDepth: 4 });
const field = (...good: unknown[]) => fc.oneof(fc.constantFrom(...good), fc.string({ unit: 'binary', maxLength: 40 }), fc.integer(), fc.double(), jsonish);
const text = fc.oneof(
  fc.record({ path: field('/alice/shared', '/alice/outside.txt', '/alice/', '/bob/x'), expires_in: field(null, 60), password: field(null, 'pw'), max_downloads: field(null, 3), upload_only: field(true, false) }, { requiredKeys: [] }).map((v) => JSON.stringify(v)),
  jsonish.map((v) => JSON.stringify(v)),
  fc.string({ unit: 'binary', maxLength: 200 }),
);

/** The one body that must open the password share: a JSON object whose password is the right one. */
function opensShare(body: string): boolean {
  try {
    const v = JSON.parse(body) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v) && (v as { password?: unknown }).password === 'pw';
  } catch {
    return false;
  }
}

async function expectContract(res: Response, what: string): Promise<string> {
  const answer = await res.text();
  assert.ok(res.status < 500, `${what} → ${res.status} ${answer}`);
  return answer;
}

test('POST /api/shares and the password endpoints: random bodies, never a 5xx, always the contract body', async () => {
  await fc.assert(
    fc.asyncProperty(text, async (body) => {
      const created = await fetch(`${t.url}/api/shares`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body });
      const answer = await expectContract(created, `POST /api/shares ${body.slice(0, 200)}`);
      if (created.status >= 400) assert.deepEqual(Object.keys(JSON.parse(answer) as object).sort(), ['error', 'message']);
      else assert.equal(created.status, 201);
      const authAnswer = await fetch(`${t.url}/share/${passwordId}/auth`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      await expectContract(authAnswer, `POST auth ${body.slice(0, 200)}`);
      assert.equal(authAnswer.status === 204, opensShare(body), `only the password opens the share: ${body.slice(0, 200)} → ${authAnswer.status}`);
      const form = await fetch(`${t.url}/s/${passwordId}/auth`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body, redirect: 'manual' });
      await expectContract(form, `form ${body.slice(0, 200)}`);
    }),
    { numRuns: 60 },
  );
});

test('random sub-paths under a folder link: never a 5xx, never a byte from outside it', async () => {
  const segment = fc.oneof(fc.constantFrom('..', '.', '', '%2e%2e', '%2F', '%5C', '%00', 'in.txt', '..%2Foutside.txt', '%C0%AE', '%', '%ZZ'), fc.string({ maxLength: 12 }).map(encodeURIComponent));
  await fc.assert(
    fc.asyncProperty(fc.array(segment, { maxLength: 5 }), async (segments) => {
      const path = segments.join('/');
      for (const root of ['share', 's']) {
        const res = await fetch(`${t.url}/${root}/${folderId}/${path}`);
        const answer = await expectContract(res, `/${root}/…/${path}`);
        assert.ok(!answer.includes('OUTSIDE-SECRET'), `/${root}/…/${path} served a file outside the share`);
      }
    }),
    { numRuns: 150 },
  );
});
