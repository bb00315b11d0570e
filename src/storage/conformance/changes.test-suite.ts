import assert from 'node:assert/strict';
import { isStorageError } from '../backend.js';
import { bodyOf, keyOf, put, rejectsCode, stagingIsEmpty, names, text, type It } from './support.test-suite.js';

/** Conformance tests of mkdir, delete and move. */
export function changeTests(it: It): void {
  // --- mkdir ---
  it('mkdir creates a folder', async ({ b }) => {
    await b.mkdir(keyOf('new'), { parents: false, existOk: false });
    assert.equal((await b.stat(keyOf('new')))?.isFile, false);
  });

  it('mkdir without parents under a missing folder is not_found', async ({ b }) => {
    await rejectsCode(b.mkdir(keyOf('no/such'), { parents: false, existOk: false }), 'not_found');
  });

  it('mkdir with parents creates every missing parent', async ({ b }) => {
    await b.mkdir(keyOf('p/q/r'), { parents: true, existOk: false });
    assert.deepEqual(await names(b, 'p/q'), ['r']);
  });

  it('mkdir of an existing folder is already_exists unless existOk', async ({ b }) => {
    await b.mkdir(keyOf('d'), { parents: false, existOk: false });
    await rejectsCode(b.mkdir(keyOf('d'), { parents: false, existOk: false }), 'already_exists');
    await b.mkdir(keyOf('d'), { parents: false, existOk: true });
    await b.mkdir(keyOf(''), { parents: false, existOk: true });
  });

  it('mkdir where a file is is already_exists, even with existOk', async ({ b }) => {
    await put(b, 'f', 'x');
    await rejectsCode(b.mkdir(keyOf('f'), { parents: true, existOk: true }), 'already_exists');
  });

  it('mkdir below a file is not_a_directory', async ({ b }) => {
    await put(b, 'f', 'x');
    await rejectsCode(b.mkdir(keyOf('f/sub'), { parents: true, existOk: true }), 'not_a_directory');
  });

  // --- delete ---
  it('delete removes a file', async ({ b }) => {
    await put(b, 'gone.txt', 'x');
    await b.delete(keyOf('gone.txt'), { recursive: false });
    assert.equal(await b.stat(keyOf('gone.txt')), undefined);
  });

  it('delete removes a folder with everything in it when recursive', async (c) => {
    await put(c.b, 'tree/a/b/c.txt', 'x');
    await put(c.b, 'tree/d.txt', 'y');
    await c.b.delete(keyOf('tree'), { recursive: true });
    assert.equal(await c.b.stat(keyOf('tree')), undefined);
    assert.deepEqual(await names(c.b, ''), []);
    await stagingIsEmpty(c);
  });

  it('delete without recursive removes an empty folder but refuses a full one', async ({ b }) => {
    await b.mkdir(keyOf('empty'), { parents: false, existOk: false });
    await b.delete(keyOf('empty'), { recursive: false });
    assert.equal(await b.stat(keyOf('empty')), undefined);
    await put(b, 'full/x.txt', 'x');
    await assert.rejects(b.delete(keyOf('full'), { recursive: false }), (e: unknown) => isStorageError(e));
    assert.equal(await text(b, 'full/x.txt'), 'x');
  });

  it('delete of a missing key is not_found', async ({ b }) => {
    await rejectsCode(b.delete(keyOf('nope'), { recursive: true }), 'not_found');
    await rejectsCode(b.delete(keyOf('no/such/thing'), { recursive: true }), 'not_found');
  });

  it("delete of a user root removes that user's files only", async ({ b }) => {
    await b.mkdir(keyOf('', 'bob'), { parents: false, existOk: false });
    await put(b, 'a/x.txt', 'x');
    await b.write(keyOf('y.txt', 'bob'), bodyOf('y'), { ifExists: 'fail' });
    await b.delete(keyOf(''), { recursive: true });
    assert.equal(await b.stat(keyOf('')), undefined);
    assert.equal((await b.stat(keyOf('y.txt', 'bob')))?.size, 1);
  });

  // --- move ---
  it('move renames a file', async ({ b }) => {
    await put(b, 'a.txt', 'A');
    await b.move(keyOf('a.txt'), keyOf('b.txt'), { overwrite: false });
    assert.equal(await b.stat(keyOf('a.txt')), undefined);
    assert.equal(await text(b, 'b.txt'), 'A');
  });

  it('move renames a folder with its contents', async ({ b }) => {
    await put(b, 'old/sub/f.txt', 'F');
    await b.move(keyOf('old'), keyOf('new'), { overwrite: false });
    assert.equal(await b.stat(keyOf('old')), undefined);
    assert.equal(await text(b, 'new/sub/f.txt'), 'F');
  });

  it("move creates the destination's parents", async ({ b }) => {
    await put(b, 'f.txt', 'F');
    await b.move(keyOf('f.txt'), keyOf('x/y/z.txt'), { overwrite: false });
    assert.equal(await text(b, 'x/y/z.txt'), 'F');
  });

  it('move onto a taken file or folder without overwrite is already_exists and changes nothing', async ({ b }) => {
    await put(b, 'src.txt', 'S');
    await put(b, 'dst.txt', 'D');
    await put(b, 'dir/in.txt', 'I');
    await rejectsCode(b.move(keyOf('src.txt'), keyOf('dst.txt'), { overwrite: false }), 'already_exists');
    await rejectsCode(b.move(keyOf('src.txt'), keyOf('dir'), { overwrite: false }), 'already_exists');
    await rejectsCode(b.move(keyOf('dir'), keyOf('dst.txt'), { overwrite: false }), 'already_exists');
    assert.deepEqual([await text(b, 'src.txt'), await text(b, 'dst.txt'), await text(b, 'dir/in.txt')], ['S', 'D', 'I']);
  });

  it('move with overwrite replaces a file', async ({ b }) => {
    await put(b, 'src.txt', 'S');
    await put(b, 'dst.txt', 'D');
    await b.move(keyOf('src.txt'), keyOf('dst.txt'), { overwrite: true });
    assert.equal(await text(b, 'dst.txt'), 'S');
    assert.deepEqual(await names(b, ''), ['dst.txt']);
  });

  it('move with overwrite replaces a folder and everything in it', async (c) => {
    await put(c.b, 'src/new.txt', 'N');
    await put(c.b, 'dst/old/old.txt', 'O');
    await c.b.move(keyOf('src'), keyOf('dst'), { overwrite: true });
    assert.deepEqual(await names(c.b, 'dst'), ['new.txt']);
    assert.deepEqual(await names(c.b, ''), ['dst']);
    await stagingIsEmpty(c);
  });

  it('move with overwrite replaces a folder by a file and a file by a folder', async (c) => {
    await put(c.b, 'file.txt', 'F');
    await put(c.b, 'folder/x.txt', 'X');
    await c.b.move(keyOf('file.txt'), keyOf('folder'), { overwrite: true });
    assert.equal(await text(c.b, 'folder'), 'F');
    await put(c.b, 'tree/y.txt', 'Y');
    await c.b.move(keyOf('tree'), keyOf('folder'), { overwrite: true });
    assert.equal(await text(c.b, 'folder/y.txt'), 'Y');
    await stagingIsEmpty(c);
  });

  it('move of a folder into itself or below it is into_itself', async ({ b }) => {
    await put(b, 'a/b/f.txt', 'x');
    await rejectsCode(b.move(keyOf('a'), keyOf('a'), { overwrite: false }), 'into_itself');
    await rejectsCode(b.move(keyOf('a'), keyOf('a/b/c'), { overwrite: true }), 'into_itself');
    assert.equal(await text(b, 'a/b/f.txt'), 'x');
  });

  it('move of a missing source is not_found', async ({ b }) => {
    await rejectsCode(b.move(keyOf('nope'), keyOf('x'), { overwrite: true }), 'not_found');
  });

  it('move to a path below a file is not_a_directory', async ({ b }) => {
    await put(b, 'src.txt', 'S');
    await put(b, 'file', 'F');
    await rejectsCode(b.move(keyOf('src.txt'), keyOf('file/x.txt'), { overwrite: true }), 'not_a_directory');
    assert.equal(await text(b, 'src.txt'), 'S');
  });

  it('two concurrent moves to one free name: one wins, the other is already_exists', async ({ b }) => {
    await put(b, 'one.txt', '1');
    await put(b, 'two.txt', '2');
    const results = await Promise.allSettled([
      b.move(keyOf('one.txt'), keyOf('target.txt'), { overwrite: false }),
      b.move(keyOf('two.txt'), keyOf('target.txt'), { overwrite: false }),
    ]);
    assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
    const failed = results.find((r) => r.status === 'rejected');
    assert.ok(failed && isStorageError(failed.reason, 'already_exists'));
    assert.equal((await names(b, '')).length, 2, 'no file is lost');
  });
}
