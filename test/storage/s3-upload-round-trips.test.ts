import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startApp, type TestApp } from '../helpers/app.js';
import { bearer } from '../helpers/client.js';
import { startPgRoundTrips, type PgRoundTrips } from '../helpers/pg-round-trips.js';
import { newDatabase, skipReason } from '../helpers/services.js';

// Local disk keeps its index in SQLite inside the process: there is no round trip to count.
const skip = skipReason('S3') ?? skipReason('PostgreSQL');
const UPLOADS = 20;
/** Round trips per upload left to work beside the uploads (the webhook dispatcher's look after a change, the journal's sweep). */
const BESIDE = 1;

/**
 * What a small upload on S3 + PostgreSQL waits for besides its one PutObject: its exchanges with
 * PostgreSQL, counted by a proxy in front of it. Uploads run one after another, so each is its own
 * index transaction (uploads in flight together share one: search-repo's queue). Without --redis
 * the name's and edit leases are rows too: taken in one statement and released in one, two of the commits.
 */
describe('S3 + PostgreSQL: what a small upload asks of the database', { skip }, () => {
  let t: TestApp;
  let pg: PgRoundTrips;
  let token: string;

  before(async () => {
    pg = await startPgRoundTrips(await newDatabase('round_trips'));
    t = await startApp({ storage: 's3', flags: { database: pg.url }, users: ['alice'] });
    token = (await t.login('alice')).access_token;
    await t.fs.mkdir('in');
    // The first uploads prepare statements and fill caches; they are not counted.
    for (let i = 0; i < 3; i++) await put(`in/warm-${i}.txt`, 'warm');
  });
  after(async () => {
    await t?.close();
    await pg?.close();
  });

  type Answer = { files: { path: string; id: string | null; sha256: string | null; etag: string }[] };
  const answers = new Map<string, Answer>();
  async function put(path: string, body: string): Promise<void> {
    const res = await fetch(`${t.url}/storage/alice/${path}`, { method: 'PUT', headers: bearer(token), body });
    const text = await res.text();
    assert.equal(res.status, 201, text);
    answers.set(path, JSON.parse(text) as Answer);
  }

  /** The PUT's answer names the id, hash and ETag the index holds (they come from its write, not a read after it). */
  async function answeredAsIndexed(path: string): Promise<void> {
    const [file] = (answers.get(path) as Answer).files;
    const row = (await t.store.search.identities('alice', [path])).get(path);
    assert.ok(file && row?.id, `${path}: ${JSON.stringify(file)} ${JSON.stringify(row)}`);
    assert.deepEqual({ id: file.id, sha256: file.sha256, etag: file.etag }, { id: row.id, sha256: row.sha256, etag: row.etag });
    assert.match(file.sha256 ?? '', /^[0-9a-f]{64}$/);
  }

  /** Per raw PUT of `path(i)`, i from 0 to UPLOADS - 1, one after another: round trips (waits), exchanges and commits. */
  async function perPut(path: (i: number) => string): Promise<{ roundTrips: number; exchanges: number; commits: number; said: string }> {
    const at = { count: pg.count, waits: pg.waits, commits: pg.commits };
    for (let i = 0; i < UPLOADS; i++) await put(path(i), `file ${i}`);
    const r = { roundTrips: (pg.waits - at.waits) / UPLOADS, exchanges: (pg.count - at.count) / UPLOADS, commits: (pg.commits - at.commits) / UPLOADS };
    const said = `per upload: ${r.roundTrips} round trips, ${r.exchanges} exchanges, ${r.commits} commits`;
    console.log(said);
    return { ...r, said };
  }

  test('a new file in a folder the index holds: the index, its journal and usage in one commit, no second look', async () => {
    const { roundTrips, exchanges, commits, said } = await perPut((i) => `in/f-${i}.txt`);
    // Waited for: the token, the quota, the look (parents and name); the name and edit leases taken and the look
    // whether a folder around is being changed, two statements in one flight (LeaseRepo.acquireAll; docs/storage.md,
    // "Concurrency below a folder"); BEGIN with the journal's lock, the row and its journal entry in one flight (the
    // entry's cursor is read); the folder's stamp, usage and COMMIT in another; the two leases released in one statement.
    // The answer's sync fields come from the index's write. Taken and released one by one they were 10.
    assert.ok(roundTrips <= 7 + BESIDE, said);
    // The same, each statement its own exchange (one ReadyForQuery): the pipeline saves waits, not exchanges.
    assert.ok(exchanges <= 12 + BESIDE, said);
    // The two leases taken (one INSERT), the index with usage, the two released (one DELETE). One by one they were 5.
    assert.ok(commits <= 3 + BESIDE, said);
    assert.equal(await t.fs.text('in/f-3.txt'), 'file 3');
    await answeredAsIndexed('in/f-3.txt');
    const usage = await t.store.usage.get('alice');
    assert.equal(usage?.used, 3 * 'warm'.length + Array.from({ length: UPLOADS }, (_, i) => `file ${i}`.length).reduce((a, b) => a + b));
  });

  test('a WebDAV PUT of a new file: the route\'s look at the folders above vouches for them, no second look by the index', async () => {
    const basic = { authorization: `Basic ${Buffer.from('alice:alice-password').toString('base64')}` };
    const davPut = async (path: string, body: string) => {
      const res = await fetch(`${t.url}/dav/alice/${path}`, { method: 'PUT', headers: basic, body });
      assert.equal(res.status, 201, await res.text());
    };
    await davPut('in/dav-warm.txt', 'warm');
    const at = { waits: pg.waits, commits: pg.commits };
    for (let i = 0; i < UPLOADS; i++) await davPut(`in/dav-${i}.txt`, `file ${i}`);
    const roundTrips = (pg.waits - at.waits) / UPLOADS;
    const commits = (pg.commits - at.commits) / UPLOADS;
    const said = `per WebDAV PUT: ${roundTrips} round trips, ${commits} commits`;
    console.log(said);
    // Waited for: the route's look (the name and every folder above), the locks, the quota, the two leases taken with
    // the look around them (one flight), the index transaction's two flights, the two leases released (one statement),
    // and the sign-in's. With a second look by the index (its folders not vouched for) it was one more: 9 and the work
    // beside (with the leases one by one, 12).
    assert.ok(roundTrips < 9, said);
    assert.ok(commits <= 3 + BESIDE, said);
    assert.equal(await t.fs.text('in/dav-7.txt'), 'file 7');
  });

  test('a new file in a new folder: the folder goes into the file\'s own index transaction', async () => {
    const { roundTrips, exchanges, commits, said } = await perPut((i) => `new-${i}/f.txt`);
    // As above, and the read of what the index holds at the new folder's path, inside the transaction.
    assert.ok(roundTrips <= 8 + BESIDE, said);
    assert.ok(exchanges <= 13 + BESIDE, said);
    assert.ok(commits <= 3 + BESIDE, said);
    await answeredAsIndexed('new-5/f.txt');
    assert.equal(await t.fs.kind('new-5'), 'folder');
    const found = await fetch(`${t.url}/api/search?q=new-5`, { headers: bearer(token) });
    const { results } = (await found.json()) as { results: { path: string; is_file: boolean }[] };
    assert.deepEqual(results.map((r) => [r.path, r.is_file]), [['/alice/new-5', false]]);
    const inside = await fetch(`${t.url}/api/search?q=f.txt&path=/alice/new-5`, { headers: bearer(token) });
    assert.deepEqual(((await inside.json()) as { results: { path: string }[] }).results.map((r) => r.path), ['/alice/new-5/f.txt']);
  });
});
