import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../domain/errors.js';
import { nameProblem } from '../domain/names.js';
import { keyId, keyName, type StorageKey } from '../domain/storage-path.js';
import { ifRangeMatches, isNotModified } from '../http/conditional.js';
import { contentDisposition } from '../http/content-disposition.js';
import { contentRange, parseRange, unsatisfiedRange } from '../http/range.js';
import { storageCall } from '../services/storage-errors.js';
import type { StorageBackend } from '../storage/backend.js';
import type { ZipCrcRepo } from '../store/types.js';
import { layoutZip, zipEtag, type ZipEntry, type ZipSourceEntry } from '../zip/layout.js';
import { TreeChangedError, zipBytes, type CrcCache, type ZipIO } from '../zip/stream.js';
import { metered, type Charge } from './metered.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The shared CRC cache of folder zips (build-app decorates it; without it zips still work, resumes read more). */
    zipCrcs?: ZipCrcRepo;
  }
}

export type FolderZipOptions = {
  readonly backend: StorageBackend;
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
 * GET/HEAD of a folder as a zip (CONTRACT "Folder downloads (zip)"): the
 * layout is planned from one walk of the tree, so Content-Length, ETag,
 * 304, Range and If-Range work exactly as for a file; the body is produced
 * by src/zip/stream.ts, reading only the file ranges it needs. If a file
 * changed since the walk, the connection is cut rather than finished with
 * bytes of another archive.
 */
export async function sendFolderZip(request: FastifyRequest, reply: FastifyReply, opts: FolderZipOptions): Promise<FastifyReply> {
  const { backend, folder } = opts;
  const root = opts.archiveName ?? (keyName(folder) || folder.user);
  // A name another tool put on disk that our name rules refuse (`..\..\x.bat`) never reaches an
  // archive: extractors on Windows would take its backslashes for folders (zip-slip).
  const skipped = (path: readonly string[]) => request.log.warn({ entry: path.join('/') }, 'zip: entry skipped, its name breaks the name rules');
  const layout = layoutZip(root, await plan(backend, folder, opts.names, skipped));
  const etag = zipEtag(layout);

  reply.header('content-type', 'application/zip');
  reply.header('etag', etag);
  reply.header('accept-ranges', 'bytes');
  reply.header('cache-control', 'private, no-cache');
  reply.header('content-disposition', contentDisposition(`${root}.zip`));
  if (isNotModified(request.headers, etag, NO_DATE)) return reply.code(304).send();
  const ifRange = request.headers['if-range'];
  const rangeHeader = ifRangeMatches(typeof ifRange === 'string' ? ifRange : undefined, etag, NO_DATE) ? request.headers.range : undefined;
  const range = parseRange(rangeHeader, layout.size);
  if (range.kind === 'unsatisfiable') {
    throw new AppError('range_not_satisfiable', 'The requested range is outside the archive.', { headers: { 'content-range': unsatisfiedRange(layout.size) } });
  }
  if (request.method === 'HEAD') {
    reply.header('content-length', String(layout.size));
    return reply.code(200).send();
  }
  const start = range.kind === 'range' ? range.start : 0;
  const end = range.kind === 'range' ? range.end : layout.size - 1;
  const settle = await opts.charge?.(end - start + 1, layout.size);

  const crcs = request.server.zipCrcs;
  const io: ZipIO = {
    open: (e, r) => openLaidOut(backend, folder, e, r),
    crcKey: (e) => crcKey(folder, e),
    crcs: crcs && cacheOf(crcs),
    warn: (err) => request.log.warn({ err }, 'zip CRC cache failed'),
  };
  const bytes = Readable.from(abortOnFailure(zipBytes(layout, { start, end }, io), request, reply), { objectMode: false, highWaterMark: 2 * 1024 * 1024 });
  const body = settle ? metered(reply, bytes, settle) : bytes;
  reply.header('content-length', String(end - start + 1));
  if (range.kind === 'range') {
    reply.header('content-range', contentRange(start, end, layout.size));
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

/** The tree to zip, from one walk (or one stat/walk per selected name). */
async function plan(backend: StorageBackend, folder: StorageKey, names: readonly string[] | undefined, skipped: (path: readonly string[]) => void): Promise<ZipSourceEntry[]> {
  const top = await storageCall(() => backend.stat(folder));
  if (!top) throw new AppError('not_found', 'No folder exists at this path.');
  if (top.isFile) throw new AppError('not_a_directory', 'Only a folder can be downloaded as a zip.');
  const sources: ZipSourceEntry[] = [{ path: [], isFolder: true, size: 0, modified: top.modified, validator: '' }];
  // A folder whose name is refused is skipped with everything below it.
  const refused: string[][] = [];
  const add = (path: readonly string[], e: { isFile: boolean; size: number; modified: Date; etag: string }): void => {
    if (refused.some((r) => r.every((s, i) => path[i] === s))) return;
    if (path.some((s) => nameProblem(s) !== undefined)) {
      refused.push([...path]);
      skipped(path);
      return;
    }
    sources.push({ path, isFolder: !e.isFile, size: e.isFile ? e.size : 0, modified: e.modified, validator: e.isFile ? e.etag : '' });
  };
  const walk = async (below: readonly string[]): Promise<void> => {
    const dir = { ...folder, segments: [...folder.segments, ...below] };
    await storageCall(async () => {
      for await (const w of backend.walk(dir)) add([...below, ...w.path], w.entry);
    });
  };
  if (names === undefined) {
    await walk([]);
    return sources;
  }
  for (const name of new Set(names)) {
    const problem = nameProblem(name);
    if (problem) throw new AppError('invalid_name', `The name "${name}" is invalid: ${problem}.`);
  }
  for (const name of [...new Set(names)]) {
    const entry = await storageCall(() => backend.stat({ ...folder, segments: [...folder.segments, name] }));
    if (!entry) throw new AppError('not_found', `Nothing named "${name}" exists in this folder.`);
    add([name], entry);
    if (!entry.isFile) await walk([name]);
  }
  return sources;
}

async function openLaidOut(backend: StorageBackend, folder: StorageKey, e: ZipEntry, range: { start: number; end: number }): Promise<Readable> {
  // `...folder` keeps a share's bound (StorageKey.within): links stay inside the shared folder.
  const key = { ...folder, segments: [...folder.segments, ...e.source.path] };
  let opened;
  try {
    opened = await backend.read(key, range);
  } catch (err) {
    throw new TreeChangedError(`opening ${keyId(key)} failed: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (opened.entry.etag !== e.source.validator || opened.entry.size !== e.dataEnd - e.dataStart) {
    opened.stream.destroy();
    throw new TreeChangedError(`${keyId(key)} changed since the zip was planned`);
  }
  return opened.stream;
}

/** Names the content: the file's path and its storage ETag and size (a hash keeps keys short). */
function crcKey(folder: StorageKey, e: ZipEntry): string {
  const id = keyId({ user: folder.user, segments: [...folder.segments, ...e.source.path] });
  return createHash('sha256').update(`${id}\0${e.source.validator}\0${e.dataEnd - e.dataStart}`).digest('base64url');
}

function cacheOf(repo: ZipCrcRepo): CrcCache {
  return { getMany: (keys) => repo.getMany(keys), putMany: (rows) => repo.putMany(rows, Date.now()) };
}

/** `name=` of a zip request, repeated or not; absent → the whole folder. */
export function zipNames(value: unknown): string[] | undefined {
  if (value === undefined) return undefined;
  const names = Array.isArray(value) ? value : [value];
  if (!names.every((n): n is string => typeof n === 'string')) throw new AppError('invalid_name', 'Each name= must be a name.');
  return names;
}
