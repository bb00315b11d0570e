import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { Entry } from '../storage/backend.js';
import type { SharePlace } from '../services/shares.js';

/**
 * What the fast read path (fast-read.ts) found out about a request before it
 * handed it on to Fastify, so that Fastify's route does not ask the store
 * again (on S3 each question is a GetObject and a listing, and every folder
 * view and every 404 would pay it twice):
 * - `folder`: a storage path is a folder (with its entry when a HEAD's stat gave one);
 * - `error`: asking the store about a storage path failed;
 * - `share`: where a share link's path leads (a folder, or nothing).
 */
export type Learned = { readonly folder: Entry | undefined } | { readonly error: unknown } | { readonly share: SharePlace };

declare module 'fastify' {
  interface FastifyRequest {
    /** What the fast read path learned about this request before handing it on (undefined when it did not look). */
    readonly learnedBefore: Learned | undefined;
    /** The visitor limiter's answer (0, or seconds to wait) when the fast path already counted this request. */
    readonly visitCountedBefore: number | undefined;
  }
}

/**
 * The fast path runs before Fastify makes its request object, so what it learned rides on the Node request
 * itself (under a symbol no header or library can set) and Fastify's request decorators read it from there:
 * request state travels with the request, and nothing is kept in a module-level map.
 */
const HANDED_ON = Symbol('file-cloud.handed-on');
type Carrier = IncomingMessage & { [HANDED_ON]?: { learned?: Learned; visit?: number } };

const slot = (req: IncomingMessage) => ((req as Carrier)[HANDED_ON] ??= {});

export const remember = (req: IncomingMessage, what: Learned): void => void (slot(req).learned = what);

/** Records that `req` was counted against the visitor limit, so the auth hook does not count it again. */
export const rememberVisit = (req: IncomingMessage, wait: number): void => void (slot(req).visit = wait);

/** `request.learnedBefore` and `request.visitCountedBefore`, for every route and hook. */
export function installHandedOn(app: FastifyInstance): void {
  app.decorateRequest('learnedBefore', {
    getter(this: { raw: IncomingMessage }) {
      return (this.raw as Carrier)[HANDED_ON]?.learned;
    },
  });
  app.decorateRequest('visitCountedBefore', {
    getter(this: { raw: IncomingMessage }) {
      return (this.raw as Carrier)[HANDED_ON]?.visit;
    },
  });
}
