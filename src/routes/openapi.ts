import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { openApiDocument, type RouteRecord } from '../http/openapi.js';
import { ANY_ROUTE, COMPONENTS, errors, json, type RouteSchema } from '../http/schemas.js';

const VERSION = (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

const schema: RouteSchema = {
  summary: 'The OpenAPI 3.1 document of this server',
  description: 'Generated from the schemas of the routes this server registered (so it follows --base-path and --metrics). Public: it describes the API, not anyone\'s data.',
  tags: ['Meta'],
  response: {
    200: json('The OpenAPI 3.1 document.', { type: 'object', required: ['openapi', 'info', 'paths'], properties: { openapi: { type: 'string', const: '3.1.0' }, info: { type: 'object' }, paths: { type: 'object' } } }),
    ...errors({ 400: 'Malformed request (no Host header, a bad URL).' }),
  },
};

/** GET /api/openapi.json: built once, on the first request, when every route is registered. */
export function openApiRoutes(app: FastifyInstance, deps: { routes: readonly RouteRecord[]; basePath: string }): void {
  let body: string | undefined;
  app.get('/api/openapi.json', { config: { access: { who: 'public' } }, schema }, async (_request, reply) => {
    body ??= JSON.stringify(openApiDocument(deps.routes, { basePath: deps.basePath, version: VERSION, components: COMPONENTS, anyRoute: ANY_ROUTE }));
    return reply.type('application/json; charset=utf-8').header('cache-control', 'no-cache').send(body);
  });
}
