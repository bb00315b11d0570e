import type { FastifyRequest } from 'fastify';
import { AppError } from '../domain/errors.js';

/** One request header's value (the first of repeated ones). */
export function header(request: FastifyRequest, name: string): string | undefined {
  const v = request.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** The Depth header (RFC 4918 §10.2): `0`, `1` or `infinity`; absent means `fallback`. */
export function depthOf(request: FastifyRequest, fallback: '0' | '1' | 'infinity'): '0' | '1' | 'infinity' {
  const v = header(request, 'depth')?.trim().toLowerCase();
  if (v === undefined) return fallback;
  if (v === '0' || v === '1' || v === 'infinity') return v;
  throw new AppError('bad_request', 'Depth must be 0, 1 or infinity.');
}

export function hasBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length'];
  return (length !== undefined && length !== '0') || request.headers['transfer-encoding'] !== undefined;
}
