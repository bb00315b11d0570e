import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import Fastify, { type FastifyReply } from 'fastify';
import SwaggerParser from '@apidevtools/swagger-parser';
import { readFile } from 'node:fs/promises';
import { startApp, type TestApp } from '../helpers/app.js';
import { currentIndex, endpointIndex, unknownHeadings } from '../../src/http/openapi-markdown.js';
import { postJson } from '../helpers/client.js';
import { installRouteTable, type Answer } from '../../src/app/route-table.js';
import { answerChecker } from '../helpers/answer-check.js';
import { documentOperations, openApiDocument, openApiPath, schemaProblems, type RouteRecord } from '../../src/http/openapi.js';
import { COMPONENTS, errors, json, type RouteSchema } from '../../src/http/schemas.js';

type Doc = { openapi: string; servers: { url: string }[]; paths: Record<string, Record<string, unknown>>; components: Record<string, unknown> };

let t: TestApp;
let based: TestApp;
before(async () => {
  // Every optional route on (--metrics), and a second app under a base path.
  t = await startApp({ flags: { metrics: true }, users: ['alice'] });
  based = await startApp({ flags: { metrics: true, basePath: '/fc' } });
});
after(async () => {
  await t.close();
  await based.close();
});

const fetchDoc = async (app: TestApp): Promise<Doc> => {
  const res = await fetch(`${app.url}/api/openapi.json`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
  return (await res.json()) as Doc;
};

/** `METHOD /path` of every route the app registered, as the document names it; hidden routes apart. */
function registered(app: TestApp): { shown: string[]; hidden: string[] } {
  const shown = new Set<string>();
  const hidden: string[] = [];
  for (const r of app.app.schemaTable) {
    for (const m of r.methods) {
      const op = `${m} ${openApiPath(r.url, app.config.basePath)}`;
      if (r.schema?.hide) hidden.push(`${m} ${r.url}`);
      else shown.add(op);
    }
  }
  return { shown: [...shown].sort(), hidden: hidden.sort() };
}

/**
 * The document with each x-additionalOperations (WebDAV) operation also as a `post` of a path of its own, so the
 * validator, which skips extensions, checks those operations too.
 */
function withExtraOperationsExposed(doc: Doc): Doc {
  const copy = structuredClone(doc);
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries((item['x-additionalOperations'] ?? {}) as Record<string, unknown>)) {
      copy.paths[`${path}/__${method}`] = { post: structuredClone(op) };
    }
  }
  return copy;
}

/** What the validator does not check: path templates vs path parameters, unique operation ids. */
function templateProblems(doc: Doc): string[] {
  const problems: string[] = [];
  const ids = new Set<string>();
  for (const [path, item] of Object.entries(doc.paths)) {
    const template = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]).sort();
    const ops = Object.entries(item).filter(([k]) => k !== 'x-additionalOperations' && k !== 'parameters');
    ops.push(...Object.entries((item['x-additionalOperations'] ?? {}) as Record<string, unknown>));
    for (const [method, op] of ops as [string, { operationId: string; parameters?: { in: string; name: string }[] }][]) {
      const declared = (op.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name).sort();
      if (JSON.stringify(declared) !== JSON.stringify(template)) problems.push(`${method} ${path}: path parameters ${declared.join(',')} vs template ${template.join(',')}`);
      if (ids.has(op.operationId)) problems.push(`${method} ${path}: operationId ${op.operationId} used twice`);
      ids.add(op.operationId);
    }
  }
  return problems;
}

test('GET /api/openapi.json is public and a validator accepts it as OpenAPI 3.1', async () => {
  for (const app of [t, based]) {
    const doc = await fetchDoc(app);
    assert.equal(doc.openapi, '3.1.0');
    // The validator dereferences in place: give it a copy.
    await SwaggerParser.validate(withExtraOperationsExposed(doc) as never);
    assert.deepEqual(templateProblems(doc), []);
  }
});

