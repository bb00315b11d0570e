import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { lstat, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const execFileP = promisify(execFile);

/** Debian's zip checkers (scripts/test-services.sh installs them). */
export const ZIP_TOOLS = { unzip: '/usr/bin/unzip', bsdtar: '/usr/bin/bsdtar', sevenZip: '/usr/bin/7zz', python: '/usr/bin/python3', curl: '/usr/bin/curl' } as const;

/** Why the zip tool tests skip (outside CI only); in CI they run and fail on a missing tool. */
export function zipToolsSkip(): string | undefined {
  const missing = Object.values(ZIP_TOOLS).filter((p) => !existsSync(p));
  if (missing.length === 0 || process.env.CI) return undefined;
  return `${missing.join(', ')} not installed (scripts/test-services.sh installs them); these tests run in CI`;
}

// UTF-8 locale: Info-ZIP unzip and bsdtar turn UTF-8 names into the locale's charset.
const env = { ...process.env, LC_ALL: 'C.UTF-8', LANG: 'C.UTF-8' };
export const run = async (cmd: string, args: string[], timeout = 300_000): Promise<string> => {
  try {
    return (await execFileP(cmd, args, { env, maxBuffer: 64 * 1024 * 1024, timeout })).stdout;
  } catch (e) {
    const err = e as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${cmd} ${args.join(' ')} failed: ${err.message}\n${err.stdout ?? ''}\n${err.stderr ?? ''}`, { cause: e });
  }
};

/** Every path below dir: files with their bytes, folders as null; links would show as 'link'. */
export async function treeOf(dir: string, below = ''): Promise<Map<string, Buffer | null | 'link'>> {
  const out = new Map<string, Buffer | null | 'link'>();
  for (const name of await readdir(join(dir, below))) {
    const rel = below ? `${below}/${name}` : name;
    const s = await lstat(join(dir, rel));
    if (s.isSymbolicLink()) out.set(rel, 'link');
    else if (s.isDirectory()) {
      out.set(rel, null);
      for (const [k, v] of await treeOf(dir, rel)) out.set(k, v);
    } else out.set(rel, await readFile(join(dir, rel)));
  }
  return out;
}

function assertTree(got: Map<string, Buffer | null | 'link'>, wantExact: Map<string, Buffer | null>, tool: string, nfc = false): void {
  const want = nfc ? new Map([...wantExact].map(([k, v]) => [k.normalize('NFC'), v])) : wantExact;
  assert.deepEqual([...got.keys()].sort(), [...want.keys()].sort(), `${tool}: extracted names`);
  for (const [k, v] of want) {
    const g = got.get(k);
    if (v === null) assert.equal(g, null, `${tool}: ${k} is a folder`);
    else assert.ok(Buffer.isBuffer(g) && g.equals(v), `${tool}: bytes of ${k}`);
  }
}

const PY_TEST = 'import sys, zipfile\nz = zipfile.ZipFile(sys.argv[1])\nbad = z.testzip()\nassert bad is None, bad\nz.extractall(sys.argv[2])\nprint("\\n".join(z.namelist()))';

/**
 * Tests the zip with unzip -t, bsdtar -tf, 7zz t and Python's testzip(),
 * then extracts it with each and compares names and bytes with `want`
 * (paths as extracted, folders null).
 */
export async function checkZipWithTools(zipPath: string, want: Map<string, Buffer | null>): Promise<void> {
  const names = [...want].map(([k, v]) => (v === null ? `${k}/` : k)).sort();
  const work = await mkdtemp(join(tmpdir(), 'fc-zip-check-'));
  try {
    const unzipOut = await run(ZIP_TOOLS.unzip, ['-t', zipPath]);
    assert.match(unzipOut, /No errors detected/, unzipOut);
    await run(ZIP_TOOLS.unzip, ['-q', zipPath, '-d', join(work, 'unzip')]);
    assertTree(await treeOf(join(work, 'unzip')), want, 'unzip');

    // libarchive turns every UTF-8 name into NFC on reading (any zip's, not only ours): compare in NFC.
    const listed = (await run(ZIP_TOOLS.bsdtar, ['-tf', zipPath])).split('\n').filter(Boolean).sort();
    assert.deepEqual(listed, names.map((n) => n.normalize('NFC')).sort(), 'bsdtar -tf');
    await run('/bin/mkdir', [join(work, 'bsdtar')]);
    await run(ZIP_TOOLS.bsdtar, ['-xf', zipPath, '-C', join(work, 'bsdtar')]);
    assertTree(await treeOf(join(work, 'bsdtar')), want, 'bsdtar', true);

    const seven = await run(ZIP_TOOLS.sevenZip, ['t', zipPath]);
    assert.match(seven, /Everything is Ok/, seven);
    assert.doesNotMatch(seven, /Warning|Headers Error|Unexpected end/i, seven);
    await run(ZIP_TOOLS.sevenZip, ['x', '-y', `-o${join(work, '7zz')}`, zipPath]);
    assertTree(await treeOf(join(work, '7zz')), want, '7zz');

    const py = (await run(ZIP_TOOLS.python, ['-c', PY_TEST, zipPath, join(work, 'python')])).split('\n').filter(Boolean).sort();
    assert.deepEqual(py, names, 'python zipfile namelist');
    assertTree(await treeOf(join(work, 'python')), want, 'python zipfile');
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
