import type { FastifyRequest } from 'fastify';
import { lastSegment, multipartFiles } from '../http/multipart.js';
import type { UploadPart } from '../services/files.js';

/**
 * The file parts of a multipart request body as the files service takes them (named by the last
 * segment of the filename sent), for every front end that accepts a form upload: /storage/, /basic/
 * and a share link's drop box. `sent` collects the names as sent, when the caller must answer with them.
 */
export function uploadParts(request: FastifyRequest, maxFileBytes: number | undefined, sent?: string[]): AsyncIterable<UploadPart> {
  const parts = multipartFiles(request.raw, request.headers, { maxFileBytes });
  return (async function* () {
    for await (const part of parts) {
      const filename = lastSegment(part.filename);
      sent?.push(filename);
      yield { filename, stream: part.stream };
    }
  })();
}
