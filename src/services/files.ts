import type { Readable } from 'node:stream';
import { AppError } from '../domain/errors.js';
import { compareCodePoints, nameProblem } from '../domain/names.js';
import { isRoot, isSameOrInside, keyChild, type StorageKey } from '../domain/storage-path.js';
import { listAll, type ByteRange, type Entry, type StorageBackend } from '../storage/backend.js';
import { storageCall } from './storage-errors.js';

export type FilesService = ReturnType<typeof createFilesService>;

/** Folders first, then names in code-point order (CONTRACT "GET / HEAD"). */
export function compareEntries(a: Entry, b: Entry): number {
  if (a.isFile !== b.isFile) return a.isFile ? 1 : -1;
  return compareCodePoints(a.name, b.name);
}

/** A file part of a multipart upload, consumed in order. */
export type UploadPart = { readonly filename: string; readonly stream: Readable };

/**
 * The storage rules of the contract, over the StorageBackend seam. Knows no
 * HTTP and no credentials: routes pass in a validated key the access check
 * has already allowed (src/domain/access.ts), get entries and streams back,
 * and set the headers themselves.
 */
export function createFilesService(deps: { backend: StorageBackend; maxUploadBytes: number }) {
  const { backend } = deps;
  const maxBytes = Number.isFinite(deps.maxUploadBytes) ? deps.maxUploadBytes : undefined;
  const forbidden = () => new AppError('unauthorized', 'You are not allowed to access this path.');

  async function statOrThrow(key: StorageKey): Promise<Entry> {
    const entry = await storageCall(() => backend.stat(key));
    if (!entry) throw new AppError('not_found', 'No file or folder exists at this path.');
    return entry;
  }

  return {
    maxUploadBytes: maxBytes,

    async stat(key: StorageKey): Promise<Entry> {
      // A user's root exists from their first request on, whatever made the user (CLI, another node).
      const entry = await storageCall(() => backend.stat(key));
      if (entry) return entry;
      if (isRoot(key)) await storageCall(() => backend.mkdir(key, { parents: true, existOk: true }));
      return statOrThrow(key);
    },

    async list(key: StorageKey): Promise<Entry[]> {
      const entries = await storageCall(() => listAll(backend, key));
      return entries.sort(compareEntries);
    },

    read(key: StorageKey, range?: ByteRange): Promise<{ stream: Readable; entry: Entry }> {
      return storageCall(() => backend.read(key, range));
    },

    /** Raw-body upload to a file path: created or atomically replaced, parents created. */
    async writeFile(key: StorageKey, body: Readable, opts: { signal?: AbortSignal; sizeHint?: number } = {}): Promise<string> {
      if (isRoot(key)) throw new AppError('is_a_directory', 'A folder is at this path, where a file is needed.');
      const entry = await storageCall(() => backend.write(key, body, { ifExists: 'replace', maxBytes, signal: opts.signal, sizeHint: opts.sizeHint }));
      return entry.name;
    },

    /**
     * Multipart upload into a folder (created with its parents): each part is
     * one file named by the last segment of its filename. A taken name gets
     * `name (1).ext` … unless overwrite. Returns the final names in order.
     */
    async writeParts(dir: StorageKey, parts: AsyncIterable<UploadPart>, opts: { overwrite: boolean; signal?: AbortSignal }): Promise<string[]> {
      await storageCall(() => backend.mkdir(dir, { parents: true, existOk: true }), { already_exists: 'A file is in the way where a folder is needed.' });
      const written: string[] = [];
      for await (const part of parts) {
        const problem = nameProblem(part.filename);
        if (problem) {
          part.stream.resume();
          throw new AppError('invalid_name', `The file name "${part.filename}" is not allowed: ${problem}.`);
        }
        const entry = await storageCall(() =>
          backend.write(keyChild(dir, part.filename), part.stream, { ifExists: opts.overwrite ? 'replace' : 'rename', maxBytes, signal: opts.signal }),
        );
        written.push(entry.name);
      }
      if (written.length === 0) throw new AppError('bad_request', 'The upload contains no file part (a part with a filename).');
      return written;
    },

    async delete(key: StorageKey): Promise<void> {
      if (isRoot(key)) throw new AppError('bad_request', 'The root of your storage cannot be deleted.');
      await storageCall(() => backend.delete(key, { recursive: true }));
    },

    async createFolder(key: StorageKey): Promise<void> {
      if (isRoot(key)) throw new AppError('already_exists', 'The root of your storage always exists.');
      await storageCall(() => backend.mkdir(key, { parents: true, existOk: false }), { already_exists: 'A file or folder already exists at this path.' });
    },

    async move(from: StorageKey, to: StorageKey, overwrite: boolean): Promise<void> {
      if (from.user !== to.user) throw forbidden();
      if (isRoot(from)) throw new AppError('bad_request', 'The root of your storage cannot be moved.');
      if (isRoot(to)) throw new AppError('bad_request', 'new_path must name a file or folder inside your storage, not its root.');
      if (isSameOrInside(to, from)) throw new AppError('into_itself', 'A folder cannot be moved into itself.');
      await storageCall(() => backend.move(from, to, { overwrite }), { already_exists: 'The destination already exists; send "overwrite": true to replace it.' });
    },

    statOrThrow,
  };
}
