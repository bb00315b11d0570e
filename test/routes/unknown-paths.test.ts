// Unknown paths (CONTRACT "Web UI", issue 17): 404 JSON under the API prefixes, 405 with Allow for a
// known path's missing method, and elsewhere the web UI's shell with 404 (its not-found view), except
// the UI's own pages, which answer 200.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startApp, type TestApp } from '../helpers/app.js';
import { routePattern } from '../../src/http/url.js';

const WEB_ROOT = join(process.cwd(), 'dist', 'web');
let t: TestApp;
before(async () => {
  t = await startApp({ users: ['alice'], webRoot: WEB_ROOT });
});
after(() => t.close());

test('unknown paths under the API prefixes are 404 JSON, for every method', async () => {
  const paths = ['/api/nope', '/api/', '/api', '/auth/nope', '/auth', '/storage', '/tus/a/b', '/banner/other', '/assets/a/b.js', '/basicx/../api/x', '/is_file_cloud/x', '/metrics/x'];
  for (const path of paths) {
    for (const method of ['GET', 'PUT', 'POST', 'DELETE']) {
      const res = await fetch(`${t.url}${path}`, { method });
      assert.equal(res.status, 404, `${method} ${path}`);
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/, `${method} ${path}`);
      const body = (await res.json()) as { error: string; message: string };
      assert.equal(body.error, 'not_found', `${method} ${path}`);
      assert.equal(typeof body.message, 'string');
    }
  }
  // A share link's URL is a known path for GET; an unknown link is the dead-link 404.
  const dead = await fetch(`${t.url}/share/nope`);
  assert.equal(dead.status, 404);
  assert.equal(((await dead.json()) as { error: string }).error, 'not_found');
});

test('a known path with a method it lacks is 405 with Allow naming its methods', async () => {
  const cases: [string, string, string[]][] = [
    ['PUT', '/api/stats', ['GET', 'HEAD']],
    ['POST', '/api/health', ['GET', 'HEAD']],
    ['DELETE', '/auth/login', ['POST']],
    ['GET', '/auth/logout', ['POST']],
    ['PATCH', '/api/keys/some-id', ['DELETE']],
    ['PUT', '/api/keys', ['GET', 'HEAD', 'POST']],
    ['PATCH', '/storage/alice/x.txt', ['DELETE', 'GET', 'HEAD', 'POST', 'PUT']],
    ['POST', '/browse/docs/', ['GET', 'HEAD']],
    ['DELETE', '/', ['GET', 'HEAD']],
  ];
  // Not a page of the app: not a known path either.
  const post = await fetch(`${t.url}/nothing`, { method: 'POST' });
  assert.equal(post.status, 404);
  assert.equal(((await post.json()) as { error: string }).error, 'not_found');
  for (const [method, path, allow] of cases) {
    const res = await fetch(`${t.url}${path}`, { method });
    assert.equal(res.status, 405, `${method} ${path}`);
    assert.deepEqual((res.headers.get('allow') ?? '').split(', ').sort(), allow, `${method} ${path}`);
    assert.equal(((await res.json()) as { error: string }).error, 'method_not_allowed');
  }
});

test("the UI's pages answer 200; any other page path gets the UI shell with 404", async () => {
  for (const path of ['/', '/login', '/browse/', '/browse/a%20b/c/', '/shared', '/with-me', '/with-me/alice/Team%20A/sub/']) {
    const res = await fetch(`${t.url}${path}`);
    assert.equal(res.status, 200, path);
    assert.match(await res.text(), /<div id="root">/, path);
  }
  for (const path of ['/nope', '/browsex', '/shared/x', '/with-mex', '/login/again', '/index.php', '/.env']) {
    const res = await fetch(`${t.url}${path}`);
    assert.equal(res.status, 404, path);
    assert.match(res.headers.get('content-type') ?? '', /^text\/html/, path);
    assert.match(await res.text(), /<div id="root">/, `${path}: the app, which shows its not-found view`);
  }
});

test('routePattern matches what Fastify routes match', () => {
  const cases: [string, string, boolean][] = [
    ['/api/keys/:id', '/api/keys/abc', true],
    ['/api/keys/:id', '/api/keys/abc/def', false],
    ['/api/keys/:id', '/api/keys/', false],
    ['/storage/*', '/storage/alice/a b.txt', true],
    ['/storage/*', '/storage/', true],
    ['/storage/*', '/storage', false],
    ['/is_file_cloud', '/is_file_cloud', true],
    ['/is_file_cloud', '/isXfile_cloud', false],
    ['/files/api/stats', '/files/api/stats', true],
  ];
  for (const [pattern, path, matches] of cases) assert.equal(routePattern(pattern).test(path), matches, `${pattern} ${path}`);
});
