// The one door (issue 50; docs/architecture.md "The operation layer"), on every backend. The layer
// (src/services/operations.ts) asks `decide` for every key an operation takes: with a spy `decide` that
// refuses one key, every operation that takes that key is refused with the spy's answer and changes
// nothing. And over every front end (the storage API, WebDAV with Shared with me, tus, search, share
// links, grants), a principal refused everything in another user's tree — no grant there, or a
// read-only one — gets the contract's refusal for the URL's key and for every key the body or headers
// name, and the owner's tree is left as it was.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { decide, isWriteMethod, type Denial } from '../../src/domain/access.js';
import { AppError } from '../../src/domain/errors.js';
import type { Principal } from '../../src/domain/principal.js';
import { keyId, parseDecodedStoragePath, type StorageKey } from '../../src/domain/storage-path.js';
import { createOperations, type PrincipalOperations } from '../../src/services/operations.js';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { bearer, usersApi } from '../helpers/client.js';
import { BasicClient } from '../helpers/basic-client.js';
import { jpeg } from '../helpers/images.js';
import { sftpFlags, sftpPort, sftpRequests, sshIdentity, toolSkip, withSftp, type SshIdentity } from '../helpers/sftp.js';

const key = (id: string): StorageKey => parseDecodedStoragePath(id.includes('/') ? id : `${id}/`).key;
const SPY: Denial = { code: 'forbidden', message: 'Refused by the spy.' };

/** Each operation of the layer, with the keys it takes (as `user/path`). */
const OPERATIONS: readonly { readonly name: string; readonly keys: readonly string[]; run(ops: PrincipalOperations): Promise<unknown> }[] = [
  { name: 'stat', keys: ['alice/doc.txt'], run: (ops) => ops.stat(key('alice/doc.txt')) },
  { name: 'statOrThrow', keys: ['alice/doc.txt'], run: (ops) => ops.statOrThrow(key('alice/doc.txt')) },
  { name: 'listSorted', keys: ['alice/dir'], run: (ops) => ops.listSorted(key('alice/dir')) },
  { name: 'read', keys: ['alice/doc.txt'], run: (ops) => ops.read(key('alice/doc.txt')) },
  { name: 'lookBeforeWrite', keys: ['alice/dir/new.txt'], run: (ops) => ops.lookBeforeWrite(key('alice/dir/new.txt')) },
  { name: 'withLocks.put', keys: ['alice/dir/new.txt'], run: (ops) => ops.withLocks.put(key('alice/dir/new.txt'), Readable.from([Buffer.from('new')]), 3) },
  { name: 'withLocks.delete', keys: ['alice/doc.txt'], run: (ops) => ops.withLocks.delete(key('alice/doc.txt')) },
  { name: 'withLocks.mkdir', keys: ['alice/fresh'], run: (ops) => ops.withLocks.mkdir(key('alice/fresh')) },
  { name: 'withLocks.redate', keys: ['alice/doc.txt'], run: (ops) => ops.withLocks.redate(key('alice/doc.txt'), new Date(Date.UTC(2001, 0, 1))) },
  { name: 'withLocks.move', keys: ['alice/doc.txt', 'alice/dir/moved.txt'], run: (ops) => ops.withLocks.move(key('alice/doc.txt'), key('alice/dir/moved.txt'), false) },
  { name: 'writeFile', keys: ['alice/dir/new.txt'], run: (ops) => ops.writeFile(key('alice/dir/new.txt'), Readable.from([Buffer.from('new')])) },
  {
    name: 'writeParts',
    keys: ['alice/dir'],
    run: (ops) =>
      ops.writeParts(
        key('alice/dir'),
        (async function* () {
          yield { filename: 'part.txt', stream: Readable.from([Buffer.from('part')]) };
        })(),
        { overwrite: false },
      ),
  },
  { name: 'delete', keys: ['alice/doc.txt'], run: (ops) => ops.delete(key('alice/doc.txt')) },
  { name: 'createFolder', keys: ['alice/fresh'], run: (ops) => ops.createFolder(key('alice/fresh')) },
  { name: 'move', keys: ['alice/doc.txt', 'alice/dir/moved.txt'], run: (ops) => ops.move(key('alice/doc.txt'), key('alice/dir/moved.txt'), false) },
  { name: 'copy', keys: ['alice/doc.txt', 'alice/dir/copied.txt'], run: (ops) => ops.copy(key('alice/doc.txt'), key('alice/dir/copied.txt'), false) },
  { name: 'restoreVersion', keys: ['alice/doc.txt'], run: (ops) => ops.restoreVersion(key('alice/doc.txt'), 'some-version') },
  { name: 'may', keys: ['alice/doc.txt'], run: (ops) => ops.may(key('alice/doc.txt'), 'GET') },
  { name: 'read', keys: ['alice/doc.txt'], run: (ops) => ops.read(key('alice/doc.txt'), { start: 0, end: 1 }) },
  { name: 'readIfFile', keys: ['alice/doc.txt'], run: (ops) => ops.readIfFile(key('alice/doc.txt')) },
  { name: 'withDigest', keys: ['alice/doc.txt'], run: async (ops) => ops.withDigest(key('alice/doc.txt'), await ops.stat(key('alice/doc.txt'))) },
  { name: 'folderEtag', keys: ['alice/dir'], run: (ops) => ops.folderEtag(key('alice/dir')) },
  { name: 'identities', keys: ['alice/dir'], run: (ops) => ops.identities(key('alice/dir'), ['dir/kept.txt']) },
  { name: 'listWithEtags', keys: ['alice/dir'], run: (ops) => ops.listWithEtags(key('alice/dir')) },
  { name: 'previewText', keys: ['alice/doc.txt'], run: async (ops) => ops.previewText(key('alice/doc.txt'), await ops.stat(key('alice/doc.txt'))) },
  { name: 'thumbnail', keys: ['alice/doc.txt'], run: async (ops) => ops.thumbnail(key('alice/doc.txt'), await ops.stat(key('alice/doc.txt')), 256) },
  { name: 'zip', keys: ['alice/dir'], run: (ops) => ops.zip(key('alice/dir'), { skipped: () => undefined }) },
  { name: 'versions', keys: ['alice/doc.txt'], run: (ops) => ops.versions(key('alice/doc.txt')) },
  { name: 'readVersion', keys: ['alice/doc.txt'], run: (ops) => ops.readVersion(key('alice/doc.txt'), 'some-version') },
];

