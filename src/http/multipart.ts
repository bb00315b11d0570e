import type { IncomingHttpHeaders } from 'node:http';
import { PassThrough, type Readable } from 'node:stream';
import { Busboy, type BusboyFileStream, type BusboyInstance } from '@fastify/busboy';
import { AppError } from '../domain/errors.js';
import { sentence } from '../lib/i18n/sentences.js';

/** One file part of a multipart/form-data body. */
export type FilePart = {
  /** The part's `name` parameter ('' if absent). */
  readonly fieldName: string;
  /**
   * The filename exactly as sent, path segments and all. A lone RFC 5987
   * `filename*` is decoded; when both are sent busboy keeps the plain
   * `filename` (RFC 7578 §4.2 forbids `filename*` in forms anyway).
   */
  readonly filename: string;
  /** The part's own Content-Type, lower-cased; `text/plain` if absent (RFC 7578). */
  readonly mimeType: string;
  /** The part's bytes; consume it fully (or resume() it) before asking for the next part. */
  readonly stream: Readable;
};

/** Bounds on what one multipart body may hold. */
export type MultipartLimits = {
  /** Largest file part in bytes; a bigger one errors its stream and the iteration with `too_large`. Default unlimited. */
  readonly maxFileBytes?: number | undefined;
  /** Most parts (files and fields together); one more → `bad_request`. Default 10 000. */
  readonly maxParts?: number | undefined;
  /** Largest plain field in bytes (fields are discarded, never buffered); bigger → `bad_request`. Default 1 MiB. */
  readonly maxFieldBytes?: number | undefined;
  /** Header lines read per part; busboy ignores the rest (it gives no signal to detect it). Default 32. */
  readonly maxHeaderPairs?: number | undefined;
};

const DEFAULT_MAX_PARTS = 10_000;
const DEFAULT_MAX_FIELD_BYTES = 1024 * 1024;
const DEFAULT_MAX_HEADER_PAIRS = 32;
const STREAM_HWM = 64 * 1024;

/**
 * Streams the file parts of a multipart/form-data request body, one at a
 * time, without buffering a file: `body` is the raw Node request (or any
 * Readable) and `headers` its headers. Parts without a filename, or with an
 * empty one (what a browser sends for an empty file input), are drained and
 * skipped. The request is read only as fast as the caller consumes each
 * part's stream, and only once iteration starts.
 *
 * Throws AppError('bad_request') at once if the Content-Type is not
 * multipart/form-data with a boundary. During iteration: a body that ends
 * before its closing boundary, one that errors or is aborted, too many parts
 * or an oversized field → `bad_request`; a file over `maxFileBytes` →
 * `too_large`. A stream still open when that happens errors with the same
 * AppError, so a consumer piping it to disk fails too. Iteration may be
 * abandoned early (break/throw): the request is then left paused, unread,
 * for the HTTP server to discard.
 */
export function multipartFiles(body: Readable, headers: IncomingHttpHeaders, limits: MultipartLimits = {}): AsyncGenerator<FilePart, void, undefined> {
  const contentType = headers['content-type'];
  if (contentType === undefined || !isFormData(contentType)) {
    throw new AppError('bad_request', sentence('apiDetail.multipartType'));
  }
  if (boundaryOf(contentType) === '') {
    throw new AppError('bad_request', sentence('apiDetail.multipartBoundary'));
  }
  return iterate(body, { ...headers, 'content-type': contentType }, limits);
}

/** The last segment of a client-sent filename, splitting on both `/` and `\` (Windows browsers send full paths). */
export function lastSegment(filename: string): string {
  return filename.slice(Math.max(filename.lastIndexOf('/'), filename.lastIndexOf('\\')) + 1);
}

function isFormData(contentType: string): boolean {
  return contentType.split(';', 1)[0]?.trim().toLowerCase() === 'multipart/form-data';
}

function boundaryOf(contentType: string): string {
  const m = /;[ \t]*boundary[ \t]*=[ \t]*(?:"([^"]*)"|([^;\s]*))/i.exec(contentType);
  return m?.[1] ?? m?.[2] ?? '';
}

const bad = (message: string, cause?: unknown) => new AppError('bad_request', message, { cause });

