import { AppError } from '../domain/errors.js';
import { sentence } from '../lib/i18n/sentences.js';

/** The JSON object body of a request, or a 400 for anything else (missing, array, string, null). */
export function objectBody(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new AppError('bad_request', sentence('apiDetail.bodyObject'));
  }
  return body as Record<string, unknown>;
}

export function requiredString(body: Record<string, unknown>, field: string): string {
  const v = body[field];
  if (v === undefined) throw new AppError('bad_request', sentence('apiDetail.fieldRequired', { field }));
  if (typeof v !== 'string') throw new AppError('bad_request', sentence('apiDetail.fieldString', { field }));
  return v;
}

export function optionalString(body: Record<string, unknown>, field: string): string | undefined {
  const v = body[field];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw new AppError('bad_request', sentence('apiDetail.fieldString', { field }));
  return v;
}

export function optionalBoolean(body: Record<string, unknown>, field: string): boolean | undefined {
  const v = body[field];
  if (v === undefined) return undefined;
  if (typeof v !== 'boolean') throw new AppError('bad_request', sentence('apiDetail.fieldBoolean', { field }));
  return v;
}

export function optionalInteger(body: Record<string, unknown>, field: string): number | undefined {
  const v = body[field];
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw new AppError('bad_request', sentence('apiDetail.fieldWhole', { field }));
  return v;
}
