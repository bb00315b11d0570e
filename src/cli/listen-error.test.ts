import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeListenError } from './listen-error.js';

test('describeListenError names the address, the cause and the option that fixes it', () => {
  const cases: [code: string | undefined, host: string, port: number, expected: RegExp | undefined][] = [
    ['EADDRINUSE', '127.0.0.1', 8080, /^cannot listen on 127\.0\.0\.1:8080: the port is already in use .*--port$/],
    ['EACCES', '0.0.0.0', 80, /^cannot listen on 0\.0\.0\.0:80: permission denied .*--port 1024/],
    ['EADDRNOTAVAIL', '::1', 9000, /^cannot listen on \[::1\]:9000: this machine has no such address; check --host/],
    ['ECONNRESET', '127.0.0.1', 1, undefined],
    [undefined, '127.0.0.1', 1, undefined],
  ];
  for (const [code, host, port, expected] of cases) {
    const e = Object.assign(new Error('x'), code === undefined ? {} : { code });
    const got = describeListenError(e, host, port);
    if (expected === undefined) assert.equal(got, undefined, String(code));
    else assert.match(got ?? '', expected, String(code));
  }
});
