// Streamed folder listings (issue 18): the JSON answer of GET /storage/<user>/<folder>/, of a
// share link and of a WebDAV collection's GET is streamed from the backend's sorted listing, and
// must be byte for byte what the old path gave: every entry from list(), sorted here by
// compareListed, mapped and JSON.stringify'd once. Every backend; links on the local disk.
import { indexHolds } from '../../src/routes/listing-reply.js';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { bearer, encodePath, postJson } from '../helpers/client.js';
import { compareListed, listAll } from '../../src/storage/backend.js';
import { isValidName } from '../../src/domain/names.js';
import { keyChild, type StorageKey } from '../../src/domain/storage-path.js';

const keyOf = (path: string, user = 'alice'): StorageKey => ({ user, segments: path === '' ? [] : path.split('/') });

/** Folders and files interleaved by name, prefixes of each other, case, accents (composed and not), astral and private-use characters, JSON's special characters. */
const FOLDERS = ['a', 'a-b', 'empty', 'B', 'Ü', '😀dir', 'z"q'];
const FILES = ['a.b', 'a b.txt', 'A.txt', 'b', 'é.txt', 'e\u0301.txt', '😀.txt', '\uffee.txt', 'say "hi".txt', 'tab\there', 'line\u2028sep', '.hidden', '~tilde', '#1', 'ä'];
const BIG = 2500;