for (const [storage, skip] of BACKENDS) {
  describe(`the operation layer asks decide for every key, on ${storage}`, { skip: skip ?? (storage === 'cluster' ? 'the layer of this process: file and s3 build it in-process' : undefined) }, () => {
    let t: TestApp;
    let alice: Principal;
    /** A visitor of alice's link to dir/ and of her upload-only link to dir/ (both unlocked). */
    const visitors: Record<'reads' | 'uploads', Principal> = {} as never;
    before(async () => {
      t = await startApp({ storage, users: ['alice', 'bob'] });
      await t.fs.put('doc.txt', 'original', 'alice');
      await t.fs.put('dir/kept.txt', 'kept', 'alice');
      await t.fs.put('team/notes.txt', 'notes', 'bob');
      const user = await t.store.users.getByName('alice');
      alice = { kind: 'user', via: 'session', sessionId: 'spy-session', userId: user!.id, username: 'alice', isAdmin: false, readOnly: false };
      const [aliceToken, bobToken] = [(await t.login('alice')).access_token, (await t.login('bob')).access_token];
      const granted = await fetch(`${t.url}/api/grants`, { method: 'POST', headers: { ...bearer(bobToken), 'content-type': 'application/json' }, body: JSON.stringify({ path: '/bob/team', to: 'user:alice', permission: 'write' }) });
      assert.equal(granted.status, 201, await granted.text());
      for (const [kind, uploadOnly] of [['reads', false], ['uploads', true]] as const) {
        const res = await fetch(`${t.url}/api/shares`, { method: 'POST', headers: { ...bearer(aliceToken), 'content-type': 'application/json' }, body: JSON.stringify({ path: '/alice/dir', upload_only: uploadOnly }) });
        const text = await res.text();
        assert.equal(res.status, 201, text);
        const share = (await t.store.shares.get((JSON.parse(text) as { id: string }).id))!;
        visitors[kind] = { kind: 'share', shareId: share.id, username: share.owner, share, unlocked: true, readOnly: !share.uploadOnly };
      }
    });
    after(() => t?.close());

    /** The layer over the app's own services, with a `decide` that refuses `refused` and answers every other key as the real one. */
    const refusing = (refused: string, as: Principal = alice) =>
      createOperations({
        ...t.app.operations.deps,
        decide: (rule, principal, method, resource, grant) => (resource.kind === 'storage' && keyId(resource.key) === refused ? SPY : decide(rule, principal, method, resource, grant)),
      }).as(as);
    /** The layer with a `decide` that refuses every share link (what a visitor may do there is `decide`'s answer for the link). */
    const refusingLinks = (as: Principal) =>
      createOperations({
        ...t.app.operations.deps,
        decide: (rule, principal, method, resource, grant) => (resource.kind === 'share' ? SPY : decide(rule, principal, method, resource, grant)),
      }).as(as);
    const unchanged = async () => {
      assert.deepEqual(await t.fs.names('', 'alice'), ['dir', 'doc.txt']);
      assert.deepEqual(await t.fs.names('dir', 'alice'), ['kept.txt']);
      assert.equal(await t.fs.text('doc.txt', 'alice'), 'original');
      assert.deepEqual(await t.fs.names('team', 'bob'), ['notes.txt']);
    };
    const bySpy = (e: unknown) => e instanceof AppError && e.code === SPY.code && e.message === SPY.message;

    for (const op of OPERATIONS) {
      for (const refused of op.keys) {
        test(`${op.name} is refused when decide refuses ${refused}, and changes nothing`, async () => {
          await assert.rejects(op.run(refusing(refused)), bySpy);
          await unchanged();
        });
      }
    }

    // A share link's visitor: what the link lets them do is asked of decide for the link, then each key.
    const upload = () =>
      (async function* () {
        yield { filename: 'dropped.txt', stream: Readable.from([Buffer.from('dropped')]) };
      })();
    const LINK_OPERATIONS: readonly { readonly name: string; readonly visitor: keyof typeof visitors; run(ops: PrincipalOperations): Promise<unknown> }[] = [
      { name: 'openLink', visitor: 'reads', run: (ops) => ops.openLink(['kept.txt']) },
      { name: 'visit', visitor: 'reads', run: (ops) => ops.visit([]) },
      { name: 'visit of an upload-only link', visitor: 'uploads', run: (ops) => ops.visit([]) },
      { name: 'uploadToLink', visitor: 'uploads', run: (ops) => ops.uploadToLink([], upload()) },
    ];
    for (const op of LINK_OPERATIONS) {
      test(`${op.name} is refused when decide refuses the link, and changes nothing`, async () => {
        await assert.rejects(op.run(refusingLinks(visitors[op.visitor])), bySpy);
        await unchanged();
      });
    }
    test('uploadToLink is refused when decide refuses the link\'s folder, and changes nothing', async () => {
      await assert.rejects(refusing('alice/dir', visitors.uploads).uploadToLink([], upload()), bySpy);
      await unchanged();
    });

    test('sharedWithMe lists only the items decide lets the principal read', async () => {
      assert.deepEqual((await t.app.operations.layer.as(alice).sharedWithMe()).map((i) => i.name), ['team (bob)']);
      assert.deepEqual(await refusing('bob/team').sharedWithMe(), []);
      assert.deepEqual((await refusing('bob/other').sharedWithMe()).map((i) => i.name), ['team (bob)']);
    });

    test('the layer the app is built with uses the real decide: alice reads her own file through it', async () => {
      const ops = t.app.operations.layer.as(alice);
      assert.equal((await ops.stat(key('alice/doc.txt'))).size, 'original'.length);
      await assert.rejects(ops.stat(key('bob/doc.txt')), (e: unknown) => e instanceof AppError && e.code === 'unauthorized');
    });
  });

  describe(`every front end refuses each key a refused principal names, on ${storage}`, { skip }, () => {
    let t: TestApp;
    const tokens: Record<string, string> = {};
    before(async () => {
      t = await startApp({ storage, users: ['bob', 'mallory'] });
      for (const u of ['bob', 'mallory']) tokens[u] = (await t.login(u)).access_token;
      await t.fs.put('private.txt', 'secret', 'bob');
      await t.fs.put('team/notes.txt', 'notes', 'bob');
      await t.fs.put('mine.txt', 'mine', 'mallory');
      // What mallory may do in bob's tree: read team/, nothing more.
      const res = await fetch(`${t.url}/api/grants`, { method: 'POST', headers: { ...bearer(tokens.bob!), 'content-type': 'application/json' }, body: JSON.stringify({ path: '/bob/team', to: 'user:mallory', permission: 'read' }) });
      assert.equal(res.status, 201, await res.text());
    });
    after(() => t?.close());

    const { req } = usersApi(() => t.url, tokens);
    const dest = (path: string) => ({ destination: `${t.origin}${new URL(t.url).pathname.replace(/\/$/, '')}/dav/${path.split('/').map(encodeURIComponent).join('/')}` });
    const meta = (m: Record<string, string>) => Object.entries(m).map(([k, v]) => `${k} ${Buffer.from(v).toString('base64')}`).join(',');
    const SHARED = `/dav/${encodeURIComponent('Shared with me')}/${encodeURIComponent('team (bob)')}`;

    /** [front end and operation, the request, the status, the error code]: 401 outside every grant, 403 where the grant only reads. */
    const ROWS: readonly [string, () => Promise<Response>, number, string][] = [
      ['API PUT outside a grant', () => req('mallory', 'PUT', '/storage/bob/new.txt', 'x'), 401, 'unauthorized'],
      ['API PUT in a read grant', () => req('mallory', 'PUT', '/storage/bob/team/new.txt', 'x'), 403, 'forbidden'],
      ['API DELETE outside a grant', () => req('mallory', 'DELETE', '/storage/bob/private.txt'), 401, 'unauthorized'],
      ['API DELETE in a read grant', () => req('mallory', 'DELETE', '/storage/bob/team/notes.txt'), 403, 'forbidden'],
      ['API CreateFolder outside a grant', () => req('mallory', 'POST', '/storage/bob/dir', { action: 'CreateFolder' }), 401, 'unauthorized'],
      ['API CreateFolder in a read grant', () => req('mallory', 'POST', '/storage/bob/team/dir', { action: 'CreateFolder' }), 403, 'forbidden'],
      ['API Move: the destination outside a grant', () => req('mallory', 'POST', '/storage/mallory/mine.txt', { action: 'Move', new_path: '/bob/stolen.txt' }), 401, 'unauthorized'],
      ['API Move: the destination in a read grant', () => req('mallory', 'POST', '/storage/mallory/mine.txt', { action: 'Move', new_path: '/bob/team/stolen.txt' }), 403, 'forbidden'],
      ['API Move: the source in a read grant', () => req('mallory', 'POST', '/storage/bob/team/notes.txt', { action: 'Move', new_path: '/mallory/taken.txt' }), 403, 'forbidden'],
      ['API Copy: the destination outside a grant', () => req('mallory', 'POST', '/storage/mallory/mine.txt', { action: 'Copy', new_path: '/bob/stolen.txt' }), 401, 'unauthorized'],
      ['API Copy: the destination in a read grant', () => req('mallory', 'POST', '/storage/mallory/mine.txt', { action: 'Copy', new_path: '/bob/team/stolen.txt' }), 403, 'forbidden'],
      ['API restore_version in a read grant', () => req('mallory', 'POST', '/storage/bob/team/notes.txt', { action: 'restore_version', version: 'v' }), 403, 'forbidden'],
      ['WebDAV PUT outside a grant', () => req('mallory', 'PUT', '/dav/bob/new.txt', 'x'), 401, 'unauthorized'],
      ['WebDAV PUT in a read grant', () => req('mallory', 'PUT', '/dav/bob/team/new.txt', 'x'), 403, 'forbidden'],
      ['WebDAV MOVE: the Destination outside a grant', () => req('mallory', 'MOVE', '/dav/mallory/mine.txt', undefined, dest('bob/stolen.txt')), 403, 'forbidden'],
      ['WebDAV MOVE: the Destination in a read grant', () => req('mallory', 'MOVE', '/dav/mallory/mine.txt', undefined, dest('bob/team/stolen.txt')), 403, 'forbidden'],
      ['WebDAV COPY: the Destination outside a grant', () => req('mallory', 'COPY', '/dav/mallory/mine.txt', undefined, dest('bob/stolen.txt')), 403, 'forbidden'],
      ['WebDAV COPY: the Destination in a read grant', () => req('mallory', 'COPY', '/dav/mallory/mine.txt', undefined, dest('bob/team/stolen.txt')), 403, 'forbidden'],
      ['WebDAV MOVE: the source in a read grant', () => req('mallory', 'MOVE', '/dav/bob/team/notes.txt', undefined, dest('mallory/taken.txt')), 403, 'forbidden'],
      ['WebDAV LOCK in a read grant', () => req('mallory', 'LOCK', '/dav/bob/team/notes.txt', '<?xml version="1.0"?><d:lockinfo xmlns:d="DAV:"><d:lockscope><d:exclusive/></d:lockscope><d:locktype><d:write/></d:locktype></d:lockinfo>', { 'content-type': 'application/xml' }), 403, 'forbidden'],
      ['Shared with me PUT in a read grant', () => req('mallory', 'PUT', `${SHARED}/new.txt`, 'x'), 403, 'forbidden'],
      ['Shared with me DELETE in a read grant', () => req('mallory', 'DELETE', `${SHARED}/notes.txt`), 403, 'forbidden'],
      ['Shared with me MOVE: the Destination in a read grant', () => req('mallory', 'MOVE', '/dav/mallory/mine.txt', undefined, { destination: `${t.url}${SHARED}/stolen.txt` }), 403, 'forbidden'],
      ['tus: a folder outside a grant', () => req('mallory', 'POST', '/tus/', undefined, { 'tus-resumable': '1.0.0', 'upload-length': '1', 'upload-metadata': meta({ filename: 'x.txt', folder: '/bob/' }) }), 401, 'unauthorized'],
      ['tus: a folder in a read grant', () => req('mallory', 'POST', '/tus/', undefined, { 'tus-resumable': '1.0.0', 'upload-length': '1', 'upload-metadata': meta({ filename: 'x.txt', folder: '/bob/team' }) }), 403, 'forbidden'],
      ['search: a scope outside a grant', () => req('mallory', 'GET', '/api/search?q=secret&path=/bob/'), 401, 'unauthorized'],
      ['share link of a key outside a grant', () => req('mallory', 'POST', '/api/shares', { path: '/bob/private.txt' }), 401, 'unauthorized'],
      ['share link of a key in a read grant (only the owner shares)', () => req('mallory', 'POST', '/api/shares', { path: '/bob/team/notes.txt' }), 401, 'unauthorized'],
      ['grant of a key in a read grant (only the owner shares)', () => req('mallory', 'POST', '/api/grants', { path: '/bob/team', to: 'user:bob', permission: 'write' }), 401, 'unauthorized'],
    ];

    for (const [name, send, status, code] of ROWS) {
      test(`${name}: ${status} ${code}, nothing changes`, async () => {
        const res = await send();
        const text = await res.text();
        assert.equal(res.status, status, text);
        if ((res.headers.get('content-type') ?? '').startsWith('application/json')) assert.equal((JSON.parse(text) as { error: string }).error, code);
        assert.deepEqual(await t.fs.names('', 'bob'), ['private.txt', 'team']);
        assert.deepEqual(await t.fs.names('team', 'bob'), ['notes.txt']);
        assert.equal(await t.fs.text('team/notes.txt', 'bob'), 'notes');
        assert.equal(await t.fs.text('mine.txt', 'mallory'), 'mine');
      });
    }

    test('the search scope in a read grant is allowed (the same decide lets reads through)', async () => {
      const res = await req('mallory', 'GET', '/api/search?q=notes&path=/bob/team/');
      assert.equal(res.status, 200, await res.text());
    });
  });
}

