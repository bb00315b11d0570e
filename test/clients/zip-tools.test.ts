// Folder zips checked by the real tools people open them with: Info-ZIP unzip, bsdtar (libarchive),
// 7-Zip and Python's zipfile test and extract them, and the extracted names and bytes must equal the
// originals; curl cut off mid-download and resumed with -C - ends with the very same zip. On every
// backend. scripts/test-services.sh installs the tools; without them this skips here and fails in CI.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { startDownloadCutter } from '../helpers/cutting-proxy.js';
import { checkZipWithTools, run, ZIP_TOOLS, zipToolsSkip } from '../helpers/zip-tools.js';

const files: [string, Buffer][] = [
  ['tree/readme.txt', Buffer.from('top level\n')],
  ['tree/zero-byte', Buffer.alloc(0)],
  ['tree/caf\u00e9 (NFC).txt', Buffer.from('composed é')],
  ['tree/nfd/cafe\u0301.txt', Buffer.from('decomposed é')],
  ['tree/表情/😀🎉.txt', Buffer.from('emoji in a CJK folder')],
  ['tree/中文目录/文件.bin', randomBytes(300_000)],
  ['tree/a/b/c/d/e/deep.txt', Buffer.from('nested five deep')],
  ['tree/big.bin', randomBytes(3 * 1024 * 1024)],
  ['tree/spaces and (brackets) [x].txt', Buffer.from('odd ascii')],
];
const emptyFolders = ['tree/empty', 'tree/a/empty-too', 'tree/空'];

function wanted(): Map<string, Buffer | null> {
  const want = new Map<string, Buffer | null>();
  const addFolders = (p: string) => {
    const parts = p.split('/');
    for (let i = 1; i < parts.length; i++) want.set(parts.slice(0, i).join('/'), null);
  };
  for (const [p, b] of files) {
    addFolders(p);
    want.set(p, b);
  }
  for (const f of emptyFolders) {
    addFolders(f);
    want.set(f, null);
  }
  return want;
}

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const skipTools = zipToolsSkip();

for (const [storage, backendSkip] of BACKENDS) {
  describe(`folder zips and real tools on ${storage}`, { skip: backendSkip ?? skipTools }, () => {
    let t: TestApp;
    let token: string;
    let work: string;
    before(async () => {
      t = await startApp({ users: ['alice'], storage });
      token = (await t.login('alice')).access_token;
      for (const [p, b] of files) await t.fs.put(p, b);
      for (const f of emptyFolders) await t.fs.mkdir(f);
      work = await mkdtemp(join(tmpdir(), 'fc-zip-tools-'));
    });
    after(async () => {
      await t.close();
      await rm(work, { recursive: true, force: true });
    });
    const curl = (out: string) => run(ZIP_TOOLS.curl, ['-sS', '--fail', '-H', `Authorization: Bearer ${token}`, '-o', out, `${t.url}/storage/alice/tree/?zip=1`]);

    test('unzip, bsdtar, 7-Zip and Python accept the zip and extract the exact tree (unicode names, empty folders, a zero-byte file)', async () => {
      const zip = join(work, 'whole.zip');
      await curl(zip);
      await checkZipWithTools(zip, wanted());
    });

    test('a curl download cut off and resumed with -C - gives the same sha256 as an uninterrupted one', async () => {
      const whole = join(work, 'whole2.zip');
      await curl(whole);
      const size = (await stat(whole)).size;
      for (const cutAt of [1_000_000, size - 300]) {
        // The first connection drops after cutAt bytes (inside big.bin, then inside the central directory).
        const cutter = await startDownloadCutter(t.url, cutAt);
        try {
          const part = join(work, `resumed-${cutAt}.zip`);
          const url = `${cutter.url}/storage/alice/tree/?zip=1`;
          const auth = ['-sS', '--fail', '-H', `Authorization: Bearer ${token}`, '-o', part];
          await assert.rejects(run(ZIP_TOOLS.curl, [...auth, url]), /exit code 18|exit code 56|transfer closed|Recv failure/i);
          assert.equal(cutter.cuts, 1);
          const got = (await stat(part)).size;
          assert.ok(got > 0 && got < size, `interrupted after ${got} of ${size} bytes`);
          await run(ZIP_TOOLS.curl, [...auth, '-C', '-', url]);
          assert.equal(sha(await readFile(part)), sha(await readFile(whole)), `resumed after ${got} bytes`);
        } finally {
          await cutter.close();
        }
      }
    });

    if (storage === 'file') {
      test('a symbolic link inside the folder is not followed (local disk)', async () => {
        await t.fs.put('linked/real.txt', 'real');
        const dir = join(t.paths.storage, 'alice', 'linked');
        await symlink('/etc', join(dir, 'etc-link'));
        await symlink('/etc/hostname', join(dir, 'file-link'));
        const zip = join(work, 'linked.zip');
        await run(ZIP_TOOLS.curl, ['-sS', '--fail', '-H', `Authorization: Bearer ${token}`, '-o', zip, `${t.url}/storage/alice/linked/?zip=1`]);
        await checkZipWithTools(zip, new Map([['linked', null], ['linked/real.txt', Buffer.from('real')]]));
      });

      test('names on disk that break the name rules never reach the zip: the tools extract only the good tree (local disk)', async () => {
        await t.fs.put('hostile/good.txt', 'good');
        const dir = join(t.paths.storage, 'alice', 'hostile');
        await writeFile(join(dir, '..\\..\\x.bat'), 'evil');
        await mkdir(join(dir, 'dir\\..\\..'));
        await writeFile(join(dir, 'dir\\..\\..', 'y.bat'), 'evil');
        const zip = join(work, 'hostile.zip');
        await run(ZIP_TOOLS.curl, ['-sS', '--fail', '-H', `Authorization: Bearer ${token}`, '-o', zip, `${t.url}/storage/alice/hostile/?zip=1`]);
        assert.ok(!(await readFile(zip)).includes('.bat'), 'no entry of a hostile name');
        await checkZipWithTools(zip, new Map([['hostile', null], ['hostile/good.txt', Buffer.from('good')]]));
      });
    }
  });
}
