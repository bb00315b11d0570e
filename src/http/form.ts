import { AppError } from '../domain/errors.js';
import { sentence } from '../lib/i18n/sentences.js';

/** A small application/x-www-form-urlencoded body as an object (first value of each name). */
export function readForm(stream: NodeJS.ReadableStream, limit: number): Promise<Record<string, string>> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    stream.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        stream.removeAllListeners('data');
        stream.resume();
        reject(new AppError('too_large', `The form is larger than ${limit} bytes.`, { headers: { connection: 'close' } }));
        return;
      }
      chunks.push(c);
    });
    stream.on('end', () => {
      const out = Object.create(null) as Record<string, string>;
      for (const [k, v] of new URLSearchParams(Buffer.concat(chunks).toString('utf8'))) if (!(k in out)) out[k] = v;
      resolve(out);
    });
    stream.on('error', () => reject(new AppError('bad_request', sentence('apiDetail.bodyUnreadable'))));
  });
}

