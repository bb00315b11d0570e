import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { bearer } from '../helpers/client.js';
import * as img from '../helpers/images.js';
import { garbage, missingMediaTools, pdf, video } from '../helpers/media.js';
import { writeNewKeyFile } from '../../src/storage/encrypted/key-file.js';
import { DEFAULT_THUMBNAIL_LIMITS } from '../../src/services/thumbnails.js';

const missingTools = await missingMediaTools();
/** A hostile file is answered within the tool's time limit and the time to start it; nothing waits longer. */
const ANSWER_BOUND_MS = DEFAULT_THUMBNAIL_LIMITS.toolTimeoutMs + 5000;

const settings: { name: string; storage: (typeof BACKENDS)[number][0]; skip: string | undefined; encrypted: boolean }[] = [
  ...BACKENDS.map(([storage, skip]) => ({ name: storage, storage, skip: missingTools ?? skip, encrypted: false })),
  ...BACKENDS.filter(([s]) => s !== 'cluster').map(([storage, skip]) => ({ name: `${storage} with encryption at rest`, storage, skip: missingTools ?? skip, encrypted: true })),
];

for (const { name, storage, skip, encrypted } of settings) {
  describe(`PDF and video thumbnails on ${name}`, { skip }, () => {
    let t: TestApp;
    let auth: Record<string, string>;
    let keyDir: string | undefined;
    const url = (path: string, size: number = 256) => `${t.url}/storage/alice/${path}?thumbnail=${size}`;
    const get = (u: string) => fetch(u, { headers: auth });
    const body = async (res: Response) => Buffer.from(await res.arrayBuffer());

    before(async () => {
      let flags: Record<string, string> = {};
      if (encrypted) {
        keyDir = await mkdtemp(join(tmpdir(), 'fc-key-'));
        await writeNewKeyFile(join(keyDir, 'key'));
        flags = { encryptionKeyFile: join(keyDir, 'key') };
      }
      t = await startApp({ users: ['alice'], storage, flags });
      auth = bearer((await t.login('alice')).access_token);
      await t.fs.put('docs/report.pdf', pdf(200, 100));
      await t.fs.put('docs/clip.mp4', await video(320, 240));
      await t.fs.put('docs/clip.webm', await video(160, 240, 'webm'));
    });
    after(async () => {
      await t?.close();
      if (keyDir) await rm(keyDir, { recursive: true, force: true });
    });

    test("a PDF's thumbnail is its first page, drawn to fit and cached", async () => {
      const res = await get(url('docs/report.pdf'));
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-type'), 'image/webp');
      assert.equal(res.headers.get('x-thumbnail'), 'generated');
      const data = await body(res);
      const d = await img.describe(data);
      assert.deepEqual([d.format, d.width, d.height], ['webp', 256, 128]);
      const topRight = await img.pixel(data, 200, 30);
      const bottomLeft = await img.pixel(data, 50, 100);
      assert.ok((topRight[0] as number) > 200 && (topRight[2] as number) < 60, `red top right, got ${topRight.join(',')}`);
      assert.ok((bottomLeft[2] as number) > 200 && (bottomLeft[0] as number) < 60, `blue bottom left, got ${bottomLeft.join(',')}`);
      const again = await get(url('docs/report.pdf'));
      assert.equal(again.headers.get('x-thumbnail'), 'cached');
      assert.ok((await body(again)).equals(data));
    });

    test("a video's thumbnail is a frame, in each size, never enlarged", async () => {
      for (const [path, size, w, h] of [['docs/clip.mp4', 256, 256, 192], ['docs/clip.mp4', 64, 64, 48], ['docs/clip.mp4', 1024, 320, 240], ['docs/clip.webm', 256, 160, 240]] as const) {
        const res = await get(url(path, size));
        assert.equal(res.status, 200, `${path} ${size}`);
        const d = await img.describe(await body(res));
        assert.deepEqual([d.format, d.width, d.height], ['webp', w, h], `${path} ${size}`);
      }
    });

    test('garbage bytes, a PDF named .mp4 and a playlist naming a local file give 404 no_thumbnail, soon', async () => {
      await t.fs.put('bad/noise.pdf', garbage(50_000));
      await t.fs.put('bad/noise.mp4', garbage(50_000));
      await t.fs.put('bad/report.mp4', pdf(200, 100));
      // An HLS playlist would have ffmpeg open the files it names: only the container formats of videos are read.
      await t.fs.put('bad/playlist.mp4', `#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1,\nfile://${join(process.cwd(), 'package.json')}\n#EXT-X-ENDLIST\n`);
      for (const path of ['bad/noise.pdf', 'bad/noise.mp4', 'bad/report.mp4', 'bad/playlist.mp4']) {
        const started = Date.now();
        const res = await get(url(path));
        assert.equal(res.status, 404, path);
        assert.equal(((await res.json()) as { error: string }).error, 'no_thumbnail', path);
        assert.ok(Date.now() - started < ANSWER_BOUND_MS, `${path} answered in ${Date.now() - started} ms`);
      }
    });

    test('a PDF page ten kilometres wide is drawn at the size asked, never at its own', async () => {
      await t.fs.put('bad/huge-page.pdf', pdf(30_000_000, 15_000_000));
      const started = Date.now();
      const res = await get(url('bad/huge-page.pdf', 64));
      assert.ok(Date.now() - started < ANSWER_BOUND_MS, `answered in ${Date.now() - started} ms`);
      assert.equal(res.status, 200);
      const d = await img.describe(await body(res));
      assert.deepEqual([d.width, d.height], [64, 32]);
    });
  });
}
