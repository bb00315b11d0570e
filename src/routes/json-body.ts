import type { Readable } from 'node:stream';
import { AppError } from '../domain/errors.js';

/**
 * Reads a small JSON body from a stream, refusing more than `limit` bytes
 * (413) and anything that is not JSON (400). For scopes that cannot use
 * Fastify's JSON parser because the same URLs also take raw uploads.
 */
export async function readJsonBody(stream: Readable, limit: number): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    size += (chunk as Buffer).length;
    if (size > limit) {
      stream.destroy();
      throw new AppError('too_large', `The request body is larger than ${limit} bytes.`);
    }
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new AppError('invalid_json', 'The request body is not valid JSON.');
  }
}
