/**
 * The malformed-input corpus of issue 6: hostile requests, byte for byte.
 * Each entry must get a 4xx with the contract's `{error, message}` body
 * (an exact status where one is certain), and the server must keep serving.
 */
export type Ctx = { token: string; refresh: string; user: string };
export type Case = { name: string; request: (c: Ctx) => Buffer | Buffer[]; status?: number };

const MB = 1024 * 1024;

/** A request with Host and Connection: close; Content-Length added for a body unless given. */
export function req(method: string, path: string, headers: string[] = [], body?: string | Buffer): Buffer {
  const b = body === undefined ? undefined : Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8');
  const hasLength = headers.some((h) => /^(content-length|transfer-encoding):/i.test(h));
  const lines = [`${method} ${path} HTTP/1.1`, 'Host: 127.0.0.1', 'Connection: close', ...headers];
  if (b && !hasLength) lines.push(`Content-Length: ${b.length}`);
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), b ?? Buffer.alloc(0)]);
}

const json = ['Content-Type: application/json'];
const auth = (c: Ctx) => [`Authorization: Bearer ${c.token}`];
const post = (path: string, body: string | Buffer, extra: (c: Ctx) => string[] = () => []) => (c: Ctx) => req('POST', path.replace('{u}', c.user), [...json, ...extra(c)], body);

/** Broken or mistyped JSON, sent to login, refresh, logout and a storage POST action. */
const BROKEN_JSON = [
  '{', '}', '{"username":', '{"username":"a",}', "{'username':'a'}", 'nul', 'undefined', '[', '{"a":1}{"b":2}', '\u0000',
  '{"username":"a","password":"b"', '\uFEFF{"username":"a"}x', '{"username":"a\\x"}', '{"username":"\\uD800"', '01', 'NaN',
];
const WRONG_TYPES = [
  '[]', '"string"', '123', 'true', 'null', '{}', '{"username":1,"password":"x"}', '{"username":"a","password":null}',
  '{"username":["a"],"password":"b"}', '{"username":{"$ne":null},"password":{"$ne":null}}', '{"username":"a","password":true}',
  '{"username":"a","refresh_token":42}', '{"__proto__":{"username":"x"},"password":"p"}', '{"constructor":{"prototype":{"admin":true}}}',
];
const ACTIONS = [
  '{}', '{"action":1}', '{"action":null}', '{"action":["Move"]}', '{"action":"move"}', '{"action":"Delete"}', '{"action":"__proto__"}',
  '{"action":"Move"}', '{"action":"Move","new_path":1}', '{"action":"Move","new_path":"/bob/x.txt"}', '{"action":"Move","new_path":"../x"}',
  '{"action":"Move","new_path":"/{u}/../../x"}', '{"action":"Move","new_path":"/{u}/a\\u0000b"}', '{"action":"Move","new_path":"/{u}/a\\\\b"}',
  '{"action":"Move","new_path":"/{u}/"}', '{"action":"Move","new_path":""}', '{"action":"Move","new_path":"/{u}/f.txt","overwrite":"yes"}',
  '{"action":"MakePathToken","valid_for_seconds":"60"}', '{"action":"MakePathToken","valid_for_seconds":1e309}', '{"action":"MakePathToken","valid_for_seconds":-1}',
  '{"action":"CreateFolder"}', '[{"action":"CreateFolder"}]',
];

const boundary = 'XbOuNdArY';
const mp = (parts: string, type = `multipart/form-data; boundary=${boundary}`) => (c: Ctx) =>
  req('PUT', `/storage/${c.user}/up/`, [...auth(c), `Content-Type: ${type}`], parts);
const part = (disposition: string, content = 'x') => `--${boundary}\r\nContent-Disposition: form-data; ${disposition}\r\nContent-Type: text/plain\r\n\r\n${content}\r\n`;
const end = `--${boundary}--\r\n`;
const fileNamed = (name: string) => mp(part(`name="f"; filename="${name}"`) + end);

const manyHeaders = (n: number, size = 20) => Array.from({ length: n }, (_, i) => `X-Junk-${i}: ${'v'.repeat(size)}`);

