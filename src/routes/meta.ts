import type { FastifyInstance } from 'fastify';

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
  app.get('/api/stats', { config: { access: { who: 'user' } }, exposeHeadRoute: false }, async () => ({ uptime: isoDuration(deps.now() - deps.startedAt) }));
  // Cheap on purpose: the auth hook has already done the only work there is.
  app.head('/api/stats', { config: { access: { who: 'user' } } }, async (_request, reply) => reply.code(200).send());
  app.route({ method: ['GET', 'HEAD'], url: '/is_file_cloud', exposeHeadRoute: false, config: { access: { who: 'public' } }, handler: async (_request, reply) => reply.code(200).send() });
}
