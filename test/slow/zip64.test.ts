// Slow (minutes, 4+ GiB through the server twice): run by CI through FC_SLOW_TESTS=1 (.ci/run), by a
// developer with `FC_SLOW_TESTS=1 npm test` or `CI=1 node scripts/run-tests.mjs test/slow/`.
//
// A folder zip past 4 GiB switches to ZIP64 and real tools accept it; one just below 4 GiB has no
// ZIP64 record at all. The trees are sparse files (truncate) on local disk, and the downloaded zip is
// written sparse too (all-zero blocks skipped), so the test needs little disk.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApp, type TestApp } from '../helpers/app.js';
import { bearer } from '../helpers/client.js';
import { run, ZIP_TOOLS, zipToolsSkip } from '../helpers/zip-tools.js';

const GiB = 2 ** 30;
const BLOCK = 1024 * 1024;

/** Downloads url into path, leaving holes for all-zero blocks; returns the size and the last 64 KiB. */
async function downloadSparse(url: string, headers: Record<string, string>, path: string): Promise<{ size: number; tail: Buffer; headers: Headers }> {
  const res = await fetch(url, { headers });
  assert.equal(res.status, 200);
  const fh = await open(path, 'w');
  let at = 0;
  let pending: Buffer[] = [];
  let pendingLen = 0;
  let tail = Buffer.alloc(0);
  const zero = Buffer.alloc(BLOCK);
  const flush = async () => {
    const block = Buffer.concat(pending, pendingLen);
    if (!block.equals(zero.subarray(0, block.length))) await fh.write(block, 0, block.length, at);
    at += block.length;
    tail = Buffer.concat([tail, block]).subarray(-65536);
    pending = [];
    pendingLen = 0;
  };
  try {
    for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
      let c = Buffer.from(chunk);
      while (c.length > 0) {
        const take = Math.min(c.length, BLOCK - pendingLen);
        pending.push(c.subarray(0, take));
        pendingLen += take;
        c = c.subarray(take);
        if (pendingLen === BLOCK) await flush();
      }
    }
    if (pendingLen > 0) await flush();
    await fh.truncate(at);
  } finally {
    await fh.close();
  }
  return { size: at, tail, headers: res.headers };
}

const has = (b: Buffer, sig: number) => {
  const s = Buffer.alloc(4);
  s.writeUInt32LE(sig);
  return b.includes(s);
};

describe('ZIP64 folder zips (slow, local disk)', { skip: zipToolsSkip() }, () => {
  let t: TestApp;
  let auth: Record<string, string>;
  let work: string;
  before(async () => {
    t = await startApp({ users: ['alice'] });
    auth = bearer((await t.login('alice')).access_token);
    work = await mkdtemp(join(tmpdir(), 'fc-zip64-'));
  });
  after(async () => {
    await t.close();
    await rm(work, { recursive: true, force: true });
  });

  /** A folder of sparse files (name → size) plus a small non-zero file and an empty folder. */
  async function sparseTree(folder: string, sizes: Record<string, number>): Promise<void> {
    const dir = join(t.paths.storage, 'alice', folder);
    await mkdir(join(dir, 'empty'), { recursive: true });
    for (const [name, size] of Object.entries(sizes)) {
      const fh = await open(join(dir, name), 'w');
      // A marker at the start and end, so the CRC covers more than zeros; the rest is a hole.
      await fh.write(Buffer.from(`start of ${name}`), 0, undefined, 0);
      await fh.truncate(size);
      await fh.write(Buffer.from(`end of ${name}`), 0, undefined, size - 32);
      await fh.close();
    }
    await writeFile(join(dir, 'zz-after.txt'), 'a small file after the big ones');
  }

  async function check(zip: string): Promise<void> {
    const unzip = await run(ZIP_TOOLS.unzip, ['-t', zip], 900_000);
    assert.match(unzip, /No errors detected/, unzip);
    const seven = await run(ZIP_TOOLS.sevenZip, ['t', zip], 900_000);
    assert.match(seven, /Everything is Ok/, seven);
    assert.doesNotMatch(seven, /Warning|Headers Error/i, seven);
  }

  test('a tree past 4 GiB (one file over 4 GiB, entries past the 4 GiB offset) uses ZIP64, and unzip -t / 7zz t accept it', async () => {
    await sparseTree('huge', { 'a-over-4GiB.bin': 4 * GiB + 12_345, 'b-after.bin': 5 * BLOCK });
    const zip = join(work, 'huge.zip');
    const { size, tail, headers } = await downloadSparse(`${t.url}/storage/alice/huge/?zip=1`, auth, zip);
    assert.equal(headers.get('content-length'), String(size));
    assert.ok(size > 4 * GiB);
    assert.ok(has(tail, 0x06064b50), 'a ZIP64 end of central directory record');
    assert.ok(has(tail, 0x07064b50), 'a ZIP64 end of central directory locator');
    await check(zip);
    const listing = await run(ZIP_TOOLS.unzip, ['-Zv', zip]);
    assert.match(listing, /huge\/a-over-4GiB\.bin[\s\S]*file system or operating system of origin/);
    assert.match(await run(ZIP_TOOLS.unzip, ['-l', zip]), /4294979641\s+\S+\s+\S+\s+huge\/a-over-4GiB\.bin/, 'the full 64-bit size');
    const list = await run(ZIP_TOOLS.bsdtar, ['-tf', zip]);
    assert.deepEqual(list.split('\n').filter(Boolean).sort(), ['huge/', 'huge/a-over-4GiB.bin', 'huge/b-after.bin', 'huge/empty/', 'huge/zz-after.txt']);
  });

  test('a tree just below 4 GiB has no ZIP64 record or field', async () => {
    await sparseTree('below', { 'almost-4GiB.bin': 0xffffffff - 4 * BLOCK });
    const zip = join(work, 'below.zip');
    const { size, tail } = await downloadSparse(`${t.url}/storage/alice/below/?zip=1`, auth, zip);
    assert.ok(size < 0xffffffff);
    assert.ok(!has(tail, 0x06064b50) && !has(tail, 0x07064b50), 'no ZIP64 end records');
    // The central directory is in the tail: no ZIP64 extra (id 0x0001, then its length) in any header.
    const cd = tail.subarray(tail.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02])));
    assert.ok(!cd.includes(Buffer.from([0x01, 0x00, 0x10, 0x00])) && !cd.includes(Buffer.from([0x01, 0x00, 0x08, 0x00])), 'no ZIP64 extra field');
    assert.ok(!cd.includes(Buffer.from([0xff, 0xff, 0xff, 0xff])), 'no 0xFFFFFFFF placeholder');
    await check(zip);
  });
});
