import type { FastifyInstance } from 'fastify';
import type { AccessRule } from '../domain/access.js';
import type { UsageService } from '../services/usage.js';
import { errors, json } from '../http/schemas.js';

/** CONTRACT "Search, thumbnails, usage": the caller's bytes in use and quota. */
export function usageRoutes(scope: FastifyInstance, deps: { usage: UsageService }): void {
  scope.get(
    '/api/usage',
    {
      config: { access: { who: 'user' } as AccessRule },
      schema: {
        summary: 'Storage used by the caller and their quota',
        description: 'Bytes of all the caller\'s files, kept exact as files change, and the quota in bytes (null when there is none). Uploads that would pass the quota are refused with 507 quota_exceeded.',
        tags: ['Usage'],
        response: {
          200: json("The caller's usage.", {
            type: 'object',
            required: ['used', 'quota'],
            additionalProperties: false,
            properties: {
              used: { type: 'integer', minimum: 0, description: "Bytes of the caller's files." },
              quota: { type: ['integer', 'null'], minimum: 0, description: 'The quota in bytes, or null for none.' },
            },
          }),
          ...errors({ 401: 'No valid token (`unauthorized`).' }),
        },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      const { used, quota } = await deps.usage.get(request.principal!.username);
      return { used: Math.max(0, used), quota: quota ?? null };
    },
  );
}
