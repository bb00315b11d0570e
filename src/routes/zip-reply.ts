import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../domain/errors.js';
import type { StorageKey } from '../domain/storage-path.js';
import { ifRangeMatches, isNotModified } from '../lib/conditional.js';
import { contentDisposition } from '../http/content-disposition.js';
import { contentRange, parseRange, unsatisfiedRange } from '../http/range.js';
import type { ZipService } from '../services/zip.js';
import { TreeChangedError } from '../zip/stream.js';
import { metered, type Charge } from './metered.js';
import { sentence } from '../lib/i18n/sentences.js';

export type FolderZipOptions = {
  /** The folder zipped. */
  readonly folder: StorageKey;
  /** Only these entries directly inside it. */
  readonly names?: readonly string[];
  /** Top-level folder name inside the zip and the download name. */
  readonly archiveName?: string;
  /** Runs before every answer that sends bytes of the zip, with how many of the archive's size; may throw an AppError to refuse (share download limits, metered.ts). */
  readonly charge?: Charge;
};

/**
 * No Last-Modified for a zip: a tree can change without any time moving forward
 * (a file deleted on S3), so only the ETag may validate a conditional or
 * If-Range request. An invalid date never matches a date-form header.
 */
const NO_DATE = new Date(NaN);

/**
 * GET/HEAD of a folder as a zip (CONTRACT "Folder downloads (zip)"), the HTTP side of
 * services/zip.ts, planned as the principal (routes pass a `plan` calling `ops.zip` of the operation layer):
 * Content-Length, ETag, 304, Range and If-Range work exactly as for a file. If a file changed since
 * the plan, the connection is cut rather than finished with bytes of another archive.
 */
export async function sendFolderZip(request: FastifyRequest, reply: FastifyReply, zips: Pick<ZipService, 'plan'>, opts: FolderZipOptions): Promise<FastifyReply> {
  const zip = await zips.plan(opts.folder, { names: opts.names, archiveName: opts.archiveName, skipped: (entry) => request.log.warn({ entry }, 'zip: entry skipped, its name breaks the name rules') });

  reply.header('content-type', 'application/zip');
  reply.header('etag', zip.etag);
  reply.header('accept-ranges', 'bytes');
  reply.header('cache-control', 'private, no-cache');
  reply.header('content-disposition', contentDisposition(`${zip.root}.zip`));
  if (isNotModified(request.headers, zip.etag, NO_DATE)) return reply.code(304).send();
  const ifRange = request.headers['if-range'];
  const rangeHeader = ifRangeMatches(typeof ifRange === 'string' ? ifRange : undefined, zip.etag, NO_DATE) ? request.headers.range : undefined;
  const range = parseRange(rangeHeader, zip.size);
  if (range.kind === 'unsatisfiable') {
    throw new AppError('range_not_satisfiable', 'The requested range is outside the archive.', { headers: { 'content-range': unsatisfiedRange(zip.size) } });
  }
  if (request.method === 'HEAD') {
    reply.header('content-length', String(zip.size));
    return reply.code(200).send();
  }
  const start = range.kind === 'range' ? range.start : 0;
  const end = range.kind === 'range' ? range.end : zip.size - 1;
  const settle = await opts.charge?.(end - start + 1, zip.size);

  const produced = zip.bytes({ start, end }, (err) => request.log.warn({ err }, 'zip CRC cache failed'));
  const bytes = Readable.from(abortOnFailure(produced, request, reply), { objectMode: false, highWaterMark: 2 * 1024 * 1024 });
  const body = settle ? metered(reply, bytes, settle) : bytes;
  reply.header('content-length', String(end - start + 1));
  if (range.kind === 'range') {
    reply.header('content-range', contentRange(start, end, zip.size));
    return reply.code(206).send(body);
  }
  return reply.code(200).send(body);
}

/**
 * Once the status line is out, an error cannot become an error answer: the
 * socket is destroyed so the client sees a cut (and resumes with If-Range,
 * which the new ETag refuses) instead of a body that is not the archive.
 */
async function* abortOnFailure(bytes: AsyncGenerator<Buffer>, request: FastifyRequest, reply: FastifyReply): AsyncGenerator<Buffer> {
  try {
    yield* bytes;
  } catch (err) {
    if (err instanceof TreeChangedError) request.log.info({ err }, 'zip aborted: the folder changed while it was sent');
    else request.log.warn({ err }, 'zip aborted: reading a file failed');
    reply.raw.destroy();
    request.raw.socket?.destroy();
    throw err;
  }
}

/** `name=` of a zip request, repeated or not; absent → the whole folder. */
export function zipNames(value: unknown): string[] | undefined {
  if (value === undefined) return undefined;
  const names = Array.isArray(value) ? value : [value];
  if (!names.every((n): n is string => typeof n === 'string')) throw new AppError('invalid_name', sentence('apiDetail.zipNameEach'));
  return names;
}
