import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { bearer } from '../helpers/client.js';
import { authorize, finishCallback, startIdp, type TestIdp } from '../helpers/oidc-idp.js';
import { s3ServerOptions, startServer, type ServerProcess } from '../helpers/server.js';
import { newDatabase, redisService, skipReason } from '../helpers/services.js';
import { startAll } from '../helpers/start-all.js';

/**
 * Single sign-on on two nodes (two workers each) sharing S3, PostgreSQL and Redis, under
 * --base-path: a sign-in started on one node finishes on the other (state, nonce and PKCE
 * verifier live in the database), and whatever node a replay reaches, it finds nothing.
 */
const skip = skipReason('S3') ?? skipReason('PostgreSQL') ?? skipReason('Redis');

describe('single sign-on on two nodes', { skip }, () => {
  let idp: TestIdp;
  let a: ServerProcess;
  let b: ServerProcess;

  before(async () => {
    idp = await startIdp();
    idp.accounts.set('nora', { login: 'nora', sub: 'sub-nora', password: 'nora-secret', claims: { preferred_username: 'nora' } });
    const s3 = await s3ServerOptions();
    const database = await newDatabase('oidc');
    const node = {
      args: [...s3.args, '--database', database, '--redis', redisService() as string, '--workers', '2', '--base-path', '/files', '--login-rate-limit', '1000',
        '--oidc-issuer', idp.issuer, '--oidc-client-id', idp.clientId, '--oidc-button-label', 'Nodes IdP'],
      env: { ...s3.env, FILE_CLOUD_OIDC_CLIENT_SECRET: idp.clientSecret },
    };
    [a, b] = await startAll(startServer(node), startServer(node));
  });
  after(async () => {
    await Promise.all([a?.dispose(), b?.dispose()]);
    await idp?.stop();
  });

  /** The same URL on the other node, as a load balancer could send it. */
  const onNode = (url: string, node: ServerProcess) => {
    const u = new URL(url);
    const target = new URL(node.url);
    u.host = target.host;
    return u.href;
  };

  test('started on one node, the callback lands on the other and signs in; the session works on both', async () => {
    const callback = await authorize(a.url, 'nora', 'nora-secret');
    assert.equal(new URL(callback).origin, new URL(a.url).origin, 'the provider sends the browser back to the node it came from');
    const r = await finishCallback(b.url, onNode(callback, b));
    assert.equal(r.status, 200, r.body);
    assert.equal(r.tokens?.username, 'nora');
    for (const node of [a, b]) {
      const me = await fetch(`${node.url}/api/me`, { headers: bearer(r.tokens!.access_token) });
      assert.equal(me.status, 200);
      assert.equal(((await me.json()) as { username: string }).username, 'nora');
    }
  });

  test('a callback used on one node is refused on the other; the hand-off code too', async () => {
    const callback = await authorize(b.url, 'nora', 'nora-secret');
    const first = await fetch(callback, { redirect: 'manual' });
    assert.equal(first.status, 302);
    const code = decodeURIComponent(/#sso=(.+)$/.exec(first.headers.get('location') ?? '')![1]!);
    const replay = await fetch(onNode(callback, a), { redirect: 'manual' });
    assert.equal(replay.status, 401);
    const redeem = (node: ServerProcess) => fetch(`${node.url}/auth/oidc/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ code }) });
    assert.equal((await redeem(a)).status, 200);
    assert.equal((await redeem(b)).status, 401);
  });
});
