import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startApp, type TestApp } from '../helpers/app.js';
import { bearer, postJson } from '../helpers/client.js';
import { diskSnapshot } from './snapshot.js';

/**
 * The auth matrix of issue 6: every method × target × credential, each cell
 * with its one allowed status, and every refused cell proven to have changed
 * nothing on disk. The requester is alice; eve is a stranger who owns none
 * of the targets; carol existed, shared a path, and was removed.
 */

type Target = 'own' | 'other existing' | 'other missing' | 'unknown user' | '/api/stats';
type Credential =
  | 'none' | 'garbage' | 'expired' | 'revoked' | 'own access token' | "another user's token"
  | 'path token for another path' | 'path token for that exact path' | 'refresh token as access token' | 'access token as ?token=';
const METHODS = ['GET', 'HEAD', 'PUT', 'POST', 'DELETE'] as const;
type Method = (typeof METHODS)[number];

const PATHS: Record<Target, string> = {
  own: '/storage/alice/own.txt',
  'other existing': '/storage/bob/secret.txt',
  'other missing': '/storage/bob/gone.txt',
  'unknown user': '/storage/carol/shared.txt',
  '/api/stats': '/api/stats',
};
const TARGETS = Object.keys(PATHS) as Target[];
const CREDENTIALS: Credential[] = [
  'none', 'garbage', 'expired', 'revoked', 'own access token', "another user's token",
  'path token for another path', 'path token for that exact path', 'refresh token as access token', 'access token as ?token=',
];

/** How a credential is sent: an Authorization header value and/or a ?token= value. */
type Sent = { header?: string; query?: string };

let t: TestApp;
let offsetMs = 0;
const creds = new Map<string, Sent>();

async function pathToken(owner: string, path: string): Promise<string> {
  const res = await postJson(`${t.url}${path}`, { action: 'MakePathToken' }, bearer(owner));
  assert.equal(res.status, 200, `MakePathToken ${path}`);
  return ((await res.json()) as { token: string }).token;
}

async function resetFixtures(): Promise<void> {
  const s = t.paths.storage;
  await rm(join(s, 'alice'), { recursive: true, force: true });
  await mkdir(join(s, 'alice'), { recursive: true });
  await writeFile(join(s, 'alice', 'own.txt'), 'alice own');
  await writeFile(join(s, 'alice', 'other.txt'), 'alice other');
}

before(async () => {
  t = await startApp({ users: ['alice', 'bob', 'eve', 'carol'], clock: { now: () => Date.now() + offsetMs } });
  // Issued two hours ago with the default one-hour TTL: expired now.
  offsetMs = -2 * 3600_000;
  const expired = (await t.login('alice')).access_token;
  offsetMs = 0;
  const revoked = await t.login('alice');
  assert.equal((await postJson(`${t.url}/auth/logout`, { username: 'alice', refresh_token: revoked.refresh_token })).status, 204);
  const alice = await t.login('alice');
  const bob = (await t.login('bob')).access_token;
  const eve = (await t.login('eve')).access_token;
  const carol = (await t.login('carol')).access_token;
  await resetFixtures();
  assert.equal((await fetch(`${t.url}/storage/bob/secret.txt`, { method: 'PUT', headers: bearer(bob), body: 'bob secret' })).status, 201);
  assert.equal((await fetch(`${t.url}/storage/bob/gone.txt`, { method: 'PUT', headers: bearer(bob), body: 'soon gone' })).status, 201);
  assert.equal((await fetch(`${t.url}/storage/carol/shared.txt`, { method: 'PUT', headers: bearer(carol), body: 'carol' })).status, 201);

  const exact: Record<Target, string> = {
    own: await pathToken(alice.access_token, PATHS.own),
    'other existing': await pathToken(bob, PATHS['other existing']),
    // Shared while it existed, then deleted by its owner.
    'other missing': await pathToken(bob, PATHS['other missing']),
    // Shared by carol, who was removed afterwards.
    'unknown user': await pathToken(carol, PATHS['unknown user']),
    // No path token can name /api/stats; the nearest is one for alice's own file.
    '/api/stats': await pathToken(alice.access_token, PATHS.own),
  };
  const another = await pathToken(alice.access_token, '/storage/alice/other.txt');
  assert.equal((await fetch(`${t.url}/storage/bob/gone.txt`, { method: 'DELETE', headers: bearer(bob) })).status, 204);
  assert.equal(await t.store.users.delete('carol'), true);
  await rm(join(t.paths.storage, 'carol'), { recursive: true, force: true });

  for (const target of TARGETS) {
    const sent: Record<Credential, Sent> = {
      none: {},
      garbage: { header: 'Bearer fca_garbage-!@#$%^&*()' },
      expired: { header: `Bearer ${expired}` },
      revoked: { header: `Bearer ${revoked.access_token}` },
      'own access token': { header: `Bearer ${alice.access_token}` },
      "another user's token": { header: `Bearer ${eve}` },
      'path token for another path': { query: another },
      'path token for that exact path': { query: exact[target] },
      'refresh token as access token': { header: `Bearer ${alice.refresh_token}` },
      'access token as ?token=': { query: alice.access_token },
    };
    for (const c of CREDENTIALS) creds.set(`${target}|${c}`, sent[c]);
  }
});
after(() => t.close());

