// The server side of sync (CONTRACT "Sync", issue 55; docs/api.md "Sync fields"): sha256 and a stable
// id in PUT answers, listings and change entries; Repr-Digest on file answers and checked on PUT;
// If-Match / If-None-Match on PUT, DELETE and Move; the writer's origin and the server's epoch in the feed.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { bearer, encodePath, postJson } from '../helpers/client.js';
import { multipartBody } from '../helpers/multipart.js';
import { behindTheBack, indexCommand } from '../helpers/behind-the-back.js';

type Change = { cursor: string; type: string; path: string; from?: string; is_file: boolean; size?: number; etag?: string; id?: string; sha256?: string; origin?: string };
type Page = { changes: Change[]; cursor: string; more: boolean; epoch: string };
type Written = { name: string; path: string; size: number; etag: string; id: string | null; sha256: string | null };
type Listed = { is_file: boolean; name: string; size: number; id: string | null; sha256?: string | null; etag?: string | null };

const sha = (s: string | Buffer) => createHash('sha256').update(s).digest('hex');
const digest = (s: string | Buffer) => `sha-256=:${createHash('sha256').update(s).digest('base64')}:`;

for (const [storage, skip] of BACKENDS) {
  describe(`sync fields on ${storage}`, { skip }, () => {
    let t: TestApp;
    let alice: Record<string, string>;
    /** The epoch the first answer of the feed gave. */
    let firstEpoch: string;
    // No periodic rescan: a file put behind the server's back stays unknown until the test runs `file-cloud index`.
    before(async () => {
      t = await startApp({ storage, users: ['alice'], flags: { indexInterval: '0' } });
      alice = bearer((await t.login('alice')).access_token);
      firstEpoch = (await feed('now')).epoch;
    });
    after(() => t.close());

    const url = (path: string) => `${t.url}/storage/alice/${encodePath(path)}`;
    const put = (path: string, body: string | Buffer, headers: Record<string, string> = {}) =>
      fetch(url(path), { method: 'PUT', headers: { ...alice, 'content-type': 'application/octet-stream', ...headers }, body });
    const written = async (res: Response): Promise<Written[]> => {
      assert.equal(res.status, 201, await res.clone().text());
      return ((await res.json()) as { files: Written[] }).files;
    };
    const feed = async (cursor: string): Promise<Page> => {
      const res = await fetch(`${t.url}/api/changes?cursor=${encodeURIComponent(cursor)}`, { headers: alice });
      assert.equal(res.status, 200, await res.clone().text());
      return (await res.json()) as Page;
    };
    const now = async () => (await feed('now')).cursor;
    const since = async (cursor: string) => (await feed(cursor)).changes;
    const listing = async (dir: string): Promise<Listed[]> => {
      const res = await fetch(`${t.url}/storage/alice/${dir === '' ? '' : `${encodePath(dir)}/`}`, { headers: alice });
      assert.equal(res.status, 200);
      return ((await res.json()) as { entries: Listed[] }).entries;
    };
    const move = (from: string, to: string, headers: Record<string, string> = {}) => postJson(url(from), { action: 'Move', new_path: `/alice/${to}` }, { ...alice, ...headers });

    test('a raw PUT answers with the file\'s sha256, id and ETag; its change entry carries them and the writer\'s origin', async () => {
      const c = await now();
      const [w] = await written(await put('a/one.txt', 'one', { 'file-cloud-origin': 'laptop-1' }));
      assert.ok(w);
      assert.equal(w.sha256, sha('one'));
      assert.match(w.id ?? '', /^[0-9a-f]{32}$/);
      assert.equal(w.path, '/alice/a/one.txt');
      assert.equal(w.size, 3);
      const head = await fetch(url('a/one.txt'), { method: 'HEAD', headers: alice });
      assert.equal(w.etag, head.headers.get('etag'), 'the answer\'s ETag is the one GET gives (If-Match takes it)');
      const entry = (await since(c)).find((e) => e.path === '/alice/a/one.txt');
      assert.ok(entry, 'journaled');
      assert.equal(entry.type, 'created');
      assert.equal(entry.sha256, sha('one'));
      assert.equal(entry.id, w.id);
      assert.equal(entry.origin, 'laptop-1');
      assert.equal(entry.etag, w.etag);
    });

    test('an overwrite keeps the id; a rename and a move keep id and sha256; a delete\'s entry names the id', async () => {
      const [first] = await written(await put('b/f.txt', 'v1'));
      const [second] = await written(await put('b/f.txt', 'v2'));
      assert.equal(second?.id, first?.id, 'the same item after an overwrite');
      assert.equal(second?.sha256, sha('v2'));
      const c = await now();
      assert.equal((await move('b/f.txt', 'b/g.txt', { 'file-cloud-origin': 'desk' })).status, 204);
      assert.equal((await move('b', 'c')).status, 204);
      const del = await fetch(url('c/g.txt'), { method: 'DELETE', headers: { ...alice, 'file-cloud-origin': 'desk' } });
      assert.equal(del.status, 204);
      const entries = await since(c);
      const renamed = entries.find((e) => e.type === 'moved' && e.path === '/alice/b/g.txt');
      assert.equal(renamed?.id, first?.id);
      assert.equal(renamed?.sha256, sha('v2'));
      assert.equal(renamed?.origin, 'desk');
      const folder = entries.find((e) => e.type === 'moved' && e.path === '/alice/c');
      assert.match(folder?.id ?? '', /^[0-9a-f]{32}$/, 'a folder has an id too');
      const deleted = entries.find((e) => e.type === 'deleted' && e.path === '/alice/c/g.txt');
      assert.equal(deleted?.id, first?.id, 'the file moved with its folder kept its id');
      assert.equal(deleted?.origin, 'desk');
    });

    test('listing entries carry id, and files their sha256 and ETag', async () => {
      const [w] = await written(await put('l/x.bin', 'xx'));
      await written(await put('l/sub/y.bin', 'y'));
      const entries = await listing('l');
      const sub = entries.find((e) => e.name === 'sub');
      const x = entries.find((e) => e.name === 'x.bin');
      assert.match(sub?.id ?? '', /^[0-9a-f]{32}$/);
      assert.equal(x?.id, w?.id);
      assert.equal(x?.sha256, sha('xx'));
      assert.equal(x?.etag, w?.etag);
    });

    test('GET and HEAD of a file carry Repr-Digest (RFC 9530)', async () => {
      await written(await put('d/r.txt', 'digest me'));
      for (const method of ['GET', 'HEAD']) {
        const res = await fetch(url('d/r.txt'), { method, headers: alice });
        assert.equal(res.status, 200);
        assert.equal(res.headers.get('repr-digest'), digest('digest me'), method);
        await res.arrayBuffer();
      }
      const ranged = await fetch(url('d/r.txt'), { headers: { ...alice, range: 'bytes=0-1' } });
      assert.equal(ranged.status, 206);
      assert.equal(ranged.headers.get('repr-digest'), digest('digest me'), 'of the whole file, also for a range');
      await ranged.arrayBuffer();
      // Over the whole-read limit (64 KiB and a chunk): the file is streamed, and the digest still goes with it.
      const big = 'b'.repeat(200 * 1024);
      await written(await put('d/big.bin', big));
      const res = await fetch(url('d/big.bin'), { headers: alice });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('repr-digest'), digest(big), 'a streamed file');
      assert.equal(Buffer.from(await res.arrayBuffer()).toString(), big);
    });

    test('Repr-Digest follows the bytes a GET sends after a replace, a move onto the name and another tool\'s change', async () => {
      // Each file is read several times first (on several workers, in a cluster), so any process that
      // keeps what it found for a GET has it when the bytes change.
      const digestsOf = async (path: string, times = 4): Promise<(string | null)[]> => {
        const seen: (string | null)[] = [];
        for (let i = 0; i < times; i++) {
          for (const method of ['GET', 'HEAD']) {
            const res = await fetch(url(path), { method, headers: alice });
            assert.equal(res.status, 200, `${method} ${path}`);
            seen.push(res.headers.get('repr-digest'));
            await res.arrayBuffer();
          }
        }
        return [...new Set(seen)];
      };
      await written(await put('stale/f.txt', 'first bytes'));
      assert.deepEqual(await digestsOf('stale/f.txt'), [digest('first bytes')]);
      await written(await put('stale/f.txt', 'second bytes'));
      assert.deepEqual(await digestsOf('stale/f.txt'), [digest('second bytes')], 'after a replace');
      await written(await put('stale/other.txt', 'moved here'));
      assert.deepEqual(await digestsOf('stale/other.txt'), [digest('moved here')]);
      const over = await postJson(url('stale/other.txt'), { action: 'Move', new_path: '/alice/stale/f.txt', overwrite: true }, alice);
      assert.ok(over.status < 300, await over.text());
      assert.deepEqual(await digestsOf('stale/f.txt'), [digest('moved here')], 'after a move onto the name');
      // Another tool changes the file: the index's hash is of other bytes, so none is sent until it is indexed again.
      await behindTheBack(t, 'stale/f.txt', 'changed by a tool');
      assert.deepEqual(await digestsOf('stale/f.txt'), [null], 'changed behind the server\'s back, not indexed yet');
      await indexCommand(t);
      assert.deepEqual(await digestsOf('stale/f.txt'), [digest('changed by a tool')], 'indexed again');
    });

    test('a PUT whose Repr-Digest or Content-Digest differs from its bytes is refused 400 digest_mismatch and writes nothing', async () => {
      await written(await put('g/keep.txt', 'original'));
      for (const header of ['repr-digest', 'content-digest']) {
        const bad = await put('g/keep.txt', 'tampered', { [header]: digest('something else') });
        assert.equal(bad.status, 400, header);
        assert.equal(((await bad.json()) as { error: string }).error, 'digest_mismatch');
        const fresh = await put('g/new.txt', 'tampered', { [header]: digest('something else') });
        assert.equal(fresh.status, 400);
        await fresh.arrayBuffer();
      }
      assert.equal(await (await fetch(url('g/keep.txt'), { headers: alice })).text(), 'original');
      assert.equal((await fetch(url('g/new.txt'), { method: 'HEAD', headers: alice })).status, 404, 'nothing written');
      const malformed = await put('g/new.txt', 'x', { 'repr-digest': 'sha-256=:bm90IDMyIGJ5dGVz:' });
      assert.equal(malformed.status, 400);
      assert.equal(((await malformed.json()) as { error: string }).error, 'bad_request');
      const [good] = await written(await put('g/keep.txt', 'new bytes', { 'repr-digest': `md5=:AAAAAAAAAAAAAAAAAAAAAA==:, ${digest('new bytes')}` }));
      assert.equal(good?.sha256, sha('new bytes'));
    });

    test('If-None-Match: * on PUT takes only a free name; of two at once exactly one wins', async () => {
      await written(await put('p/taken.txt', 'mine'));
      const refused = await put('p/taken.txt', 'theirs', { 'if-none-match': '*' });
      assert.equal(refused.status, 412);
      assert.equal(((await refused.json()) as { error: string }).error, 'precondition_failed');
      assert.equal(await (await fetch(url('p/taken.txt'), { headers: alice })).text(), 'mine');
      const race = await Promise.all(['left', 'right'].map((who) => put('p/race.txt', who, { 'if-none-match': '*' })));
      assert.deepEqual(race.map((r) => r.status).sort(), [201, 412]);
      const winner = race.find((r) => r.status === 201) === race[0] ? 'left' : 'right';
      for (const r of race) await r.arrayBuffer();
      assert.equal(await (await fetch(url('p/race.txt'), { headers: alice })).text(), winner);
    });

    test('If-Match on PUT, DELETE and Move: a stale ETag is 412 and nothing changes; the current one goes ahead', async () => {
      const [v1] = await written(await put('m/doc.txt', 'v1'));
      const [v2] = await written(await put('m/doc.txt', 'v2', { 'if-match': v1?.etag ?? '' }));
      const stale = { 'if-match': v1?.etag ?? '' };
      for (const res of [await put('m/doc.txt', 'v3', stale), await fetch(url('m/doc.txt'), { method: 'DELETE', headers: { ...alice, ...stale } }), await move('m/doc.txt', 'm/moved.txt', stale)]) {
        assert.equal(res.status, 412, await res.clone().text());
        assert.equal(((await res.json()) as { error: string }).error, 'precondition_failed');
      }
      assert.equal(await (await fetch(url('m/doc.txt'), { headers: alice })).text(), 'v2', 'not replaced, deleted or moved');
      const current = { 'if-match': v2?.etag ?? '' };
      assert.equal((await fetch(url('m/doc.txt'), { method: 'DELETE', headers: { ...alice, 'if-none-match': v2?.etag ?? '' } })).status, 412, 'If-None-Match naming the current ETag');
      assert.equal((await move('m/doc.txt', 'm/moved.txt', current)).status, 204);
      const gone = await fetch(url('m/moved.txt'), { method: 'DELETE', headers: { ...alice, 'if-match': '"nope"' } });
      assert.equal(gone.status, 412);
      assert.equal((await fetch(url('m/moved.txt'), { method: 'DELETE', headers: { ...alice, ...current } })).status, 204, 'a move keeps the ETag\'s file');
    });

    test('a File-Cloud-Origin that is not a short printable token is refused 400', async () => {
      for (const bad of ['', 'x'.repeat(65), 'has space', 'ünï']) {
        const res = await fetch(url('o/x.txt'), { method: 'PUT', headers: { ...alice, 'file-cloud-origin': Buffer.from(bad, 'utf8').toString('latin1') }, body: 'x' });
        assert.equal(res.status, 400, JSON.stringify(bad));
        assert.equal(((await res.json()) as { error: string }).error, 'bad_request');
      }
      assert.equal((await fetch(url('o/x.txt'), { method: 'HEAD', headers: alice })).status, 404);
    });

    test('every /api/changes answer carries the server\'s epoch, the same on every node and every time', async () => {
      const epochs = new Set<string>([firstEpoch]);
      for (let i = 0; i < 8; i++) epochs.add((await feed('now')).epoch);
      const c = await now();
      epochs.add((await feed(c)).epoch);
      assert.deepEqual([...epochs], [firstEpoch], 'the same every time, from every worker');
      assert.match(firstEpoch, /^[0-9a-f]{32}$/);
    });

    test('every front end fills sha256 and id: multipart, WebDAV PUT, tus, a share drop box, a copy', async () => {
      const c = await now();
      const { body, contentType } = multipartBody([{ filename: 'multi.txt', content: 'by multipart' }]);
      const [multi] = await written(await fetch(`${t.url}/storage/alice/fe/`, { method: 'PUT', headers: { ...alice, 'content-type': contentType }, body }));
      assert.equal(multi?.sha256, sha('by multipart'));
      assert.equal((await fetch(`${t.url}/dav/alice/fe/dav.txt`, { method: 'PUT', headers: alice, body: 'by webdav' })).status, 201);
      // Creation with upload: all its bytes come to one process, which hashes them (docs/sync.md says when a tus upload's hash waits for a rescan).
      const meta = `filename ${Buffer.from('tus.txt').toString('base64')},folder ${Buffer.from('/alice/fe').toString('base64')}`;
      const tusHeaders = { ...alice, 'tus-resumable': '1.0.0', 'upload-length': '6', 'upload-metadata': meta, 'content-type': 'application/offset+octet-stream' };
      const created = await fetch(`${t.url}/tus/`, { method: 'POST', headers: tusHeaders, body: 'by tus' });
      assert.equal(created.status, 201, await created.text());
      assert.equal(created.headers.get('upload-offset'), '6');
      if (storage !== 'cluster') {
        // Chunk by chunk to one process: the hash goes on from chunk to chunk.
        const chunked = await fetch(`${t.url}/tus/`, { method: 'POST', headers: { ...tusHeaders, 'upload-metadata': `filename ${Buffer.from('chunks.txt').toString('base64')},folder ${Buffer.from('/alice/fe').toString('base64')}`, 'upload-length': '11' } });
        assert.equal(chunked.status, 201);
        const at = chunked.headers.get('location') ?? '';
        for (const [offset, part] of [[0, 'in '], [3, 'two '], [7, 'bits']] as const) {
          const r = await fetch(`${t.url}${at}`, { method: 'PATCH', headers: { ...alice, 'tus-resumable': '1.0.0', 'content-type': 'application/offset+octet-stream', 'upload-offset': String(offset) }, body: part });
          assert.equal(r.status, 204);
        }
        const listed = (await listing('fe')).find((e) => e.name === 'chunks.txt');
        assert.equal(listed?.sha256, sha('in two bits'));
      }
      const share = await postJson(`${t.url}/api/shares`, { path: '/alice/fe', upload_only: true }, alice);
      assert.equal(share.status, 201);
      const { id } = (await share.json()) as { id: string };
      const drop = multipartBody([{ filename: 'drop.txt', content: 'by a visitor' }]);
      assert.equal((await fetch(`${t.url}/share/${id}/`, { method: 'PUT', headers: { 'content-type': drop.contentType }, body: drop.body })).status, 201);
      assert.equal((await postJson(url('fe/dav.txt'), { action: 'Copy', new_path: '/alice/fe/copy.txt' }, alice)).status, 204);
      const entries = await since(c);
      const want: Record<string, string> = { 'multi.txt': 'by multipart', 'dav.txt': 'by webdav', 'tus.txt': 'by tus', 'drop.txt': 'by a visitor', 'copy.txt': 'by webdav' };
      for (const [name, content] of Object.entries(want)) {
        const e = entries.find((x) => x.path === `/alice/fe/${name}` && x.type !== 'deleted');
        assert.equal(e?.sha256, sha(content), name);
        assert.match(e?.id ?? '', /^[0-9a-f]{32}$/, name);
      }
      const listed = await listing('fe');
      for (const [name, content] of Object.entries(want)) assert.equal(listed.find((e) => e.name === name)?.sha256, sha(content), `listed ${name}`);
      const copy = listed.find((e) => e.name === 'copy.txt');
      assert.notEqual(copy?.id, listed.find((e) => e.name === 'dav.txt')?.id, 'a copy is another item');
    });

    test('file-cloud index gives a file put behind the server\'s back its sha256; until then it has none', async () => {
      await behindTheBack(t, 'outside/tool.txt', 'another tool');
      const before = (await listing('outside')).find((e) => e.name === 'tool.txt');
      assert.equal(before?.sha256, null, 'not known before the rescan');
      await indexCommand(t);
      const entry = (await listing('outside')).find((e) => e.name === 'tool.txt');
      assert.equal(entry?.sha256, sha('another tool'));
      const head = await fetch(url('outside/tool.txt'), { method: 'HEAD', headers: alice });
      assert.equal(head.headers.get('repr-digest'), digest('another tool'));
    });
  });
}

describe('the epoch of a new installation', () => {
  test('a new data directory gives a new epoch', async () => {
    const epochs: string[] = [];
    for (let i = 0; i < 2; i++) {
      const t = await startApp({ users: ['alice'] });
      try {
        const alice = bearer((await t.login('alice')).access_token);
        epochs.push(((await (await fetch(`${t.url}/api/changes`, { headers: alice })).json()) as Page).epoch);
      } finally {
        await t.close();
      }
    }
    assert.equal(epochs.length, 2);
    assert.notEqual(epochs[0], epochs[1]);
  });
});
