// Real WebDAV clients against /dav/ on every backend (CONTRACT "WebDAV"): litmus 0.13, the
// standard WebDAV test suite, with all its suites and 0 failures; cadaver driven by a script;
// rclone's webdav backend syncing a tree with unicode and space names up and back.
// scripts/test-services.sh installs litmus, cadaver and rclone from Debian; without one a test
// skips here (with the reason) and fails in CI.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { bytesStored } from '../helpers/stored.js';
import { run } from '../helpers/tool.js';

const execFileP = promisify(execFile);
const LITMUS = '/usr/bin/litmus';
const CADAVER = '/usr/bin/cadaver';
const RCLONE = '/usr/bin/rclone';
const PASSWORD = 'alice-password';

function toolSkip(tool: string, path: string): string | undefined {
  if (existsSync(path) || process.env.CI) return undefined;
  return `${tool} is not installed (scripts/test-services.sh installs it); this test runs in CI`;
}

for (const [storage, skip] of BACKENDS) {
  describe(`WebDAV clients on ${storage}`, { skip }, () => {
    let t: TestApp;
    let home: string;
    before(async () => {
      t = await startApp({ storage, users: ['alice', 'bob'] });
      home = await mkdtemp(join(tmpdir(), 'fc-dav-home-'));
    });
    after(async () => {
      await t?.close();
      if (home) await rm(home, { recursive: true, force: true });
    });

    test('litmus 0.13: every suite (basic, copymove, props, locks, http) passes with 0 failures', { skip: toolSkip('litmus', LITMUS) }, async () => {
      const { code, out } = await run(LITMUS, ['-k', `${t.url}/dav/alice/`, 'alice', PASSWORD], { env: { ...process.env, HOME: home }, timeoutMs: 300_000 });
      const summaries = [...out.matchAll(/<- summary for `(\w+)': of (\d+) tests run: (\d+) passed, (\d+) failed/g)].map((m) => ({ suite: m[1], run: Number(m[2]), passed: Number(m[3]), failed: Number(m[4]) }));
      assert.deepEqual(summaries.map((s) => s.suite), ['basic', 'copymove', 'props', 'locks', 'http'], out);
      for (const s of summaries) {
        assert.equal(s.failed, 0, `litmus ${s.suite}: ${s.failed} failed\n${out}`);
        assert.ok(s.run > 0 && s.passed === s.run, `litmus ${s.suite}: ${s.passed} of ${s.run}\n${out}`);
      }
      assert.doesNotMatch(out, /\bFAIL\b/, out);
      assert.equal(code, 0, out);
    });

    test('cadaver: put, get, mkcol, move, copy, lock, unlock, propset and propget by script', { skip: toolSkip('cadaver', CADAVER) }, async () => {
      const work = await mkdtemp(join(home, 'cadaver-'));
      const host = new URL(t.url).hostname;
      await writeFile(join(home, '.netrc'), `machine ${host} login alice password ${PASSWORD}\n`, { mode: 0o600 });
      await writeFile(join(work, 'up load.txt'), 'cadaver was here\n');
      const script = [
        `lcd ${work}`,
        'mkcol docs',
        'cd docs',
        'put "up load.txt" a.txt',
        'copy a.txt b.txt',
        'move b.txt c.txt',
        'lock a.txt',
        'unlock a.txt',
        'propset a.txt colour blue',
        'propget a.txt colour',
        'get c.txt back.txt',
        'ls',
        'quit',
      ].join('\n');
      const { out } = await run(CADAVER, [`${t.url}/dav/alice/`], { input: `${script}\n`, env: { ...process.env, HOME: home } });
      assert.doesNotMatch(out, /failed:|Could not|not authorized|Unauthorized|\b(4|5)\d\d\b [A-Z]/, out);
      assert.equal(await readFile(join(work, 'back.txt'), 'utf8'), 'cadaver was here\n');
      assert.match(out, /colour.*blue|blue/, out);
      assert.deepEqual(await t.fs.names('docs'), ['a.txt', 'c.txt']);
      assert.equal(await t.fs.text('docs/a.txt'), 'cadaver was here\n');
      assert.equal((await t.store.davLocks.within('alice', 'docs', Date.now())).length, 0, 'unlock removed the lock');
      assert.ok((await t.store.davProperties.list('alice', 'docs/a.txt')).some((p) => p.name === 'colour' && p.xml.includes('blue')), 'propset is persisted');
    });

    test('rclone (webdav, vendor other): sync of a unicode tree up and back, then check finds no difference', { skip: toolSkip('rclone', RCLONE) }, async () => {
      const up = join(home, 'rclone-up');
      const down = join(home, 'rclone-down');
      const files: Record<string, string> = {
        'plain.txt': 'plain',
        'with space/a b c.txt': 'spaces',
        'ünïcödé/日本語 ファイル.txt': 'unicode',
        'odd/100% #1 & more.txt': 'percent hash ampersand',
        'odd/._AppleDouble': 'finder metadata',
        'deep/er/still/x.bin': 'x'.repeat(70_000),
      };
      for (const [p, content] of Object.entries(files)) {
        await mkdir(join(up, p, '..'), { recursive: true });
        await writeFile(join(up, p), content);
      }
      const obscured = (await execFileP(RCLONE, ['obscure', PASSWORD])).stdout.trim();
      const env = {
        ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('RCLONE_'))),
        RCLONE_CONFIG: '/dev/null',
        RCLONE_CONFIG_FCDAV_TYPE: 'webdav',
        RCLONE_CONFIG_FCDAV_URL: `${t.url}/dav/alice/`,
        RCLONE_CONFIG_FCDAV_VENDOR: 'other',
        RCLONE_CONFIG_FCDAV_USER: 'alice',
        RCLONE_CONFIG_FCDAV_PASS: obscured,
      };
      const rclone = async (...args: string[]) => {
        const r = await run(RCLONE, args, { env });
        assert.equal(r.code, 0, `rclone ${args.join(' ')}: ${r.out}`);
        return r.out;
      };
      await rclone('sync', up, 'fcdav:synced');
      for (const [p, content] of Object.entries(files)) assert.equal(await t.fs.text(`synced/${p}`), content, p);
      await rclone('sync', 'fcdav:synced', down);
      for (const [p, content] of Object.entries(files)) {
        const got = await readFile(join(down, p));
        assert.equal(createHash('sha256').update(got).digest('hex'), createHash('sha256').update(content).digest('hex'), p);
      }
      await rclone('check', up, 'fcdav:synced');
      await rclone('check', down, 'fcdav:synced');
      // A change on the server side shows up as a difference, so check can fail.
      await t.fs.put('synced/plain.txt', 'changed on the server');
      const changed = await run(RCLONE, ['check', up, 'fcdav:synced'], { env });
      assert.notEqual(changed.code, 0, changed.out);
    });

    test('rclone under a quota: the upload that would pass it fails with 507 and is not stored; rclone about reads the RFC 4331 figures', { skip: toolSkip('rclone', RCLONE) }, async () => {
      const up = join(home, 'rclone-quota');
      await mkdir(up, { recursive: true });
      await writeFile(join(up, 'small.bin'), Buffer.alloc(30_000, 1));
      await writeFile(join(up, 'big.bin'), Buffer.alloc(90_000, 2));
      await t.store.usage.setQuota('bob', 100_000);
      const env = {
        ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('RCLONE_'))),
        RCLONE_CONFIG: '/dev/null',
        RCLONE_CONFIG_FCQ_TYPE: 'webdav',
        RCLONE_CONFIG_FCQ_URL: `${t.url}/dav/bob/`,
        RCLONE_CONFIG_FCQ_VENDOR: 'other',
        RCLONE_CONFIG_FCQ_USER: 'bob',
        RCLONE_CONFIG_FCQ_PASS: (await execFileP(RCLONE, ['obscure', 'bob-password'])).stdout.trim(),
      };
      const copy = await run(RCLONE, ['copy', up, 'fcq:q', '--transfers', '1', '--retries', '1', '--low-level-retries', '1'], { env });
      assert.notEqual(copy.code, 0, copy.out);
      assert.match(copy.out, /507|Insufficient Storage/i, copy.out);
      const stored = await t.fs.names('q', 'bob');
      assert.equal(stored.length, 1, `exactly one of the two fits: ${stored.join(', ')}`);
      const used = await bytesStored(t, 'bob');
      assert.ok(used <= 100_000);
      const about = await run(RCLONE, ['about', 'fcq:', '--json'], { env });
      assert.equal(about.code, 0, about.out);
      const figures = JSON.parse(about.out.slice(about.out.indexOf('{'))) as { used?: number; free?: number };
      assert.equal(figures.used, used, about.out);
      assert.equal(figures.free, 100_000 - used, about.out);
      await t.store.usage.setQuota('bob', null);
    });
  });
}
