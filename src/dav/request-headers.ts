import type { FastifyRequest } from 'fastify';
import { AppError } from '../domain/errors.js';
import { declaresBody } from '../http/declared-body.js';

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

/** A PROPFIND's Depth, 0 or 1: infinity (also by omission) is refused, as RFC 4918 §9.1 allows. */
export function finiteDepth(request: FastifyRequest): '0' | '1' {
  const depth = depthOf(request, 'infinity');
  if (depth === 'infinity') throw new AppError('propfind_finite_depth', 'PROPFIND with Depth: infinity (or no Depth header) is not supported; send Depth: 0 or 1.');
  return depth;
}

/** The Overwrite header (RFC 4918 §10.6): T (also by omission) or F. */
export function overwriteOf(request: FastifyRequest): boolean {
  const overwrite = header(request, 'overwrite')?.trim().toUpperCase() ?? 'T';
  if (overwrite !== 'T' && overwrite !== 'F') throw new AppError('bad_request', 'Overwrite must be T or F.');
  return overwrite === 'T';
}

/** The lock token an UNLOCK names in its Lock-Token header (RFC 4918 §10.5), `<urn:uuid:…>`. */
export function lockTokenOf(request: FastifyRequest): string {
  const m = /^\s*<([^>]+)>\s*$/.exec(header(request, 'lock-token') ?? '');
  if (!m) throw new AppError('bad_request', 'UNLOCK needs a Lock-Token header: <urn:uuid:…>.');
  return m[1] as string;
}

export const hasBody = (request: FastifyRequest): boolean => declaresBody(request.headers);
