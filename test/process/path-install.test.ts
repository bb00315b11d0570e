// The documented install (README "Install"): `npm i -g .` or `npm link` in the checkout puts
// `file-cloud` on the PATH; the command then works from any folder (issue 17). npm runs against a
// temporary prefix (npm_config_prefix), so nothing outside it changes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readlink, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = process.cwd();

for (const install of [['i', '-g', '.'], ['link']]) {
  test(`after \`npm ${install.join(' ')}\` file-cloud runs from the PATH, from any folder`, async () => {
    const prefix = await mkdtemp(join(tmpdir(), 'fc-prefix-'));
    const elsewhere = await mkdtemp(join(tmpdir(), 'fc-elsewhere-'));
    try {
      // --ignore-scripts: `npm ci` has built dist/ already, and the `prepare` rebuild would rewrite
      // files that tests running beside this one are reading. What is under test is npm's link.
      await run('npm', [...install, '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: ROOT, env: { ...process.env, npm_config_prefix: prefix }, timeout: 120_000 });
      const bin = join(prefix, 'bin');
      assert.match(await readlink(join(bin, 'file-cloud')), /bin\/file-cloud\.js$/);
      // A PATH with the prefix's bin and node's folder, nothing of the checkout.
      const env = { ...process.env, PATH: [bin, join(process.execPath, '..'), '/usr/bin', '/bin'].join(delimiter), FILE_CLOUD_DATA_DIR: join(elsewhere, 'data') };
      const help = await run('file-cloud', ['--help'], { cwd: elsewhere, env });
      assert.match(help.stdout, /^Usage: file-cloud <command>/);
      await run('file-cloud', ['user', 'add', 'zoe', '--password', 'zoe-password', '--admin'], { cwd: elsewhere, env });
      const list = await run('file-cloud', ['user', 'list'], { cwd: elsewhere, env });
      assert.equal(list.stdout, 'zoe\tadmin\n');
      // A usage error exits 2 with one line, as the README says.
      const bad = await run('file-cloud', ['serve', '--port', 'nope'], { cwd: elsewhere, env }).then(
        () => assert.fail('a bad option value must fail'),
        (e: { code: number; stderr: string }) => e,
      );
      assert.equal(bad.code, 2);
      assert.equal(bad.stderr.trim().split('\n').length, 1, bad.stderr);
    } finally {
      await rm(prefix, { recursive: true, force: true });
      await rm(elsewhere, { recursive: true, force: true });
    }
  });
}