for (const [storage, skip] of BACKENDS) {
  describe(`streamed folder listings on ${storage}`, { skip }, () => {
    let t: TestApp;
    let auth: Record<string, string>;

    /** The old answer: list() collected, sorted once here, mapped and stringified whole. */
    /** The listing as JSON.stringify gives it: for an account (not a share link's visitor), each entry with the index's sync fields (docs/api.md "Sync fields"). */
    const reference = async (path: string, sync = true) => {
      const entries = (await listAll(t.backend, keyOf(path))).sort(compareListed);
      const known = await t.store.search.identities('alice', entries.map((e) => (path === '' ? e.name : `${path}/${e.name}`)));
      if (!sync) return JSON.stringify({ entries: entries.map((e) => ({ is_file: e.isFile, name: e.name, size: e.size, modified: e.modified.toISOString() })) });
      return JSON.stringify({
        entries: entries.map((e) => {
          const row = known.get(path === '' ? e.name : `${path}/${e.name}`);
          const same = row !== undefined && indexHolds(row, e);
          const base = { is_file: e.isFile, name: e.name, size: e.size, modified: e.modified.toISOString(), id: row?.id ?? null };
          return e.isFile ? { ...base, sha256: same ? row.sha256 : null, etag: same ? row.etag : null } : base;
        }),
      });
    };
    const getBytes = async (url: string, headers: Record<string, string> = auth) => {
      const res = await fetch(url, { headers });
      assert.equal(res.status, 200, url);
      assert.equal(res.headers.get('content-type'), 'application/json; charset=utf-8');
      assert.equal(res.headers.get('cache-control'), 'no-cache');
      return { res, bytes: Buffer.from(await res.arrayBuffer()) };
    };
    const sameAsReference = async (url: string, path: string, headers?: Record<string, string>) => {
      const { bytes } = await getBytes(url, headers);
      const want = await reference(path, !url.includes('/share/'));
      assert.equal(bytes.toString('utf8'), want, url);
      assert.ok(bytes.equals(Buffer.from(want, 'utf8')), `${url}: byte for byte`);
      return JSON.parse(want) as { entries: { is_file: boolean; name: string; size: number; modified: string }[] };
    };

    before(async () => {
      t = await startApp({ users: ['alice', 'bob'], storage });
      auth = bearer((await t.login('alice')).access_token);
      for (const f of FOLDERS) await t.fs.mkdir(`mixed/${f}`);
      await t.fs.put('mixed/a/inside.txt', 'in a');
      await t.fs.put('mixed/a-b/x', 'in a-b');
      let i = 0;
      for (const f of FILES) await t.fs.put(`mixed/${f}`, 'x'.repeat(++i));
      await t.fs.mkdir('nothing-here');
      // Several pages of every backend and several 64 KiB chunks: files with folders among them.
      const names = Array.from({ length: BIG }, (_, n) => `entry-${String((n * 7919) % BIG).padStart(5, '0')}${n % 3 === 0 ? '-é' : ''}`);
      for (let n = 0; n < names.length; n += 50) {
        await Promise.all(names.slice(n, n + 50).map((name, j) => ((n + j) % 10 === 0 ? t.fs.mkdir(`big/${name}`) : t.fs.put(`big/${name}`, name))));
      }
      await t.fs.put('bob-secret.txt', 'bob', 'bob');
      if (storage === 'file') {
        // Planted on disk (the API makes no links): inside the root they are followed, outside or dangling they are not shown.
        const dir = join(t.paths.storage, 'alice', 'mixed');
        await symlink(join(dir, 'a'), join(dir, 'link-to-folder'));
        await symlink('a.b', join(dir, 'link-to-file'));
        await symlink('/etc', join(dir, 'link-outside'));
        await symlink(join(t.paths.storage, 'bob'), join(dir, 'link-to-bob'));
        await symlink('missing', join(dir, 'link-dangling'));
        execFileSync('mkfifo', [join(dir, 'fifo')]);
        await mkdir(join(t.paths.storage, 'alice', 'mixed', 'planted-dir'));
        await writeFile(join(t.paths.storage, 'alice', 'mixed', 'back\\slash'), 'planted');
      }
    });
    after(() => t?.close());

    test('a folder of mixed names lists byte for byte as the collect-and-sort path did', async () => {
      const { entries } = await sameAsReference(`${t.url}/storage/alice/mixed/`, 'mixed');
      const names = entries.map((e) => e.name);
      // The order is the contract's, not the backend's: folders first, then code points (S3 lists `a-b/` before `a/`).
      const folders = storage === 'file' ? [...FOLDERS, 'link-to-folder', 'planted-dir'] : FOLDERS;
      const files = storage === 'file' ? [...FILES, 'link-to-file', 'back\\slash'] : FILES;
      const byCodePoint = (a: string, b: string) => {
        const [x, y] = [Array.from(a).map((c) => c.codePointAt(0) as number), Array.from(b).map((c) => c.codePointAt(0) as number)];
        for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return (x[i] as number) - (y[i] as number);
        return x.length - y.length;
      };
      assert.deepEqual(names, [...[...folders].sort(byCodePoint), ...[...files].sort(byCodePoint)]);
      assert.ok(names.indexOf('a') < names.indexOf('a-b') && names.indexOf('a b.txt') < names.indexOf('a.b'));
      if (storage === 'file') {
        const link = entries.find((e) => e.name === 'link-to-folder');
        assert.equal(link?.is_file, false, 'a link to a folder inside the root is a folder');
        assert.equal(entries.find((e) => e.name === 'link-to-file')?.size, FILES.indexOf('a.b') + 1);
        for (const hidden of ['link-outside', 'link-to-bob', 'link-dangling', 'fifo']) assert.ok(!names.includes(hidden), `${hidden} is not shown`);
      }
    });

    test('a folder of a few thousand entries streams in chunks, the same bytes', async () => {
      const { entries } = await sameAsReference(`${t.url}/storage/alice/big/`, 'big');
      assert.equal(entries.length, BIG);
      assert.equal(entries.filter((e) => !e.is_file).length, BIG / 10);
      const { res } = await getBytes(`${t.url}/storage/alice/big`);
      assert.equal(res.headers.get('content-length'), null, 'streamed: no length known in advance');
    });

    test('an empty folder is {"entries":[]}; HEAD has the headers and no body', async () => {
      for (const path of ['mixed/empty', 'nothing-here']) {
        const { bytes } = await getBytes(`${t.url}/storage/alice/${path}/`);
        assert.equal(bytes.toString(), '{"entries":[]}');
        assert.equal(await reference(path), '{"entries":[]}');
      }
      const head = await fetch(`${t.url}/storage/alice/mixed/`, { method: 'HEAD', headers: auth });
      assert.equal(head.status, 200);
      assert.equal(head.headers.get('content-type'), 'application/json; charset=utf-8');
      assert.equal((await head.arrayBuffer()).byteLength, 0);
    });

    test('errors before the first byte are the contract\'s JSON errors', async () => {
      for (const [path, status, code] of [['missing/', 404, 'not_found'], ['mixed/a.b/', 404, 'not_found']] as const) {
        const res = await fetch(`${t.url}/storage/alice/${path}`, { headers: auth });
        assert.equal(res.status, status, path);
        assert.equal(((await res.json()) as { error: string }).error, code, path);
      }
    });

    test('a share link lists its folder and subfolders with the same bytes', async () => {
      const res = await postJson(`${t.url}/api/shares`, { path: '/alice/mixed/' }, auth);
      assert.equal(res.status, 201);
      const { id } = (await res.json()) as { id: string };
      await sameAsReference(`${t.url}/share/${id}/`, 'mixed', {});
      await sameAsReference(`${t.url}/share/${id}/a/`, 'mixed/a', {});
      await sameAsReference(`${t.url}/share/${id}/${encodePath('😀dir')}/`, 'mixed/😀dir', {});
      const big = (await (await postJson(`${t.url}/api/shares`, { path: '/alice/big' }, auth)).json()) as { id: string };
      await sameAsReference(`${t.url}/share/${big.id}/`, 'big', {});
      const head = await fetch(`${t.url}/share/${id}/`, { method: 'HEAD' });
      assert.equal(head.status, 200);
      assert.equal((await head.arrayBuffer()).byteLength, 0);
    });

    test('a WebDAV collection\'s GET is the same listing, and a Depth 1 PROPFIND lists members in that order with their ETags', async () => {
      const dav = { authorization: `Basic ${Buffer.from('alice:alice-password').toString('base64')}` };
      const { entries } = await sameAsReference(`${t.url}/dav/alice/mixed/`, 'mixed', dav);
      const r = await fetch(`${t.url}/dav/alice/mixed/`, { method: 'PROPFIND', headers: { ...dav, depth: '1' } });
      assert.equal(r.status, 207);
      const text = await r.text();
      const hrefs = [...text.matchAll(/<D:href>([^<]*)<\/D:href>/g)].map((m) => decodeURIComponent(m[1] as string));
      assert.deepEqual(hrefs.slice(1), entries.map((e) => `/dav/alice/mixed/${e.name}${e.is_file ? '' : '/'}`));
      // The validator in the multistatus is the one a GET of the file answers with.
      const etag = (await t.backend.stat(keyChild(keyOf('mixed'), 'a.b')))?.etag ?? '';
      assert.notEqual(etag, '');
      assert.ok(text.includes(`<D:getetag>${etag}</D:getetag>`), `getetag ${etag}`);
      const get = await fetch(`${t.url}/storage/alice/mixed/a.b`, { headers: auth });
      assert.equal(get.headers.get('etag'), etag);
      await get.arrayBuffer();
    });

    test('the backend\'s sorted listing with etags gives exactly stat()\'s entries', async () => {
      const seen = [];
      for await (const page of t.backend.listSorted(keyOf('mixed'), { etags: true })) seen.push(...page);
      const want = (await listAll(t.backend, keyOf('mixed'))).sort(compareListed);
      assert.deepEqual(seen, want);
      // A file's entry is what stat says (its ETag is GET's); S3 folders are dated by list and stat differently, as before.
      // (A name planted on disk that no key can address, `back\\slash`, is listed but has no stat.)
      const files = seen.filter((e) => e.isFile && isValidName(e.name));
      assert.ok(files.length >= FILES.length);
      for (const e of files) assert.deepEqual(await t.backend.stat(keyChild(keyOf('mixed'), e.name)), e, e.name);
    });
  });
}