export const CORPUS: Case[] = [
  ...BROKEN_JSON.flatMap((b, i): Case[] => [
    { name: `login broken JSON #${i}`, request: post('/auth/login', b), status: 400 },
    { name: `refresh broken JSON #${i}`, request: post('/auth/refresh', b), status: 400 },
    { name: `storage POST broken JSON #${i}`, request: post('/storage/{u}/f.txt', b, auth), status: 400 },
  ]),
  ...WRONG_TYPES.flatMap((b, i): Case[] => [
    { name: `login wrong types #${i}`, request: post('/auth/login', b), status: 400 },
    { name: `logout wrong types #${i}`, request: post('/auth/logout', b), status: 400 },
  ]),
  ...ACTIONS.map((b, i): Case => ({ name: `storage action #${i} ${b.slice(0, 40)}`, request: (c) => post('/storage/{u}/f.txt', b.replace('{u}', c.user), auth)(c) })),
  { name: 'login with deeply nested JSON', request: post('/auth/login', '['.repeat(20_000) + ']'.repeat(20_000)), status: 400 },
  { name: 'login with 10 MB JSON', request: post('/auth/login', `{"username":"${'a'.repeat(10 * MB)}","password":"x"}`), status: 413 },
  { name: 'refresh with 10 MB JSON', request: post('/auth/refresh', `{"username":"a","refresh_token":"${'a'.repeat(10 * MB)}"}`), status: 413 },
  { name: 'storage POST with 10 MB JSON', request: post('/storage/{u}/f.txt', `{"action":"CreateFolder","pad":"${'a'.repeat(10 * MB)}"}`, auth), status: 413 },
  { name: 'unauthenticated 10 MB PUT', request: () => req('PUT', '/storage/alice/big.bin', ['Content-Type: application/octet-stream'], Buffer.alloc(10 * MB, 1)), status: 401 },
  { name: '10 MB multipart without boundary', request: (c) => req('PUT', `/storage/${c.user}/up/`, [...auth(c), 'Content-Type: multipart/form-data'], Buffer.alloc(10 * MB, 45)), status: 400 },
  { name: 'login as text/plain', request: () => req('POST', '/auth/login', ['Content-Type: text/plain'], '{"username":"a","password":"b"}') },
  { name: 'login as form data', request: () => req('POST', '/auth/login', ['Content-Type: application/x-www-form-urlencoded'], 'username=a&password=b') },
  { name: 'login without a body', request: () => req('POST', '/auth/login', json) },
  { name: 'multipart without boundary', request: mp(part('name="f"; filename="a.txt"') + end, 'multipart/form-data'), status: 400 },
  { name: 'multipart with empty boundary', request: mp(part('name="f"; filename="a.txt"') + end, 'multipart/form-data; boundary='), status: 400 },
  { name: 'multipart with another boundary than declared', request: mp(part('name="f"; filename="a.txt"') + end, 'multipart/form-data; boundary=other'), status: 400 },
  { name: 'multipart truncated in a part', request: mp(`--${boundary}\r\nContent-Disposition: form-data; name="f"; filename="t.txt"\r\n\r\nhalf a fi`), status: 400 },
  { name: 'multipart truncated in the part headers', request: mp(`--${boundary}\r\nContent-Disposition: form-da`), status: 400 },
  { name: 'multipart with no parts at all', request: mp(end), status: 400 },
  { name: 'multipart with an empty body', request: mp(''), status: 400 },
  { name: 'multipart parts without filename', request: mp(part('name="a"') + part('name="b"') + end), status: 400 },
  { name: 'multipart part without Content-Disposition', request: mp(`--${boundary}\r\nContent-Type: text/plain\r\n\r\nx\r\n${end}`), status: 400 },
  { name: 'multipart garbage instead of parts', request: mp('this is not multipart at all'), status: 400 },
  ...['..', 'x/..', '../', '/', 'dir/', 'a\\..', '.', 'a\u0000b', 'n'.repeat(300), 'é'.repeat(150)].map((n): Case => ({
    name: `multipart filename ${JSON.stringify(n.length > 20 ? `${n.slice(0, 10)}…(${Buffer.byteLength(n)} bytes)` : n)}`,
    request: fileNamed(n),
    status: 400,
  })),
  { name: 'multipart filename* with an encoded ..', request: mp(part(`name="f"; filename*=UTF-8''%2E%2E`) + end), status: 400 },
  { name: 'multipart valid file then a bad filename', request: mp(part('name="f"; filename="ok.txt"') + part('name="f"; filename=".."') + end), status: 400 },
  { name: 'path with %FF', request: (c) => req('GET', `/storage/${c.user}/%FF`, auth(c)), status: 400 },
  { name: 'path with overlong %C0%AE%C0%AE', request: (c) => req('GET', `/storage/${c.user}/%C0%AE%C0%AE/x`, auth(c)), status: 400 },
  { name: 'path with a lone surrogate %ED%A0%80', request: (c) => req('GET', `/storage/${c.user}/%ED%A0%80`, auth(c)), status: 400 },
  { name: 'path with a truncated escape', request: (c) => req('GET', `/storage/${c.user}/a%E`, auth(c)), status: 400 },
  { name: 'path with raw invalid UTF-8 bytes', request: (c) => Buffer.concat([Buffer.from(`GET /storage/${c.user}/`), Buffer.from([0xff, 0xfe, 0xc0, 0xae]), Buffer.from(` HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer ${c.token}\r\n\r\n`)]) },
  { name: 'path with %00', request: (c) => req('GET', `/storage/${c.user}/a%00b`, auth(c)), status: 400 },
  { name: 'path with %2e%2e traversal', request: (c) => req('GET', `/storage/${c.user}/%2e%2e/%2e%2e/etc/passwd`, auth(c)), status: 400 },
  { name: 'PUT to a path with %5C', request: (c) => req('PUT', `/storage/${c.user}/a%5Cb`, auth(c), 'x'), status: 400 },
  { name: 'DELETE with //', request: (c) => req('DELETE', `/storage/${c.user}//x`, auth(c)), status: 400 },
  { name: 'path of 5000 bytes', request: (c) => req('GET', `/storage/${c.user}/${'a/'.repeat(2500)}`, auth(c)), status: 400 },
  { name: 'a 300-byte name in the path', request: (c) => req('PUT', `/storage/${c.user}/${'n'.repeat(300)}`, auth(c), 'x'), status: 400 },
  { name: '100 headers, no token', request: () => req('GET', '/storage/alice/x.txt', manyHeaders(100)), status: 401 },
  { name: '100 headers, missing file', request: (c) => req('GET', `/storage/${c.user}/missing.txt`, [...auth(c), ...manyHeaders(100)]), status: 404 },
  { name: '2500 headers', request: () => req('GET', '/api/stats', manyHeaders(2500, 1)) },
  { name: 'one 64 KiB header', request: () => req('GET', '/api/stats', [`X-Big: ${'a'.repeat(64 * 1024)}`]), status: 431 },
  { name: 'headers totalling 1 MB', request: () => req('GET', '/api/stats', manyHeaders(1000, 1000)), status: 431 },
  { name: 'a 20 KiB URL', request: () => req('GET', `/storage/alice/${'a'.repeat(20 * 1024)}`), status: 431 },
  { name: '10 KiB bearer token', request: () => req('GET', '/api/stats', [`Authorization: Bearer fca_${'a'.repeat(10 * 1024)}`]), status: 401 },
  { name: 'bearer without token', request: () => req('GET', '/api/stats', ['Authorization: Bearer']), status: 401 },
  { name: 'two Authorization headers, the first valid', request: (c) => req('GET', '/api/stats', [...auth(c), 'Authorization: Bearer x']), status: 400 },
  { name: 'non-ASCII bytes in Authorization', request: () => Buffer.concat([Buffer.from('GET /api/stats HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer '), Buffer.from([0xc3, 0xa9, 0xff]), Buffer.from('\r\n\r\n')]), status: 401 },
  { name: 'malformed path token', request: (c) => req('GET', `/storage/${c.user}/f.txt?token=fcp1.abc.def`), status: 401 },
  { name: 'two path tokens', request: (c) => req('GET', `/storage/${c.user}/f.txt?token=a&token=b`), status: 401 },
  { name: 'path token with a 10 KiB signature', request: (c) => req('GET', `/storage/${c.user}/f.txt?token=fcp1.9999999999.${'A'.repeat(10 * 1024)}`), status: 401 },
  { name: 'path token with a huge expiry', request: (c) => req('GET', `/storage/${c.user}/f.txt?token=fcp1.${'9'.repeat(400)}.AAAA`), status: 401 },
  { name: 'unknown method', request: () => req('FOO', '/api/stats'), status: 400 },
  { name: 'method in lower case', request: () => req('get', '/api/stats'), status: 400 },
  { name: 'PATCH on storage', request: (c) => req('PATCH', `/storage/${c.user}/f.txt`, auth(c), 'x'), status: 405 },
  { name: 'missing Host header', request: () => Buffer.from('GET /api/stats HTTP/1.1\r\nConnection: close\r\n\r\n'), status: 400 },
  { name: 'header without a colon', request: () => Buffer.from('GET /api/stats HTTP/1.1\r\nHost: x\r\nConnection: close\r\nno colon here\r\n\r\n'), status: 400 },
  { name: 'space before the header colon', request: () => Buffer.from('GET /api/stats HTTP/1.1\r\nHost: x\r\nConnection : close\r\n\r\n'), status: 400 },
  { name: 'NUL in a header value', request: () => Buffer.from('GET /api/stats HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-A: a\0b\r\n\r\n'), status: 400 },
  { name: 'bare LF line endings with an obs-fold', request: () => Buffer.from('GET /api/stats HTTP/1.1\nHost: x\n folded\nConnection: close\n\n'), status: 400 },
  { name: 'non-numeric Content-Length', request: () => req('POST', '/auth/login', [...json, 'Content-Length: abc'], '{}'), status: 400 },
  { name: 'negative Content-Length', request: () => req('POST', '/auth/login', [...json, 'Content-Length: -1'], '{}'), status: 400 },
  { name: 'two different Content-Lengths', request: () => req('POST', '/auth/login', [...json, 'Content-Length: 2', 'Content-Length: 3'], '{}'), status: 400 },
  { name: 'Content-Length and Transfer-Encoding (smuggling)', request: () => req('POST', '/auth/login', [...json, 'Content-Length: 4', 'Transfer-Encoding: chunked'], '0\r\n\r\nGET /api/stats HTTP/1.1\r\nHost: x\r\n\r\n'), status: 400 },
  { name: 'invalid chunk size', request: () => req('POST', '/auth/login', [...json, 'Transfer-Encoding: chunked'], 'zz\r\n{}\r\n0\r\n\r\n'), status: 400 },
  { name: 'Transfer-Encoding other than chunked', request: () => req('POST', '/auth/login', [...json, 'Transfer-Encoding: gzip'], '{}'), status: 400 },
  { name: 'HTTP/2.0 request line', request: () => Buffer.from('GET /api/stats HTTP/2.0\r\nHost: x\r\nConnection: close\r\n\r\n'),  },
  { name: 'garbage instead of HTTP', request: () => Buffer.from('\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03 not http\r\n\r\n', 'latin1'), status: 400 },
  { name: 'absolute-form request target', request: (c) => req('GET', `http://evil.example/storage/${c.user}/%2e%2e/x`, auth(c)) },
  { name: 'GET /storage/<user> without slash', request: (c) => req('GET', `/storage/${c.user}`, auth(c)), status: 404 },
  { name: 'DELETE the root', request: (c) => req('DELETE', `/storage/${c.user}/`, auth(c)), status: 400 },
  { name: 'Range with a huge start', request: (c) => req('GET', `/storage/${c.user}/f.txt`, [...auth(c), `Range: bytes=${'9'.repeat(40)}-`]), status: 416 },
];
