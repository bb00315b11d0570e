import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bearer, login, postJson } from '../helpers/client.js';
import { runCli, startServer } from '../helpers/server.js';

test('`file-cloud user remove` while the server runs ends the owner\'s share links at once; a re-created user does not revive them', async () => {
  const server = await startServer({ args: ['--dev'] });
  const cli = (...args: string[]) => runCli([...args, '--data-dir', server.dataDir]);
  try {
    assert.equal((await cli('user', 'add', 'alice', '--password', 'alice-password')).code, 0);
    const auth = bearer((await login(server.url, 'alice', 'alice-password')).access_token);
    assert.equal((await fetch(`${server.url}/storage/alice/a.txt`, { method: 'PUT', headers: auth, body: 'shared' })).status, 201);
    const made = await postJson(`${server.url}/api/shares`, { path: '/alice/a.txt', expires_in: null }, auth);
    assert.equal(made.status, 201);
    const { id } = (await made.json()) as { id: string };
    const live = await fetch(`${server.url}/share/${id}`);
    assert.equal(await live.text(), 'shared');
    const dead = await (await fetch(`${server.url}/share/${'Z'.repeat(32)}`)).text();
    assert.equal((await cli('user', 'remove', 'alice')).code, 0);
    const after = await fetch(`${server.url}/share/${id}`);
    assert.equal(after.status, 404, 'the files are still on disk, but the link is dead');
    assert.equal(await after.text(), dead, 'the same 404 as an unknown link');
    assert.equal((await cli('user', 'add', 'alice', '--password', 'alice-password')).code, 0);
    assert.equal((await fetch(`${server.url}/share/${id}`)).status, 404, 'a new alice does not inherit the old links');
  } finally {
    await server.dispose();
  }
});
