import type { FastifyInstance } from 'fastify';
import { TUS_EXPOSED_HEADERS, TUS_REQUEST_HEADERS } from '../routes/tus.js';

export const CORS_ALLOWED_METHODS = 'GET, HEAD, PUT, POST, DELETE, PATCH';
export const CORS_ALLOWED_HEADERS = `Authorization, Content-Type, Range, If-None-Match, If-Modified-Since, If-Range, ${TUS_REQUEST_HEADERS}`;
export const CORS_EXPOSED_HEADERS = `ETag, Content-Range, Content-Disposition, Content-Length, Accept-Ranges, Last-Modified, X-Expires-At, Retry-After, ${TUS_EXPOSED_HEADERS}`;

/**
 * Cross-origin access for browser apps on other origins (--cors-origin).
 * Tokens travel in the Authorization header, never in cookies, so no
 * Allow-Credentials: a page on an allowed origin still needs a token.
 * Only a listed origin is echoed back; an unlisted one gets no CORS headers
 * at all (the browser then blocks the read). `*` allows any origin.
 * Nothing is installed when the list is empty: the default is same-origin only.
 */
export function installCors(app: FastifyInstance, origins: readonly string[]): void {
  if (origins.length === 0) return;
  const any = origins.includes('*');
  const allowed = new Set(origins);
  app.addHook('onRequest', async (request, reply) => {
    const origin = request.headers.origin;
    // Caches must not hand one origin's answer to another.
    if (!any) reply.header('vary', 'Origin');
    if (typeof origin !== 'string' || (!any && !allowed.has(origin))) {
      if (isPreflight(request.method, request.headers)) return reply.code(204).header('content-length', '0').send();
      return;
    }
    reply.header('access-control-allow-origin', any ? '*' : origin);
    if (isPreflight(request.method, request.headers)) {
      reply.header('access-control-allow-methods', CORS_ALLOWED_METHODS);
      reply.header('access-control-allow-headers', CORS_ALLOWED_HEADERS);
      reply.header('access-control-max-age', '600');
      return reply.code(204).header('content-length', '0').send();
    }
    reply.header('access-control-expose-headers', CORS_EXPOSED_HEADERS);
  });
}

function isPreflight(method: string, headers: Record<string, unknown>): boolean {
  return method === 'OPTIONS' && typeof headers['access-control-request-method'] === 'string';
}
