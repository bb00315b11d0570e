import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { FastifyServerFactory } from 'fastify';
import { HTTP_LIMITS } from '../http/client-error.js';
import { declaresBody } from '../http/declared-body.js';
import { withProgress } from '../lib/progress.js';
import { parseOrigin, withOrigin } from '../lib/write-origin.js';
import type { FastRead } from './fast-read.js';
import { attachProgress } from './request-deadline.js';

/**
 * Fastify's own server, with the small-read fast path in front of its handler (fast-read.ts):
 * `fastRead()` is undefined until the services exist, and when off; then every request goes to Fastify.
 * With `progress` (a deployment with services: waitsForServices) each request runs in its own
 * progress context, for the request deadline.
 */
export function serverWithFastRead(fastRead: () => FastRead | undefined, opts: { readonly progress: boolean }): FastifyServerFactory {
  return (handler) => {
    // requireHostHeader off: Node would answer a missing Host with a bare 400; buildApp's hook gives the contract body.
    const options = { maxHeaderSize: HTTP_LIMITS.maxHeaderSize, headersTimeout: HTTP_LIMITS.headersTimeoutMs, requireHostHeader: false };
    const serve = (req: IncomingMessage, res: ServerResponse) => {
      const fast = fastRead();
      return fast ? fast(req, res, () => handler(req, res)) : handler(req, res);
    };
    const serveWithOrigin = (req: IncomingMessage, res: ServerResponse) => {
      // The writer's File-Cloud-Origin goes with the request's writes into their change entries (a bad one is refused by buildApp's hook).
      const origin = parseOrigin(req.headers['file-cloud-origin']);
      if (origin === undefined || origin === 'invalid') serve(req, res);
      else withOrigin(origin, () => serve(req, res));
    };
    const server = createServer(options, (req, res) => {
      if (declaresBody(req.headers)) res.once('finish', () => dropUnreadBody(req, res));
      if (!opts.progress) return serveWithOrigin(req, res);
      // Each request in its own progress context, for the request deadline (request-deadline.ts).
      withProgress((progress) => {
        attachProgress(req, progress);
        serveWithOrigin(req, res);
      });
    });
    server.keepAliveTimeout = 72_000;
    // Uploads may take long, so no limit on a whole request; a stalled client is cut off by the
    // idle timeout instead, and slow headers by headersTimeout (HTTP_LIMITS, docs/security.md).
    server.requestTimeout = 0;
    server.setTimeout(HTTP_LIMITS.idleTimeoutMs);
    return server;
  };
}

/**
 * After an answer on a connection kept open, the rest of a body nobody reads any more (an upload
 * cut off by a failing service and answered 503) is read and dropped, so the next request on the
 * connection is parsed. Node drops it by itself only when nobody began to read the body: one piped
 * into a writer that stalled, or whose reading loop stopped waiting for something else, holds the
 * rest in front of the next request, and that one is never answered; the client sees the connection
 * reset when the keep-alive timeout (72 s, plus Node's 1 s) ends it. An answer that closes the
 * connection (413, the request deadline: `Connection: close`) has nothing to drop.
 */
export function dropUnreadBody(req: IncomingMessage, res: ServerResponse): void {
  if (req.complete || req.destroyed || String(res.getHeader('connection')).toLowerCase() === 'close') return;
  // Whatever still holds the body lets go of it: a pipe, a 'readable' listener (an async iterator's: the hashing layer's tap
  // reads every upload's body through one, src/storage/hashing.ts), a 'data' listener that pauses it when its own reader is
  // full (the encryption's sealing stream): each keeps resume() from flowing for good.
  req.unpipe();
  req.removeAllListeners('readable');
  req.removeAllListeners('data');
  req.resume();
}
