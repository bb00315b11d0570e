// WebDAV's records of an item — its locks and dead properties — follow a move or delete made by any
// front end, on every backend (the cluster: two workers on S3 + PostgreSQL + Redis). Before, only a
// WebDAV MOVE or DELETE took them along: a file moved by the API left its lock at the old name, so
// every other WebDAV or SFTP writer got 423 there for up to a day, and a file made there later showed
// the moved file's dead properties, which the moved file itself had lost (src/services/dav-records.ts).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { usersApi } from '../helpers/client.js';

const LOCKINFO = '<?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype><D:owner>tests</D:owner></D:lockinfo>';
const setColor = (color: string) =>
  `<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:" xmlns:Z="urn:test"><D:set><D:prop><Z:color>${color}</Z:color></D:prop></D:set></D:propertyupdate>`;
const PROPFIND = '<?xml version="1.0"?><D:propfind xmlns:D="DAV:" xmlns:Z="urn:test"><D:prop><Z:color/></D:prop></D:propfind>';

for (const [storage, skip] of BACKENDS) {
  describe(`WebDAV locks and dead properties follow every front end's moves and deletes on ${storage}`, { skip }, () => {
    let t: TestApp;
    const tokens: Record<string, string> = {};
    before(async () => {
      t = await startApp({ storage, users: ['alice'], flags: { versions: true, trashDays: '30' } });
      tokens.alice = (await t.login('alice')).access_token;
    });
    after(() => t?.close());

    const { req } = usersApi(() => t.url, tokens);
    const status = async (res: Response) => {
      await res.arrayBuffer();
      return res.status;
    };
    const lock = async (path: string) => {
      const res = await req('alice', 'LOCK', `/dav/alice/${path}`, LOCKINFO, { 'content-type': 'application/xml', depth: 'infinity' });
      await res.arrayBuffer();
      assert.equal(res.status, 200, `LOCK ${path}`);
      return /<([^>]+)>/.exec(res.headers.get('lock-token') ?? '')?.[1] ?? '';
    };
    const color = async (path: string): Promise<string | undefined> => {
      const res = await req('alice', 'PROPFIND', `/dav/alice/${path}`, PROPFIND, { 'content-type': 'application/xml', depth: '0' });
      const text = await res.text();
      assert.equal(res.status, 207, `PROPFIND ${path}: ${text}`);
      return /<(?:\w+:)?color[^>]*>([^<]*)<\/(?:\w+:)?color>/.exec(text)?.[1];
    };
    const paint = async (path: string, c: string, headers: Record<string, string> = {}) =>
      assert.equal(await status(await req('alice', 'PROPPATCH', `/dav/alice/${path}`, setColor(c), { 'content-type': 'application/xml', ...headers })), 207, `PROPPATCH ${path}`);
    const apiMove = async (from: string, to: string) =>
      assert.equal(await status(await req('alice', 'POST', `/storage/alice/${from}`, { action: 'Move', new_path: `/alice/${to}` })), 204, `Move ${from}`);
    const locksWithin = (path: string) => t.store.davLocks.within('alice', path, Date.now());

    test('an API move: the lock ends (a writer without its token may write the old name), the dead property goes along, the new file at the old name has none', async () => {
      await t.fs.put('move/a.txt', 'a', 'alice');
      await paint('move/a.txt', 'red');
      const token = await lock('move/a.txt');
      assert.equal(await status(await req('alice', 'PUT', '/dav/alice/move/a.txt', 'no token')), 423, 'the lock holds before the move');
      await apiMove('move/a.txt', 'move/b.txt');
      assert.deepEqual(await locksWithin('move'), [], `the lock ${token} ended with the move`);
      assert.equal(await color('move/b.txt'), 'red', 'the property went along');
      assert.equal(await status(await req('alice', 'PUT', '/dav/alice/move/a.txt', 'new')), 201, 'the old name is free');
      assert.equal(await color('move/a.txt'), undefined, 'a new file at the old name has no property');
    });

    test('an API move of a folder carries its members\' properties and ends the locks inside it; one onto a file replaces that file\'s properties', async () => {
      await t.fs.put('tree/in/x.txt', 'x', 'alice');
      await t.fs.put('tree2/y.txt', 'y', 'alice');
      await paint('tree/in/x.txt', 'blue');
      await paint('tree2/y.txt', 'green');
      await lock('tree/in/x.txt');
      await apiMove('tree', 'moved-tree');
      assert.deepEqual(await locksWithin(''), [], 'no lock is left anywhere');
      assert.equal(await color('moved-tree/in/x.txt'), 'blue');
      const res = await req('alice', 'POST', '/storage/alice/moved-tree/in/x.txt', { action: 'Move', new_path: '/alice/tree2/y.txt', overwrite: true });
      assert.equal(await status(res), 204);
      assert.equal(await color('tree2/y.txt'), 'blue', 'the replaced file\'s property is gone, the moved one\'s came');
    });

    test('an API delete (into the trash) ends the locks and properties of the tree; a file made there later has neither', async () => {
      await t.fs.put('gone/deep/z.txt', 'z', 'alice');
      await paint('gone/deep/z.txt', 'black');
      await paint('gone', 'white');
      await lock('gone/deep/z.txt');
      assert.equal(await status(await req('alice', 'DELETE', '/storage/alice/gone')), 204);
      assert.deepEqual(await locksWithin('gone'), []);
      assert.deepEqual(await t.store.davProperties.totals('alice', 'gone'), { count: 0, size: 0 });
      assert.equal(await status(await req('alice', 'PUT', '/dav/alice/gone/deep/z.txt', 'again')), 409, 'its folder is gone (a missing parent: RFC 4918 §9.7.1)');
      await t.fs.put('gone/deep/z.txt', 'again', 'alice');
      assert.equal(await color('gone/deep/z.txt'), undefined);
      assert.equal(await status(await req('alice', 'PUT', '/dav/alice/gone/deep/z.txt', 'free')), 204, 'no old lock holds the name');
    });

    test('a replace keeps both: a WebDAV PUT with the token (its old bytes kept as a version), and an API PUT', async () => {
      await t.fs.put('keep.txt', 'v1', 'alice');
      await paint('keep.txt', 'gold');
      const token = await lock('keep.txt');
      assert.equal(await status(await req('alice', 'PUT', '/dav/alice/keep.txt', 'v2', { if: `(<${token}>)` })), 204);
      assert.equal(await status(await req('alice', 'PUT', '/storage/alice/keep.txt', 'v3', { 'content-type': 'application/octet-stream' })), 201, 'the API is not bound by WebDAV locks (docs/webdav.md)');
      assert.equal((await locksWithin('keep.txt')).length, 1, 'the lock holds');
      assert.equal(await color('keep.txt'), 'gold');
      assert.equal(await status(await req('alice', 'PUT', '/dav/alice/keep.txt', 'no token')), 423);
    });

    test('a WebDAV MOVE and DELETE still do what they did (the properties travel, the source\'s locks end)', async () => {
      await t.fs.put('dav/m.txt', 'm', 'alice');
      await paint('dav/m.txt', 'pink');
      const token = await lock('dav/m.txt');
      const moved = await req('alice', 'MOVE', '/dav/alice/dav/m.txt', undefined, { destination: `${t.url}/dav/alice/dav/n.txt`, if: `(<${token}>)` });
      assert.equal(await status(moved), 201);
      assert.equal(await color('dav/n.txt'), 'pink');
      assert.deepEqual(await locksWithin('dav'), []);
      assert.equal(await status(await req('alice', 'DELETE', '/dav/alice/dav/n.txt')), 204);
      assert.deepEqual(await t.store.davProperties.totals('alice', 'dav'), { count: 0, size: 0 });
    });
  });
}
