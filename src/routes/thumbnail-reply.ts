import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../domain/errors.js';
import type { StorageKey } from '../domain/storage-path.js';
import { isNotModified } from '../lib/conditional.js';
import type { PrincipalOperations } from '../services/operations.js';
import { noThumbnail } from '../services/thumbnails.js';
import type { Entry } from '../storage/backend.js';
import { mayHaveThumbnail, thumbnailEtag, type ThumbnailSize } from '../thumbnails/sizes.js';
import type { Charge } from './metered.js';

/**
 * `?thumbnail=N` on a file, shared by /storage/ (owner or path token) and
 * /share/: a WebP with its own ETag, so a client that has it gets a 304
 * before anything is read or drawn. Private: it shows the file's content.
 */
export async function sendThumbnail(
  request: FastifyRequest,
  reply: FastifyReply,
  /** The principal's operations: drawing asks `decide` for the key. */
  reader: Pick<PrincipalOperations, 'thumbnail'>,
  key: StorageKey,
  entry: Entry,
  size: ThumbnailSize,
  withBody: boolean,
  /** Share links: a thumbnail shows the file, so its bytes count (bytes ÷ the file's size) like the file's own (metered.ts). */
  charge?: Charge,
) {
  if (!entry.isFile) throw new AppError('no_thumbnail', 'A folder has no thumbnail.');
  if (!mayHaveThumbnail(entry.name)) throw noThumbnail();
  const etag = thumbnailEtag(entry.etag, size);
  reply.header('cache-control', 'private, no-cache').header('vary', 'authorization');
  if (isNotModified({ 'if-none-match': request.headers['if-none-match'] }, etag, entry.modified)) {
    return reply.code(304).header('etag', etag).send();
  }
  const thumb = await reader.thumbnail(key, entry, size);
  reply.header('content-type', 'image/webp').header('etag', thumb.etag).header('x-thumbnail', thumb.outcome);
  reply.header('content-length', String(thumb.data.length));
  if (!withBody) return reply.code(200).send();
  const settle = await charge?.(thumb.data.length, entry.size);
  settle?.(thumb.data.length);
  return reply.code(200).send(thumb.data);
}
