import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bearer, login, postJson } from '../helpers/client.js';
import { runCli, startServer } from '../helpers/server.js';

/**
 * The cache of verified access tokens (src/store/stamped-cache.ts) against
 * the contract's "at once": each worker keeps a token it has verified, and a
 * revocation made anywhere — the other worker, the CLI in another process —
 * must stop it on the very next request, whichever worker takes it.
 */
test('--workers 2: a token or path token every worker has cached stops at once when it is revoked by the other worker or by the CLI', async () => {
  const server = await startServer({ args: ['--workers', '2'] });
  // A new connection per request, so the cluster spreads them over both workers.
  const status = async (token: string) => (await fetch(`${server.url}/storage/admin/`, { headers: { ...bearer(token), connection: 'close' } })).status;
  const statuses = async (token: string, n = 12) => {
    const all: number[] = [];
    for (let i = 0; i < n; i++) all.push(await status(token));
    return all;
  };
  const everywhere = (code: number, n = 12) => Array<number>(n).fill(code);
  try {
    // Logout reaches one worker; the other had the token cached.
    const a = await login(server.url, 'admin', server.adminPassword);
    assert.deepEqual(await statuses(a.access_token), everywhere(200), 'verified (and cached) by both workers');
    assert.equal((await postJson(`${server.url}/auth/logout`, { username: 'admin', refresh_token: a.refresh_token }, { connection: 'close' })).status, 204);
    assert.deepEqual(await statuses(a.access_token), everywhere(401), 'ended by a logout');

    // Another session of the same user, ended through the sessions API.
    const b = await login(server.url, 'admin', server.adminPassword);
    const c = await login(server.url, 'admin', server.adminPassword);
    assert.deepEqual(await statuses(b.access_token), everywhere(200));
    const sessions = (await (await fetch(`${server.url}/api/sessions`, { headers: bearer(c.access_token) })).json()) as { sessions: { id: string; current: boolean }[] };
    const listed = sessions.sessions.filter((s) => !s.current);
    assert.equal(listed.length, 1, 'b is the one other live session');
    const ended = await fetch(`${server.url}/api/sessions/${listed[0]?.id}`, { method: 'DELETE', headers: { ...bearer(c.access_token), connection: 'close' } });
    assert.equal(ended.status, 204);
    assert.deepEqual(await statuses(b.access_token), everywhere(401), 'ended through DELETE /api/sessions/<id>');

    // The CLI, another process on the same database, changes the password: every session ends,
    // and every path token (checked against the owner's auth epoch, a cached user row).
    const put = await fetch(`${server.url}/storage/admin/note.txt`, { method: 'PUT', headers: bearer(c.access_token), body: 'hello' });
    assert.equal(put.status, 201);
    const made = await postJson(`${server.url}/storage/admin/note.txt`, { action: 'MakePathToken' }, bearer(c.access_token));
    const { token } = (await made.json()) as { token: string };
    const byPathToken = async () => {
      const all: number[] = [];
      for (let i = 0; i < 12; i++) all.push((await fetch(`${server.url}/storage/admin/note.txt?token=${encodeURIComponent(token)}`, { headers: { connection: 'close' } })).status);
      return all;
    };
    assert.deepEqual(await byPathToken(), everywhere(200));
    assert.deepEqual(await statuses(c.access_token), everywhere(200));
    const passwd = await runCli(['user', 'passwd', 'admin', '--password', 'another-long-password', '--data-dir', server.dataDir]);
    assert.equal(passwd.code, 0, passwd.stderr);
    assert.deepEqual(await statuses(c.access_token), everywhere(401), 'ended by user passwd from the CLI');
    assert.deepEqual(await byPathToken(), everywhere(401), 'path tokens ended by user passwd from the CLI');
  } finally {
    await server.dispose();
  }
});
