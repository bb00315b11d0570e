// A share link's visitor through the one door (issue 50; docs/architecture.md "The operation layer"):
// what a link lets its visitor do — read what is there, only upload, or first give the password — is
// `decide`'s answer (src/domain/access.ts), asked by the layer for the link's API, its pages and the fast
// read path alike. The rule runs once here against the layer; the pages keep a thin mapping test.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { AppError } from '../../src/domain/errors.js';
import type { Principal } from '../../src/domain/principal.js';
import { BACKENDS, startApp, type TestApp } from '../helpers/app.js';
import { bearer } from '../helpers/client.js';
import { multipartBody } from '../helpers/multipart.js';

type Link = 'read' | 'locked' | 'drop' | 'locked drop';
const OPTIONS: Record<Link, object> = { read: {}, locked: { password: 'pw' }, drop: { upload_only: true }, 'locked drop': { upload_only: true, password: 'pw' } };

/** What the layer answers: `read`, `upload`, `done`, or the refusal's code. */
type Outcome = 'read' | 'upload' | 'done' | 'password_required' | 'not_found' | 'forbidden';

// [the link, whether the visitor gave its password, the operation, the layer's answer]
const RULES: [Link, boolean, 'visit' | 'openLink' | 'uploadToLink', Outcome][] = [
  // A page: the password first, whatever the link is; then what is there, or the drop zone.
  ['read', false, 'visit', 'read'],
  ['locked', false, 'visit', 'password_required'],
  ['locked', true, 'visit', 'read'],
  ['drop', false, 'visit', 'upload'],
  ['locked drop', false, 'visit', 'password_required'],
  ['locked drop', true, 'visit', 'upload'],
  // The link's API and the fast read path: the password first, as on a page (a locked link tells not what
  // it is); then an upload-only link reads nothing, not even that it exists.
  ['read', false, 'openLink', 'read'],
  ['locked', false, 'openLink', 'password_required'],
  ['locked', true, 'openLink', 'read'],
  ['drop', false, 'openLink', 'not_found'],
  ['locked drop', false, 'openLink', 'password_required'],
  ['locked drop', true, 'openLink', 'not_found'],
  // An upload: only into an upload-only link, once its password is given.
  ['read', false, 'uploadToLink', 'forbidden'],
  ['locked', false, 'uploadToLink', 'password_required'],
  ['locked', true, 'uploadToLink', 'forbidden'],
  ['drop', false, 'uploadToLink', 'done'],
  ['locked drop', false, 'uploadToLink', 'password_required'],
  ['locked drop', true, 'uploadToLink', 'done'],
];