/**
 * A `decide` for the operation layer that refuses every storage key once armed (the auth hook keeps the
 * real one): a read as a key hidden from the caller (404), a write as a key the caller may only read
 * (403), the answers each route documents.
 */
const HIDDEN: Denial = { code: 'not_found', message: 'Hidden by the spy.' };
function keyRefuser(): { armed: boolean; readonly decide: typeof decide } {
  const spy: { armed: boolean; readonly decide: typeof decide } = {
    armed: false,
    decide: (rule, principal, method, resource, grant) => (spy.armed && resource.kind === 'storage' ? (isWriteMethod(method) ? SPY : HIDDEN) : decide(rule, principal, method, resource, grant)),
  };
  return spy;
}

for (const [storage, skip] of BACKENDS) {
  // Every read and every WebDAV write asks the layer, not only the auth hook's check of the URL's key:
  // with the layer refusing every key, each answers the layer's refusal and changes nothing.
  describe(`every front end reads and writes through the layer, on ${storage}`, { skip: skip ?? (storage === 'cluster' ? 'a spy decide is given to an in-process app: file and s3' : undefined) }, () => {
    let t: TestApp;
    const tokens: Record<string, string> = {};
    let shareId = '';
    let dropId = '';
    let tusUpload = '';
    let basic: BasicClient;
    let csrf = '';
    let ssh: SshIdentity | undefined;
    let sftpAt = 0;
    const spy = keyRefuser();
    before(async () => {
      t = await startApp({ storage, users: ['alice', 'bob'], decide: spy.decide, flags: await sftpFlags(storage) });
      for (const u of ['alice', 'bob']) tokens[u] = (await t.login(u)).access_token;
      await t.fs.put('doc.txt', 'original', 'alice');
      await t.fs.put('dir/kept.txt', 'kept', 'alice');
      await t.fs.put('dir/pic.png', await jpeg(8, 8), 'alice');
      await t.fs.put('team/notes.txt', 'notes', 'bob');
      // What is made before the spy refuses anything (each asks the layer too): links, a grant, a tus upload, sign-ins.
      const link = async (uploadOnly: boolean) => {
        const res = await req('alice', 'POST', '/api/shares', { path: '/alice/dir', upload_only: uploadOnly });
        assert.equal(res.status, 201);
        return ((await res.json()) as { id: string }).id;
      };
      [shareId, dropId] = [await link(false), await link(true)];
      assert.equal((await req('bob', 'POST', '/api/grants', { path: '/bob/team', to: 'user:alice', permission: 'write' })).status, 201);
      const tus = await req('alice', 'POST', '/tus/', undefined, { 'tus-resumable': '1.0.0', 'upload-length': '2', 'upload-metadata': meta({ filename: 'tus.txt' }) });
      assert.equal(tus.status, 201);
      tusUpload = new URL(tus.headers.get('location') as string, t.url).pathname.slice(new URL(t.url).pathname.replace(/\/$/, '').length);
      basic = new BasicClient(t.url);
      assert.equal((await basic.login('alice', 'alice-password')).status, 303);
      csrf = await basic.csrf();
      if (!toolSkip('ssh-keygen')) {
        ssh = await sshIdentity(t, 'alice');
        sftpAt = sftpPort(t);
      }
      spy.armed = true;
    });
    after(async () => {
      await t?.close();
      await ssh?.dispose();
    });

    const { req } = usersApi(() => t.url, tokens);
    const meta = (m: Record<string, string>) => Object.entries(m).map(([k, v]) => `${k} ${Buffer.from(v).toString('base64')}`).join(',');
    const SHARED = `/dav/${encodeURIComponent('Shared with me')}/${encodeURIComponent('team (bob)')}`;
    const NOT_SHARED = 'Nothing named "team (bob)" is shared with you.';
    const multipart = (name: string) => {
      const form = new FormData();
      form.append('file', new Blob(['x']), name);
      return form;
    };
    const xml = { 'content-type': 'application/xml' };
    const PROPPATCH = '<?xml version="1.0"?><d:propertyupdate xmlns:d="DAV:" xmlns:x="urn:x"><d:set><d:prop><x:color>red</x:color></d:prop></d:set></d:propertyupdate>';
    const REPORT = '<?xml version="1.0"?><d:sync-collection xmlns:d="DAV:"><d:sync-token/><d:sync-level>1</d:sync-level><d:prop><d:getetag/></d:prop></d:sync-collection>';
    const PROPFIND = '<?xml version="1.0"?><d:propfind xmlns:d="DAV:"><d:allprop/></d:propfind>';

    /**
     * [front end and operation, the request, the layer's status: 404 for a read (or for a write that
     * looks first), 403 for a write; the message when it is not the spy's own (a place in Shared with me
     * the layer no longer lists)].
     */
    const ROWS: readonly [string, () => Promise<Response>, 403 | 404, string?][] = [
      ['API GET of a file (the fast read path)', () => req('alice', 'GET', '/storage/alice/doc.txt'), 404],
      ['API HEAD of a file', () => req('alice', 'HEAD', '/storage/alice/doc.txt'), 404],
      ['API GET of a Range', () => req('alice', 'GET', '/storage/alice/doc.txt', undefined, { range: 'bytes=0-1' }), 404],
      ['API GET of a folder listing', () => req('alice', 'GET', '/storage/alice/dir/'), 404],
      ['API GET of a thumbnail', () => req('alice', 'GET', '/storage/alice/dir/pic.png?thumbnail=64'), 404],
      ['API GET of a zip', () => req('alice', 'GET', '/storage/alice/dir/?zip=1'), 404],
      ['API GET of the versions', () => req('alice', 'GET', '/storage/alice/doc.txt?versions'), 404],
      ['/basic/ download', () => basic.fetch('/basic/file/doc.txt'), 404],
      ['WebDAV GET', () => req('alice', 'GET', '/dav/alice/doc.txt'), 404],
      ['WebDAV HEAD', () => req('alice', 'HEAD', '/dav/alice/doc.txt'), 404],
      ['WebDAV GET of a collection', () => req('alice', 'GET', '/dav/alice/dir/'), 404],
      ['WebDAV PROPFIND', () => req('alice', 'PROPFIND', '/dav/alice/dir/', PROPFIND, { ...xml, depth: '1' }), 404],
      ['WebDAV PUT', () => req('alice', 'PUT', '/dav/alice/dir/new.txt', 'x'), 403],
      ['WebDAV PUT replacing a file', () => req('alice', 'PUT', '/dav/alice/doc.txt', 'x'), 403],
      ['WebDAV DELETE', () => req('alice', 'DELETE', '/dav/alice/doc.txt'), 403],
      ['WebDAV MKCOL', () => req('alice', 'MKCOL', '/dav/alice/fresh'), 403],
      ['WebDAV PROPPATCH', () => req('alice', 'PROPPATCH', '/dav/alice/doc.txt', PROPPATCH, xml), 403],
      ['WebDAV REPORT', () => req('alice', 'REPORT', '/dav/alice/dir/', REPORT, { ...xml, depth: '0' }), 404],
      ['WebDAV COPY', () => req('alice', 'COPY', '/dav/alice/doc.txt', undefined, { destination: `${t.url}/dav/alice/dir/copied.txt` }), 403],
      ['WebDAV UNLOCK', () => req('alice', 'UNLOCK', '/dav/alice/doc.txt', undefined, { 'lock-token': '<urn:uuid:00000000-0000-0000-0000-000000000000>' }), 403],
      ['share link GET of a file (the fast read path)', () => fetch(`${t.url}/share/${shareId}/kept.txt`), 404],
      ['share link HEAD of a file', () => fetch(`${t.url}/share/${shareId}/kept.txt`, { method: 'HEAD' }), 404],
      ['share link GET of a Range', () => fetch(`${t.url}/share/${shareId}/kept.txt`, { headers: { range: 'bytes=0-1' } }), 404],
      ['share link listing', () => fetch(`${t.url}/share/${shareId}/`), 404],
      ['share link zip', () => fetch(`${t.url}/share/${shareId}/?zip=1`), 404],
      ['share page of a folder', () => fetch(`${t.url}/s/${shareId}/`), 404],
      ['share link thumbnail', () => fetch(`${t.url}/share/${shareId}/pic.png?thumbnail=64`), 404],
      ['API PUT of a file', () => req('alice', 'PUT', '/storage/alice/dir/new.txt', 'x'), 403],
      ['API PUT replacing a file', () => req('alice', 'PUT', '/storage/alice/doc.txt', 'x'), 403],
      ['API PUT of multipart files', () => fetch(`${t.url}/storage/alice/dir/`, { method: 'PUT', headers: bearer(tokens.alice!), body: multipart('new.txt') }), 403],
      ['API DELETE', () => req('alice', 'DELETE', '/storage/alice/doc.txt'), 403],
      ['API CreateFolder', () => req('alice', 'POST', '/storage/alice/fresh', { action: 'CreateFolder' }), 403],
      ['API Move', () => req('alice', 'POST', '/storage/alice/doc.txt', { action: 'Move', new_path: '/alice/dir/moved.txt' }), 403],
      ['API Copy (its source is read first)', () => req('alice', 'POST', '/storage/alice/doc.txt', { action: 'Copy', new_path: '/alice/dir/copied.txt' }), 404],
      ['API restore_version', () => req('alice', 'POST', '/storage/alice/doc.txt', { action: 'restore_version', version: 'v' }), 403],
      ['API MakePathToken', () => req('alice', 'POST', '/storage/alice/doc.txt', { action: 'MakePathToken' }), 404],
      ['WebDAV MOVE', () => req('alice', 'MOVE', '/dav/alice/doc.txt', undefined, { destination: `${t.url}/dav/alice/dir/moved.txt` }), 403],
      ['WebDAV LOCK', () => req('alice', 'LOCK', '/dav/alice/doc.txt', '<?xml version="1.0"?><d:lockinfo xmlns:d="DAV:"><d:lockscope><d:exclusive/></d:lockscope><d:locktype><d:write/></d:locktype></d:lockinfo>', xml), 403],
      ['WebDAV PROPFIND of /dav/ itself (dated by the caller\'s root)', () => req('alice', 'PROPFIND', '/dav/', PROPFIND, { ...xml, depth: '1' }), 404],
      ['WebDAV PROPFIND of Shared with me', () => req('alice', 'PROPFIND', `/dav/${encodeURIComponent('Shared with me')}/`, PROPFIND, { ...xml, depth: '1' }), 404],
      ['WebDAV GET in Shared with me', () => req('alice', 'GET', `${SHARED}/notes.txt`), 404, NOT_SHARED],
      ['WebDAV PUT in Shared with me', () => req('alice', 'PUT', `${SHARED}/new.txt`, 'x'), 404, NOT_SHARED],
      ['tus: a new upload', () => req('alice', 'POST', '/tus/', undefined, { 'tus-resumable': '1.0.0', 'upload-length': '1', 'upload-metadata': meta({ filename: 'x.txt' }) }), 403],
      ['tus: a PATCH of an upload made before (its folder asked again)', () => req('alice', 'PATCH', tusUpload, 'hi', { 'tus-resumable': '1.0.0', 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' }), 404, 'No such upload (it may have expired or been finished long ago).'],
      ['search in a folder', () => req('alice', 'GET', '/api/search?q=kept&path=/alice/dir/'), 404],
      ['search without a folder (the caller\'s own tree)', () => req('alice', 'GET', '/api/search?q=kept'), 404],
      ['share link creation', () => req('alice', 'POST', '/api/shares', { path: '/alice/doc.txt' }), 403],
      ['grant creation', () => req('alice', 'POST', '/api/grants', { path: '/alice/doc.txt', to: 'user:bob', permission: 'read' }), 403],
      ['share link upload (upload-only link)', () => fetch(`${t.url}/share/${dropId}/`, { method: 'PUT', body: multipart('dropped.txt') }), 403],
      ['/basic/ upload (the folder is looked at first)', () => basic.upload('/basic/dir/', [{ name: 'new.txt', content: 'x' }], csrf), 404],
      ['/basic/ new folder', () => basic.post('/basic/', { csrf, action: 'mkdir', name: 'fresh' }), 404],
      ['/basic/ rename', () => basic.post('/basic/', { csrf, action: 'rename', name: 'doc.txt', new_name: 'moved.txt' }), 404],
      ['/basic/ delete', () => basic.post('/basic/', { csrf, action: 'delete', name: 'doc.txt' }), 404],
    ];

    const unchanged = async () => {
      assert.deepEqual(await t.fs.names('', 'alice'), ['dir', 'doc.txt']);
      assert.deepEqual(await t.fs.names('dir', 'alice'), ['kept.txt', 'pic.png']);
      assert.equal(await t.fs.text('doc.txt', 'alice'), 'original');
      assert.deepEqual(await t.fs.names('team', 'bob'), ['notes.txt']);
      assert.equal(await t.fs.text('team/notes.txt', 'bob'), 'notes');
    };

    for (const [name, send, status, message] of ROWS) {
      test(`${name}: the layer's ${status}, nothing changes`, async () => {
        const res = await send();
        const text = await res.text();
        const refusal = message !== undefined ? { code: 'not_found', message } : status === 403 ? SPY : HIDDEN;
        assert.equal(res.status, status, text);
        if (text !== '' && (res.headers.get('content-type') ?? '').startsWith('application/json')) assert.deepEqual(JSON.parse(text), { error: refusal.code, message: refusal.message });
        else if (text !== '') assert.ok(text.includes(refusal.message), text);
        await unchanged();
      });
    }

    test('SFTP lists nothing in Shared with me: the layer lets no received item be read', { skip: toolSkip('ssh-keygen') }, async () => {
      assert.deepEqual(await withSftp(sftpAt, { username: 'alice', privateKey: await readFile(ssh!.key, 'utf8') }, (s) => sftpRequests(s).readdir('/Shared with me')), []);
    });

    /** [SFTP request, the status text's start: the layer's refusal, or a Shared with me item it no longer lists]. */
    const SFTP_ROWS: readonly [string, (s: ReturnType<typeof sftpRequests>) => Promise<unknown>, string][] = [
      ['stat', (s) => s.stat('/doc.txt'), `not_found: ${HIDDEN.message}`],
      ['opendir', (s) => s.readdir('/dir'), `not_found: ${HIDDEN.message}`],
      ['open and read', (s) => s.readFile('/doc.txt'), `not_found: ${HIDDEN.message}`],
      ['open a new file to write', (s) => s.writeFile('/dir/new.txt', 'x'), `forbidden: ${SPY.message}`],
      ['open a file to replace it', (s) => s.writeFile('/doc.txt', 'x'), `forbidden: ${SPY.message}`],
      ['mkdir', (s) => s.mkdir('/fresh'), `forbidden: ${SPY.message}`],
      ['remove (the file is looked at first)', (s) => s.unlink('/doc.txt'), `not_found: ${HIDDEN.message}`],
      ['rmdir (the folder is looked at first)', (s) => s.rmdir('/dir'), `not_found: ${HIDDEN.message}`],
      ['rename', (s) => s.rename('/doc.txt', '/dir/moved.txt'), `forbidden: ${SPY.message}`],
      ['setstat of times', (s) => s.utimes('/doc.txt', new Date(Date.UTC(2001, 0, 1))), `forbidden: ${SPY.message}`],
      ['stat in Shared with me', (s) => s.stat('/Shared with me/team (bob)/notes.txt'), `not_found: ${NOT_SHARED}`],
      ['open to write in Shared with me', (s) => s.writeFile('/Shared with me/team (bob)/new.txt', 'x'), `not_found: ${NOT_SHARED}`],
    ];
    for (const [name, request, refusal] of SFTP_ROWS) {
      test(`SFTP ${name}: the layer's refusal, nothing changes`, { skip: toolSkip('ssh-keygen') }, async () => {
        await assert.rejects(
          withSftp(sftpAt, { username: 'alice', privateKey: await readFile(ssh!.key, 'utf8') }, (s) => request(sftpRequests(s))),
          (e: unknown) => e instanceof Error && e.message === refusal,
        );
        await unchanged();
      });
    }
  });
}
