import { test } from 'node:test';
import assert from 'node:assert/strict';
import { credentialAnswers, openApiDocument, openApiPath, pathParams, type RouteRecord } from './openapi.js';
import { endpointIndex, unknownHeadings, withEndpointIndex, currentIndex } from './openapi-markdown.js';
import type { RouteSchema } from './schemas.js';

test('openApiPath turns Fastify patterns into OpenAPI templates relative to the base path', () => {
  const rows: [string, string, string][] = [
    ['/storage/*', '', '/storage/{path}'],
    ['/fc/storage/*', '/fc', '/storage/{path}'],
    ['/tus/:id', '', '/tus/{id}'],
    ['/fc/tus/:id', '/fc', '/tus/{id}'],
    ['/a/:n(^\\d+$)/b', '', '/a/{n}/b'],
    ['/*', '', '/{path}'],
    ['/fc/*', '/fc', '/{path}'],
    ['/fc', '/fc', '/'],
    ['/fcx/api', '/fc', '/fcx/api'],
    ['/tus/', '', '/tus/'],
  ];
  for (const [url, base, want] of rows) assert.equal(openApiPath(url, base), want, `${url} under ${base}`);
});

test('pathParams names the parameters of a pattern, * for a wildcard', () => {
  const rows: [string, string[]][] = [
    ['/api/stats', []],
    ['/api/shares/:id', ['id']],
    ['/a/:x/b/:y', ['x', 'y']],
    ['/storage/*', ['*']],
    ['/a/:n(^\\d+$)', ['n']],
  ];
  for (const [url, want] of rows) assert.deepEqual(pathParams(url), want, url);
});

const schema = (summary: string): RouteSchema => ({ summary, tags: ['T'], response: { 200: { description: 'ok' }, 404: { description: 'no' } } });
const route = (methods: string[], url: string, s: RouteSchema | undefined, auth?: string[]): RouteRecord => ({ methods, url, schema: s, auth, hideOnAuthFailure: false });

test('the document has one operation per method, HEAD without bodies, WebDAV methods as x-additionalOperations', () => {
  const get = { ...schema('Get'), response: { 200: { description: 'ok', content: { 'application/json': { schema: { type: 'object' } } } }, 404: { description: 'no' } } };
  const doc = openApiDocument(
    [
      route(['GET'], '/x/:id', get, ['user']),
      route(['HEAD'], '/x/:id', get, ['user']),
      route(['PROPFIND'], '/x/:id', schema('Props')),
      route(['GET'], '/hidden', { ...schema('H'), hide: true }),
      route(['GET'], '/none', undefined),
    ],
    { basePath: '', version: '1', components: {} },
  ) as { paths: Record<string, Record<string, { summary: string; operationId: string; security: unknown; responses: Record<string, { content?: unknown }> }>> };
  assert.deepEqual(Object.keys(doc.paths), ['/x/{id}']);
  const item = doc.paths['/x/{id}']!;
  assert.deepEqual(Object.keys(item), ['get', 'head', 'x-additionalOperations']);
  assert.equal(item.head!.summary, 'Get (headers only)');
  assert.equal(item.head!.responses['200']!.content, undefined);
  assert.ok(item.get!.responses['200']!.content);
  assert.deepEqual(item.get!.security, [{ bearerAuth: [] }]);
  assert.notEqual(item.get!.operationId, item.head!.operationId);
  assert.equal((item['x-additionalOperations'] as unknown as Record<string, { summary: string }>).PROPFIND!.summary, 'Props');
});

test('the endpoint index replaces its own section only, and unknown headings are reported', () => {
  const doc = { paths: { '/a/{id}': { get: { summary: 'A', tags: ['T'], security: [] } }, '/s/{path}': { put: { summary: 'S', tags: ['T'], security: [{ bearerAuth: [] }] } } } };
  const md = withEndpointIndex('# API\n\n### GET /a/<id>\ntext\n', doc);
  assert.ok(md.startsWith('# API\n\n### GET /a/<id>\ntext\n\n## Endpoint index\n'));
  assert.equal(currentIndex(md), endpointIndex(doc));
  assert.equal(withEndpointIndex(md, doc), md, 'idempotent');
  assert.match(endpointIndex(doc), /\| T \| `PUT` \| `\/s\/\{path\}` \| S \| bearer \|/);
  assert.deepEqual(unknownHeadings('### GET /a/<id>\n### PUT /s/<user>/<...path>\n### GET|HEAD /a/x\n### GET / HEAD /s/x\n## Storage\n', doc), [
    '"### GET|HEAD /a/x": no HEAD /a/x in the OpenAPI document',
    '"### GET / HEAD /s/x": no GET /s/x in the OpenAPI document',
    '"### GET / HEAD /s/x": no HEAD /s/x in the OpenAPI document',
  ]);
});

test('credentialAnswers: the refusal, 403 for admins only, 403 for app passwords on session-only routes, 403 for read-only keys on writes', () => {
  const rows: [readonly string[] | undefined, boolean, string, string[]][] = [
    [undefined, false, 'GET', []],
    [['user'], false, 'GET', ['401']],
    [['user', 'pathToken'], false, 'HEAD', ['401']],
    [['user'], true, 'PATCH', ['403', '404']],
    [['user'], false, 'PUT', ['401', '403']],
    [['user', 'basic'], false, 'PROPFIND', ['401']],
    [['user', 'basic'], false, 'MKCOL', ['401', '403']],
    [['session'], false, 'GET', ['401', '403']],
    [['admin'], false, 'GET', ['401', '403']],
    [['share'], false, 'GET', []],
    [['cookie'], false, 'POST', []],
  ];
  for (const [auth, hide, method, want] of rows) {
    assert.deepEqual(Object.keys(credentialAnswers({ auth, hideOnAuthFailure: hide }, method)).sort(), want, `${JSON.stringify(auth)} ${method}`);
  }
  assert.match(credentialAnswers({ auth: ['admin'], hideOnAuthFailure: false }, 'DELETE')['403']?.description ?? '', /not an admin; a read-only app password/);
});
