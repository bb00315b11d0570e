import type { FastifyBaseLogger, FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, isAppError, isServerFault, type ErrorCode } from '../domain/errors.js';
import { dependencyErrorIn, RETRY_AFTER_SECONDS } from '../lib/dependency-error.js';
import { sentence } from '../lib/i18n/sentences.js';
import { declaresBody } from './declared-body.js';

/**
 * The one place where failures become HTTP answers. Status comes only from
 * the ERRORS table; the body is `{error, message}`; unknown errors become a
 * 500 `internal` whose cause is logged with the request id and never sent.
 */
export function toAppError(err: unknown): AppError {
  if (isAppError(err)) return err;
  // A service that is down or hung is the server's trouble, never the client's: 503 naming it (docs/operations.md).
  const dep = dependencyErrorIn(err);
  if (dep) return new AppError(dep.dependency === 'database' ? 'database_unavailable' : 'coordination_unavailable', UNAVAILABLE[dep.dependency], { cause: err, headers: { 'retry-after': String(RETRY_AFTER_SECONDS) } });
  const fe = err as Partial<FastifyError> & { code?: string };
  switch (fe.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new AppError('invalid_json', 'The request body is not valid JSON.');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('too_large', 'The request body is too large.');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new AppError('bad_request', sentence('apiDetail.bodyJson'));
    case 'FST_ERR_BAD_URL':
      return new AppError('invalid_path', sentence('apiDetail.urlInvalid'));
    case 'FST_ERR_VALIDATION':
      // A route schema refused the input; Ajv's text names the field ("body/new_password must be string").
      return new AppError('bad_request', sentence('apiDetail.requestInvalid', { detail: fe.message ?? sentence('apiPart.fieldProblem') }));
  }
  // Errors Node's parser or Fastify mark as client errors keep their class, never their raw message.
  const status = typeof fe.statusCode === 'number' ? fe.statusCode : 500;
  const byStatus: Record<number, ErrorCode> = { 404: 'not_found', 413: 'too_large', 416: 'range_not_satisfiable', 429: 'rate_limited', 503: 'unavailable' };
  const code = byStatus[status] ?? (status >= 400 && status < 500 ? 'bad_request' : undefined);
  if (code) return new AppError(code, defaultMessage(code), { cause: err });
  return new AppError('internal', 'Something went wrong on the server; the error has been logged.', { cause: err });
}

const UNAVAILABLE = {
  database: 'The database does not answer; try again shortly.',
  coordination: 'The coordination service (Redis) does not answer; try again shortly.',
} as const;

function defaultMessage(code: ErrorCode): string {
  switch (code) {
    case 'not_found': return 'Nothing exists at this address.';
    case 'too_large': return 'The request body is too large.';
    case 'unavailable': return 'The server is not available right now; try again shortly.';
    default: return 'The request is malformed.';
  }
}

/** A fault of the server at error level with its cause (the stack); a refusal the client caused at info, its code only. */
export function logFailure(log: FastifyBaseLogger, e: AppError, err: unknown): void {
  if (isServerFault(e.code)) log.error({ err: e.cause ?? err }, e.message);
  else log.info({ code: e.code }, e.message);
}

export function sendError(request: FastifyRequest, reply: FastifyReply, err: unknown): FastifyReply {
  const e = toAppError(err);
  logFailure(request.log, e, err);
  reply.code(e.status).headers(e.headers);
  // Any other answer keeps the connection; what is left of its body is dropped once it is sent (http-server.ts, dropUnreadBody).
  if ((e.code === 'too_large' || e.code === 'quota_exceeded') && bodyLeftUnread(request)) reply.header('connection', 'close');
  if (request.method === 'HEAD') return reply.send();
  return reply.type('application/json; charset=utf-8').send({ error: e.code, message: e.message });
}

/**
 * A body refused for its size is left unread on the socket: kept alive, Node would read and discard all of it
 * (forever, for an endless chunked upload) before the next request, and a graceful shutdown would wait for it.
 * Other errors keep the connection and the rest of their (acceptable) body is read and dropped (http-server.ts,
 * dropUnreadBody), so the client reads its answer instead of a broken pipe.
 */
export function bodyLeftUnread(request: FastifyRequest): boolean {
  return !request.raw.complete && declaresBody(request.headers);
}

/**
 * `allowed(request)`: the methods the request's path has routes for (CONTRACT "Web UI": a known path with a
 * method it lacks → 405 with Allow); none → 404.
 */
export function installErrorHandling(app: FastifyInstance, allowed: (request: FastifyRequest) => readonly string[] = () => []): void {
  app.setErrorHandler((err, request, reply) => sendError(request, reply, err));
  app.setNotFoundHandler((request, reply) => {
    const methods = allowed(request);
    if (methods.length === 0) return sendError(request, reply, new AppError('not_found', defaultMessage('not_found')));
    const allow = methods.join(', ');
    return sendError(request, reply, new AppError('method_not_allowed', `${request.method} does not apply here; allowed: ${allow}.`, { headers: { allow } }));
  });
}
