// rclone (sftp backend) and restic over the SFTP front end (issue 52), on every backend: rclone
// copies a tree up and `check --download` finds it byte-identical, a read-only app password's copy
// is refused and stores nothing; restic inits a repository, backs up 1,000 files, `check
// --read-data` passes and the restore is byte-identical. scripts/test-services.sh installs both.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { bearer, postJson } from '../helpers/client.js';
import { rcloneSftpEnv, run, sftpFlags, sftpPort, sshIdentity, toolSkip, type SshIdentity } from '../helpers/sftp.js';

/** Every file below `dir` with the SHA-256 of its bytes, by relative path. */
async function treeHashes(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const walk = async (d: string) => {
    for (const e of await readdir(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else out.set(relative(dir, p), createHash('sha256').update(await readFile(p)).digest('hex'));
    }
  };
  await walk(dir);
  return out;
}

for (const [storage, skip] of BACKENDS) {
  describe(`rclone and restic over SFTP on ${storage}`, { skip }, () => {
    let t: TestApp;
    let port: number;
    let home: string;
    let id: SshIdentity;
    before(async () => {
      t = await startApp({ storage, users: ['alice'], flags: await sftpFlags(storage) });
      port = sftpPort(t);
      id = await sshIdentity(t, 'alice');
      home = await mkdtemp(join(tmpdir(), 'fc-sftp-tools-'));
    });
    after(async () => {
      await t?.close();
      await id?.dispose();
      if (home) await rm(home, { recursive: true, force: true });
    });

    const rcloneEnv = (extra: Record<string, string>): NodeJS.ProcessEnv => rcloneSftpEnv(port, 'alice', extra);

    test('rclone copies a tree up; check --download finds every byte the same', { skip: toolSkip('rclone') }, async () => {
      const up = join(home, 'rclone-up');
      const files: Record<string, Buffer> = { 'a.txt': Buffer.from('alpha'), 'ünï cödé/日本語.txt': Buffer.from('unicode'), 'deep/er/big.bin': randomBytes(5 * 1024 * 1024 + 3) };
      for (const [p, data] of Object.entries(files)) {
        await mkdir(join(up, p, '..'), { recursive: true });
        await writeFile(join(up, p), data);
      }
      const env = rcloneEnv({ RCLONE_CONFIG_FC_KEY_FILE: id.key });
      const copied = await run('rclone', ['copy', up, 'fc:/synced'], { env });
      assert.equal(copied.code, 0, copied.out);
      const checked = await run('rclone', ['check', '--download', up, 'fc:/synced'], { env });
      assert.equal(checked.code, 0, checked.out);
      assert.ok((await t.fs.read('synced/deep/er/big.bin'))?.equals(files['deep/er/big.bin'] as Buffer));
    });

    test('rclone with a read-only app password reads, but its copy is refused and stores nothing', { skip: toolSkip('rclone') }, async () => {
      const token = (await t.login('alice')).access_token;
      const key = ((await (await postJson(`${t.url}/api/keys`, { name: 'rclone', read_only: true }, bearer(token))).json()) as { key: string }).key;
      const pass = (await run('rclone', ['obscure', key])).out.trim();
      const env = rcloneEnv({ RCLONE_CONFIG_FC_PASS: pass });
      await t.fs.put('visible.txt', 'readable');
      const listed = await run('rclone', ['lsf', 'fc:/'], { env });
      assert.equal(listed.code, 0, listed.out);
      assert.match(listed.out, /visible\.txt/);
      const up = join(home, 'ro-up');
      await mkdir(up, { recursive: true });
      await writeFile(join(up, 'nope.txt'), 'refused');
      const copied = await run('rclone', ['copy', '--retries', '1', '--low-level-retries', '1', up, 'fc:/ro'], { env });
      assert.notEqual(copied.code, 0, copied.out);
      assert.equal(await t.fs.kind('ro/nope.txt'), undefined);
      assert.equal(await t.fs.kind('nope.txt'), undefined);
    });

    test('restic: init, backup of 1,000 files, check --read-data, restore byte-identical', { skip: toolSkip('restic') }, async () => {
      const src = join(home, 'restic-src');
      for (let i = 0; i < 1000; i++) {
        const dir = join(src, `d${i % 20}`);
        await mkdir(dir, { recursive: true });
        await writeFile(join(dir, `f${i}.bin`), randomBytes(64 + (i % 50) * 97));
      }
      const ssh = ['ssh', '-p', String(port), '-i', id.key, '-o', 'IdentitiesOnly=yes', '-o', 'BatchMode=yes', '-o', 'StrictHostKeyChecking=accept-new', '-o', `UserKnownHostsFile=${id.knownHosts}`, 'alice@127.0.0.1', '-s', 'sftp'].join(' ');
      const env = { ...process.env, RESTIC_PASSWORD: 'correct horse battery staple', RESTIC_CACHE_DIR: join(home, 'restic-cache') };
      const restic = async (...args: string[]) => {
        const r = await run('restic', ['-r', 'sftp:alice@127.0.0.1:/backup', '-o', `sftp.command=${ssh}`, ...args], { env, timeoutMs: 600_000 });
        assert.equal(r.code, 0, `restic ${args.join(' ')}: ${r.out}`);
        return r.out;
      };
      await restic('init');
      await restic('backup', '--host', 'test', src);
      await restic('check', '--read-data');
      const target = join(home, 'restic-restore');
      await restic('restore', 'latest', '--target', target);
      const want = await treeHashes(src);
      const got = await treeHashes(join(target, src));
      assert.equal(got.size, 1000);
      assert.deepEqual(got, want);
    });
  });
}
