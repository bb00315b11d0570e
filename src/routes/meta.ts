import type { FastifyInstance } from 'fastify';

/** ISO 8601 duration of the form PT<seconds>S; seconds keep millisecond precision. */
export function isoDuration(ms: number): string {
  const seconds = Math.max(0, ms) / 1000;
  return `PT${Number(seconds.toFixed(3))}S`;
}

/** Seed §4.8–4.10: stats, token check, server identification. */
export function metaRoutes(app: FastifyInstance, deps: { startedAt: number; now: () => number }): void {
  app.get('/api/stats', { config: { auth: ['user'] }, exposeHeadRoute: false }, async () => ({ uptime: isoDuration(deps.now() - deps.startedAt) }));
  // Cheap on purpose: the auth hook has already done the only work there is.
  app.head('/api/stats', { config: { auth: ['user'] } }, async (_request, reply) => reply.code(200).send());
  app.route({ method: ['GET', 'HEAD'], url: '/is_file_cloud', exposeHeadRoute: false, handler: async (_request, reply) => reply.code(200).send() });
}
