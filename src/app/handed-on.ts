import type { IncomingMessage } from 'node:http';
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

const learned = new WeakMap<IncomingMessage, Learned>();
/** Requests whose share-visitor count the fast path already took, with its answer (0, or seconds to wait). */
const visits = new WeakMap<IncomingMessage, number>();

export const remember = (req: IncomingMessage, what: Learned): void => void learned.set(req, what);

/** What the fast path learned about `req` before handing it on, if it got as far as the store. */
export const learnedBefore = (req: IncomingMessage): Learned | undefined => learned.get(req);

/** Records that `req` was counted against the visitor limit, so the auth hook does not count it again. */
export const rememberVisit = (req: IncomingMessage, wait: number): void => void visits.set(req, wait);

/** The visitor limiter's answer for `req` if the fast path already counted it. */
export const visitCountedBefore = (req: IncomingMessage): number | undefined => visits.get(req);
