import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AppError } from '../domain/errors.js';
import { attrsOf, longname, STATUS, statusOf } from './replies.js';

test('statusOf: the SFTP status of each kind of refusal, with the contract\'s code and message in its text', () => {
  const table: [AppError, number][] = [
    [new AppError('not_found', 'Nothing exists at this path.'), STATUS.NO_SUCH_FILE],
    [new AppError('not_a_directory', 'x'), STATUS.NO_SUCH_FILE],
    [new AppError('unauthorized', 'x'), STATUS.PERMISSION_DENIED],
    [new AppError('forbidden', 'This app password is read-only.'), STATUS.PERMISSION_DENIED],
    [new AppError('locked', 'x'), STATUS.PERMISSION_DENIED],
    [new AppError('quota_exceeded', 'The upload would pass your quota.'), STATUS.FAILURE],
    [new AppError('already_exists', 'x'), STATUS.FAILURE],
    [new AppError('method_not_allowed', 'x'), STATUS.OP_UNSUPPORTED],
  ];
  for (const [e, code] of table) {
    const s = statusOf(e);
    assert.equal(s.code, code, e.code);
    assert.equal(s.message, `${e.code}: ${e.message}`);
    assert.equal(s.fault, false);
  }
  const fault = statusOf(new Error('ECONNRESET at 10.0.0.3'));
  assert.deepEqual([fault.code, fault.fault], [STATUS.FAILURE, true]);
  assert.doesNotMatch(fault.message, /10\.0\.0\.3/, 'a fault\'s cause is logged, never sent');
});

test('attrsOf and longname: files and folders as ls -l shows them, read-only without write bits', () => {
  const when = new Date('2026-12-01T10:05:00Z');
  const file = attrsOf({ isFile: true, size: 1234, modified: when }, true);
  assert.deepEqual(file, { mode: 0o100644, uid: 0, gid: 0, size: 1234, atime: when.getTime() / 1000, mtime: when.getTime() / 1000 });
  assert.equal(attrsOf({ isFile: false, size: 99, modified: when }, false).mode, 0o040555);
  assert.equal(longname('a.txt', file, 'alice', new Date('2026-12-02T00:00:00Z')), '-rw-r--r--    1 alice    alice        1234 Dec  1 10:05 a.txt');
  assert.equal(longname('old', attrsOf({ isFile: false, size: 0, modified: new Date('2020-03-04T00:00:00Z') }, true), 'bob', new Date('2026-12-02T00:00:00Z')), 'drwxr-xr-x    1 bob      bob             0 Mar  4  2020 old');
});
