import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config/options.js';
import { AppError } from '../domain/errors.js';
import { RETRY_AFTER_SECONDS } from '../lib/dependency-error.js';
import type { RequestProgress } from '../lib/progress.js';
import { sendError } from '../http/error-handler.js';

const PROGRESS = Symbol('progress');
const DISARM = Symbol('disarm');
type Raw = IncomingMessage & { [PROGRESS]?: RequestProgress; [DISARM]?: () => void };

/**
 * Whether a request of this deployment can wait for a service: PostgreSQL, Redis or S3 (the calls
 * src/lib/progress.ts counts). Only then does each request run in a progress context, the one thing
 * the deadline watches; on local disk and SQLite alone it would watch nothing, and the context is
 * not made (what it cost: docs/performance.md, "No progress context without a service").
 */
export function waitsForServices(config: Pick<Config, 'database' | 'storage' | 'redis'>): boolean {
  return config.database.kind !== 'sqlite' || config.storage.kind !== 'file' || config.redis !== '';
}

/** Ties a raw request to its progress record (src/lib/progress.ts), for the hook below. */
export function attachProgress(req: IncomingMessage, progress: RequestProgress): void {
  (req as Raw)[PROGRESS] = progress;
}

/**
 * The backstop behind the services' own timeouts (docs/operations.md, "When a service fails"): a
 * request that waits for a service, has not begun its answer and has made no progress for
 * `deadlineMs` — no byte of its body received, no answer from a service for it — is answered 503
 * `unavailable` with Retry-After,
 * never left to a socket timeout that closes without a word. Its signal fires, so a write still
 * waiting stops before it commits. A slow upload or a long folder move keeps progressing and is
 * left alone; once an answer has begun, only the socket's idle timeout applies.
 */
export function armDeadline(request: FastifyRequest, reply: FastifyReply, deadlineMs: number): void {
  watchDeadline(request.raw, reply.raw, deadlineMs, () => reply.sent, (err) => {
    request.log.warn({ deadlineMs }, 'request deadline: answered 503 while the request waited for a service');
    // The body the client may still send is not read: the answer closes the connection.
    reply.header('connection', 'close');
    sendError(request, reply, err);
  });
}

/**
 * The deadline of armDeadline on a bare request (the fast write path, fast-write.ts, has no
 * Fastify request): `expire` answers 503 with the error given, once, unless the answer has begun
 * (`answered`, or its headers sent).
 */
export function watchDeadline(req: IncomingMessage, res: ServerResponse, deadlineMs: number, answered: () => boolean, expire: (err: AppError) => void): void {
  const progress = (req as Raw)[PROGRESS];
  if (!progress) return;
  const socket = req.socket;
  let bytesRead = socket.bytesRead;
  let timer: NodeJS.Timeout;
  const check = () => {
    if (answered() || res.headersSent || res.writableEnded || socket.destroyed) return;
    if (socket.bytesRead !== bytesRead) {
      bytesRead = socket.bytesRead;
      progress.at = performance.now();
    }
    const idle = performance.now() - progress.at;
    // Only a request waiting for a service is answered: its own work, however long, is not cut short.
    if (idle < deadlineMs || progress.pending === 0) {
      timer = setTimeout(check, idle < deadlineMs ? deadlineMs - idle + 1 : 1000);
      timer.unref();
      return;
    }
    const err = new AppError('unavailable', 'A service this request needs did not answer in time; try again shortly.', { headers: { 'retry-after': String(RETRY_AFTER_SECONDS) } });
    progress.controller.abort(err);
    expire(err);
  };
  timer = setTimeout(check, deadlineMs);
  timer.unref();
  const stop = () => clearTimeout(timer);
  (req as Raw)[DISARM] = stop;
  res.once('close', stop);
  res.once('finish', stop);
}

/**
 * The answer has begun (Fastify's onSend): from here the deadline is off. The onSend hooks may
 * still wait for a service (the usage flush, the audit entry), but a second answer on top of the
 * first would record a sign-in twice and tell the client two things.
 */
export function answerBegun(request: FastifyRequest | IncomingMessage): void {
  const raw = 'raw' in request ? request.raw : request;
  (raw as Raw)[DISARM]?.();
}
