import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { behindTheBack, indexCommand } from '../helpers/behind-the-back.js';
import { bearer, encodePath, postJson } from '../helpers/client.js';
import { multipartBody } from '../helpers/multipart.js';
import { prng } from '../kit/prng.js';

type Change = { cursor: string; type: 'created' | 'modified' | 'deleted' | 'moved'; path: string; from?: string; is_file: boolean; size?: number; modified?: string; etag?: string };
type Page = { changes: Change[]; cursor: string; more: boolean };
type Item = { isFile: boolean; size?: number; etag?: string };
type Tree = Map<string, Item>;


const b64 = (s: string) => Buffer.from(s).toString('base64');

/** Applies feed entries to a mirror (paths without the leading /<owner>/), as a sync client would. */
function replay(mirror: Tree, changes: readonly Change[], owner: string): void {
  const rel = (p: string) => p.slice(owner.length + 2);
  const removeTree = (p: string) => {
    for (const k of [...mirror.keys()]) if (k === p || k.startsWith(`${p}/`)) mirror.delete(k);
  };
  for (const c of changes) {
    const path = rel(c.path);
    const item: Item = c.is_file ? { isFile: true, size: c.size, etag: c.etag } : { isFile: false };
    if (c.type === 'created' || c.type === 'modified') {
      const was = mirror.get(path);
      if (was && was.isFile !== c.is_file) removeTree(path);
      mirror.set(path, item);
    } else if (c.type === 'deleted') {
      removeTree(path);
    } else {
      const from = rel(c.from as string);
      const moving = [...mirror.entries()].filter(([k]) => k === from || k.startsWith(`${from}/`));
      removeTree(from);
      removeTree(path);
      for (const [k, v] of moving) mirror.set(path + k.slice(from.length), v);
      mirror.set(path, item);
    }
  }
}

