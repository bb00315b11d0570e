import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { bearer, postJson } from '../helpers/client.js';
import * as img from '../helpers/images.js';

/** Every file below dir (relative paths), or [] when it does not exist. */
async function filesBelow(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string, rel: string) => {
    for (const e of await readdir(d, { withFileTypes: true }).catch(() => [])) {
      if (e.isDirectory()) await walk(join(d, e.name), `${rel}${e.name}/`);
      else out.push(`${rel}${e.name}`);
    }
  };
  await walk(dir, '');
  return out.sort();
}

for (const [storage, skip] of BACKENDS) {
  describe(`thumbnails on ${storage}`, { skip }, () => {
    let t: TestApp;
    let auth: Record<string, string>;
    let bobAuth: Record<string, string>;
    const url = (path: string, size: number | string = 256, user = 'alice') => `${t.url}/storage/${user}/${path}?thumbnail=${size}`;
    const get = (u: string, headers: Record<string, string> = auth, method = 'GET') => fetch(u, { method, headers });
    const body = async (res: Response) => Buffer.from(await res.arrayBuffer());

    before(async () => {
      t = await startApp({ users: ['alice', 'bob'], storage });
      auth = bearer((await t.login('alice')).access_token);
      bobAuth = bearer((await t.login('bob')).access_token);
      await t.fs.put('photos/rotated.jpg', await img.jpegOrientation6());
      await t.fs.put('photos/alpha.png', await img.pngWithAlpha());
      await t.fs.put('photos/anim.gif', await img.animatedGif());
      await t.fs.put('photos/pic.webp', await img.webp());
      await t.fs.put('photos/pic.avif', await img.avif());
      await t.fs.put('photos/pic.tiff', await img.tiff());
      await t.fs.put('photos/big.jpg', await img.jpeg(3000, 2000));
      await t.fs.put('photos/bomb.png', img.pngBomb());
      await t.fs.put('photos/notes.txt', 'just text');
      await t.fs.put('photos/corrupt.jpg', Buffer.concat([(await img.jpeg(64, 64)).subarray(0, 20), Buffer.alloc(200, 7)]));
      await t.fs.put('photos/text-named.png', 'this is not a PNG at all');
      await t.fs.put('secret.jpg', await img.jpeg(100, 100, img.BLUE), 'bob');
    });
    after(() => t.close());

    test('a JPEG with EXIF orientation 6 gives a rotated WebP without metadata, private, with an ETag', async () => {
      const res = await get(url('photos/rotated.jpg'));
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-type'), 'image/webp');
      assert.equal(res.headers.get('cache-control'), 'private, no-cache');
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
      assert.match(res.headers.get('etag') ?? '', /^"t256-[A-Za-z0-9_-]+"$/);
      const data = await body(res);
      assert.equal(res.headers.get('content-length'), String(data.length));
      const d = await img.describe(data);
      assert.deepEqual({ format: d.format, width: d.width, height: d.height, exif: d.exif }, { format: 'webp', width: 128, height: 256, exif: false });
      const px = await img.pixel(data, 64, 128);
      assert.ok((px[0] as number) > 200 && (px[1] as number) < 60, `red, got ${px.join(',')}`);
    });

    test('the three sizes fit their box and never enlarge', async () => {
      for (const [size, w, h] of [[64, 64, 43], [256, 256, 171], [1024, 1024, 683]] as const) {
        const d = await img.describe(await body(await get(url('photos/big.jpg', size))));
        assert.deepEqual([d.width, d.height], [w, h], `size ${size}`);
      }
      const small = await img.describe(await body(await get(url('photos/pic.webp', 1024))));
      assert.deepEqual([small.width, small.height], [120, 90], 'a small image keeps its size');
    });

    test('a PNG keeps its transparency', async () => {
      const data = await body(await get(url('photos/alpha.png')));
      const d = await img.describe(data);
      assert.equal(d.hasAlpha, true);
      assert.deepEqual([d.width, d.height], [256, 256]);
      assert.equal((await img.pixel(data, 5, 5))[3], 0, 'corner transparent');
      assert.equal((await img.pixel(data, 128, 128))[3], 255, 'middle opaque');
    });

    test('an animated GIF gives a still of its first frame', async () => {
      const data = await body(await get(url('photos/anim.gif')));
      const d = await img.describe(data);
      assert.equal(d.pages, 1);
      assert.deepEqual([d.width, d.height], [80, 60]);
      const px = await img.pixel(data, 40, 30);
      assert.ok((px[0] as number) > 200 && (px[2] as number) < 60, `the red first frame, got ${px.join(',')}`);
    });

    test('WebP, AVIF and TIFF are drawn', async () => {
      for (const name of ['pic.webp', 'pic.avif', 'pic.tiff']) {
        const res = await get(url(`photos/${name}`, 64));
        assert.equal(res.status, 200, name);
        const d = await img.describe(await body(res));
        assert.deepEqual([d.format, d.width, d.height], ['webp', 64, 48], name);
      }
    });

    test('a 20 000 × 20 000 PNG bomb is refused from its header with 404 no_thumbnail', async () => {
      const started = Date.now();
      const res = await get(url('photos/bomb.png'));
      assert.equal(res.status, 404);
      assert.equal(((await res.json()) as { error: string }).error, 'no_thumbnail');
      assert.ok(Date.now() - started < 5000, 'refused without decoding 400 megapixels');
    });

    test('an SVG is rasterized without fetching its external images, styles or scripts', async () => {
      const seen: string[] = [];
      const listener = createServer((req, res) => {
        seen.push(req.url ?? '');
        res.end();
      });
      await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
      try {
        const address = listener.address();
        const port = typeof address === 'object' && address ? address.port : 0;
        await t.fs.put('photos/drawing.svg', img.svgWithExternalImage(`http://127.0.0.1:${port}`));
        const res = await get(url('photos/drawing.svg'));
        assert.equal(res.status, 200);
        const data = await body(res);
        const d = await img.describe(data);
        assert.deepEqual([d.format, d.width, d.height], ['webp', 200, 100]);
        const px = await img.pixel(data, 50, 50);
        assert.ok((px[1] as number) > 200 && (px[0] as number) < 60, `the green background where the external image would be, got ${px.join(',')}`);
        await new Promise((r) => setTimeout(r, 300));
        assert.deepEqual(seen, [], 'no request reached the listener');
      } finally {
        listener.close();
      }
    });

    test('a text file, a corrupt JPEG, text named .png and a folder give 404 no_thumbnail; a bad size 400', async () => {
      for (const path of ['photos/notes.txt', 'photos/corrupt.jpg', 'photos/text-named.png', 'photos', 'photos/', 'photos/corrupt.jpg']) {
        const res = await get(url(path));
        assert.equal(res.status, 404, path);
        assert.equal(((await res.json()) as { error: string }).error, 'no_thumbnail', path);
      }
      for (const size of ['128', 'big', '']) {
        const res = await get(url('photos/rotated.jpg', size));
        assert.equal(res.status, 400, `size ${size}`);
      }
      assert.equal((await get(url('photos/missing.jpg'))).status, 404);
    });

    test('If-None-Match with the ETag gives 304; HEAD gives the headers', async () => {
      const first = await get(url('photos/pic.webp'));
      const etag = first.headers.get('etag') as string;
      const data = await body(first);
      const again = await get(url('photos/pic.webp'), { ...auth, 'if-none-match': etag });
      assert.equal(again.status, 304);
      assert.equal(again.headers.get('etag'), etag);
      const head = await get(url('photos/pic.webp'), auth, 'HEAD');
      assert.equal(head.status, 200);
      assert.equal(head.headers.get('content-length'), String(data.length));
      assert.equal(head.headers.get('etag'), etag);
    });

    test('50 concurrent requests for one file draw it once, and all get the same bytes', async () => {
      await t.fs.put('photos/concurrent.jpg', await img.jpeg(2400, 1600));
      const answers = await Promise.all(Array.from({ length: 50 }, () => get(url('photos/concurrent.jpg', 1024))));
      const outcomes = answers.map((r) => r.headers.get('x-thumbnail'));
      assert.deepEqual(answers.map((r) => r.status), Array(50).fill(200));
      const bodies = await Promise.all(answers.map(body));
      assert.equal(outcomes.filter((o) => o === 'generated').length, 1, `outcomes: ${outcomes.join(' ')}`);
      for (const b of bodies) assert.ok(b.equals(bodies[0] as Buffer));
      assert.equal((await get(url('photos/concurrent.jpg', 1024))).headers.get('x-thumbnail'), 'cached');
    });

    test('replacing the file gives a new thumbnail and ETag', async () => {
      await t.fs.put('photos/changing.jpg', await img.jpeg(400, 200));
      const before = await get(url('photos/changing.jpg'));
      const d1 = await img.describe(await body(before));
      await t.fs.put('photos/changing.jpg', await img.jpeg(200, 400, img.BLUE));
      const after = await get(url('photos/changing.jpg'), { ...auth, 'if-none-match': before.headers.get('etag') as string });
      assert.equal(after.status, 200);
      assert.notEqual(after.headers.get('etag'), before.headers.get('etag'));
      assert.equal(after.headers.get('x-thumbnail'), 'generated');
      const d2 = await img.describe(await body(after));
      assert.deepEqual([d1.width, d1.height, d2.width, d2.height], [256, 128, 128, 256]);
    });

    test("another user's file, or no token, gives 401", async () => {
      assert.equal((await get(url('secret.jpg', 256, 'bob'))).status, 401);
      assert.equal((await get(url('secret.jpg', 256, 'bob'), {})).status, 401);
      assert.equal((await get(url('photos/rotated.jpg'), bobAuth)).status, 401);
      assert.equal((await get(url('secret.jpg', 256, 'bob'), bobAuth)).status, 200);
    });

    test('a path token for the file gives its thumbnail, and only its own', async () => {
      const res = await postJson(`${t.url}/storage/alice/photos/rotated.jpg`, { action: 'MakePathToken' }, auth);
      const { token } = (await res.json()) as { token: string };
      const ok = await fetch(`${url('photos/rotated.jpg')}&token=${encodeURIComponent(token)}`);
      assert.equal(ok.status, 200);
      assert.equal(ok.headers.get('content-type'), 'image/webp');
      assert.equal((await fetch(`${url('photos/alpha.png')}&token=${encodeURIComponent(token)}`)).status, 401);
    });

    test('a share link gives thumbnails of its files, counted by their bytes against the file’s size', async () => {
      const created = await postJson(`${t.url}/api/shares`, { path: '/alice/photos', max_downloads: 1 }, auth);
      assert.equal(created.status, 201);
      const { id } = (await created.json()) as { id: string };
      const res = await fetch(`${t.url}/share/${id}/rotated.jpg?thumbnail=64`);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-type'), 'image/webp');
      const d = await img.describe(await body(res));
      assert.deepEqual([d.width, d.height], [32, 64]);
      assert.equal((await fetch(`${t.url}/share/${id}/notes.txt?thumbnail=64`)).status, 404);
      const thumbBytes = Number(res.headers.get('content-length'));
      const fileBytes = ((await t.fs.read('photos/rotated.jpg')) as Buffer).length;
      const listed = (await ((await fetch(`${t.url}/api/shares`, { headers: auth })).json())) as { shares: { id: string; downloads: number }[] };
      assert.equal(listed.shares.find((s) => s.id === id)?.downloads, Math.round((thumbBytes / fileBytes) * 1e6) / 1e6);
      assert.equal((await fetch(`${t.url}/share/${id}/rotated.jpg`)).status, 404, 'a whole copy more would pass the limit');
      assert.equal((await fetch(`${t.url}/share/${id}/rotated.jpg`, { headers: { range: `bytes=${thumbBytes}-` } })).status, 206, 'the rest of the one copy is there');
    });

    test('the cache lives under data/cache/thumbnails, never in a user\'s folder', async () => {
      assert.deepEqual(await t.fs.names('photos'), [
        'alpha.png', 'anim.gif', 'big.jpg', 'bomb.png', 'changing.jpg', 'concurrent.jpg', 'corrupt.jpg', 'drawing.svg',
        'notes.txt', 'pic.avif', 'pic.tiff', 'pic.webp', 'rotated.jpg', 'text-named.png',
      ]);
      const cached = await filesBelow(join(t.dataDir, 'cache', 'thumbnails'));
      assert.ok(cached.some((f) => f.endsWith('.webp')), 'drawn thumbnails are cached');
      assert.ok(cached.some((f) => f.endsWith('.none')), 'an undrawable file is remembered');
      assert.ok(cached.every((f) => /^[A-Za-z0-9_-]{2}\/[A-Za-z0-9_-]{43}\.(webp|none)$/.test(f)), cached.join(' '));
      if (t.storage === 'file') assert.deepEqual(await filesBelow(join(t.paths.storage, 'alice', '.cache')), []);
    });
  });
}
