// The authorization matrix (issue 17, docs/security.md "The matrix"): every route of the server,
// collected from Fastify's onRoute hook (app.routeTable), is called with every kind of principal, and
// each cell's status is checked against this file's expectations. A route without a sample request
// here fails the suite, and so does a route without a declared rule (buildApp refuses to start).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { bearer, postJson } from '../helpers/client.js';
import { multipartBody } from '../helpers/multipart.js';
import { sha256Hex } from '../../src/lib/crypto.js';
import type { RouteEntry } from '../../src/app/auth-plugin.js';

const WEB_ROOT = join(process.cwd(), 'dist', 'web');

/** The principal kinds of the matrix, in column order. */
const PRINCIPALS = ['none', 'expired', 'other', 'roKey', 'fullKey', 'pathToken', 'share', 'admin', 'disabled', 'adminRoKey', 'adminKey', 'grantRead', 'grantWrite', 'groupMember', 'formerMember'] as const;
type P = (typeof PRINCIPALS)[number];

/**
 * What a kind of route gives each principal: OK is the sample's own success status. alice owns
 * everything the samples name; `other` is bob, `admin` an administrator who is not alice, `share` a
 * visitor holding alice's links, `disabled` a disabled user with their own links, `adminRoKey` and
 * `adminKey` the administrator's read-only and full app passwords (issue 27: account-level routes need a
 * signed-in session, so an admin's app password is no admin). Issue 29's grants: `grantRead` and
 * `grantWrite` are users alice shared `work/` with (read, write), `groupMember` is in a group alice shared
 * `work/` with for writing, `formerMember` was in that group and left it. The samples that name alice's
 * files name them under `work/`, so every storage and WebDAV route is tried through a grant.
 */
const OK = 0;
//                                                                            grantRead, grantWrite, groupMember, formerMember
const KINDS = {
  public:        [OK, OK, OK, OK, OK, OK, OK, OK, OK, OK, OK,                  OK, OK, OK, OK],
  user:          [401, 401, OK, OK, OK, 401, 401, OK, 401, OK, OK,             OK, OK, OK, OK],
  userWrite:     [401, 401, OK, 403, OK, 401, 401, OK, 401, 403, OK,           OK, OK, OK, OK],
  session:       [401, 401, OK, 403, 403, 401, 401, OK, 401, 403, 403,         OK, OK, OK, OK],
  admin:         [401, 401, 403, 403, 403, 401, 401, OK, 401, 403, 403,        403, 403, 403, 403],
  ownRead:       [401, 401, 401, OK, OK, OK, 401, 401, 401, 401, 401,          OK, OK, OK, 401],
  ownReadDav:    [401, 401, 401, OK, OK, 401, 401, 401, 401, 401, 401,         OK, OK, OK, 401],
  ownWrite:      [401, 401, 401, 403, OK, 401, 401, 401, 401, 401, 401,        403, OK, OK, 401],
  hiddenRead:    [404, 404, 404, OK, OK, 404, 404, 404, 404, 404, 404,         404, 404, 404, 404],
  hiddenWrite:   [404, 404, 404, 403, OK, 404, 404, 404, 404, 403, 404,        404, 404, 404, 404],
  shareLink:     [404, 404, 404, 404, 404, 404, OK, 404, 404, 404, 404,        404, 404, 404, 404],
  cookie:        [OK, OK, OK, OK, OK, OK, OK, OK, OK, OK, OK,                  OK, OK, OK, OK],
} as const satisfies Record<string, readonly number[]>;
/** Someone else's id or path, for every account that is not alice's (owner-only routes). */
const notAlice = (status: number): Partial<Record<P, number>> => ({ other: status, admin: status, adminKey: status, grantRead: status, grantWrite: status, groupMember: status, formerMember: status });
type Kind = keyof typeof KINDS;

/** Per-cell values a sample may need fresh (a file to delete, an upload to patch). */
type Vars = Record<string, string>;
type Sample = {
  kind: Kind;
  ok: number;
  /** Path with `{read}` / `{upload}` for the principal's share links and `{x}` for a prepared value. */
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Runs before each cell with alice's session token; returns values for the path and headers. */
  prepare?: (ctx: Ctx) => Promise<Vars>;
  /** Cells that differ from the kind's row, with why. */
  override?: Partial<Record<P, number>>;
};
type Ctx = { t: TestApp; alice: string };