for (const [storage, skip] of BACKENDS) {
  describe(`change feed on ${storage}`, { skip }, () => {
    let t: TestApp;
    let alice: Record<string, string>;
    let bob: Record<string, string>;
    before(async () => {
      t = await startApp({ users: ['alice', 'bob'], storage, flags: { indexInterval: '0' } });
      alice = bearer((await t.login('alice')).access_token);
      bob = bearer((await t.login('bob')).access_token);
    });
    after(() => t.close());

    const changes = async (query: Record<string, string>, auth = alice): Promise<Page> => {
      const res = await fetch(`${t.url}/api/changes?${new URLSearchParams(query)}`, { headers: auth });
      assert.equal(res.status, 200, await res.clone().text());
      return (await res.json()) as Page;
    };
    const now = async (auth = alice) => (await changes({}, auth)).cursor;
    /** Every entry after `cursor`, following `more`, in small pages (paging is part of what is tested). */
    const all = async (cursor: string, auth = alice): Promise<Change[]> => {
      const out: Change[] = [];
      for (;;) {
        const p = await changes({ cursor, limit: '7' }, auth);
        out.push(...p.changes);
        assert.ok(p.changes.length <= 7);
        cursor = p.cursor;
        if (!p.more) return out;
      }
    };
    const ok = async (res: Promise<Response> | Response, status: number | number[]) => {
      const r = await res;
      assert.ok(([] as number[]).concat(status).includes(r.status), `${r.status} ${await r.clone().text()}`);
      return r;
    };
    const put = (path: string, body: string, auth = alice, user = 'alice') =>
      ok(fetch(`${t.url}/storage/${user}/${encodePath(path)}`, { method: 'PUT', headers: { ...auth, 'content-type': 'application/octet-stream' }, body }), 201);
    const action = (path: string, body: Record<string, unknown>, auth = alice, user = 'alice') => postJson(`${t.url}/storage/${user}/${encodePath(path)}`, body, auth);
    const dav = (method: string, path: string, headers: Record<string, string> = {}, body?: string) =>
      fetch(`${t.url}/dav/alice/${encodePath(path)}`, { method, headers: { ...alice, ...headers }, ...(body === undefined ? {} : { body }) });

    /** The tree as the API shows it: names, kinds, and for files the size and the ETag of a GET. */
    const walk = async (etags = true): Promise<Tree> => {
      const tree: Tree = new Map();
      const visit = async (dir: string) => {
        const res = await fetch(`${t.url}/storage/alice/${encodePath(dir)}${dir === '' ? '' : '/'}`, { headers: alice });
        assert.equal(res.status, 200);
        for (const e of ((await res.json()) as { entries: { name: string; is_file: boolean; size: number }[] }).entries) {
          const p = dir === '' ? e.name : `${dir}/${e.name}`;
          if (e.is_file && !etags) tree.set(p, { isFile: true, size: e.size });
          else if (e.is_file) {
            const head = await fetch(`${t.url}/storage/alice/${encodePath(p)}`, { method: 'HEAD', headers: alice });
            tree.set(p, { isFile: true, size: e.size, etag: head.headers.get('etag') ?? undefined });
          } else {
            tree.set(p, { isFile: false });
            await visit(p);
          }
        }
      };
      await visit('');
      return tree;
    };
    const sorted = (tree: Tree) => [...tree.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

    test('no cursor and cursor=now: no entries and a cursor that resumes from that moment', async () => {
      const first = await changes({});
      const second = await changes({ cursor: 'now' });
      for (const p of [first, second]) assert.deepEqual([p.changes, p.more], [[], false]);
      await put('now/a.txt', 'a');
      for (const p of [first, second]) assert.ok((await all(p.cursor)).some((c) => c.path === '/alice/now/a.txt'));
      assert.deepEqual(await all((await changes({})).cursor), [], 'a cursor taken after it has nothing');
    });

    test('each kind of change, in order, with from on moves and the ETag a GET gives', async () => {
      const c0 = await now();
      await ok(action('kinds', { action: 'CreateFolder' }), 201);
      await put('kinds/one.txt', 'hello');
      await put('kinds/one.txt', 'hello again');
      await ok(action('kinds/one.txt', { action: 'Move', new_path: '/alice/kinds/two.txt' }), 204);
      const etag = (await fetch(`${t.url}/storage/alice/kinds/two.txt`, { method: 'HEAD', headers: alice })).headers.get('etag');
      const moved = (await all(c0)).at(-1) as Change;
      await ok(fetch(`${t.url}/storage/alice/kinds/two.txt`, { method: 'DELETE', headers: alice }), 204);
      const got = await all(c0);
      assert.deepEqual(
        got.map((c) => [c.type, c.path, c.from, c.is_file]),
        [
          ['created', '/alice/kinds', undefined, false],
          ['created', '/alice/kinds/one.txt', undefined, true],
          ['modified', '/alice/kinds/one.txt', undefined, true],
          ['moved', '/alice/kinds/two.txt', '/alice/kinds/one.txt', true],
          ['deleted', '/alice/kinds/two.txt', undefined, true],
        ],
      );
      assert.equal(got[2]?.size, 11);
      assert.equal(moved.etag, etag, 'the moved entry carries the ETag the file has');
      for (const [i, c] of got.entries()) assert.deepEqual((await all(c.cursor)).map((x) => x.path), got.slice(i + 1).map((x) => x.path), `entry ${i}'s cursor resumes after it`);
      assert.equal(got[4]?.size, undefined, 'a deletion carries no figures');
    });

    test('bad cursor or limit: the contract\'s JSON errors; a cursor from the future or purged: 410 cursor_expired', async () => {
      const status = async (q: string) => {
        const res = await fetch(`${t.url}/api/changes?${q}`, { headers: alice });
        const body = (await res.json()) as { error: string; message: string };
        assert.equal(typeof body.message, 'string');
        return [res.status, body.error];
      };
      assert.deepEqual(await status('cursor=abc'), [400, 'bad_request']);
      assert.deepEqual(await status('cursor=-1'), [400, 'bad_request']);
      assert.deepEqual(await status('cursor=1&cursor=2'), [400, 'bad_request']);
      assert.deepEqual(await status('cursor=0&limit=0'), [400, 'bad_request']);
      assert.deepEqual(await status('cursor=0&limit=x'), [400, 'bad_request']);
      assert.deepEqual(await status('cursor=0&limit=10001'), [400, 'bad_request']);
      assert.deepEqual(await status('cursor=999999999999'), [410, 'cursor_expired'], 'a number, as earlier versions gave');
      assert.deepEqual(await status(`cursor=${'A'.repeat(22)}`), [410, 'cursor_expired'], 'of the shape, but not sealed by this server');
      assert.equal((await fetch(`${t.url}/api/changes`)).status, 401);
    });

    test('every front end is journaled: WebDAV, tus, a share link\'s drop box, multipart PUT', async () => {
      const c0 = await now();
      await ok(dav('MKCOL', 'fe'), 201);
      await ok(dav('PUT', 'fe/dav.txt', {}, 'by dav'), [201, 204]);
      await ok(dav('MOVE', 'fe/dav.txt', { destination: `${t.url}/dav/alice/fe/dav2.txt` }), [201, 204]);
      await ok(dav('COPY', 'fe', { destination: `${t.url}/dav/alice/fe-copy` }), [201, 204]);
      await ok(dav('DELETE', 'fe-copy'), 204);
      await ok(
        fetch(`${t.url}/tus/`, {
          method: 'POST',
          headers: { ...alice, 'tus-resumable': '1.0.0', 'upload-length': '6', 'upload-metadata': `filename ${b64('tus.txt')},folder ${b64('/alice/fe')}`, 'content-type': 'application/offset+octet-stream' },
          body: 'by tus',
        }),
        201,
      );
      const share = (await (await ok(postJson(`${t.url}/api/shares`, { path: '/alice/fe', upload_only: true }, alice), 201)).json()) as { id: string };
      const drop = multipartBody([{ filename: 'dropped.txt', content: 'visitor' }]);
      await ok(fetch(`${t.url}/share/${share.id}/`, { method: 'PUT', headers: { 'content-type': drop.contentType }, body: drop.body }), 201);
      const form = multipartBody([{ filename: 'form.txt', content: 'form' }]);
      await ok(fetch(`${t.url}/storage/alice/fe/`, { method: 'PUT', headers: { ...alice, 'content-type': form.contentType }, body: form.body }), 201);
      const got = (await all(c0)).map((c) => `${c.type} ${c.path}${c.from ? ` < ${c.from}` : ''}`);
      for (const want of [
        'created /alice/fe',
        'created /alice/fe/dav.txt',
        'moved /alice/fe/dav2.txt < /alice/fe/dav.txt',
        'created /alice/fe-copy',
        'deleted /alice/fe-copy',
        'created /alice/fe/tus.txt',
        'created /alice/fe/dropped.txt',
        'created /alice/fe/form.txt',
      ]) {
        assert.ok(got.includes(want), `${want} in ${JSON.stringify(got)}`);
      }
    });

    test('file-cloud index journals what other tools put into storage', async () => {
      const c0 = await now();
      await behindTheBack(t, 'outside/tool.txt', 'from another tool');
      await indexCommand(t);
      const got = await all(c0);
      assert.ok(got.some((c) => c.type === 'created' && c.path === '/alice/outside/tool.txt' && c.size === 17), JSON.stringify(got));
      assert.ok(got.some((c) => c.type === 'created' && c.path === '/alice/outside' && !c.is_file), JSON.stringify(got));
      // A second rescan with nothing new says nothing.
      const c1 = await now();
      await indexCommand(t);
      assert.deepEqual(await all(c1), []);
    });

    test('deleting or moving what another tool put there (not indexed yet) is journaled too', async () => {
      await behindTheBack(t, 'unindexed/gone.txt', 'g');
      await behindTheBack(t, 'unindexed/moving.txt', 'm');
      const c0 = await now();
      await ok(fetch(`${t.url}/storage/alice/unindexed/gone.txt`, { method: 'DELETE', headers: alice }), 204);
      await ok(action('unindexed/moving.txt', { action: 'Move', new_path: '/alice/unindexed/moved.txt' }), 204);
      const got = (await all(c0)).map((c) => `${c.type} ${c.path}${c.from ? ` < ${c.from}` : ''}`);
      assert.ok(got.includes('deleted /alice/unindexed/gone.txt'), JSON.stringify(got));
      assert.ok(got.includes('moved /alice/unindexed/moved.txt < /alice/unindexed/moving.txt'), JSON.stringify(got));
    });

    test('another user sees nothing of alice\'s tree; a grant shows its items as /alice/…, moves over its edge as create/delete', async () => {
      await ok(action('team', { action: 'CreateFolder' }), 201);
      await ok(action('private', { action: 'CreateFolder' }), 201);
      const c0 = await now(bob);
      await put('private/secret.txt', 'no');
      assert.deepEqual(await all(c0, bob), [], 'no grant, nothing');
      await ok(postJson(`${t.url}/api/grants`, { path: '/alice/team', to: 'user:bob', permission: 'write' }, alice), 201);
      const c1 = await now(bob);
      const a1 = await now();
      await put('team/plan.txt', 'plan');
      await put('private/hidden.txt', 'no');
      await put('team/by-bob.txt', 'bob wrote', bob);
      await ok(action('team/plan.txt', { action: 'Move', new_path: '/alice/private/plan.txt' }), 204);
      await ok(action('private/hidden.txt', { action: 'Move', new_path: '/alice/team/hidden.txt' }), 204);
      const got = (await all(c1, bob)).map((c) => `${c.type} ${c.path}`);
      assert.deepEqual(got, ['created /alice/team/plan.txt', 'created /alice/team/by-bob.txt', 'deleted /alice/team/plan.txt', 'created /alice/team/hidden.txt']);
      assert.ok((await all(a1)).some((c) => c.path === '/alice/team/by-bob.txt'), 'the owner sees the recipient\'s write');
    });

    test('retention: a cursor older than what was purged gets 410 cursor_expired; a current one keeps working', async () => {
      const old = await now();
      await put('retention/a.txt', 'a');
      // What the leader's sweep does once entries pass --changes-retention.
      assert.ok((await t.store.changes.purgeBefore(Date.now() + 60_000)) > 0);
      const res = await fetch(`${t.url}/api/changes?cursor=${old}`, { headers: alice });
      assert.equal(res.status, 410);
      assert.equal(((await res.json()) as { error: string }).error, 'cursor_expired');
      const latest = await now();
      await put('retention/b.txt', 'b');
      assert.deepEqual((await all(latest)).map((c) => c.path), ['/alice/retention/b.txt']);
    });

    test('folder ETags change when anything beneath changes, and only then (JSON listing header, WebDAV getetag)', async () => {
      await put('deep/a/b/c.txt', 'one');
      await put('other/x.txt', 'x');
      const listingTag = async (dir: string) => {
        const res = await fetch(`${t.url}/storage/alice/${dir}`, { headers: alice });
        assert.equal(res.status, 200);
        await res.arrayBuffer();
        return res.headers.get('etag');
      };
      const davTag = async (dir: string) => {
        const res = await dav('PROPFIND', dir, { depth: '0', 'content-type': 'application/xml' }, '<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:prop><D:getetag/></D:prop></D:propfind>');
        assert.equal(res.status, 207);
        const m = /<D:getetag>([^<]*)<\/D:getetag>/.exec(await res.text());
        return m?.[1]?.replaceAll('&quot;', '"');
      };
      /** The member folder's getetag in its parent's Depth-1 PROPFIND. */
      const memberTag = async (dir: string, name: string) => {
        const res = await dav('PROPFIND', dir, { depth: '1' });
        const body = await res.text();
        const at = body.indexOf(`/${encodeURIComponent(name)}/</D:href>`);
        assert.ok(at > 0, body);
        return /<D:getetag>([^<]*)<\/D:getetag>/.exec(body.slice(at))?.[1]?.replaceAll('&quot;', '"');
      };
      const snapshot = async () => ({ root: await listingTag(''), deep: await listingTag('deep/'), a: await davTag('deep/a/'), b: await memberTag('deep/a/', 'b'), other: await davTag('other/') });
      const s0 = await snapshot();
      assert.ok(s0.root && s0.deep && s0.a && s0.b && s0.other, JSON.stringify(s0));
      assert.equal(await davTag('deep/'), s0.deep, 'the listing and WebDAV give the same ETag');
      await put('deep/a/b/c.txt', 'two!');
      const s1 = await snapshot();
      for (const k of ['root', 'deep', 'a', 'b'] as const) assert.notEqual(s1[k], s0[k], `${k} changes with a file three levels down`);
      assert.equal(s1.other, s0.other, 'a sibling subtree keeps its ETag');
      await ok(action('other/x.txt', { action: 'Move', new_path: '/alice/other/y.txt' }), 204);
      const s2 = await snapshot();
      assert.equal(s2.deep, s1.deep, 'unchanged subtree');
      assert.notEqual(s2.other, s1.other);
      assert.notEqual(s2.root, s1.root);
    });

    test('property: random operations through every front end; replaying the feed onto a mirror (from cursor 0 and from a midway cursor) gives the tree', async () => {
      const seed = Number(process.env.CHANGES_SEED ?? 31);
      const rand = prng(seed);
      const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T;
      const names = ['a', 'b', 'c d', 'é', 'x.txt', 'y.bin'];
      const start = await walk();
      const c0 = await now();
      let midCursor = '';
      let midTree: Tree = new Map();
      // On the object store every step's walk lists each folder (~0.1 s each against radosgw here): fewer steps there.
      const steps = storage === 'file' ? 40 : 24;
      for (let i = 0; i < steps; i++) {
        if (i === Math.floor(steps / 2)) {
          midCursor = await now();
          midTree = await walk();
        }
        // What exists now, to choose the next operation (names only: the ETags are compared at the end).
        const tree = await walk(false);
        const folders = ['', ...[...tree.entries()].filter(([, v]) => !v.isFile).map(([k]) => k)];
        const files = [...tree.entries()].filter(([, v]) => v.isFile).map(([k]) => k);
        const inside = (dir: string, name: string) => (dir === '' ? name : `${dir}/${name}`);
        const free = () => {
          for (;;) {
            const p = inside(pick(folders), pick(names));
            if (!tree.has(p)) return p;
          }
        };
        const body = 'z'.repeat(Math.floor(rand() * 40));
        const op = Math.floor(rand() * 10);
        if (op === 0) await put(free(), body);
        else if (op === 1 && files.length > 0) await put(pick(files), body);
        else if (op === 2) await ok(dav('PUT', free(), {}, body), [201, 204]);
        else if (op === 3) await ok(action(free(), { action: 'CreateFolder' }), 201);
        else if (op === 4) await ok(dav('MKCOL', free()), 201);
        else if (op === 5 && tree.size > 0) {
          const from = pick([...tree.keys()]);
          const to = free();
          if (to === from || to.startsWith(`${from}/`)) continue;
          if (rand() < 0.5) await ok(action(from, { action: 'Move', new_path: `/alice/${to}` }), 204);
          else await ok(dav('MOVE', from, { destination: `${t.url}/dav/alice/${encodePath(to)}` }), [201, 204]);
        } else if (op === 6 && tree.size > 0) {
          const victim = pick([...tree.keys()]);
          if (rand() < 0.5) await ok(fetch(`${t.url}/storage/alice/${encodePath(victim)}`, { method: 'DELETE', headers: alice }), 204);
          else await ok(dav('DELETE', victim), 204);
        } else if (op === 7) {
          const dir = pick(folders);
          const name = pick(names);
          await ok(
            fetch(`${t.url}/tus/`, {
              method: 'POST',
              headers: { ...alice, 'tus-resumable': '1.0.0', 'upload-length': String(body.length), 'upload-metadata': `filename ${b64(name)},folder ${b64(`/alice/${dir}`)}`, 'content-type': 'application/offset+octet-stream' },
              body,
            }),
            [201, 204],
          );
        } else if (op === 8 && tree.size > 0) {
          const from = pick([...tree.keys()]);
          const to = free();
          if (to.startsWith(`${from}/`)) continue;
          await ok(dav('COPY', from, { destination: `${t.url}/dav/alice/${encodePath(to)}` }), [201, 204]);
        } else {
          const form = multipartBody([{ filename: pick(names), content: body }]);
          const dir = pick(folders);
          await ok(fetch(`${t.url}/storage/alice/${dir === '' ? '' : `${encodePath(dir)}/`}`, { method: 'PUT', headers: { ...alice, 'content-type': form.contentType }, body: form.body }), 201);
        }
      }
      const final = await walk();
      const fromStart = new Map(start);
      replay(fromStart, await all(c0), 'alice');
      assert.deepEqual(sorted(fromStart), sorted(final), `seed ${seed}: replay from the start`);
      replay(midTree, await all(midCursor), 'alice');
      assert.deepEqual(sorted(midTree), sorted(final), `seed ${seed}: replay from midway`);
    });
  });
}