/** The one allowed status of each cell. */
function expected(method: Method, target: Target, cred: Credential): number {
  const read = method === 'GET' || method === 'HEAD';
  if (target === '/api/stats') {
    if (!read) return 405; // a known path without that method (with Allow), whoever asks
    return cred === 'own access token' || cred === "another user's token" ? 200 : 401;
  }
  if (cred === 'own access token' && target === 'own') return { GET: 200, HEAD: 200, PUT: 201, POST: 204, DELETE: 204 }[method];
  if (cred === 'path token for that exact path' && read) {
    if (target === 'own' || target === 'other existing') return 200;
    if (target === 'other missing') return 404; // the owner shared it; the owner deleted it
    return 401; // the owner is gone, and so are their path tokens
  }
  return 401;
}

async function send(method: Method, target: Target, cred: Credential): Promise<Response> {
  const sent = creds.get(`${target}|${cred}`) as Sent;
  const path = PATHS[target];
  const url = `${t.url}${path}${sent.query === undefined ? '' : `?token=${encodeURIComponent(sent.query)}`}`;
  const headers: Record<string, string> = sent.header === undefined ? {} : { authorization: sent.header };
  let body: string | undefined;
  if (method === 'PUT') {
    headers['content-type'] = 'application/octet-stream';
    body = 'INTRUDER';
  } else if (method === 'POST') {
    headers['content-type'] = 'application/json';
    const user = path.split('/')[2];
    body = JSON.stringify({ action: 'Move', new_path: `/${user}/moved.txt` });
  }
  return fetch(url, { method, headers, body });
}

for (const method of METHODS) {
  test(`auth matrix: ${method} on every target with every credential gives exactly the allowed status`, async () => {
    const failures: string[] = [];
    for (const target of TARGETS) {
      for (const cred of CREDENTIALS) {
        const want = expected(method, target, cred);
        const beforeSnap = await diskSnapshot(t.dataDir);
        const res = await send(method, target, cred);
        const text = await res.text();
        const cell = `${method} ${target} with ${cred}`;
        if (res.status !== want) failures.push(`${cell}: ${res.status}, expected ${want} ${text.slice(0, 120)}`);
        if (res.status >= 400 && method !== 'HEAD') {
          const parsed = JSON.parse(text) as { error?: unknown; message?: unknown };
          if (typeof parsed.error !== 'string' || typeof parsed.message !== 'string') failures.push(`${cell}: body ${text}`);
        }
        if (want >= 400 || method === 'GET' || method === 'HEAD') {
          if ((await diskSnapshot(t.dataDir)) !== beforeSnap) failures.push(`${cell}: the refused request changed the disk`);
        } else {
          await resetFixtures();
        }
      }
    }
    assert.deepEqual(failures, []);
  });
}

test('for one credential, refused storage requests look the same whether the path or the user exists', async () => {
  for (const cred of ['own access token', "another user's token", 'none'] as const) {
    const bodies = new Set<string>();
    for (const target of ['other existing', 'other missing', 'unknown user'] as const) {
      const res = await send('GET', target, cred);
      bodies.add(`${res.status} ${await res.text()}`);
    }
    assert.equal(bodies.size, 1, `${cred}: ${[...bodies].join(' | ')}`);
  }
});
