import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isValidUsername } from '../../domain/names.js';
import { copySource, folderPrefix, objectKey, parentFileKeys, resumableArea, resumableRoot, resumableSegmentKey, segmentOffset, segmentsBelow, validFoldersBelow } from './keys.js';
import { parseS3Url, S3LocationError } from './location.js';

const k = (user: string, ...segments: string[]) => ({ user, segments });

test('keys follow the plain layout PREFIX<user>/<path>', () => {
  assert.equal(objectKey('', k('alice', 'a', 'b.txt')), 'alice/a/b.txt');
  assert.equal(objectKey('fc/', k('alice', 'é x', '#%?.txt')), 'fc/alice/é x/#%?.txt');
  assert.equal(folderPrefix('fc/', k('alice')), 'fc/alice/');
  assert.equal(folderPrefix('fc/', k('alice', 'docs')), 'fc/alice/docs/');
  assert.deepEqual(parentFileKeys('p/', k('bob', 'a', 'b', 'c.txt')), ['p/bob/a', 'p/bob/a/b']);
  assert.deepEqual(parentFileKeys('p/', k('bob', 'c.txt')), []);
});

test('segmentsBelow skips keys that are not valid File Cloud paths', () => {
  const rows: [string, ReturnType<typeof segmentsBelow>][] = [
    ['p/alice/a.txt', { segments: ['a.txt'], folder: false }],
    ['p/alice/docs/', { segments: ['docs'], folder: true }],
    ['p/alice/docs/x y.txt', { segments: ['docs', 'x y.txt'], folder: false }],
    ['p/alice/a//b', undefined],
    ['p/alice/x/../y', undefined],
    ['p/alice/./y', undefined],
    ['p/alice/back\\slash', undefined],
    ['p/alice/', undefined],
    ['p/alice//', undefined],
    ['other/alice/a', undefined],
    [`p/alice/${'n'.repeat(256)}`, undefined],
  ];
  for (const [key, want] of rows) assert.deepEqual(segmentsBelow('p/alice/', key), want, key);
});

test('validFoldersBelow keeps the folders a bad key still implies', () => {
  assert.deepEqual(validFoldersBelow('p/', 'p/bad//x'), ['bad']);
  assert.deepEqual(validFoldersBelow('p/', 'p/up/../x'), ['up']);
  assert.deepEqual(validFoldersBelow('p/', 'p/a/b/..'), ['a', 'b']);
  assert.deepEqual(validFoldersBelow('p/', 'p/back\\slash'), []);
  assert.deepEqual(validFoldersBelow('p/', 'q/a/b'), []);
});

test('copySource encodes each segment of the key', () => {
  assert.equal(copySource('b', 'p/alice/a b/ü+%.txt'), 'b/p/alice/a%20b/%C3%BC%2B%25.txt');
});

test('parseS3Url reads bucket, prefix, endpoint, region and path style', () => {
  assert.deepEqual(parseS3Url('s3://my-bucket'), { bucket: 'my-bucket', prefix: '', endpoint: undefined, region: 'us-east-1', pathStyle: false });
  assert.deepEqual(parseS3Url('s3://my-bucket/files/v1/?endpoint=http://127.0.0.1:9000&region=eu-west-1&path_style=true'), {
    bucket: 'my-bucket',
    prefix: 'files/v1/',
    endpoint: 'http://127.0.0.1:9000',
    region: 'eu-west-1',
    pathStyle: true,
  });
  for (const bad of ['http://bucket', 's3://B', 's3://ab', 's3://key:secret@bucket', 's3://bucket/../x', 's3://bucket?endpoint=ftp://x', 's3://bucket?path_style=maybe', 's3://bucket?color=red', 'not a url']) {
    assert.throws(() => parseS3Url(bad), S3LocationError, bad);
  }
});

test('partSizeFor keeps parts at the 8 MiB minimum until a declared length needs bigger ones to fit 9,000 parts', async () => {
  const { partSizeFor, MIN_PART } = await import('./upload.js');
  const MiB = 1024 * 1024;
  assert.equal(partSizeFor(undefined), MIN_PART);
  assert.equal(partSizeFor(1024), MIN_PART);
  assert.equal(MIN_PART, 8 * MiB);
  assert.equal(partSizeFor(64 * 1024 * MiB), MIN_PART);
  assert.equal(partSizeFor(100 * 1024 * MiB), 12 * MiB); // 100 GiB / 9,000 parts = 11.4 MiB, rounded up
  assert.equal(partSizeFor(1024 * 1024 * MiB), 117 * MiB); // 1 TiB / 9,000 parts, rounded up to whole MiB
  assert.ok(partSizeFor(5 * 1024 * 1024 * MiB) * 9000 >= 5 * 1024 * 1024 * MiB);
});

test('resumable staging keys: a reserved area outside every user tree, segments named by offset in order', () => {
  assert.equal(resumableRoot('fc/'), 'fc/.file-cloud/tus/');
  const area = resumableArea('fc/', '0b6f3c52-8f1a-4c1e-9a34-2f0d2b7e9c11');
  assert.equal(area, 'fc/.file-cloud/tus/0b6f3c52-8f1a-4c1e-9a34-2f0d2b7e9c11/');
  assert.equal(isValidUsername('.file-cloud'), false, 'no user tree (PREFIX<user>/) can contain the area');
  assert.equal(resumableSegmentKey(area, 8388608), `${area}0000000008388608`);
  assert.ok(resumableSegmentKey(area, 9) < resumableSegmentKey(area, 10), 'keys sort in offset order');
  assert.equal(segmentOffset(area, resumableSegmentKey(area, 4294967296)), 4294967296);
  for (const k of [`${area}12`, `${area}x000000000000000`, `${area}0000000000000000/x`, 'other/0000000000000000']) assert.equal(segmentOffset(area, k), undefined, k);
});