async function* iterate(body: Readable, headers: IncomingHttpHeaders & { 'content-type': string }, limits: MultipartLimits): AsyncGenerator<FilePart, void, undefined> {
  const maxFieldBytes = limits.maxFieldBytes ?? DEFAULT_MAX_FIELD_BYTES;
  let parser: BusboyInstance;
  try {
    parser = Busboy({
      headers,
      highWaterMark: STREAM_HWM,
      fileHwm: STREAM_HWM,
      // The service, not the parser, reduces the name: busboy's own basename would turn ".." into "".
      preservePath: true,
      // Every part comes through 'file', so fields are drained here rather than buffered by busboy.
      isPartAFile: () => true,
      limits: {
        fileSize: limits.maxFileBytes ?? Infinity,
        parts: limits.maxParts ?? DEFAULT_MAX_PARTS,
        headerPairs: limits.maxHeaderPairs ?? DEFAULT_MAX_HEADER_PAIRS,
      },
    });
  } catch (e) {
    throw bad(sentence('apiDetail.multipartBadType'), e);
  }

  const queue: { part: FilePart; file: BusboyFileStream; out: PassThrough }[] = [];
  const open = new Set<PassThrough>();
  let failure: AppError | undefined;
  let finished = false;
  let stopped = false;
  // Set while the pump holds the body back until the consumer takes the queued parts.
  let resumeWhenTaken = false;
  let wake: (() => void) | undefined;
  const notify = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };

  const fail = (error: AppError) => {
    failure ??= error;
    for (const s of open) s.destroy(failure);
    open.clear();
    notify();
  };

  parser.on('file', (fieldName, file, filename, _encoding, mimeType) => {
    // Busboy's own errors on a part also reach the parser's 'error' event, which
    // fail() turns into one AppError for every open stream; so the consumer never
    // sees busboy's raw Error (a 500) and an unheard error cannot crash the process.
    file.on('error', () => {});
    if (filename === undefined || filename === '') {
      let size = 0;
      file.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxFieldBytes) fail(bad(sentence('apiDetail.multipartField', { max: maxFieldBytes })));
      });
      return;
    }
    const stream = new PassThrough({ highWaterMark: STREAM_HWM });
    stream.on('error', () => {});
    open.add(stream);
    stream.once('close', () => open.delete(stream));
    file.once('limit', () => fail(new AppError('too_large', `A file is larger than this server accepts (${limits.maxFileBytes} bytes).`)));
    file.pipe(stream);
    queue.push({ part: { fieldName: fieldName ?? '', filename, mimeType, stream }, file, out: stream });
    notify();
  });
  parser.on('partsLimit', () => fail(bad(sentence('apiDetail.multipartParts', { max: limits.maxParts ?? DEFAULT_MAX_PARTS }))));
  parser.on('error', (e: unknown) => fail(bad(sentence('apiDetail.multipartMalformed'), e)));
  parser.on('finish', () => {
    finished = true;
    notify();
  });

  // Hand-driven rather than body.pipe(parser): one chunk in flight at a time,
  // and the body waits while parts are queued, so many small files cannot pile
  // up in memory ahead of a slow consumer. Within a part busboy itself holds
  // back its write callback until the part's stream is read.
  const onData = (chunk: Buffer) => {
    body.pause();
    parser.write(chunk, () => {
      if (stopped || failure) return;
      if (queue.length > 0) resumeWhenTaken = true;
      else body.resume();
    });
  };
  const onEnd = () => parser.end();
  const onError = (e: unknown) => fail(bad(sentence('apiDetail.uploadInterrupted'), e));
  const onClose = () => {
    if (!body.readableEnded) onError(new Error('request closed before its end'));
  };
  const stop = () => {
    stopped = true;
    body.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
    body.pause();
  };

  // Nothing would ever arrive, and the loop below would wait forever.
  if (body.readableEnded || body.destroyed) throw bad(sentence('apiDetail.bodyConsumed'));
  try {
    body.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose);
    for (;;) {
      if (failure) throw failure;
      const next = queue.shift();
      if (next) {
        if (queue.length === 0 && resumeWhenTaken) {
          resumeWhenTaken = false;
          body.resume();
        }
        yield next.part;
        if (!next.file.readableEnded) {
          // The consumer moved on without reading all of this part: discard the
          // rest, or busboy would wait on it forever.
          next.file.unpipe(next.out);
          next.out.destroy();
          next.file.resume();
        }
        continue;
      }
      if (finished) return;
      await new Promise<void>((resolve) => (wake = resolve));
    }
  } finally {
    stop();
    for (const s of open) s.destroy();
  }
}
