// rclone (webdav) as a grant's recipient (issue 29): bob syncs a tree into alice's writable shared folder
// at /dav/alice/team/ while alice changes the same folder through the API, and `rclone check` agrees at
// the end; with the grant made read-only, rclone's writes are all refused and nothing is stored.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { bearer, postJson } from '../helpers/client.js';

const execFileP = promisify(execFile);
const RCLONE = '/usr/bin/rclone';
const skipTool = existsSync(RCLONE) || process.env.CI ? undefined : 'rclone is not installed (scripts/test-services.sh installs it); this test runs in CI';

function run(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(RCLONE, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 180_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

for (const [storage, skip] of BACKENDS) {
  describe(`rclone in a shared folder on ${storage}`, { skip: skip ?? skipTool }, () => {
    let t: TestApp;
    let home: string;
    let alice: string;
    let grantId: string;
    let env: NodeJS.ProcessEnv;
    before(async () => {
      t = await startApp({ storage, users: ['alice', 'bob'] });
      home = await mkdtemp(join(tmpdir(), 'fc-dav-grants-'));
      alice = (await t.login('alice')).access_token;
      await t.fs.put('team/readme.txt', 'from alice', 'alice');
      const made = await postJson(`${t.url}/api/grants`, { path: '/alice/team', to: 'user:bob', permission: 'write' }, bearer(alice));
      assert.equal(made.status, 201);
      grantId = ((await made.json()) as { id: string }).id;
      env = {
        ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('RCLONE_'))),
        RCLONE_CONFIG: '/dev/null',
        RCLONE_CONFIG_FCDAV_TYPE: 'webdav',
        RCLONE_CONFIG_FCDAV_URL: `${t.url}/dav/alice/team/`,
        RCLONE_CONFIG_FCDAV_VENDOR: 'other',
        RCLONE_CONFIG_FCDAV_USER: 'bob',
        RCLONE_CONFIG_FCDAV_PASS: (await execFileP(RCLONE, ['obscure', 'bob-password'])).stdout.trim(),
      };
    });
    after(async () => {
      await t?.close();
      if (home) await rm(home, { recursive: true, force: true });
    });

    test('bob syncs into alice\'s writable grant while alice edits it; rclone check agrees; alice pays', async () => {
      const up = join(home, 'up');
      const files: Record<string, string> = { 'notes.txt': 'bob notes', 'ünï cödé/日本語.txt': 'unicode', 'deep/er/x.bin': 'x'.repeat(70_000) };
      for (const [p, content] of Object.entries(files)) {
        await mkdir(join(up, p, '..'), { recursive: true });
        await writeFile(join(up, p), content);
      }
      const usage = async () => ((await (await fetch(`${t.url}/api/usage`, { headers: bearer(alice) })).json()) as { used: number }).used;
      const before = await usage();
      // alice writes into the same shared folder through the API while rclone runs.
      const edits = (async () => {
        for (let i = 0; i < 10; i++) {
          const res = await fetch(`${t.url}/storage/alice/team/alice/edit-${i}.txt`, { method: 'PUT', headers: bearer(alice), body: `edit ${i}` });
          assert.equal(res.status, 201);
        }
      })();
      const synced = await run(['sync', up, 'fcdav:bob'], env);
      await edits;
      assert.equal(synced.code, 0, synced.out);
      const checked = await run(['check', up, 'fcdav:bob'], env);
      assert.equal(checked.code, 0, checked.out);
      for (const [p, content] of Object.entries(files)) assert.equal(await t.fs.text(`team/bob/${p}`, 'alice'), content, p);
      assert.deepEqual(await t.fs.names('team/alice', 'alice'), Array.from({ length: 10 }, (_, i) => `edit-${i}.txt`).sort());
      const added = Object.values(files).reduce((n, c) => n + Buffer.byteLength(c), 0) + Array.from({ length: 10 }, (_, i) => `edit ${i}`.length).reduce((a, b) => a + b, 0);
      assert.equal((await usage()) - before, added, 'everything written in the shared folder counts for its owner');
      // A change on alice's side shows up in bob's check, so check can fail.
      await t.fs.put('team/bob/notes.txt', 'changed by alice', 'alice');
      assert.notEqual((await run(['check', up, 'fcdav:bob'], env)).code, 0);
    });

    test('with the grant read-only, rclone can list and copy down but every write is refused and nothing is stored', async () => {
      const res = await fetch(`${t.url}/api/grants/${grantId}`, { method: 'PATCH', headers: { ...bearer(alice), 'content-type': 'application/json' }, body: '{"permission":"read"}' });
      assert.equal(res.status, 200);
      const listed = await run(['lsf', '-R', 'fcdav:'], env);
      assert.equal(listed.code, 0, listed.out);
      assert.match(listed.out, /readme\.txt/);
      const up = join(home, 'refused');
      await mkdir(up, { recursive: true });
      await writeFile(join(up, 'new.txt'), 'should not land');
      const copied = await run(['copy', '--retries', '1', '--low-level-retries', '1', up, 'fcdav:refused'], env);
      assert.notEqual(copied.code, 0, copied.out);
      assert.equal(await t.fs.kind('team/refused', 'alice'), undefined);
      assert.equal(await t.fs.kind('team/refused/new.txt', 'alice'), undefined);
      const purge = await run(['purge', '--retries', '1', '--low-level-retries', '1', 'fcdav:bob'], env);
      assert.notEqual(purge.code, 0, purge.out);
      assert.equal(await t.fs.kind('team/bob', 'alice'), 'folder');
    });
  });
}
