import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { toAppError } from '../http/error-handler.js';
import { EVERY_ANSWER_HEADERS } from '../http/security-headers.js';
import type { AccessLog } from './access-line.js';

/** Takes a request or hands it on (to Fastify, or the next fast path) untouched. */
export type FastPath = (req: IncomingMessage, res: ServerResponse, next: () => void) => void;

/** What an answer given before Fastify (fast-read.ts, fast-write.ts) needs to look like one of Fastify's. */
export type FastAnswerDeps = {
  readonly accessLog: AccessLog;
  readonly nextRequestId: () => string;
  /** Called for every answer given here with its route pattern (metrics count them as Fastify's hook does for the others). */
  readonly onAnswer?: (req: IncomingMessage, route: string, statusCode: number, seconds: number) => void;
  /** --trust-proxy: the client address is the nearest proxy's X-Forwarded-For entry, as Fastify's request.ip. */
  readonly trustProxy: boolean;
};

export type FastAnswering = {
  /** The client's address as Fastify's request.ip gives it. */
  addressOf(req: IncomingMessage): string;
  /** The access log line (Fastify's, with `fast: true`) and the metrics count of an answer given here. */
  log(req: IncomingMessage, route: string, statusCode: number, started: number): void;
  /** The contract's JSON error for `error` (error-handler.ts maps it), with `headers` (the route's own security headers). */
  fail(req: IncomingMessage, res: ServerResponse, route: string, error: unknown, started: number, headers?: Record<string, string>): void;
};

export function fastAnswering(deps: FastAnswerDeps): FastAnswering {
  const { accessLog } = deps;
  const addressOf = (req: IncomingMessage): string => {
    const forwarded = req.headers['x-forwarded-for'];
    return (deps.trustProxy && typeof forwarded === 'string' ? nearestForwarded(forwarded) : undefined) ?? req.socket.remoteAddress ?? '';
  };
  function log(req: IncomingMessage, route: string, statusCode: number, started: number): void {
    deps.onAnswer?.(req, route, statusCode, (performance.now() - started) / 1000);
    // `fast`: answered here, not by Fastify (what tells the two apart when reading a log or a test).
    accessLog.write({ reqId: deps.nextRequestId(), method: req.method ?? '', url: req.url ?? '', remoteAddress: addressOf(req), statusCode, responseTime: performance.now() - started, fast: true });
  }
  function fail(req: IncomingMessage, res: ServerResponse, route: string, error: unknown, started: number, headers: Record<string, string> = {}): void {
    const e = toAppError(error);
    res.writeHead(e.status, { 'content-type': 'application/json; charset=utf-8', ...EVERY_ANSWER_HEADERS, ...headers, ...e.headers });
    res.end(req.method === 'HEAD' ? undefined : JSON.stringify({ error: e.code, message: e.message }));
    log(req, route, e.status, started);
  }
  return { addressOf, log, fail };
}

/**
 * The entry the nearest proxy appended to X-Forwarded-For: the last one, spaces trimmed, empty
 * entries skipped (repeated headers arrive joined with ", "), as Fastify's trustProxy function
 * `hop === 0` makes request.ip; undefined without one (then the peer's own address counts).
 */
export function nearestForwarded(header: string): string | undefined {
  for (const entry of header.split(',').reverse()) {
    const trimmed = entry.replace(/^[ \t]+|[ \t]+$/g, '');
    if (trimmed !== '') return trimmed;
  }
  return undefined;
}
