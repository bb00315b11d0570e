import type { FastifyInstance } from 'fastify';
import { empty, ErrorBody, errors, json, type RouteSchema } from './schemas.js';

const tokenErrors = errors({ 401: 'No valid access token (`unauthorized`).' });

const healthSchema: RouteSchema = {
  summary: 'Health check for load balancers',
  description: 'No authentication. 200 when this node reaches both its database and its storage, 503 otherwise.',
  tags: ['Meta'],
  response: {
    200: json('Storage and database answer.', { type: 'object', required: ['status'], properties: { status: { type: 'string', const: 'ok' } } }),
    ...errors({ 400: 'Malformed request (no Host header, a bad URL).' }),
    503: json('The database or the storage does not answer; the error body, with `status: "unavailable"` too.', {
      ...ErrorBody,
      required: ['status', 'error', 'message'],
      properties: { status: { type: 'string', const: 'unavailable' }, ...(ErrorBody.properties as object) },
    }),
  },
};

const statsSchema: RouteSchema = {
  summary: 'Server uptime',
  description: 'Access token required; path tokens are not accepted under /api.',
  tags: ['Meta'],
  response: {
    200: json('The uptime as an ISO 8601 duration.', {
      type: 'object',
      required: ['uptime'],
      properties: { uptime: { type: 'string', pattern: '^PT\\d+(\\.\\d+)?S$', description: '`PT<seconds>S`, seconds with up to three decimals.' } },
    }),
    ...tokenErrors,
  },
};

const tokenCheckSchema: RouteSchema = {
  summary: 'Check an access token, cheaply',
  tags: ['Meta'],
  response: { 200: empty('The access token is valid.'), 401: empty('No valid access token (a HEAD answer has no body).') },
};

const identifySchema: RouteSchema = {
  summary: 'Identify the server as File Cloud',
  description: 'No authentication; always 200 with an empty body. Also a liveness check.',
  tags: ['Meta'],
  response: { 200: empty('This is a File Cloud server.'), ...errors({ 400: 'Malformed request (no Host header, a bad URL).' }) },
};

/** ISO 8601 duration of the form PT<seconds>S; seconds keep millisecond precision. */
export function isoDuration(ms: number): string {
  const seconds = Math.max(0, ms) / 1000;
  return `PT${Number(seconds.toFixed(3))}S`;
}

/** Seed §4.8–4.10: stats, token check, server identification; CONTRACT "Backends and nodes": health. */
export function metaRoutes(app: FastifyInstance, deps: { startedAt: number; now: () => number; health: () => Promise<void> }): void {
  // For load balancers: 200 only when this node can reach both its database and its storage.
  app.route({
    method: ['GET', 'HEAD'],
    url: '/api/health',
    exposeHeadRoute: false,
    config: { access: { who: 'public' } },
    schema: healthSchema,
    handler: async (request, reply) => {
      reply.header('cache-control', 'no-store');
      try {
        await deps.health();
      } catch (err) {
        request.log.warn({ err }, 'health check failed');
        const body = { status: 'unavailable', error: 'unavailable', message: 'This node cannot reach its database or its storage.' };
        return reply.code(503).send(request.method === 'HEAD' ? undefined : body);
      }
      return reply.code(200).send(request.method === 'HEAD' ? undefined : { status: 'ok' });
    },
  });
  app.get('/api/stats', { config: { access: { who: 'user' } }, exposeHeadRoute: false, schema: statsSchema }, async () => ({ uptime: isoDuration(deps.now() - deps.startedAt) }));
  // Cheap on purpose: the auth hook has already done the only work there is.
  app.head('/api/stats', { config: { access: { who: 'user' } }, schema: tokenCheckSchema }, async (_request, reply) => reply.code(200).send());
  app.route({ method: ['GET', 'HEAD'], url: '/is_file_cloud', exposeHeadRoute: false, config: { access: { who: 'public' } }, schema: identifySchema, handler: async (_request, reply) => reply.code(200).send() });
}