test('the validator and the template check refuse broken documents (they can fail)', async () => {
  const doc = await fetchDoc(t);
  const noDescription = structuredClone(doc);
  noDescription.paths['/x'] = { get: { operationId: 'x', responses: { 200: {} } } };
  await assert.rejects(SwaggerParser.validate(noDescription as never), /description/);
  const badWebDav = structuredClone(doc);
  ((badWebDav.paths['/dav/{path}'] as Record<string, Record<string, { responses: unknown }>>)['x-additionalOperations'] as Record<string, { responses: unknown }>).PROPFIND!.responses = { 207: {} };
  await assert.rejects(SwaggerParser.validate(withExtraOperationsExposed(badWebDav) as never), /description/);
  const undeclared = structuredClone(doc);
  undeclared.paths['/y/{id}'] = { get: { operationId: 'y', responses: { 200: { description: 'y' } } } };
  assert.deepEqual(templateProblems(undeclared), ['get /y/{id}: path parameters  vs template id']);
});

test('every route the server registered has a complete schema (completeness check names route and gap)', () => {
  for (const app of [t, based]) assert.deepEqual(schemaProblems(app.app.schemaTable), [], 'routes with schema gaps (see src/http/schemas.ts for how to declare one)');
});

test('every route and method the server registered is in the document, and nothing else is', async () => {
  for (const app of [t, based]) {
    const doc = await fetchDoc(app);
    const { shown } = registered(app);
    assert.ok(shown.length > 50, `only ${shown.length} operations registered?`);
    assert.deepEqual(documentOperations(doc), shown);
  }
});

test('the document follows the app: the base path is the server URL, /metrics only with --metrics', async () => {
  const plain = await fetchDoc(t);
  const fc = await fetchDoc(based);
  assert.deepEqual(plain.servers.map((s) => s.url), ['/']);
  assert.deepEqual(fc.servers.map((s) => s.url), ['/fc']);
  assert.deepEqual(Object.keys(fc.paths), Object.keys(plain.paths), 'the same paths, relative to the server URL');
  assert.ok(!Object.keys(fc.paths).some((p) => p.startsWith('/fc')));
  // Only the base path's own redirect is left out (it is the server URL itself).
  assert.deepEqual(registered(based).hidden, ['GET /fc', 'HEAD /fc']);
  assert.deepEqual(registered(t).hidden, []);
  const noMetrics = await startApp({});
  try {
    const doc = await fetchDoc(noMetrics);
    assert.ok(!('/metrics' in doc.paths));
    assert.ok('/metrics' in plain.paths);
  } finally {
    await noMetrics.close();
  }
});

test('operations carry their security: bearer, path token, WebDAV Basic, share cookie, public', async () => {
  const doc = await fetchDoc(t);
  const op = (path: string, method: string) => {
    const item = doc.paths[path] as Record<string, Record<string, unknown>>;
    return (item[method] ?? (item['x-additionalOperations'] as Record<string, Record<string, unknown>>)[method.toUpperCase()]) as { security: unknown[]; responses: Record<string, { content?: Record<string, unknown> }> };
  };
  assert.deepEqual(op('/storage/{path}', 'get').security, [{ bearerAuth: [] }, { pathToken: [] }]);
  assert.deepEqual(op('/storage/{path}', 'put').security, [{ bearerAuth: [] }]);
  assert.deepEqual(op('/api/stats', 'get').security, [{ bearerAuth: [] }]);
  assert.deepEqual(op('/auth/login', 'post').security, []);
  assert.deepEqual(op('/api/openapi.json', 'get').security, []);
  assert.deepEqual(op('/dav/{path}', 'PROPFIND').security, [{ basicAuth: [] }, { bearerAuth: [] }]);
  assert.deepEqual(op('/share/{path}', 'get').security, [{}, { shareCookie: [] }]);
  // Errors share one component; HEAD answers have no body.
  assert.deepEqual(op('/api/stats', 'get').responses['401']?.content, { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } });
  assert.equal(op('/storage/{path}', 'head').responses['200']?.content, undefined);
  // Bodies that are not JSON are described by their media types.
  const put = op('/storage/{path}', 'put') as unknown as { requestBody: { content: Record<string, unknown> } };
  assert.deepEqual(Object.keys(put.requestBody.content).sort(), ['*/*', 'multipart/form-data']);
  const patch = op('/tus/{id}', 'patch') as unknown as { requestBody: { content: Record<string, unknown> } };
  assert.deepEqual(Object.keys(patch.requestBody.content), ['application/offset+octet-stream']);
  const propfind = op('/dav/{path}', 'PROPFIND') as unknown as { requestBody: { content: Record<string, unknown> } };
  assert.deepEqual(Object.keys(propfind.requestBody.content), ['application/xml']);
});

