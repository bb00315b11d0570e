import type { Readable } from 'node:stream';
import { AppError } from '../domain/errors.js';
import { sentence } from '../lib/i18n/sentences.js';

/**
 * Reads a small JSON body from a stream, refusing more than `limit` bytes
 * (413) and anything that is not JSON (400). For scopes that cannot use
 * Fastify's JSON parser because the same URLs also take raw uploads.
 *
 * On overflow the rest is discarded rather than the socket destroyed, so the
 * client still receives its 413; `Connection: close` ends the exchange.
 */
export function readJsonBody(stream: Readable, limit: number): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) return void chunks.push(chunk);
      cleanup();
      stream.resume();
      reject(new AppError('too_large', `The request body is larger than ${limit} bytes.`, { headers: { connection: 'close' } }));
    };
    const onEnd = () => {
      cleanup();
      const text = Buffer.concat(chunks).toString('utf8');
      if (text.trim() === '') return resolve(undefined);
      try {
        resolve(JSON.parse(text) as unknown);
      } catch {
        reject(new AppError('invalid_json', 'The request body is not valid JSON.'));
      }
    };
    const onError = () => {
      cleanup();
      reject(new AppError('bad_request', sentence('apiDetail.bodyUnreadable')));
    };
    const cleanup = () => {
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', onError);
    };
    stream.on('data', onData);
    stream.on('end', onEnd);
    stream.on('error', onError);
  });
}
