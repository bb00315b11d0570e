import type { FastifyInstance } from 'fastify';
import { empty, ErrorBody, errors, json, type RouteSchema } from '../http/schemas.js';
import { RETRY_AFTER_SECONDS } from '../lib/dependency-error.js';

const tokenErrors = errors({ 401: 'No valid access token (`unauthorized`).' });

const DEPENDENCIES = ['storage', 'database', 'redis'] as const;
export type Dependency = (typeof DEPENDENCIES)[number];

const healthSchema: RouteSchema = {
  summary: 'Health check for load balancers',
  description:
    'No authentication. Readiness (`/api/health`, also `/api/health?ready`): 200 when this node reaches its storage, its database and (when configured) Redis, 503 naming what it does not reach; answered within 2 s. ' +
    'Liveness (`/api/health?live`): 200 whenever the process serves HTTP, without asking any service (docs/operations.md).',
  tags: ['Meta'],
  querystring: {
    type: 'object',
    properties: {
      ready: { type: 'string', description: 'Present: the readiness check (the default).' },
      live: { type: 'string', description: 'Present: the liveness check, which asks no service.' },
    },
  },
  response: {
    200: json('Ready (or, with `?live`, alive).', { type: 'object', required: ['status'], properties: { status: { type: 'string', const: 'ok' } } }),
    ...errors({ 400: 'Malformed request (no Host header, a bad URL).' }),
    503: json('A service does not answer within the check\'s bound: the error body (`storage_unavailable`, `database_unavailable`, `coordination_unavailable`, or `unavailable` when several are down), with `status: "unavailable"` and `down`, the services not answering.', {
      ...ErrorBody,
      required: ['status', 'error', 'message', 'down'],
      properties: {
        status: { type: 'string', const: 'unavailable' },
        down: { type: 'array', items: { type: 'string', enum: [...DEPENDENCIES] } },
        ...(ErrorBody.properties as object),
      },
    }),
  },
};

/** Each service's check gets this long, so the whole readiness check answers within 2 s (docs/operations.md). */
const CHECK_MS = 1500;

const ERROR_OF: Record<Dependency, string> = { storage: 'storage_unavailable', database: 'database_unavailable', redis: 'coordination_unavailable' };

/** Runs each service's check at once, each bounded; resolves with the services that failed or did not answer in time. */
export async function downServices(checks: Partial<Record<Dependency, () => Promise<unknown>>>, onError: (what: Dependency, err: unknown) => void = () => undefined): Promise<Dependency[]> {
  const results = await Promise.all(
    DEPENDENCIES.map(async (what) => {
      const check = checks[what];
      if (!check) return undefined;
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([check(), new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${CHECK_MS} ms`)), CHECK_MS)))]);
        return undefined;
      } catch (err) {
        onError(what, err);
        return what;
      } finally {
        clearTimeout(timer);
      }
    }),
  );
  return results.filter((d): d is Dependency => d !== undefined);
}

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
export function metaRoutes(app: FastifyInstance, deps: { startedAt: number; now: () => number; health: Partial<Record<Dependency, () => Promise<unknown>>> }): void {
  // Readiness for load balancers: 200 only when this node reaches every service it uses; liveness (?live) asks none.
  app.route({
    method: ['GET', 'HEAD'],
    url: '/api/health',
    exposeHeadRoute: false,
    config: { access: { who: 'public' } },
    schema: healthSchema,
    handler: async (request, reply) => {
      reply.header('cache-control', 'no-store');
      const query = request.query as { live?: string };
      const down = query.live === undefined ? await downServices(deps.health, (what, err) => request.log.warn({ err, service: what }, 'health check: a service does not answer')) : [];
      if (down.length > 0) {
        const error = down.length === 1 ? ERROR_OF[down[0] as Dependency] : 'unavailable';
        const body = { status: 'unavailable', error, message: `This node cannot reach: ${down.join(', ')}.`, down };
        reply.header('retry-after', String(RETRY_AFTER_SECONDS));
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
