import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { AppError } from '../domain/errors.js';
import { nameProblem } from '../domain/names.js';
import { keyId, keyName, type StorageKey } from '../domain/storage-path.js';
import type { Clock } from '../lib/clock.js';
import type { StorageBackend } from '../storage/backend.js';
import type { ZipCrcRepo } from '../store/zip-crcs.js';
import { layoutZip, zipEtag, type ZipEntry, type ZipSourceEntry } from '../zip/layout.js';
import { TreeChangedError, zipBytes, type ZipIO } from '../zip/stream.js';
import { storageCall } from './storage-errors.js';
import { sentence } from '../lib/i18n/sentences.js';

export type ZipService = ReturnType<typeof createZipService>;

/** A folder zip planned from one walk of its tree: its exact size and ETag, and its bytes on demand. */
export type PlannedZip = {
  /** The top-level folder inside the zip and the download's name without `.zip`. */
  readonly root: string;
  readonly size: number;
  readonly etag: string;
  /**
   * The archive's bytes `start`..`end` (inclusive), reading only the file ranges they need. Fails
   * with TreeChangedError when a file changed since the plan: the bytes would be another archive's.
   */
  bytes(range: { start: number; end: number }, warn: (err: unknown) => void): AsyncGenerator<Buffer>;
};

/**
 * Folder zips (CONTRACT "Folder downloads (zip)") for every front end that offers them (the storage
 * API, share links): the layout is planned from one walk of the tree, so a zip has an exact size and
 * ETag; src/zip/ lays it out and streams it; the CRCs of files already zipped are kept in the
 * metadata store, so a resumed download does not read the files before its range again.
 */
export function createZipService(deps: { backend: StorageBackend; crcs: ZipCrcRepo; clock: Clock }) {
  const { backend } = deps;
  const cache = { getMany: (keys: readonly string[]) => deps.crcs.getMany(keys), putMany: (rows: readonly { key: string; crc: number }[]) => deps.crcs.putMany(rows, deps.clock.now()) };

  return {
    /**
     * Plans the zip of `folder` (or of only `names` directly inside it). A name another tool put in
     * storage that the name rules refuse (`..\..\x.bat`) never reaches an archive (extractors on
     * Windows would take its backslashes for folders): it is left out with all below it, and told to `skipped`.
     */
    async plan(folder: StorageKey, opts: { names?: readonly string[]; archiveName?: string; skipped: (path: string) => void }): Promise<PlannedZip> {
      const root = opts.archiveName ?? (keyName(folder) || folder.user);
      const layout = layoutZip(root, await walkTree(backend, folder, opts.names, opts.skipped));
      return { root, size: layout.size, etag: zipEtag(layout), bytes: (range, warn) => zipBytes(layout, range, ioOf(folder, warn)) };
    },
  };

  function ioOf(folder: StorageKey, warn: (err: unknown) => void): ZipIO {
    return { open: (e, r) => openLaidOut(backend, folder, e, r), crcKey: (e) => crcKey(folder, e), crcs: cache, warn };
  }
}

/** The tree to zip, from one walk (or one stat/walk per selected name). */
async function walkTree(backend: StorageBackend, folder: StorageKey, names: readonly string[] | undefined, skipped: (path: string) => void): Promise<ZipSourceEntry[]> {
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
      skipped(path.join('/'));
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
    if (problem) throw new AppError('invalid_name', sentence('apiDetail.zipNameInvalid', { name, problem }));
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
