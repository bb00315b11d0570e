import type { IncomingHttpHeaders } from 'node:http';

/**
 * Whether a request's headers announce a body: a Transfer-Encoding (chunked), or a Content-Length
 * above 0. One rule for every place that asks (the server's dropping of an unread rest, the error
 * answer's `Connection: close`, WebDAV's and tus's requests that take no body or must have one).
 */
export function declaresBody(headers: IncomingHttpHeaders): boolean {
  return headers['transfer-encoding'] !== undefined || Number(headers['content-length'] ?? 0) > 0;
}