const TUS = { 'tus-resumable': '1.0.0' };
const json = { 'content-type': 'application/json' };
const form = { 'content-type': 'application/x-www-form-urlencoded' };
const upload = multipartBody([{ name: 'file', filename: `m-${randomUUID()}.txt`, content: 'm' }]);
const LOCKINFO = '<?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockinfo>';
const SYNC_COLLECTION = '<?xml version="1.0"?><D:sync-collection xmlns:D="DAV:"><D:sync-token/><D:sync-level>1</D:sync-level><D:prop><D:getetag/></D:prop></D:sync-collection>';
const PROPPATCH = '<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:" xmlns:Z="urn:x"><D:set><D:prop><Z:color>red</Z:color></D:prop></D:set></D:propertyupdate>';
const fresh = () => `f-${randomUUID()}`;

async function newFile(ctx: Ctx): Promise<Vars> {
  const x = fresh();
  await ctx.t.fs.put(`work/${x}.txt`, 'x');
  return { x };
}
async function newUpload(ctx: Ctx): Promise<Vars> {
  const res = await fetch(`${ctx.t.url}/tus/`, { method: 'POST', headers: { ...TUS, ...bearer(ctx.alice), 'upload-length': '1', 'upload-metadata': `filename ${Buffer.from(`${fresh()}.txt`).toString('base64')}` } });
  assert.equal(res.status, 201);
  return { x: (res.headers.get('location') as string).replace(/^.*\/tus\//, '') };
}

/** A grant of a new file of alice's to ivan, who is none of the principals (a disabled user cannot be given one). */
async function newGrant(ctx: Ctx): Promise<Vars> {
  const { x } = await newFile(ctx);
  const res = await postJson(`${ctx.t.url}/api/grants`, { path: `/alice/work/${x}.txt`, to: 'user:ivan', permission: 'read' }, bearer(ctx.alice));
  assert.equal(res.status, 201);
  return { x: ((await res.json()) as { id: string }).id };
}

/** A file of alice's moved into her trash (this app runs with --trash-days); its trash id. */
async function newTrashed(ctx: Ctx): Promise<Vars> {
  const { x } = await newFile(ctx);
  assert.equal((await fetch(`${ctx.t.url}/storage/alice/work/${x}.txt`, { method: 'DELETE', headers: bearer(ctx.alice) })).status, 204);
  const items = ((await (await fetch(`${ctx.t.url}/api/trash`, { headers: bearer(ctx.alice) })).json()) as { items: { id: string; path: string }[] }).items;
  return { x: (items.find((i) => i.path === `/alice/work/${x}.txt`) as { id: string }).id };
}

/** One sample per route (method + pattern); HEAD falls back to the GET sample, as Fastify makes HEAD routes from GET ones. */
const SAMPLES: Record<string, Sample> = {
  'POST /auth/login': { kind: 'public', ok: 401, path: '/auth/login', headers: json, body: '{"username":"alice","password":"wrong-password"}' },
  'POST /auth/refresh': { kind: 'public', ok: 401, path: '/auth/refresh', headers: json, body: '{"username":"alice","refresh_token":"fcr_nope"}' },
  'POST /auth/logout': { kind: 'public', ok: 401, path: '/auth/logout', headers: json, body: '{"username":"alice","refresh_token":"fcr_nope"}' },
  // Single sign-on is off in this app: its routes answer 404 to everyone (test/routes/oidc.test.ts tests them on).
  'GET /auth/oidc/status': { kind: 'public', ok: 200, path: '/auth/oidc/status' },
  'GET /auth/oidc/login': { kind: 'public', ok: 404, path: '/auth/oidc/login' },
  'GET /auth/oidc/callback': { kind: 'public', ok: 404, path: '/auth/oidc/callback?state=x&code=y' },
  'GET /auth/oidc/logout': { kind: 'public', ok: 404, path: '/auth/oidc/logout' },
  'POST /auth/oidc/session': { kind: 'public', ok: 404, path: '/auth/oidc/session', headers: json, body: '{"code":"fch_nope"}' },
  'POST /api/keys': { kind: 'session', ok: 201, path: '/api/keys', headers: json, body: '{"name":"matrix"}' },
  'GET /api/keys': { kind: 'session', ok: 200, path: '/api/keys' },
  'DELETE /api/keys/:id': {
    kind: 'session', ok: 204, path: '/api/keys/{x}',
    prepare: async ({ t, alice }) => ({ x: ((await (await postJson(`${t.url}/api/keys`, { name: 'to-revoke' }, bearer(alice))).json()) as { id: string }).id }),
    override: { ...notAlice(404), adminKey: 403 }, // own keys only: someone else's id is as unknown as a made-up one
  },
  // A key that is not valid is refused past the one check (400); adding real keys: test/routes/ssh-keys.test.ts.
  'POST /api/me/ssh-keys': { kind: 'session', ok: 400, path: '/api/me/ssh-keys', headers: json, body: '{"name":"matrix","key":"ssh-ed25519 AAAA"}' },
  'GET /api/me/ssh-keys': { kind: 'session', ok: 200, path: '/api/me/ssh-keys' },
  'DELETE /api/me/ssh-keys/:id': { kind: 'session', ok: 404, path: '/api/me/ssh-keys/no-such-key' },
  'GET /api/health': { kind: 'public', ok: 200, path: '/api/health' },
  // Account routes: a body the route refuses (400) or an id nobody has (404) is the answer past the one check.
  'GET /api/me': { kind: 'user', ok: 200, path: '/api/me' },
  'GET /api/usage': { kind: 'user', ok: 200, path: '/api/usage' },
  'GET /api/search': { kind: 'user', ok: 200, path: '/api/search?q=doc' },
  'GET /api/changes': { kind: 'user', ok: 200, path: '/api/changes' },
  // A stream that would stay open: a bad cursor is refused past the one check, before it starts.
  'GET /api/changes/stream': { kind: 'user', ok: 400, path: '/api/changes/stream?cursor=x' },
  'GET /api/changes/recent': { kind: 'user', ok: 200, path: '/api/changes/recent' },
  'POST /api/me/password': { kind: 'session', ok: 400, path: '/api/me/password', headers: json, body: '{}' },
  'GET /api/sessions': { kind: 'session', ok: 200, path: '/api/sessions' },
  'DELETE /api/sessions/:id': { kind: 'session', ok: 404, path: '/api/sessions/no-such-session' },
  'POST /api/me/totp': { kind: 'session', ok: 200, path: '/api/me/totp' },
  'POST /api/me/totp/confirm': { kind: 'session', ok: 400, path: '/api/me/totp/confirm', headers: json, body: '{}' },
  'DELETE /api/me/totp': { kind: 'session', ok: 400, path: '/api/me/totp', headers: json, body: '{}' },
  'GET /api/admin/users': { kind: 'admin', ok: 200, path: '/api/admin/users' },
  'POST /api/admin/users': { kind: 'admin', ok: 400, path: '/api/admin/users', headers: json, body: '{}' },
  'PATCH /api/admin/users/:name': { kind: 'admin', ok: 404, path: '/api/admin/users/nobody-{x}', headers: json, body: '{"admin":true}', prepare: async () => ({ x: fresh() }) },
  'DELETE /api/admin/users/:name': { kind: 'admin', ok: 404, path: '/api/admin/users/nobody-{x}', prepare: async () => ({ x: fresh() }) },
  'GET /api/openapi.json': { kind: 'public', ok: 200, path: '/api/openapi.json' },
  'GET /api/stats': { kind: 'user', ok: 200, path: '/api/stats' },
  'GET /is_file_cloud': { kind: 'public', ok: 200, path: '/is_file_cloud' },
  'GET /banner/login': { kind: 'public', ok: 200, path: '/banner/login' },
  'GET /banner/page': { kind: 'user', ok: 200, path: '/banner/page' },
  'GET /storage/*': { kind: 'ownRead', ok: 200, path: '/storage/alice/work/doc.txt' },
  'PUT /storage/*': { kind: 'ownWrite', ok: 201, path: '/storage/alice/work/{x}.txt', headers: { 'content-type': 'text/plain' }, body: 'put', prepare: async () => ({ x: fresh() }) },
  'DELETE /storage/*': { kind: 'ownWrite', ok: 204, path: '/storage/alice/work/{x}.txt', prepare: newFile },
  'POST /storage/*': { kind: 'ownWrite', ok: 201, path: '/storage/alice/work/{x}', headers: json, body: '{"action":"CreateFolder"}', prepare: async () => ({ x: fresh() }) },
  'OPTIONS /dav/*': { kind: 'public', ok: 200, path: '/dav/alice/work/' },
  'GET /dav/*': { kind: 'ownReadDav', ok: 200, path: '/dav/alice/work/doc.txt' },
  'PUT /dav/*': { kind: 'ownWrite', ok: 201, path: '/dav/alice/work/{x}.txt', body: 'dav', prepare: async () => ({ x: fresh() }) },
  'DELETE /dav/*': { kind: 'ownWrite', ok: 204, path: '/dav/alice/work/{x}.txt', prepare: newFile },
  'PROPFIND /dav/*': { kind: 'ownReadDav', ok: 207, path: '/dav/alice/work/', headers: { depth: '0' } },
  'REPORT /dav/*': { kind: 'ownReadDav', ok: 207, path: '/dav/alice/work/', headers: { depth: '0', 'content-type': 'application/xml' }, body: SYNC_COLLECTION },
  'PROPPATCH /dav/*': { kind: 'ownWrite', ok: 207, path: '/dav/alice/work/doc.txt', headers: { 'content-type': 'application/xml' }, body: PROPPATCH },
  'MKCOL /dav/*': { kind: 'ownWrite', ok: 201, path: '/dav/alice/work/{x}', prepare: async () => ({ x: fresh() }) },
  'COPY /dav/*': { kind: 'ownWrite', ok: 201, path: '/dav/alice/work/doc.txt', headers: { destination: '/dav/alice/work/{x}.txt' }, prepare: async () => ({ x: fresh() }) },
  'MOVE /dav/*': { kind: 'ownWrite', ok: 201, path: '/dav/alice/work/{x}.txt', headers: { destination: '/dav/alice/work/{x}-moved.txt' }, prepare: newFile },
  'LOCK /dav/*': { kind: 'ownWrite', ok: 201, path: '/dav/alice/work/{x}.txt', headers: { 'content-type': 'application/xml', timeout: 'Second-60' }, body: LOCKINFO, prepare: async () => ({ x: fresh() }) },
  'UNLOCK /dav/*': {
    kind: 'ownWrite', ok: 204, path: '/dav/alice/work/{x}.txt', headers: { 'lock-token': '<{lock}>' },
    prepare: async ({ t, alice }) => {
      const x = fresh();
      const res = await fetch(`${t.url}/dav/alice/work/${x}.txt`, { method: 'LOCK', headers: { ...bearer(alice), 'content-type': 'application/xml' }, body: LOCKINFO });
      assert.equal(res.status, 201);
      return { x, lock: (res.headers.get('lock-token') as string).replace(/[<>]/g, '') };
    },
    // Through a grant the lock is reached, but it is alice's: only its own principal removes it.
    override: { grantWrite: 403, groupMember: 403 },
  },
  'POST /dav/*': { kind: 'ownWrite', ok: 405, path: '/dav/alice/work/doc.txt' },
  'PATCH /dav/*': { kind: 'ownWrite', ok: 405, path: '/dav/alice/work/doc.txt' },
  // /dav itself names nobody's tree: PROPFIND lists the caller's own root, everything else is 405.
  'OPTIONS /dav': { kind: 'public', ok: 200, path: '/dav' },
  'GET /dav': { kind: 'user', ok: 405, path: '/dav', override: { pathToken: 401 } },
  'PROPFIND /dav': { kind: 'user', ok: 207, path: '/dav', headers: { depth: '0' } },
  'REPORT /dav': { kind: 'user', ok: 405, path: '/dav', override: { pathToken: 401 } },
  ...Object.fromEntries(['PUT', 'DELETE', 'PROPPATCH', 'MKCOL', 'COPY', 'MOVE', 'LOCK', 'UNLOCK', 'POST', 'PATCH'].map((m) => [`${m} /dav`, { kind: 'userWrite', ok: 405, path: '/dav' } as Sample])),
  ...Object.fromEntries(['/tus', '/tus/'].flatMap((url) => [
    [`OPTIONS ${url}`, { kind: 'public', ok: 204, path: url } as Sample],
    [`POST ${url}`, { kind: 'userWrite', ok: 201, path: url, headers: { ...TUS, 'upload-length': '1', 'upload-metadata': `filename ${Buffer.from('m.txt').toString('base64')}` } } as Sample],
    ...['GET', 'PUT', 'PATCH', 'DELETE'].map((m) => [`${m} ${url}`, { kind: 'public', ok: 405, path: url, headers: TUS } as Sample]),
  ])),
  'OPTIONS /tus/:id': { kind: 'public', ok: 204, path: '/tus/00000000-0000-0000-0000-000000000000' },
  'HEAD /tus/:id': { kind: 'hiddenRead', ok: 200, path: '/tus/{x}', headers: TUS, prepare: newUpload },
  'PATCH /tus/:id': { kind: 'hiddenWrite', ok: 204, path: '/tus/{x}', headers: { ...TUS, 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' }, body: 'z', prepare: newUpload },
  'DELETE /tus/:id': { kind: 'hiddenWrite', ok: 204, path: '/tus/{x}', headers: TUS, prepare: newUpload },
  ...Object.fromEntries(['GET', 'PUT', 'POST'].map((m) => [`${m} /tus/:id`, { kind: 'public', ok: 405, path: '/tus/00000000-0000-0000-0000-000000000000', headers: TUS } as Sample])),
  'GET /basic': { kind: 'public', ok: 308, path: '/basic' },
  'GET /basic/style.css': { kind: 'public', ok: 200, path: '/basic/style.css' },
  'GET /basic/icon.svg': { kind: 'public', ok: 200, path: '/basic/icon.svg' },
  // The /basic/ pages know only their cookie session: every other credential is an anonymous visitor.
  'GET /basic/login': { kind: 'cookie', ok: 200, path: '/basic/login' },
  'POST /basic/login': { kind: 'public', ok: 401, path: '/basic/login', headers: form, body: 'username=alice&password=wrong-password' },
  'POST /basic/logout': { kind: 'cookie', ok: 303, path: '/basic/logout', headers: form, body: '' },
  'GET /basic/*': { kind: 'cookie', ok: 303, path: '/basic/' },
  'POST /basic/*': { kind: 'cookie', ok: 303, path: '/basic/', headers: form, body: 'action=mkdir&name=x' },
  'POST /api/shares': { kind: 'userWrite', ok: 201, path: '/api/shares', headers: json, body: '{"path":"/alice/doc.txt"}', override: notAlice(401) }, // alice's path
  'GET /api/shares': { kind: 'user', ok: 200, path: '/api/shares' },
  'DELETE /api/shares/:id': {
    kind: 'userWrite', ok: 204, path: '/api/shares/{x}',
    prepare: async ({ t, alice }) => ({ x: ((await (await postJson(`${t.url}/api/shares`, { path: '/alice/doc.txt' }, bearer(alice))).json()) as { id: string }).id }),
    override: notAlice(404), // own links only
  },
  // Groups (admin) and grants: a body the route refuses (400) or a name nobody has (404) is the answer past the one check.
  'GET /api/admin/groups': { kind: 'admin', ok: 200, path: '/api/admin/groups' },
  'POST /api/admin/groups': { kind: 'admin', ok: 400, path: '/api/admin/groups', headers: json, body: '{}' },
  'PATCH /api/admin/groups/:name': { kind: 'admin', ok: 404, path: '/api/admin/groups/nobody-{x}', headers: json, body: '{"add":[]}', prepare: async () => ({ x: fresh() }) },
  'DELETE /api/admin/groups/:name': { kind: 'admin', ok: 404, path: '/api/admin/groups/nobody-{x}', prepare: async () => ({ x: fresh() }) },
  // Audit log and webhooks (admin): a refused body (400) or an unknown id (404) past the one check.
  'GET /api/admin/audit': { kind: 'admin', ok: 200, path: '/api/admin/audit?limit=1' },
  'POST /api/admin/webhooks': { kind: 'admin', ok: 400, path: '/api/admin/webhooks', headers: json, body: '{}' },
  'GET /api/admin/webhooks': { kind: 'admin', ok: 200, path: '/api/admin/webhooks' },
  'GET /api/admin/webhooks/:id': { kind: 'admin', ok: 404, path: '/api/admin/webhooks/nobody-{x}', prepare: async () => ({ x: fresh() }) },
  'PATCH /api/admin/webhooks/:id': { kind: 'admin', ok: 404, path: '/api/admin/webhooks/nobody-{x}', headers: json, body: '{"enabled":true}', prepare: async () => ({ x: fresh() }) },
  'DELETE /api/admin/webhooks/:id': { kind: 'admin', ok: 404, path: '/api/admin/webhooks/nobody-{x}', prepare: async () => ({ x: fresh() }) },
  'GET /api/admin/webhooks/:id/deliveries': { kind: 'admin', ok: 404, path: '/api/admin/webhooks/nobody-{x}/deliveries', prepare: async () => ({ x: fresh() }) },
  'POST /api/admin/webhooks/:id/test': { kind: 'admin', ok: 404, path: '/api/admin/webhooks/nobody-{x}/test', headers: json, body: '{}', prepare: async () => ({ x: fresh() }) },
  'POST /api/grants': {
    // Only alice's full key may make it (once per run: one cell succeeds), everyone else is refused before the item is looked at.
    kind: 'userWrite', ok: 201, path: '/api/grants', headers: json, body: '{"path":"/alice/doc.txt","to":"user:bob","permission":"read"}',
    override: notAlice(401), // alice's path
  },
  'GET /api/grants': { kind: 'user', ok: 200, path: '/api/grants' },
  'GET /api/grants/received': { kind: 'user', ok: 200, path: '/api/grants/received' },
  'PATCH /api/grants/:id': {
    kind: 'userWrite', ok: 200, path: '/api/grants/{x}', headers: json, body: '{"permission":"write"}', prepare: newGrant,
    override: notAlice(404), // the owner's only
  },
  'DELETE /api/grants/:id': {
    kind: 'userWrite', ok: 204, path: '/api/grants/{x}', prepare: newGrant,
    override: notAlice(404), // the owner's, or a recipient's by name (the grant here is to ivan, none of the principals)
  },
  // The trash (issue 34): everyone's own; another's item id is as unknown as a made-up one.
  'GET /api/trash': { kind: 'user', ok: 200, path: '/api/trash' },
  'GET /api/trash/hashes': { kind: 'user', ok: 200, path: '/api/trash/hashes' },
  'POST /api/trash/:id/restore': { kind: 'userWrite', ok: 200, path: '/api/trash/{x}/restore', prepare: newTrashed, override: notAlice(404) },
  'DELETE /api/trash/:id': { kind: 'userWrite', ok: 204, path: '/api/trash/{x}', prepare: newTrashed, override: notAlice(404) },
  'DELETE /api/trash': { kind: 'userWrite', ok: 204, path: '/api/trash' },
  'GET /share/*': { kind: 'shareLink', ok: 200, path: '/share/{read}/' },
  'PUT /share/*': { kind: 'shareLink', ok: 201, path: '/share/{upload}/', headers: { 'content-type': upload.contentType }, body: upload.body },
  'POST /share/*': { kind: 'public', ok: 204, path: '/share/{live}/auth', headers: json, body: '{"password":"anything"}' },
  'GET /s/_assets/:name': { kind: 'public', ok: 200, path: '/s/_assets/share.css' },
  'GET /s/*': { kind: 'shareLink', ok: 200, path: '/s/{read}/' },
  'POST /s/:id/auth': { kind: 'public', ok: 303, path: '/s/{live}/auth', headers: form, body: 'password=anything' },
  'POST /s/*': { kind: 'shareLink', ok: 303, path: '/s/{upload}/', headers: { 'content-type': upload.contentType }, body: upload.body },
  'GET /assets/:name': { kind: 'public', ok: 200, path: '/assets/{asset}' },
  'GET /*': { kind: 'public', ok: 200, path: '/browse/' },
};

function sampleFor(r: RouteEntry): Sample | undefined {
  return SAMPLES[`${r.method} ${r.url}`] ?? (r.method === 'HEAD' ? SAMPLES[`GET ${r.url}`] : undefined);
}

type Cred = { headers: Record<string, string>; query: string; links: { read: string; upload: string } };

for (const [storage, skip] of BACKENDS) {
  describe(`authorization matrix on ${storage}`, { skip }, () => {
    let t: TestApp;
    let routes: RouteEntry[];
    let ref: TestApp | undefined;
    let ctx: Ctx;
    const creds = {} as Record<P, Cred>;
    const vars: Vars = {};

    before(async () => {
      t = await startApp({ users: ['alice', 'bob', 'dave', 'erin', 'frank', 'gina', 'hank', 'ivan'], storage, webRoot: WEB_ROOT, flags: { shareRateLimit: '0', trashDays: '30' } });
      // The cluster runs in other processes: its route table is the one this build makes in process.
      if (storage === 'cluster') ref = await startApp({ webRoot: WEB_ROOT });
      routes = (ref ?? t).app.routeTable;
      await t.addUser('root', { admin: true });
      await mkdir(join(t.dataDir, 'banner'), { recursive: true });
      await writeFile(join(t.dataDir, 'banner', 'login.txt'), 'hello');
      await writeFile(join(t.dataDir, 'banner', 'page.txt'), 'hello');
      vars.asset = (await readdir(join(WEB_ROOT, 'assets')))[0] as string;
      await t.fs.put('doc.txt', 'alice doc');
      await t.fs.put('work/doc.txt', 'alice work doc');
      await t.fs.mkdir('shared');
      await t.fs.mkdir('inbox');
      await t.fs.put('d.txt', 'dave doc', 'dave');
      await t.fs.mkdir('inbox', 'dave');
      const alice = (await t.login('alice')).access_token;
      const dave = (await t.login('dave')).access_token;
      ctx = { t, alice };
      const key = async (readOnly: boolean) => ((await (await postJson(`${t.url}/api/keys`, { name: 'k', read_only: readOnly }, bearer(alice))).json()) as { key: string }).key;
      const link = async (token: string, body: Record<string, unknown>) => ((await (await postJson(`${t.url}/api/shares`, body, bearer(token))).json()) as { id: string }).id;
      const aliceLinks = { read: await link(alice, { path: '/alice/shared/' }), upload: await link(alice, { path: '/alice/inbox/', upload_only: true }) };
      const daveLinks = { read: await link(dave, { path: '/dave/d.txt' }), upload: await link(dave, { path: '/dave/inbox/', upload_only: true }) };
      vars.live = aliceLinks.read;
      const noLinks = { read: randomBytes(24).toString('base64url'), upload: randomBytes(24).toString('base64url') };
      const pathToken = ((await (await postJson(`${t.url}/storage/alice/work/doc.txt`, { action: 'MakePathToken' }, bearer(alice))).json()) as { token: string }).token;
      // An access token past its expiry, of a live session of alice's, written as the server writes them.
      const aliceId = (await t.store.users.getByName('alice'))?.id as string;
      const now = Date.now();
      const session = await t.store.sessions.create({ userId: aliceId, refreshHash: sha256Hex(randomUUID()), now, expiresAt: now + 3_600_000 });
      const expired = `fca_${randomBytes(32).toString('base64url')}`;
      await t.store.sessions.addAccessToken({ tokenHash: sha256Hex(expired), sessionId: session.id, expiresAt: now - 1000 });
      const plain = (headers: Record<string, string>): Cred => ({ headers, query: '', links: noLinks });
      creds.none = plain({});
      creds.expired = plain(bearer(expired));
      creds.other = plain(bearer((await t.login('bob')).access_token));
      creds.roKey = plain(bearer(await key(true)));
      creds.fullKey = plain(bearer(await key(false)));
      creds.pathToken = { headers: {}, query: `token=${encodeURIComponent(pathToken)}`, links: noLinks };
      creds.share = { headers: {}, query: '', links: aliceLinks };
      const rootToken = (await t.login('root')).access_token;
      creds.admin = plain(bearer(rootToken));
      const rootKey = async (readOnly: boolean) => ((await (await postJson(`${t.url}/api/keys`, { name: 'root-k', read_only: readOnly }, bearer(rootToken))).json()) as { key: string }).key;
      creds.adminRoKey = plain(bearer(await rootKey(true)));
      creds.adminKey = plain(bearer(await rootKey(false)));
      // Grants of alice's work/: erin reads, frank writes, the group crew (gina, and hank who left) writes.
      const grantTo = async (to: string, permission: string) => assert.equal((await postJson(`${t.url}/api/grants`, { path: '/alice/work', to, permission }, bearer(alice))).status, 201);
      await grantTo('user:erin', 'read');
      await grantTo('user:frank', 'write');
      assert.equal((await postJson(`${t.url}/api/admin/groups`, { name: 'crew', members: ['gina', 'hank'] }, bearer(rootToken))).status, 201);
      await grantTo('group:crew', 'write');
      assert.equal((await fetch(`${t.url}/api/admin/groups/crew`, { method: 'PATCH', headers: { ...bearer(rootToken), ...json }, body: '{"remove":["hank"]}' })).status, 200);
      for (const [p, u] of [['grantRead', 'erin'], ['grantWrite', 'frank'], ['groupMember', 'gina'], ['formerMember', 'hank']] as const) creds[p] = plain(bearer((await t.login(u)).access_token));
      creds.disabled = { headers: bearer(dave), query: '', links: daveLinks };
      assert.equal(await t.store.users.setDisabled('dave', true), true);
    });
    after(async () => {
      await ref?.close();
      await t.close();
    });

    test('every route has a sample request and an expected status per principal', () => {
      assert.ok(routes.length > 50, `${routes.length} routes collected`);
      const missing = routes.filter((r) => !sampleFor(r)).map((r) => `${r.method} ${r.url}`);
      assert.deepEqual(missing, [], 'routes without a sample in test/routes/authz-matrix.test.ts');
    });

    test('every route × every principal answers its expected status', async () => {
      const wrong: string[] = [];
      let cells = 0;
      for (const r of routes) {
        const sample = sampleFor(r);
        if (!sample) continue;
        for (const [i, p] of PRINCIPALS.entries()) {
          const expectedRaw = sample.override?.[p] ?? KINDS[sample.kind][i];
          const expected = expectedRaw === OK ? sample.ok : expectedRaw;
          const cred = creds[p];
          const v: Vars = { ...vars, read: cred.links.read, upload: cred.links.upload, ...(sample.prepare ? await sample.prepare(ctx) : {}) };
          const fill = (s: string) => s.replace(/\{(\w+)\}/g, (_m, k: string) => v[k] ?? `{${k}}`);
          let path = fill(sample.path);
          if (cred.query) path += `${path.includes('?') ? '&' : '?'}${cred.query}`;
          const headers = Object.fromEntries(Object.entries({ ...sample.headers, ...cred.headers }).map(([k, val]) => [k, fill(val)]));
          const res = await fetch(`${t.url}${path}`, { method: r.method, headers, body: sample.body, redirect: 'manual' });
          const text = await res.text();
          cells++;
          if (res.status !== expected) wrong.push(`${r.method} ${r.url} as ${p}: ${res.status}, expected ${expected} ${text.slice(0, 120)}`);
          else if (res.status >= 400 && r.method !== 'HEAD' && !path.startsWith('/basic') && !path.startsWith('/s/')) {
            // Every refusal has the contract's JSON body; a WebDAV 401 also the Basic challenge.
            const body = JSON.parse(text) as { error?: unknown; message?: unknown };
            if (typeof body.error !== 'string' || typeof body.message !== 'string') wrong.push(`${r.method} ${r.url} as ${p}: no {error, message} body`);
            if (res.status === 401 && r.url.startsWith('/dav') && !/^Basic realm="File Cloud"/.test(res.headers.get('www-authenticate') ?? '')) wrong.push(`${r.method} ${r.url} as ${p}: 401 without the Basic challenge`);
          }
        }
      }
      assert.deepEqual(wrong, [], `${wrong.length} of ${cells} cells differ`);
      assert.ok(cells >= routes.length * PRINCIPALS.length);
    });
  });
}
