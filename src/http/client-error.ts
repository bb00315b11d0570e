import type { Socket } from 'node:net';
import { AppError } from '../domain/errors.js';

/** Limits on what a request may send before any route sees it (docs/security.md). */
export const HTTP_LIMITS = {
  /** Request line plus all headers, in bytes; more → 431 (Node's default, pinned so a flag cannot raise it). */
  maxHeaderSize: 16 * 1024,
  /** Time to receive the request line and headers (slow-header attacks). */
  headersTimeoutMs: 30_000,
  /**
   * A connection on which nothing moves for this long is closed: a client
   * that stalls in the middle of a body cannot hold a socket (and a staging
   * file) for ever. Uploads and downloads that make progress are not limited.
   */
  idleTimeoutMs: 120_000,
} as const;

type SocketWithMessage = Socket & { _httpMessage?: { headersSent?: boolean } | null };

/**
 * Answers what Node's HTTP parser refuses before Fastify sees a request
 * (broken request lines or headers, too many header bytes, smuggling
 * attempts with both Content-Length and Transfer-Encoding) with the
 * contract's `{error, message}` body instead of Fastify's default one.
 */
export function clientErrorHandler(err: Error & { code?: string }, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const e =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? new AppError('headers_too_large', `The request line and headers are larger than ${HTTP_LIMITS.maxHeaderSize} bytes.`)
      : new AppError('bad_request', 'The request is not valid HTTP.');
  // As Node itself does: never write into a response that has already begun on this socket.
  const current = (socket as SocketWithMessage)._httpMessage;
  if (socket.writable && !current?.headersSent) {
    const body = JSON.stringify({ error: e.code, message: e.message });
    socket.write(
      `HTTP/1.1 ${e.status} ${e.status === 431 ? 'Request Header Fields Too Large' : 'Bad Request'}\r\n` +
        `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}
