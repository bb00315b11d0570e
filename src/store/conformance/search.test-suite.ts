import assert from 'node:assert/strict';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { storeTest, type OpenStore } from './support.test-suite.js';
import { matchRank, normalizeName } from '../../domain/search-text.js';
import type { IndexedEntry, SearchQuery } from '../search.js';
import type { MetadataStore } from '../metadata-store.js';

/**
 * Conformance of the search index (SearchRepo): every MetadataStore
 * implementation runs these, so SQLite (FTS5 trigram) and PostgreSQL
 * (pg_trgm) answer every query alike, order included.
 */
export function runSearchConformance(name: string, open: OpenStore): void {
  const withStore = storeTest(`${name} search`, open);

  const T = 1_700_000_000_000;
  const file = (path: string, user = 'alice', size = 1): IndexedEntry => ({ user, path, isFile: true, size, modified: T });
  const folder = (path: string, user = 'alice'): IndexedEntry => ({ user, path, isFile: false, size: 0, modified: T });
  const find = async (store: MetadataStore, text: string, o: Partial<SearchQuery> = {}) =>
    (await store.search.search({ user: 'alice', text: normalizeName(text), within: '', type: undefined, limit: 100, ...o })).entries.map((e) => e.path);

  withStore('journal: a consumer following cursors over all owners sees every entry once, in order, while many writers commit at once', async (store) => {
    // How a consumer that is not a user (webhooks) reads: changesSince(cursor) and on from the last row.
    // Cursors must commit in order: a reader that has seen N has seen every entry below N.
    const start = await store.changes.latest();
    const WRITERS = 8;
    const EACH = 25;
    let writing = true;
    const seen: number[] = [];
    const reader = (async () => {
      let cursor = start;
      for (;;) {
        const done = !writing;
        const rows = await store.changes.changesSince(cursor, 1000);
        for (const r of rows) seen.push(r.cursor);
        if (rows.length > 0) cursor = rows[rows.length - 1]!.cursor;
        else if (done) return;
        // Between polls a consumer lets the process run (webhooks wait for a timer): on SQLite a read
        // resolves without leaving the microtask queue, and the index writer's answers (its thread,
        // sqlite-writer.ts) come as messages, which a loop of reads alone would never let in.
        else await nextTurn();
      }
    })();
    await Promise.all(
      Array.from({ length: WRITERS }, async (_, w) => {
        for (let i = 0; i < EACH; i++) await store.search.put([file(`w${w}/f${i}.txt`, `user${w % 3}`)]);
      }),
    );
    writing = false;
    await reader;
    // One new path per put (parents are not put here): one entry each.
    assert.equal(seen.length, WRITERS * EACH, 'every entry, none twice');
    assert.deepEqual([...seen].sort((a, b) => a - b), seen, 'in cursor order');
    assert.equal(new Set(seen).size, seen.length);
    assert.equal(await store.changes.latest(), seen[seen.length - 1]);
  });

  withStore('journal: per-owner reads, the horizon after a purge, latest never goes back', async (store) => {
    await store.search.put([file('a.txt'), file('b.txt', 'bob')]);
    await store.search.put([file('a.txt', 'alice', 2)]);
    await store.search.moveWithin('alice', 'a.txt', 'c.txt');
    await store.search.deleteWithin('bob', 'b.txt', true);
    const all = await store.changes.changesSince(0, 100);
    assert.deepEqual(all.map((c) => [c.owner, c.type, c.path, c.from]), [
      ['alice', 'created', 'a.txt', undefined],
      ['bob', 'created', 'b.txt', undefined],
      ['alice', 'modified', 'a.txt', undefined],
      ['alice', 'moved', 'c.txt', 'a.txt'],
      ['bob', 'deleted', 'b.txt', undefined],
    ]);
    assert.deepEqual((await store.changes.changesSinceFor(['bob'], 0, 100)).map((c) => c.type), ['created', 'deleted']);
    assert.deepEqual((await store.changes.ownersBetween(0, all[4]?.cursor ?? 0)).sort(), ['alice', 'bob']);
    assert.deepEqual(await store.changes.ownersBetween(all[1]?.cursor ?? 0, all[3]?.cursor ?? 0), ['alice'], 'after the first two, up to the fourth');
    assert.deepEqual(await store.changes.ownersBetween(all[4]?.cursor ?? 0, all[4]?.cursor ?? 0), []);
    const latest = await store.changes.latest();
    assert.equal(await store.changes.purgeBefore(Date.now() + 1000), 5);
    assert.equal(await store.changes.horizon(), latest);
    assert.equal(await store.changes.latest(), latest, 'the latest cursor survives the purge of every entry');
    assert.deepEqual(await store.changes.changesSince(0, 100), [], 'and nothing purged is read again');
    assert.equal(await store.changes.purgeBefore(Date.now() + 1000), 0, 'purged once');
    await store.search.put([file('d.txt')]);
    assert.ok((await store.changes.latest()) > latest, 'and the next one is newer (no reuse)');
  });

  withStore('journal: puts grouped into one transaction each get their entry, folders stamped with the latest cursor beneath them; a write storage calls a creation is created whatever the index held', async (store) => {
    await store.search.put([folder('f'), folder('g')]);
    const start = await store.changes.latest();
    // Concurrent puts: the ones that wait while the first is written share the next transaction.
    await Promise.all([store.search.put([file('f/1.txt')]), store.search.put([file('f/2.txt')]), store.search.put([file('g/3.txt')]), store.search.put([file('f/4.txt')])]);
    const rows = await store.changes.changesSince(start, 100);
    assert.deepEqual(rows.map((c) => [c.type, c.path]), [['created', 'f/1.txt'], ['created', 'f/2.txt'], ['created', 'g/3.txt'], ['created', 'f/4.txt']]);
    const stamps = await store.changes.treeCursors('alice', ['f', 'g']);
    assert.equal(stamps.get('f'), rows[3]?.cursor, 'f: its latest entry beneath');
    assert.equal(stamps.get('g'), rows[2]?.cursor, 'g: its own latest, not the group\'s');
    // An index row of a file another tool removed (not swept yet), then a new upload at that name.
    await store.search.put([{ ...file('f/1.txt', 'alice', 7), created: true }]);
    await store.search.put([file('f/2.txt', 'alice', 9)]);
    const later = await store.changes.changesSince(rows[3]?.cursor ?? 0, 100);
    assert.deepEqual(later.map((c) => [c.type, c.path, c.size]), [['created', 'f/1.txt', 7], ['modified', 'f/2.txt', 9]]);
  });

  withStore('finds names by case- and accent-insensitive substring, never another user\'s', async (store) => {
    await store.search.put([
      file('Café Crème.txt'),
      file('CAFE.md'),
      file('notes/cafeteria.pdf'),
      file('tea.txt'),
      file('日本語のファイル.txt'),
      file('Ünïcödé Ñame'),
      file('cafe-of-bob.txt', 'bob'),
    ]);
    assert.deepEqual(await find(store, 'café'), ['Café Crème.txt', 'CAFE.md', 'notes/cafeteria.pdf']);
    assert.deepEqual(await find(store, 'CAFE'), ['Café Crème.txt', 'CAFE.md', 'notes/cafeteria.pdf']);
    assert.deepEqual(await find(store, 'creme'), ['Café Crème.txt']);
    assert.deepEqual(await find(store, 'ファイル'), ['日本語のファイル.txt']);
    assert.deepEqual(await find(store, 'unicode'), ['Ünïcödé Ñame']);
    assert.deepEqual(await find(store, 'nam'), ['Ünïcödé Ñame']);
    assert.deepEqual(await find(store, 'bob'), [], "bob's file is never alice's result");
    assert.deepEqual(await find(store, 'cafe', { user: 'bob' }), ['cafe-of-bob.txt']);
    assert.deepEqual(await find(store, 'xyz'), []);
  });

  withStore('ranks exact name, then prefix, then substring; shallower first within each', async (store) => {
    await store.search.put([file('a/b/report'), file('x report.txt'), file('a/report.pdf'), file('report.pdf'), file('report'), file('deep/down/my-report'), folder('reports')]);
    assert.deepEqual(await find(store, 'Report'), ['report', 'a/b/report', 'report.pdf', 'reports', 'a/report.pdf', 'x report.txt', 'deep/down/my-report']);
  });

  withStore('% and _ are literal, also in queries shorter than three characters', async (store) => {
    await store.search.put([file('100% done.txt'), file('1000 done.txt'), file('a_b.txt'), file('axb.txt'), file('x%y'), file('back\\slash')]);
    assert.deepEqual(await find(store, '0%'), ['100% done.txt']);
    assert.deepEqual(await find(store, '100%'), ['100% done.txt']);
    assert.deepEqual(await find(store, '_'), ['a_b.txt']);
    assert.deepEqual(await find(store, 'a_b'), ['a_b.txt']);
    assert.deepEqual(await find(store, '%'), ['100% done.txt', 'x%y']);
    assert.deepEqual(await find(store, '\\'), ['back\\slash']);
    assert.deepEqual(await find(store, 'k\\s'), ['back\\slash']);
  });

  withStore('short queries (one or two characters) match by substring and rank alike', async (store) => {
    await store.search.put([file('b'), file('ab'), file('ba'), file('x/b'), file('ccc')]);
    assert.deepEqual(await find(store, 'B'), ['b', 'x/b', 'ba', 'ab']);
    assert.deepEqual(await find(store, 'ab'), ['ab']);
  });

  withStore('within restricts to a subtree; type to files or folders; limit pages with truncated', async (store) => {
    await store.search.put([folder('docs'), file('docs/plan.txt'), folder('docs/plans'), file('docs/plans/plan-b.txt'), file('docs0/plan.txt'), file('docs plan.txt'), file('plan.txt')]);
    assert.deepEqual(await find(store, 'plan', { within: 'docs' }), ['docs/plan.txt', 'docs/plans', 'docs/plans/plan-b.txt']);
    assert.deepEqual(await find(store, 'plan', { within: 'docs/plans' }), ['docs/plans/plan-b.txt']);
    assert.deepEqual(await find(store, 'plan', { type: 'folder' }), ['docs/plans']);
    assert.deepEqual(await find(store, 'docs', { type: 'file' }), ['docs plan.txt']);
    const page = await store.search.search({ user: 'alice', text: 'plan', within: '', type: undefined, limit: 2 });
    assert.deepEqual(page.entries.map((e) => e.path), ['plan.txt', 'docs/plan.txt']);
    assert.equal(page.truncated, true);
    const all = await store.search.search({ user: 'alice', text: 'plan', within: '', type: undefined, limit: 6 });
    assert.equal(all.entries.length, 6);
    assert.equal(all.truncated, false);
  });

  withStore('put updates an entry in place; entries read back with their fields', async (store) => {
    await store.search.put([file('a.txt', 'alice', 5)]);
    await store.search.put([{ user: 'alice', path: 'a.txt', isFile: true, size: 9, modified: T + 1 }]);
    const r = await store.search.search({ user: 'alice', text: 'a.txt', within: '', type: undefined, limit: 10 });
    assert.deepEqual(r.entries, [{ user: 'alice', path: 'a.txt', isFile: true, size: 9, modified: T + 1 }]);
    await store.search.put([folder('d')]);
    assert.deepEqual([...(await store.search.kinds('alice', ['a.txt', 'b.txt', 'd']))].sort(), [['a.txt', 'file'], ['d', 'folder']]);
    assert.deepEqual([...(await store.search.kinds('bob', ['a.txt']))], [], "another user's paths are not alice's");
  });

  withStore('times: a file\'s time and ETag for each path held (files only, one user\'s), in batches past one statement\'s', async (store) => {
    await store.search.put([{ user: 'alice', path: 'a.txt', isFile: true, size: 1, modified: T + 5, etag: '"e1"' }, { user: 'alice', path: 'n.txt', isFile: true, size: 1, modified: T }, folder('d')]);
    const many = Array.from({ length: 1200 }, (_, i) => `p${i}`);
    assert.deepEqual([...(await store.search.times('alice', [...many, 'a.txt', 'n.txt', 'd']))].sort(), [['a.txt', { modified: T + 5, etag: '"e1"' }], ['n.txt', { modified: T, etag: null }]]);
    assert.deepEqual([...(await store.search.times('bob', ['a.txt']))], []);
    assert.deepEqual([...(await store.search.times('alice', []))], []);
  });

  withStore('moveWithin renames an entry and carries everything below it; names that merely share a prefix stay', async (store) => {
    await store.search.put([folder('old'), folder('old/sub'), file('old/sub/deep.txt'), file('old.txt'), file('old0'), file('older/x.txt'), folder('new'), file('new/stale.txt')]);
    assert.equal(await store.search.moveWithin('alice', 'old', 'new'), 3);
    assert.deepEqual(await find(store, 'deep'), ['new/sub/deep.txt']);
    assert.deepEqual(await find(store, 'stale'), [], 'what was at the destination is gone');
    assert.deepEqual(await find(store, 'new'), ['new']);
    assert.deepEqual(await find(store, 'old'), ['old.txt', 'old0']);
    // Deeper: depth follows the move (it ranks results).
    assert.equal(await store.search.moveWithin('alice', 'new/sub', 'a/b/c/sub'), 2);
    await store.search.put([file('sub')]);
    assert.deepEqual(await find(store, 'sub'), ['sub', 'a/b/c/sub']);
  });

  withStore('deleteWithin removes a subtree only, or all of a user with the root', async (store) => {
    await store.search.put([folder('a'), file('a/x.txt'), file('a b.txt'), file('a0.txt'), file('ab/x.txt'), file('bob.txt', 'bob')]);
    assert.equal(await store.search.deleteWithin('alice', 'a'), 2);
    assert.deepEqual(await find(store, 'x.txt'), ['ab/x.txt']);
    assert.deepEqual(await find(store, 'a'), ['a b.txt', 'a0.txt']);
    assert.equal(await store.search.deleteWithin('alice', ''), 3);
    assert.deepEqual(await find(store, 'bob', { user: 'bob' }), ['bob.txt']);
    assert.deepEqual(await store.search.users(), ['bob']);
  });

  withStore('a rescan removes what it neither saw nor was written meanwhile', async (store) => {
    await store.search.put([file('kept.txt'), file('gone.txt'), file('bob.txt', 'bob')]);
    await store.search.markAll('alice', 'scan-1');
    await store.search.put([file('kept.txt'), file('new.txt')]);
    assert.equal(await store.search.sweepMarked('alice', 'scan-1'), 1);
    assert.deepEqual(await find(store, '.txt'), ['kept.txt', 'new.txt']);
    assert.deepEqual(await find(store, 'bob', { user: 'bob' }), ['bob.txt']);
  });

  withStore('a rescan keeps what its walk left to a change in progress (unmarkWithin), and only that', async (store) => {
    await store.search.put([folder('Photos'), file('Photos/p.jpg'), file('Photos2/q.jpg'), file('gone.txt'), file('bob.txt', 'bob')]);
    await store.search.markAll('alice', 'scan-1');
    await store.search.markAll('bob', 'scan-1');
    await store.search.unmarkWithin('alice', ['Photos'], 'scan-1');
    assert.equal(await store.search.sweepMarked('alice', 'scan-1'), 2);
    assert.deepEqual(await find(store, '.'), ['Photos/p.jpg']);
    await store.search.unmarkWithin('bob', [''], 'scan-1');
    assert.equal(await store.search.sweepMarked('bob', 'scan-1'), 0);
  });

  withStore('a rescan sighting older than a write changes nothing: no deleted or moved path comes back, no newer row is overwritten', async (store) => {
    const etag = (e: IndexedEntry, tag: string): IndexedEntry => ({ ...e, etag: tag });
    await store.search.put([etag(file('deleted.txt'), '"a"'), folder('gone'), etag(file('gone/in.txt'), '"b"'), etag(file('moved.txt'), '"c"'), etag(file('rewritten.txt', 'alice', 1), '"d"'), etag(file('other.txt'), '"e"')]);
    const since = await store.changes.latest();
    await store.search.markAll('alice', 'scan-1');
    const walked = { scan: 'scan-1', since };
    // The walk saw all of these; then writers changed them before its batch was put.
    const sightings = [etag(file('deleted.txt'), '"a"'), folder('gone'), etag(file('gone/in.txt'), '"b"'), etag(file('moved.txt'), '"c"'), etag(file('rewritten.txt', 'alice', 1), '"d"'), etag(file('other.txt'), '"e"'), etag(file('tool.txt'), '"f"')].map((e) => ({ ...e, walked }));
    await store.search.deleteWithin('alice', 'deleted.txt', true);
    await store.search.deleteWithin('alice', 'gone', false);
    await store.search.moveWithin('alice', 'moved.txt', 'renamed.txt');
    await store.search.put([etag(file('rewritten.txt', 'alice', 2), '"d2"')]);
    const cursor = await store.changes.latest();
    await store.search.put(sightings);
    assert.equal(await store.search.sweepMarked('alice', 'scan-1'), 0);
    assert.deepEqual(await find(store, '.txt'), ['other.txt', 'renamed.txt', 'rewritten.txt', 'tool.txt'], 'what another tool added is taken in; nothing a writer removed comes back');
    assert.deepEqual([...(await store.search.kinds('alice', ['gone', 'moved.txt']))], []);
    assert.deepEqual((await store.search.identities('alice', ['rewritten.txt'])).get('rewritten.txt')?.etag, '"d2"', 'the write made after the walk stands');
    assert.deepEqual((await store.changes.changesSince(cursor, 100)).map((c) => `${c.type} ${c.path}`), ['created tool.txt']);
  });

  withStore('many entries: batches of put are all searchable', async (store) => {
    const many = Array.from({ length: 1234 }, (_, i) => file(`dir${i % 7}/file-${String(i).padStart(4, '0')}.dat`));
    await store.search.put(many);
    const r = await store.search.search({ user: 'alice', text: 'file-12', within: '', type: undefined, limit: 1000 });
    assert.equal(r.entries.length, 34); // file-1200 … file-1233
    assert.deepEqual(new Set(r.entries.map((e) => e.path)), new Set(many.filter((e) => e.path.includes('file-12')).map((e) => e.path)));
  });

  withStore('a query matching thousands of names (read in best-first order) ranks exactly as a narrow one', async (store) => {
    // Deterministic mix of depths, exact names, prefixes and substrings, far more than the
    // 2,000 matches from which the index is read in order instead of sorted.
    const names = ['Dense', 'dense', 'dense-1.txt', 'Dénse 2.pdf', 'a dense b', 'xdensey', 'de', 'other', 'ense'];
    const entries: IndexedEntry[] = [];
    for (let i = 0; i < 4000; i++) {
      const depth = 1 + ((i * 7) % 4);
      const exact = i % 3 === 0;
      const dirs = Array.from({ length: depth - 1 }, (_, k) => `d${(i + k) % 5}`);
      const name = exact ? (names[i % names.length] as string) : `${names[i % names.length]} ${i}`;
      // Every path distinct: a bare name gets a folder of its own.
      if (exact) dirs.push(`f${i}`);
      entries.push({ user: 'alice', path: [...dirs, name].join('/'), isFile: i % 4 !== 0, size: i, modified: T });
    }
    await store.search.put(entries);
    const unique = [...new Map(entries.map((e) => [e.path, e])).values()];
    assert.equal(unique.length, entries.length);
    assert.ok(unique.filter((e) => normalizeName(e.path).includes('dense')).length > 2000, 'enough matches for the in-order plan');
    const expected = (text: string, within = '', type?: 'file' | 'folder') =>
      unique
        .filter((e) => (within === '' || e.path.startsWith(`${within}/`)) && (type === undefined || e.isFile === (type === 'file')))
        .map((e) => {
          const name = e.path.slice(e.path.lastIndexOf('/') + 1);
          return { e, norm: normalizeName(name), depth: e.path.split('/').length, rank: matchRank(normalizeName(name), text) };
        })
        .filter((x) => x.rank !== undefined)
        .sort((a, b) => a.rank! - b.rank! || a.depth - b.depth || (a.norm < b.norm ? -1 : a.norm > b.norm ? 1 : 0) || (a.e.path < b.e.path ? -1 : a.e.path > b.e.path ? 1 : 0))
        .map((x) => x.e.path);
    for (const [text, within, type] of [['dense', '', undefined], ['de', '', undefined], ['d', '', undefined], ['dense', 'd1', undefined], ['ense', '', 'folder'], ['DENSE', 'd2', 'file']] as const) {
      const want = expected(normalizeName(text), within, type);
      for (const limit of [7, 100]) {
        const r = await store.search.search({ user: 'alice', text: normalizeName(text), within, type, limit });
        assert.deepEqual(r.entries.map((e) => e.path), want.slice(0, limit), `${text} within "${within}" ${type ?? ''} limit ${limit}`);
        assert.equal(r.truncated, want.length > limit);
      }
    }
  });
}
