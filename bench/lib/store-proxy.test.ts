import assert from 'node:assert/strict';
import { test } from 'node:test';
import { requestReader, s3Operation } from './store-proxy.js';

test('a request to the store is named by its S3 operation', () => {
  const rows: [string, string, Record<string, string>, string][] = [
    ['PUT', '/b/fc/alice/a.txt', {}, 'PutObject'],
    ['PUT', '/b/fc/alice/a.txt?x-id=PutObject', {}, 'PutObject'],
    ['PUT', '/b/k?partNumber=1&uploadId=u', {}, 'UploadPart'],
    ['PUT', '/b/k?partNumber=1&uploadId=u', { 'x-amz-copy-source': 'b/s' }, 'UploadPartCopy'],
    ['PUT', '/b/k', { 'x-amz-copy-source': 'b/s' }, 'CopyObject'],
    ['PUT', '/b', {}, 'CreateBucket'],
    ['GET', '/b?list-type=2&prefix=fc%2F&delimiter=%2F', {}, 'ListObjectsV2'],
    ['GET', '/b/?list-type=2', {}, 'ListObjectsV2'],
    ['GET', '/b?uploads&prefix=x', {}, 'ListMultipartUploads'],
    ['GET', '/b/k?uploadId=u', {}, 'ListParts'],
    ['GET', '/b/fc/alice/a.txt', {}, 'GetObject'],
    ['HEAD', '/b/fc/alice/a.txt', {}, 'HeadObject'],
    ['HEAD', '/b', {}, 'HeadBucket'],
    ['POST', '/b/k?uploads', {}, 'CreateMultipartUpload'],
    ['POST', '/b/k?uploadId=u', {}, 'CompleteMultipartUpload'],
    ['POST', '/b?delete', {}, 'DeleteObjects'],
    ['DELETE', '/b/k?uploadId=u', {}, 'AbortMultipartUpload'],
    ['DELETE', '/b/k', {}, 'DeleteObject'],
  ];
  for (const [method, target, headers, want] of rows) assert.equal(s3Operation(method, target, headers), want, `${method} ${target}`);
});

test('requests on one connection are counted once each, whatever the chunks and bodies', () => {
  const bodyLooksLikeAHead = 'GET /b/k HTTP/1.1\r\n\r\n';
  const stream = Buffer.from(
    `PUT /b/a HTTP/1.1\r\nHost: x\r\nContent-Length: ${bodyLooksLikeAHead.length}\r\n\r\n${bodyLooksLikeAHead}` +
      'HEAD /b/a HTTP/1.1\r\nHost: x\r\n\r\n' +
      'PUT /b/c HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n' +
      'GET /b?list-type=2 HTTP/1.1\r\n\r\n',
  );
  for (const size of [1, 3, 7, stream.length]) {
    const seen: string[] = [];
    const read = requestReader((op) => seen.push(op));
    for (let i = 0; i < stream.length; i += size) read(stream.subarray(i, i + size));
    assert.deepEqual(seen, ['PutObject', 'HeadObject', 'PutObject', 'ListObjectsV2'], `chunks of ${size}`);
  }
});
