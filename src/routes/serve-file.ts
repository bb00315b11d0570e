import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../domain/errors.js';
import type { StorageKey } from '../domain/storage-path.js';
import { asksForPart, ifRangeMatches, isNotModified } from '../lib/conditional.js';
import { fileHeaderFields } from '../http/file-headers.js';
import { contentRange, parseRange, unsatisfiedRange } from '../http/range.js';
import type { Readable } from 'node:stream';
import type { Entry, Opened } from '../storage/backend.js';
import type { PrincipalOperations } from '../services/operations.js';
import { metered, type Charge } from './metered.js';

/**
 * GET/HEAD of a file, shared by /storage/ and /dav/: validators, 304,
 * Range and If-Range, and a stream that matches the headers even when the
 * file is replaced between stat and open.
 */
export async function serveFile(
  request: FastifyRequest,
  reply: FastifyReply,
  /** The principal's operations: every read asks `decide` for the key. */
  files: Pick<PrincipalOperations, 'withDigest' | 'read'>,
  key: StorageKey,
  entry: Entry,
  opts: {
    download: boolean;
    withBody: boolean;
    /**
     * Runs before every answer that sends bytes of the file (200, 206; not HEAD or 304) with how
     * many of how many it will send; may throw to refuse it (share download limits, metered.ts).
     */
    charge?: Charge;
  },
) {
  entry = await files.withDigest(key, entry);
  fileHeaders(reply, entry, opts.download);
  if (isNotModified(request.headers, entry.etag, entry.modified)) return reply.code(304).send();
  // If-Range: a client resuming an older version gets the whole current file instead of a spliced one.
  const ifRange = request.headers['if-range'];
  const rangeHeader = ifRangeMatches(typeof ifRange === 'string' ? ifRange : undefined, entry.etag, entry.modified) ? request.headers.range : undefined;
  const range = parseRange(rangeHeader, entry.size);
  if (range.kind === 'unsatisfiable') {
    throw new AppError('range_not_satisfiable', 'The requested range is outside the file.', { headers: { 'content-range': unsatisfiedRange(entry.size) } });
  }
  if (!opts.withBody) {
    reply.header('content-length', String(entry.size));
    return reply.code(200).send();
  }
  const length = range.kind === 'range' ? range.end - range.start + 1 : entry.size;
  let settle = await opts.charge?.(length, entry.size);
  let opened: Opened;
  try {
    opened = await files.read(key, range.kind === 'range' ? { start: range.start, end: range.end } : undefined);
  } catch (e) {
    settle?.(0);
    throw e;
  }
  const out = (o: Opened) => (settle ? metered(reply, body(o), settle) : body(o));
  if (opened.entry.etag !== entry.etag) {
    // Replaced between stat and open: serve the new version whole rather than a range of it.
    if (!opened.bytes) opened.stream.destroy();
    settle?.(0);
    const whole = await files.read(key);
    settle = await opts.charge?.(whole.entry.size, whole.entry.size).catch((e: unknown) => {
      if (!whole.bytes) whole.stream.destroy();
      throw e;
    });
    fileHeaders(reply, whole.entry, opts.download);
    reply.header('content-length', String(whole.entry.size));
    return reply.code(200).send(out(whole));
  }
  if (range.kind === 'range') {
    reply.header('content-range', contentRange(range.start, range.end, entry.size));
    reply.header('content-length', String(length));
    return reply.code(206).send(out(opened));
  }
  reply.header('content-length', String(entry.size));
  return reply.code(200).send(out(opened));
}

/**
 * A GET that is neither conditional nor ranged: the file can be opened at
 * once and sent whole (one lookup instead of a stat and an open; on S3 one
 * GetObject instead of HeadObject + GetObject). Conditional and range
 * requests go through serveFile, so a 304 or a slice of a big file never
 * starts reading it.
 */
export function isPlainGet(request: FastifyRequest): boolean {
  return request.method === 'GET' && !asksForPart(request.headers);
}

/** A file opened whole for a plain GET: the open descriptor's entry gives the headers. */
export function sendWhole(reply: FastifyReply, opened: Opened, download: boolean) {
  fileHeaders(reply, opened.entry, download);
  reply.header('content-length', String(opened.entry.size));
  return reply.code(200).send(body(opened));
}

/** A small file already read whole goes out as one buffer, anything else as its stream. */
const body = (opened: Opened): Buffer | Readable => opened.bytes ?? opened.stream;

export function fileHeaders(reply: FastifyReply, entry: Entry, download: boolean): void {
  reply.headers(fileHeaderFields(entry, download));
}
