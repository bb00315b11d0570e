import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { parseByteCount, parseDeferLength, parseOverwrite, parseUploadChecksum, parseUploadMetadata } from './tus-headers.js';

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');

test('parseByteCount accepts plain non-negative integers only', () => {
  const cases: [string | undefined, number | undefined][] = [
    ['0', 0],
    ['1048576', 1048576],
    [' 12 ', 12],
    ['9007199254740991', 9007199254740991],
    [undefined, undefined],
    ['', undefined],
    ['-1', undefined],
    ['+1', undefined],
    ['1e3', undefined],
    ['1.5', undefined],
    ['0x10', undefined],
    ['12 34', undefined],
    ['99999999999999999', undefined],
    ['9007199254740993', undefined],
  ];
  for (const [raw, want] of cases) {
    const r = parseByteCount(raw, 'Upload-Length');
    assert.equal(r.ok ? r.value : undefined, want, `"${raw}"`);
    if (!r.ok) assert.match(r.reason, /Upload-Length/);
  }
});

test('parseUploadMetadata decodes pairs, keys without values, and Unicode', () => {
  const cases: [string | undefined, Record<string, string> | undefined][] = [
    [undefined, {}],
    ['', {}],
    [`filename ${b64('a.txt')}`, { filename: 'a.txt' }],
    [`filename ${b64('ünï cödé #?%.txt')},folder ${b64('/alice/x y')}`, { filename: 'ünï cödé #?%.txt', folder: '/alice/x y' }],
    [`filename ${b64('a')}, overwrite ${b64('true')}`, { filename: 'a', overwrite: 'true' }],
    ['is_confidential', { is_confidential: '' }],
    [`empty ${b64('')}`, { empty: '' }],
    [`filename ${b64('a')},filename ${b64('b')}`, undefined],
    ['filename !!!!', undefined],
    ['filename YQ', undefined],
    [`filename ${b64('a')} extra`, undefined],
    [',', undefined],
    [`filename ${Buffer.from([0xff, 0xfe]).toString('base64')}`, undefined],
    [`fïlename ${b64('a')}`, undefined],
  ];
  for (const [raw, want] of cases) {
    const r = parseUploadMetadata(raw);
    assert.deepEqual(r.ok ? Object.fromEntries(r.value) : undefined, want, `"${raw}"`);
  }
});

test('parseUploadChecksum takes sha1 with a 20-byte base64 digest, any other algorithm or digest is refused', () => {
  const digest = createHash('sha1').update('hello').digest();
  const good = parseUploadChecksum(`sha1 ${digest.toString('base64')}`);
  assert.ok(good.ok && good.value?.algorithm === 'sha1' && good.value.digest.equals(digest));
  const upper = parseUploadChecksum(`SHA1 ${digest.toString('base64')}`);
  assert.ok(upper.ok && upper.value?.digest.equals(digest), 'algorithm names are case-insensitive');
  const absent = parseUploadChecksum(undefined);
  assert.ok(absent.ok && absent.value === undefined);
  for (const raw of ['sha1', `md5 ${digest.toString('base64')}`, `sha256 ${createHash('sha256').update('x').digest('base64')}`, 'sha1 AAAA', 'sha1 not-base64!', `sha1 ${digest.toString('base64')} x`]) {
    assert.equal(parseUploadChecksum(raw).ok, false, raw);
  }
  const unsupported = parseUploadChecksum(`crc32 ${digest.toString('base64')}`);
  assert.ok(!unsupported.ok && /not supported/.test(unsupported.reason));
});

test('parseDeferLength and parseOverwrite accept only their defined values', () => {
  assert.deepEqual(parseDeferLength(undefined), { ok: true, value: false });
  assert.deepEqual(parseDeferLength('1'), { ok: true, value: true });
  for (const v of ['0', 'true', '2', '']) assert.equal(parseDeferLength(v).ok, false, v);
  for (const [v, want] of [[undefined, false], ['', false], ['false', false], ['true', true]] as const) assert.deepEqual(parseOverwrite(v), { ok: true, value: want });
  for (const v of ['yes', '1', 'TRUE']) assert.equal(parseOverwrite(v).ok, false, v);
});
