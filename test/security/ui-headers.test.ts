import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startApp, type TestApp } from '../helpers/app.js';
import { bearer } from '../helpers/client.js';

/**
 * Security headers: the web UI may not be framed, loads only its own code,
 * and never leaks a URL (with a path token in it) as a Referer; every
 * answer is nosniff; stored files are sandboxed.
 */

let t: TestApp;
let token: string;
before(async () => {
  t = await startApp({ users: ['alice'] });
  token = (await t.login('alice')).access_token;
  await fetch(`${t.url}/storage/alice/page.html`, { method: 'PUT', headers: bearer(token), body: '<script>alert(1)</script>' });
});
after(() => t.close());

function directives(csp: string): Map<string, string[]> {
  return new Map(csp.split(';').map((d) => d.trim().split(/\s+/)).filter((d) => d[0]).map(([name, ...values]) => [name as string, values]));
}

test('the web UI shell and its deep links carry CSP with frame-ancestors none, X-Frame-Options and no-referrer', async () => {
  // An unknown page path is the shell too, with 404 (the app shows its not-found view), and the same headers.
  for (const [path, status] of [['/', 200], ['/browse/some/folder/', 200], ['/login', 200], ['/files/alice/some/folder', 404]] as const) {
    const res = await fetch(`${t.url}${path}`);
    assert.equal(res.status, status, path);
    const csp = directives(res.headers.get('content-security-policy') ?? '');
    assert.deepEqual(csp.get('frame-ancestors'), ["'none'"], path);
    assert.deepEqual(csp.get('default-src'), ["'self'"]);
    assert.deepEqual(csp.get('object-src'), ["'none'"]);
    assert.deepEqual(csp.get('base-uri'), ["'none'"]);
    // Scripts and style sheets only by this answer's nonce (and what those scripts load): never 'self', so no
    // user file of our origin can be one; no 'unsafe-inline', no 'unsafe-eval'.
    const nonce = /'nonce-([A-Za-z0-9+/=]+)'/.exec(csp.get('script-src')?.join(' ') ?? '')?.[1];
    assert.ok(nonce, path);
    assert.deepEqual(csp.get('script-src'), [`'nonce-${nonce}'`, "'strict-dynamic'"]);
    assert.deepEqual(csp.get('style-src'), [`'nonce-${nonce}'`]);
    assert.deepEqual(csp.get('worker-src'), ["'none'"]);
    assert.equal(res.headers.get('x-frame-options'), 'DENY');
    assert.equal(res.headers.get('referrer-policy'), 'no-referrer');
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
  }
});

test('API answers, errors included, are nosniff and no-referrer', async () => {
  for (const [path, status] of [['/api/stats', 200], ['/api/nothing', 404], ['/auth/login', 405]] as const) {
    const res = await fetch(`${t.url}${path}`, { headers: bearer(token) });
    assert.equal(res.status, status, path);
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(res.headers.get('referrer-policy'), 'no-referrer');
  }
});

test('an uploaded HTML file is served sandboxed, so its script cannot run in the UI\'s origin', async () => {
  const { token: pathToken } = (await (await fetch(`${t.url}/storage/alice/page.html`, { method: 'POST', headers: { ...bearer(token), 'content-type': 'application/json' }, body: '{"action":"MakePathToken"}' })).json()) as { token: string };
  for (const headers of [bearer(token), {}]) {
    const res = await fetch(`${t.url}/storage/alice/page.html${'authorization' in headers ? '' : `?token=${encodeURIComponent(pathToken)}`}`, { headers });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-security-policy'), 'sandbox');
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(res.headers.get('referrer-policy'), 'no-referrer');
  }
});