// ---- The completeness check itself, on a throwaway app: it must fail for a route without (enough) schema.

async function throwaway(
  register: (app: ReturnType<typeof Fastify>) => void,
  checkAnswer?: (answer: Answer) => void,
): Promise<{ routes: RouteRecord[]; app: ReturnType<typeof Fastify> }> {
  const app = Fastify();
  const routes = installRouteTable(app, { checkAnswer });
  register(app);
  await app.ready();
  return { routes, app };
}

const good: RouteSchema = { summary: 'A thing', tags: ['Things'], response: { 200: json('The thing.', { type: 'object' }), ...errors({ 404: 'No thing.' }) } };

test('the completeness check reports a route without a schema, naming it', async () => {
  const { routes, app } = await throwaway((app) => {
    app.get('/fine', { schema: good }, async () => ({}));
    app.get('/api/no-schema', async () => ({}));
  });
  try {
    const problems = schemaProblems(routes);
    assert.equal(problems.length, 2, problems.join('\n'));
    assert.ok(problems.every((p) => /^(GET|HEAD) \/api\/no-schema: no schema/.test(p)), problems.join('\n'));
    // And the document leaves it out, so the route-vs-document comparison fails too.
    const ops = documentOperations(openApiDocument(routes, { basePath: '', version: '0', components: COMPONENTS }) as never);
    assert.deepEqual(ops, ['GET /fine', 'HEAD /fine']);
  } finally {
    await app.close();
  }
});

test('the completeness check reports each gap of a partial schema', async () => {
  const { routes, app } = await throwaway((app) => {
    app.get('/a/:id', { schema: { summary: '', tags: [], response: { 200: json('ok', {}) } } as RouteSchema }, async () => ({}));
    app.delete('/b/*', { config: { auth: ['user'] }, schema: { summary: 'B', tags: ['B'], response: { 204: { description: '' }, ...errors({ 404: 'No.' }) } } as RouteSchema }, async () => ({}));
    app.post('/c', { config: { auth: ['user', 'magic' as never] }, schema: { summary: 'C', tags: ['C'], response: { 201: json('ok', {}), ...errors({ 401: 'No.' }) } } }, async () => ({}));
  });
  try {
    const problems = schemaProblems(routes.filter((r) => !r.methods.includes('HEAD')));
    assert.deepEqual(problems.sort(), [
      'DELETE /b/*: path parameter "*" is not described in schema.params.properties',
      'DELETE /b/*: schema.response[204] has no description',
      'GET /a/:id: no error answer (4xx/5xx) in schema.response (use errors({...}) from src/http/schemas.ts)',
      'GET /a/:id: no schema.summary',
      'GET /a/:id: no schema.tags',
      'GET /a/:id: path parameter "id" is not described in schema.params.properties',
      'POST /c: config.auth kind "magic" has no security scheme (AUTH_SCHEMES in src/http/openapi.ts)',
    ]);
  } finally {
    await app.close();
  }
});

// ---- Schemas are documentation: they change no answer.

test('a schema neither validates requests nor strips response fields', async () => {
  const strict: RouteSchema = {
    summary: 'Strict',
    tags: ['T'],
    body: { type: 'object', required: ['n'], additionalProperties: false, properties: { n: { type: 'integer' } } },
    querystring: { type: 'object', properties: { q: { type: 'integer' } } },
    response: { 200: json('Only a.', { type: 'object', additionalProperties: false, properties: { a: { type: 'integer' } } }), ...errors({ 400: 'Bad.' }) },
  };
  const { app } = await throwaway((app) => {
    app.post('/x', { schema: strict }, async (request: { body: unknown; query: unknown }) => ({ a: 1, b: 'kept', body: request.body, query: request.query }));
  });
  try {
    const res = await app.inject({ method: 'POST', url: '/x?q=notanumber', payload: { n: 'str', extra: true } });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { a: 1, b: 'kept', body: { n: 'str', extra: true }, query: { q: 'notanumber' } });
  } finally {
    await app.close();
  }
});