for (const [storage, skip] of BACKENDS) {
  describe(`what a share link lets its visitor do is decide's answer, asked by the layer, on ${storage}`, { skip: skip ?? (storage === 'cluster' ? 'the layer of this process: file and s3 build it in-process' : undefined) }, () => {
    let t: TestApp;
    const ids = {} as Record<Link, string>;
    before(async () => {
      t = await startApp({ storage, users: ['alice'] });
      const token = (await t.login('alice')).access_token;
      await t.fs.put('shared/a.txt', 'a', 'alice');
      for (const [link, options] of Object.entries(OPTIONS) as [Link, object][]) {
        const res = await fetch(`${t.url}/api/shares`, { method: 'POST', headers: { ...bearer(token), 'content-type': 'application/json' }, body: JSON.stringify({ path: '/alice/shared', ...options }) });
        const text = await res.text();
        assert.equal(res.status, 201, text);
        ids[link] = (JSON.parse(text) as { id: string }).id;
      }
    });
    after(() => t?.close());

    const visitor = async (link: Link, unlocked: boolean): Promise<Principal> => {
      const share = (await t.store.shares.get(ids[link]))!;
      return { kind: 'share', shareId: share.id, username: share.owner, share, unlocked: unlocked || share.passwordHash === undefined, readOnly: !share.uploadOnly };
    };
    const parts = async function* () {
      yield { filename: 'up.txt', stream: Readable.from([Buffer.from('up')]) };
    };

    for (const [link, unlocked, op, expected] of RULES) {
      test(`${op} of a ${link} link${unlocked ? ' (password given)' : ''}: ${expected}`, async () => {
        const before = await t.fs.names('shared', 'alice');
        const ops = t.app.operations.layer.as(await visitor(link, unlocked));
        const run = async (): Promise<Outcome> => {
          if (op === 'visit') return (await ops.visit([])).may;
          if (op === 'openLink') return (await ops.openLink(['a.txt'])).entry?.isFile ? 'read' : 'not_found';
          await ops.uploadToLink(['in'], parts());
          return 'done';
        };
        const got = await run().catch((e: unknown) => {
          if (e instanceof AppError) return e.code as Outcome;
          throw e;
        });
        assert.equal(got, expected);
        if (expected === 'done') {
          const made = (await t.fs.names('shared', 'alice')).filter((n) => !before.includes(n));
          assert.equal(made.length, 1, 'one new folder for the upload');
          assert.equal(await t.fs.text(`shared/${made[0]}/up.txt`, 'alice'), 'up');
        } else {
          assert.deepEqual(await t.fs.names('shared', 'alice'), before, 'a refused visitor changes nothing');
        }
      });
    }

    test('an account is no visitor: the layer tells it the link is dead', async () => {
      const user = await t.store.users.getByName('alice');
      const ops = t.app.operations.layer.as({ kind: 'user', via: 'session', sessionId: 's', userId: user!.id, username: 'alice', isAdmin: false, readOnly: false });
      await assert.rejects(ops.visit([]), (e: unknown) => e instanceof AppError && e.code === 'not_found');
      await assert.rejects(ops.openLink([]), (e: unknown) => e instanceof AppError && e.code === 'not_found');
    });

    // The machine API maps the layer's answer too: a locked link's first answer is its password, whatever the method.
    test('the link API asks a locked link for its password before telling its kind, and writes nothing', async () => {
      const before = await t.fs.names('shared', 'alice');
      const form = multipartBody([{ name: 'file', filename: 'x.txt', content: 'x' }]);
      const asks: [Link, string, RequestInit][] = [
        ['locked drop', 'a.txt', {}],
        ['locked drop', '', { method: 'HEAD' }],
        ['locked drop', '?zip=1', {}],
        ['locked', '', { method: 'PUT', headers: { 'content-type': form.contentType }, body: form.body }],
        ['locked drop', '', { method: 'PUT', headers: { 'content-type': form.contentType }, body: form.body }],
      ];
      for (const [link, path, init] of asks) {
        const res = await fetch(`${t.url}/share/${ids[link]}/${path}`, init);
        const text = await res.text();
        assert.equal(res.status, 401, `${init.method ?? 'GET'} ${link} ${path}: ${text}`);
        if (init.method !== 'HEAD') assert.equal((JSON.parse(text) as { error: string }).error, 'password_required');
      }
      assert.deepEqual(await t.fs.names('shared', 'alice'), before);
      // Unlocked links still tell their kind: an upload-only link reads nothing, a read link takes nothing.
      assert.equal((await fetch(`${t.url}/share/${ids.drop}/a.txt`)).status, 404);
      const put = await fetch(`${t.url}/share/${ids.read}/`, { method: 'PUT', headers: { 'content-type': form.contentType }, body: form.body });
      assert.equal(put.status, 403, await put.text());
    });

    // The pages map the layer's answer and nothing more.
    const page = async (link: Link, path = '', init?: RequestInit) => {
      const res = await fetch(`${t.url}/s/${ids[link]}/${path}`, { redirect: 'manual', ...init });
      return { status: res.status, body: await res.text() };
    };
    const PASSWORD_FORM = 'name="password"';
    const UPLOAD_FORM = 'class="upload"';

    test('a locked upload-only link shows its password form, never its upload form', async () => {
      const { status, body } = await page('locked drop');
      assert.equal(status, 401);
      assert.ok(body.includes(PASSWORD_FORM) && !body.includes(UPLOAD_FORM), body);
      const open = await page('drop');
      assert.equal(open.status, 200);
      assert.ok(open.body.includes(UPLOAD_FORM), open.body);
    });

    test('a locked link tells nothing: an invalid, a missing and a real sub-path get the same password form', async () => {
      const paths = ['', 'a.txt', 'no/such/thing', 'a%00b', '..%2Fb'];
      const answers = await Promise.all(paths.map((p) => page('locked', p)));
      for (const [i, a] of answers.entries()) {
        assert.equal(a.status, 401, paths[i]);
        assert.ok(a.body.includes(PASSWORD_FORM), a.body);
      }
      // The same page but for its nonce.
      const strip = (b: string) => b.replace(/nonce-?[=:"']*[A-Za-z0-9+/_-]+/g, '');
      assert.equal(new Set(answers.map((a) => strip(a.body))).size, 1);
    });

    test('an upload to a locked link gets the password form and writes nothing; one to a link that takes none is refused', async () => {
      const before = await t.fs.names('shared', 'alice');
      const form = multipartBody([{ name: 'file', filename: 'x.txt', content: 'x' }]);
      const send = (link: Link) => page(link, '', { method: 'POST', headers: { 'content-type': form.contentType }, body: form.body });
      for (const link of ['locked', 'locked drop'] as const) {
        const { status, body } = await send(link);
        assert.equal(status, 401, `${link}: ${body}`);
        assert.ok(body.includes(PASSWORD_FORM), body);
      }
      assert.equal((await send('read')).status, 403);
      assert.deepEqual(await t.fs.names('shared', 'alice'), before);
      assert.equal((await send('drop')).status, 303);
    });
  });
}
