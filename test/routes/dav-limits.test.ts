import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';

/**
 * Dead properties and locks are rows in the metadata store; without a cap a
 * user could grow the database without limit (docs/webdav.md "Limits").
 * Per user: at most --dav-max-properties properties of at most
 * --dav-max-property-size in all, and --dav-max-locks live locks; beyond
 * them 507 `dav_limit_reached`, nothing changed.
 */
const MAX_PROPS = 5;
const MAX_PROP_BYTES = 2048;
const MAX_LOCKS = 3;

for (const [storage, skip] of BACKENDS) {
  describe(`WebDAV dead properties and locks are capped per user (${storage})`, { skip }, () => {
    let t: TestApp;
    const auth = (user: string) => ({ authorization: `Basic ${Buffer.from(`${user}:${user}-password`).toString('base64')}` });
    const dav = (user: string, path: string, method: string, body?: string, headers: Record<string, string> = {}) =>
      fetch(`${t.url}/dav/${user}/${path}`, { method, headers: { ...auth(user), ...(body ? { 'content-type': 'application/xml' } : {}), ...headers }, body });
    const proppatch = (user: string, path: string, props: Record<string, string>, remove: string[] = []) =>
      dav(
        user,
        path,
        'PROPPATCH',
        `<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:" xmlns:Z="urn:test">` +
          (Object.keys(props).length ? `<D:set><D:prop>${Object.entries(props).map(([k, v]) => `<Z:${k}>${v}</Z:${k}>`).join('')}</D:prop></D:set>` : '') +
          (remove.length ? `<D:remove><D:prop>${remove.map((k) => `<Z:${k}/>`).join('')}</D:prop></D:remove>` : '') +
          `</D:propertyupdate>`,
      );
    const deadProps = async (user: string, path: string) => {
      const res = await dav(user, path, 'PROPFIND', '<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:allprop/></D:propfind>', { depth: '0' });
      assert.equal(res.status, 207);
      return [...(await res.text()).matchAll(/<(?:[A-Za-z0-9]+:)?(p\d+|big\d*)\b/g)].map((m) => m[1]).sort();
    };
    const lockBody = '<?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype><D:owner>t</D:owner></D:lockinfo>';
    const refused = async (res: Response) => {
      assert.equal(res.status, 507, await res.clone().text());
      assert.equal(((await res.json()) as { error: string }).error, 'dav_limit_reached');
    };

    before(async () => {
      t = await startApp({ storage, users: ['alice', 'bob'], flags: { davMaxProperties: String(MAX_PROPS), davMaxPropertySize: String(MAX_PROP_BYTES), davMaxLocks: String(MAX_LOCKS) } });
      for (const user of ['alice', 'bob']) for (const f of ['a.txt', 'b.txt', 'c.txt', 'd.txt', 'e.txt']) await t.fs.put(f, 'x', user);
    });
    after(async () => {
      await t?.close();
    });

    test('properties: up to the count, then 507 and nothing changed; removing makes room; another user is not affected', async () => {
      assert.equal((await proppatch('alice', 'a.txt', { p1: '1', p2: '2', p3: '3' })).status, 207);
      assert.equal((await proppatch('alice', 'b.txt', { p4: '4', p5: '5' })).status, 207);
      // Replacing a property's value adds no property.
      assert.equal((await proppatch('alice', 'b.txt', { p5: 'five' })).status, 207);
      await refused(await proppatch('alice', 'c.txt', { p6: '6' }));
      // All or nothing: a request that sets one too many keeps none of its changes.
      await refused(await proppatch('alice', 'a.txt', { p7: '7', p8: '8' }, ['p1']));
      assert.deepEqual(await deadProps('alice', 'a.txt'), ['p1', 'p2', 'p3']);
      assert.deepEqual(await deadProps('alice', 'c.txt'), []);
      // Removing makes room.
      assert.equal((await proppatch('alice', 'a.txt', {}, ['p3'])).status, 207);
      assert.equal((await proppatch('alice', 'c.txt', { p6: '6' })).status, 207);
      // COPY would duplicate b.txt's two properties: over the count, refused before anything is copied.
      await refused(await dav('alice', 'b.txt', 'COPY', undefined, { destination: `${t.url}/dav/alice/b-copy.txt` }));
      assert.equal(await t.fs.kind('b-copy.txt', 'alice'), undefined);
      // Onto an existing file: refused before the destination is replaced (it is still there).
      await refused(await dav('alice', 'b.txt', 'COPY', undefined, { destination: `${t.url}/dav/alice/d.txt`, overwrite: 'T' }));
      assert.equal(await t.fs.text('d.txt', 'alice'), 'x');
      // bob has his own count.
      assert.equal((await proppatch('bob', 'a.txt', { p1: '1', p2: '2', p3: '3', p4: '4', p5: '5' })).status, 207);
    });

    test('properties: total size', async () => {
      const big = 'x'.repeat(MAX_PROP_BYTES / 2);
      assert.equal((await proppatch('bob', 'a.txt', {}, ['p1', 'p2', 'p3', 'p4', 'p5'])).status, 207);
      assert.equal((await proppatch('bob', 'b.txt', { big1: big })).status, 207);
      await refused(await proppatch('bob', 'c.txt', { big2: big }));
      assert.deepEqual(await deadProps('bob', 'c.txt'), []);
      // Shrinking is always allowed.
      assert.equal((await proppatch('bob', 'b.txt', { big1: 'small' })).status, 207);
      assert.equal((await proppatch('bob', 'c.txt', { big2: big })).status, 207);
    });

    test('locks: up to the count of live locks, then 507; unlocking makes room', async () => {
      const tokens: string[] = [];
      for (const f of ['a.txt', 'b.txt', 'c.txt']) {
        const res = await dav('alice', f, 'LOCK', lockBody, { timeout: 'Second-600' });
        assert.equal(res.status, 200, await res.text());
        tokens.push(res.headers.get('lock-token') ?? '');
      }
      await refused(await dav('alice', 'd.txt', 'LOCK', lockBody, { timeout: 'Second-600' }));
      // A lock on an unmapped URL would create a file: refused, nothing created.
      await refused(await dav('alice', 'new.txt', 'LOCK', lockBody, { timeout: 'Second-600' }));
      assert.equal(await t.fs.kind('new.txt', 'alice'), undefined);
      // bob has his own count.
      assert.equal((await dav('bob', 'd.txt', 'LOCK', lockBody, { timeout: 'Second-600' })).status, 200);
      assert.equal((await dav('alice', 'a.txt', 'UNLOCK', undefined, { 'lock-token': tokens[0] as string })).status, 204);
      assert.equal((await dav('alice', 'd.txt', 'LOCK', lockBody, { timeout: 'Second-600' })).status, 200);
    });
  });
}