test('bad input still gets the contract answers of the handlers, not schema validation messages', async () => {
  const cases: [string, string | object, number, string, RegExp][] = [
    ['/auth/login', '{not json', 400, 'invalid_json', /not valid JSON/],
    ['/auth/login', { username: 'alice' }, 400, 'bad_request', /"password" is required/],
    ['/auth/login', { username: 1, password: 'x' }, 400, 'bad_request', /"username" must be a string/],
    ['/auth/refresh', [], 400, 'bad_request', /JSON object/],
    ['/storage/alice/', { nope: 1 }, 401, 'unauthorized', /.+/],
  ];
  for (const [path, body, status, code, message] of cases) {
    const res = await postJson(`${t.url}${path}`, body);
    assert.equal(res.status, status, `${path} ${JSON.stringify(body)}`);
    const got = (await res.json()) as { error: string; message: string };
    assert.deepEqual(Object.keys(got).sort(), ['error', 'message']);
    assert.equal(got.error, code);
    assert.match(got.message, message);
  }
  const { access_token } = await t.login('alice');
  const res = await postJson(`${t.url}/storage/alice/`, { action: 'Nope', extra: 1 }, { authorization: `Bearer ${access_token}` });
  assert.equal(res.status, 400);
  assert.equal(((await res.json()) as { error: string }).error, 'unknown_action');
});

// ---- docs/api.md is checked against the document.

const apiMd = () => readFile(new URL('../../../docs/api.md', import.meta.url), 'utf8');

test('docs/api.md has the endpoint index of the current document (npm run docs:api)', async () => {
  const doc = await fetchDoc(t);
  assert.equal(currentIndex(await apiMd()), endpointIndex(doc), 'docs/api.md is out of date with the routes: run `npm run build && npm run docs:api`');
});

test('every endpoint heading of docs/api.md names an operation of the document', async () => {
  const doc = await fetchDoc(t);
  const md = await apiMd();
  assert.ok(md.split('\n').filter((l) => /^###\s+[A-Z]+\s/.test(l)).length > 15, 'the headings are read at all');
  assert.deepEqual(unknownHeadings(md, doc), []);
  // The check can fail: an endpoint that does not exist, and a method a real path lacks.
  const bad = `${md}\n### GET /api/nothing-here\n### PATCH /api/shares/<id> — edit\n### GET / HEAD /share/<id>/[<sub/path>]\n`;
  assert.deepEqual(unknownHeadings(bad, doc), [
    '"### GET /api/nothing-here": no GET /api/nothing-here in the OpenAPI document',
    '"### PATCH /api/shares/<id> — edit": no PATCH /api/shares/x in the OpenAPI document',
  ]);
});

// ---- Route tests check every answer against its schema (test/helpers/answer-check.ts, wired into startApp).

test('the answer check reports undocumented statuses, bodies and fields that do not match', async () => {
  const answers = answerChecker();
  const thing = { type: 'object', required: ['n'], properties: { n: { type: 'integer' } } };
  const { app } = await throwaway((app) => {
    app.get('/ok', { schema: { ...good, response: { 200: json('A thing.', thing), ...errors({ 404: 'No.' }) } } }, async () => ({ n: 1, extra: 'fine' }));
    app.get('/wrong-body', { schema: { ...good, response: { 200: json('A thing.', thing), ...errors({ 404: 'No.' }) } } }, async () => ({ n: 'one' }));
    app.get('/teapot', { schema: good }, async (_request: unknown, reply: FastifyReply) => reply.code(418).send({ error: 'teapot', message: 'No.' }));
    app.get('/empty', { schema: { ...good, response: { 204: { description: 'Nothing.' }, ...errors({ 404: 'No.' }) } } }, async (_request: unknown, reply: FastifyReply) => reply.code(204).type('text/plain').send('surprise'));
    app.get('/html', { schema: good }, async (_request: unknown, reply: FastifyReply) => reply.type('text/html').send('<p>'));
  }, answers.check);
  try {
    for (const url of ['/ok', '/wrong-body', '/teapot', '/empty', '/html']) await app.inject({ method: 'GET', url });
    assert.equal(answers.problems.length, 4, answers.problems.join('\n'));
    assert.match(answers.problems[0] ?? '', /^GET \/wrong-body answered 200: the body does not match its schema: data\/n must be integer/);
    assert.match(answers.problems[1] ?? '', /^GET \/teapot answered 418, which its schema.response does not document/);
    assert.match(answers.problems[2] ?? '', /^GET \/empty answered 204 with a text\/plain body, but its schema documents no body/);
    assert.match(answers.problems[3] ?? '', /^GET \/html answered 200 with text\/html, but its schema documents application\/json/);
  } finally {
    await app.close();
  }
});
