import type { FolderEtags } from './folder-etags.js';
import type { Readable } from 'node:stream';
import { AppError } from '../domain/errors.js';
import { nameProblem } from '../domain/names.js';
import type { Writer } from '../domain/principal.js';
import { isRoot, isSameOrInside, keyChild, type StorageKey } from '../domain/storage-path.js';
import { ifMatchPasses } from '../lib/conditional.js';
import { openedBytes, type ByteRange, type CommitOptions, type Entry, type ListedEntry, type Opened, type StagedFile, type StorageBackend, type WriteLook, type WriteOptions } from '../storage/backend.js';
import { storageCall } from './storage-errors.js';
import { createDigestMemo } from './digest-memo.js';
import { commitInOrder } from './part-commits.js';
import type { UsageService } from './usage.js';
import type { EntryIdentity, SearchRepo } from '../store/search.js';
import { preconditionsPass, type WritePreconditions } from '../lib/conditional.js';
import { sentence } from '../lib/i18n/sentences.js';

/** A raw upload's options: who writes, its preconditions (If-Match, If-None-Match), the SHA-256 the client sent. */
export type WriteFileOptions = { writer: Writer; signal?: AbortSignal; sizeHint?: number; ifMatch?: string; ifNoneMatch?: string; sha256?: string; freeNameInFolder?: boolean; aboveIndexed?: boolean; modified?: Date };

export type FilesService = ReturnType<typeof createFilesService>;


/** A file part of a multipart upload, consumed in order. */
export type UploadPart = { readonly filename: string; readonly stream: Readable };

/**
 * The storage rules of the contract, over the StorageBackend seam. Knows no
 * HTTP and no credentials: routes pass in a validated key the access check
 * has already allowed (src/domain/access.ts), get entries and streams back,
 * and set the headers themselves.
 */
export function createFilesService(deps: {
  backend: StorageBackend;
  maxUploadBytes: number;
  usage: UsageService;
  trash?: { readonly enabled: boolean; put(key: StorageKey): Promise<void> };
  versions?: { readonly enabled: boolean; keep(key: StorageKey): Promise<void>; replacing<T>(key: StorageKey, replace: () => Promise<T>): Promise<T> };
  folderEtags?: FolderEtags;
  /** The index's ids and hashes (sync fields: docs/api.md "Sync fields"). */
  index?: Pick<SearchRepo, 'identities'>;
}) {
  const { backend, usage } = deps;
  const maxBytes = Number.isFinite(deps.maxUploadBytes) ? deps.maxUploadBytes : undefined;
  const nothingThere = () => new AppError('not_found', 'No file or folder exists at this path.');

  async function statOrThrow(key: StorageKey): Promise<Entry> {
    const entry = await storageCall(() => backend.stat(key));
    if (!entry) throw nothingThere();
    return entry;
  }

  /** Refuses a write whose If-Match / If-None-Match does not hold for what is there now (412). */
  function checkIfMatch(pre: WritePreconditions, current: Entry | undefined): void {
    if (current && !current.isFile) throw new AppError('is_a_directory', 'A folder is at this path, where a file is needed.');
    if (!ifMatchPasses(pre.ifMatch, current?.etag)) {
      throw new AppError('precondition_failed', current ? 'The file has changed since you read it (its ETag differs from If-Match).' : 'The file no longer exists (If-Match needs it).');
    }
    if (!preconditionsPass({ ifNoneMatch: pre.ifNoneMatch }, current?.etag)) {
      throw new AppError('precondition_failed', pre.ifNoneMatch?.trim() === '*' ? 'A file exists at this path (If-None-Match: * needs the name free).' : 'The file still has an ETag that If-None-Match names.');
    }
  }

  /**
   * The If-Match / If-None-Match of a DELETE or a Move, against the item the URL names: a file's
   * ETag, a folder's tree ETag (the listing's). 412 when they do not hold.
   */
  async function checkPreconditions(key: StorageKey, pre: WritePreconditions): Promise<void> {
    if (pre.ifMatch === undefined && pre.ifNoneMatch === undefined) return;
    const entry = await storageCall(() => backend.stat(key));
    const etag = entry === undefined ? undefined : entry.isFile ? entry.etag : await deps.folderEtags?.tag(key.user, key.segments.join('/'));
    if (!preconditionsPass(pre, entry && (etag ?? ''))) throw new AppError('precondition_failed', 'The item does not match If-Match / If-None-Match (it changed, or is gone).');
  }

  const digests = createDigestMemo();

  /** The entry with its SHA-256 when the index holds one for exactly these bytes (the same ETag). */
  async function withDigest<T extends Entry>(key: StorageKey, entry: T): Promise<T> {
    if (!entry.isFile || entry.sha256 !== undefined || !deps.index) return entry;
    const path = key.segments.join('/');
    const remembered = digests.get(key.user, path, entry.etag);
    if (remembered !== undefined) return { ...entry, sha256: remembered };
    const known = (await deps.index.identities(key.user, [path]).catch(() => undefined))?.get(path);
    if (!known?.sha256 || known.etag !== entry.etag) return entry;
    digests.set(key.user, path, entry.etag, known.sha256);
    return { ...entry, sha256: known.sha256 };
  }

  const withOpenedDigest = async (key: StorageKey, opened: Opened): Promise<Opened> => {
    const entry = await withDigest(key, opened.entry);
    if (entry === opened.entry) return opened;
    return opened.bytes ? openedBytes(entry, opened.bytes) : new WithEntry(opened, entry);
  };

  /** Refuses staged bytes whose SHA-256 is not the one the client sent (Repr-Digest / Content-Digest). */
  function checkDigest(expected: string | undefined, staged: StagedFile): void {
    if (expected === undefined) return;
    if (staged.sha256 !== expected) throw new AppError('digest_mismatch', 'The bytes received do not have the SHA-256 the request\'s digest header names; nothing was written.');
  }

  /**
   * Runs `before` (a last check), then commits the staged files in order, each with its
   * CommitOptions (`options(i)`); on a failure the ones not committed are discarded.
   */
  async function commitAll(staged: readonly StagedFile[], before?: () => Promise<void>, options?: (i: number) => CommitOptions | undefined): Promise<Entry[]> {
    const entries: Entry[] = [];
    try {
      await before?.();
      for (const [i, file] of staged.entries()) entries.push(await storageCall(() => file.commit(options?.(i))));
    } catch (e) {
      await Promise.all(staged.slice(entries.length).map((f) => f.discard().catch(() => undefined)));
      throw e;
    }
    return entries;
  }

  /**
   * The folder's entries in the listing order, page by page, sorted once by
   * the backend. The first page is read before this resolves, so a missing
   * folder or an unreachable store is the contract's error before a byte of
   * the answer; a later page's storage error is translated the same way but
   * can only end the answer.
   */
  function listSorted(key: StorageKey, opts: { etags: true }): Promise<AsyncIterable<Entry[]>>;
  function listSorted(key: StorageKey): Promise<AsyncIterable<ListedEntry[]>>;
  async function listSorted(key: StorageKey, opts?: { etags: true }): Promise<AsyncIterable<ListedEntry[]>> {
    const pages = backend.listSorted(key, opts)[Symbol.asyncIterator]();
    const next = () => storageCall(() => pages.next());
    const first = await next();
    return (async function* () {
      try {
        for (let r = first; !r.done; r = await next()) yield r.value;
      } finally {
        // The client went away (or a page failed): the backend's listing stops here too.
        await pages.return?.();
      }
    })();
  }

  /** Runs `replace`, which puts another file at key, keeping the file there as a version (--versions). */
  const keepingReplaced = <T>(key: StorageKey, replace: () => Promise<T>): Promise<T> => (deps.versions ? deps.versions.replacing(key, replace) : replace());

  return {
    maxUploadBytes: maxBytes,

    async stat(key: StorageKey): Promise<Entry> {
      // A user's root exists from their first request on, whatever made the user (CLI, another node).
      const entry = await storageCall(() => backend.stat(key));
      if (entry) return entry;
      if (!isRoot(key)) throw nothingThere();
      await storageCall(() => backend.mkdir(key, { parents: true, existOk: true }));
      return statOrThrow(key);
    },

    listSorted,

    /**
     * The tree ETag of the folder at `key` (the caller knows it is one): it changes whenever anything
     * beneath the folder changes; undefined while the journal has stamped nothing there. One indexed
     * read of the metadata store, no storage call: a listing asks storage once (fast-read.test.ts).
     */
    async folderEtag(key: StorageKey): Promise<string | undefined> {
      return deps.folderEtags?.tag(key.user, key.segments.join('/'));
    },

    /** Opens a file for an answer: its entry carries the SHA-256 when known (Repr-Digest). */
    async read(key: StorageKey, range?: ByteRange): Promise<Opened> {
      return withOpenedDigest(key, await storageCall(() => backend.read(key, range)));
    },

    withDigest,
    checkPreconditions,

    /** The index's id and hash of each of `keys` (one owner's), by path ('a/b'); those it has. */
    async identities(user: string, paths: readonly string[]): Promise<Map<string, EntryIdentity>> {
      return deps.index ? deps.index.identities(user, paths) : new Map();
    },

    /** The file at key opened whole, or undefined when a folder is there (a GET that may be either). */
    async readIfFile(key: StorageKey): Promise<Opened | undefined> {
      try {
        return await withOpenedDigest(key, await storageCall(() => backend.read(key)));
      } catch (e) {
        if (e instanceof AppError && e.code === 'is_a_directory') return undefined;
        throw e;
      }
    },

    /**
     * Raw-body upload to a file path: created or atomically replaced, parents
     * created. `ifMatch` (the If-Match header) makes it conditional on the
     * current file's ETag: 412 before a byte is read, and checked again just
     * before the new bytes take the name.
     */
    async writeFile(
      key: StorageKey,
      body: Readable,
      opts: WriteFileOptions,
    ): Promise<Entry> {
      if (isRoot(key)) throw new AppError('is_a_directory', 'A folder is at this path, where a file is needed.');
      // If-None-Match: * — the name must be free when the file takes it: the backend's own "only if free" commit decides (link(2), a conditional put).
      const onlyNew = opts.ifNoneMatch?.trim() === '*';
      const write: WriteOptions = { ifExists: onlyNew ? 'fail' : 'replace', maxBytes, signal: opts.signal, sizeHint: opts.sizeHint, freeNameInFolder: opts.freeNameInFolder, aboveIndexed: opts.aboveIndexed, modified: opts.modified };
      const quota = await usage.quotaOf(key.user);
      // --versions: the file replaced is kept as a version, as the new one takes its name (services/versions.ts).
      const versioning = deps.versions?.enabled === true;
      const conditional = opts.ifMatch !== undefined || opts.ifNoneMatch !== undefined;
      const existing = quota !== undefined || conditional ? await storageCall(() => backend.stat(key)) : undefined;
      checkIfMatch(opts, existing);
      const taken = (e: unknown) => {
        if (onlyNew && e instanceof AppError && e.code === 'already_exists') throw new AppError('precondition_failed', 'A file exists at this path (If-None-Match: * needs the name free).');
        throw e;
      };
      if (quota === undefined && !conditional && !versioning && opts.sha256 === undefined) {
        return storageCall(() => backend.write(key, body, write));
      }
      // What the upload frees: the file it replaces (nothing when it is kept as a version).
      const credit = existing?.isFile && !versioning ? existing.size : 0;
      const reservation = await usage.reserve(key.user, opts.writer, quota === undefined ? 0 : Math.max(0, (opts.sizeHint ?? 0) - credit));
      try {
        const metered = quota === undefined ? body : usage.meter(body, reservation, credit);
        const staged = await storageCall(() => backend.stage(key, metered, write)).catch(taken);
        // With the name held, the file the commit really replaces is known: if it shrank or went
        // meanwhile (another request), it frees less than was credited and the rest must fit too.
        // If-Match is checked there too, so no other write of the name comes between check and commit.
        const exact: CommitOptions = {
          beforeReplace: async (freed) => {
            if (opts.ifMatch !== undefined || opts.ifNoneMatch !== undefined) checkIfMatch(opts, await storageCall(() => backend.stat(key)));
            if (quota !== undefined && freed < credit) await reservation.cover(staged.size - freed);
            if (versioning) await deps.versions?.keep(key);
          },
        };
        const [entry] = await commitAll(
          [staged],
          async () => {
            checkDigest(opts.sha256, staged);
            if (conditional) checkIfMatch(opts, await storageCall(() => backend.stat(key)));
          },
          () => exact,
        ).catch(taken);
        return entry as Entry;
      } finally {
        await reservation.release();
      }
    },

    /**
     * Multipart upload into a folder (created with its parents): each part is
     * one file named by the last segment of its filename. A taken name gets
     * `name (1).ext` … unless overwrite. Returns the final names in order.
     */
    async writeParts(dir: StorageKey, parts: AsyncIterable<UploadPart>, opts: { writer: Writer; overwrite: boolean; signal?: AbortSignal }): Promise<Entry[]> {
      await storageCall(() => backend.mkdir(dir, { parents: true, existOk: true }), { already_exists: 'A file is in the way where a folder is needed.' });
      const quota = await usage.quotaOf(dir.user);
      const write: WriteOptions = { ifExists: opts.overwrite ? 'replace' : 'rename', maxBytes, signal: opts.signal };
      const partName = (part: UploadPart) => {
        const problem = nameProblem(part.filename);
        if (problem) {
          part.stream.resume();
          throw new AppError('invalid_name', sentence('apiDetail.fileNameNotAllowed', { name: part.filename, problem }));
        }
        return part.filename;
      };
      const written: Entry[] = [];
      // --versions with overwrite: each replaced file is kept as a version as the part takes its name.
      const versioning = opts.overwrite && deps.versions?.enabled === true;
      if (quota === undefined && !versioning) {
        const stagePart = async (part: UploadPart) => {
          const key = keyChild(dir, partName(part));
          return { name: key.segments.at(-1) as string, file: await storageCall(() => backend.stage(key, part.stream, write)) };
        };
        for (const entry of await commitInOrder(parts, stagePart, (file) => storageCall(() => file.commit()))) written.push(entry);
      } else {
        // Under a quota every part is staged first and committed only when all fit, so an
        // upload that passes the quota in its last part writes nothing at all.
        const reservation = await usage.reserve(dir.user, opts.writer);
        const staged: StagedFile[] = [];
        // What the upload frees: each file it replaces, once, however many parts carry its name
        // (crediting it per part let nine empty parts make room for a tenth part of 9× the file).
        const credited = new Map<string, { key: StorageKey; size: number }>();
        const partNames: string[] = [];
        const credit = () => {
          let n = 0;
          for (const c of credited.values()) n += c.size;
          return n;
        };
        try {
          let before = 0;
          try {
            for await (const part of parts) {
              const key = keyChild(dir, partName(part));
              if (opts.overwrite && !credited.has(key.segments.at(-1) as string)) {
                const there = await storageCall(() => backend.stat(key));
                // A file kept as a version frees nothing.
                credited.set(key.segments.at(-1) as string, { key, size: there?.isFile && !versioning ? there.size : 0 });
              }
              const freed = credit();
              const file = await storageCall(() => backend.stage(key, usage.meter(part.stream, reservation, freed - before), write));
              staged.push(file);
              partNames.push(key.segments.at(-1) as string);
              before += file.size;
            }
          } catch (e) {
            await Promise.all(staged.map((f) => f.discard().catch(() => undefined)));
            throw e;
          }
          // A replaced file that shrank or went meanwhile (another request) frees less than was
          // credited: looked at again before any part is committed (so such an upload is usually
          // refused whole), and exactly, with its name held, as the first part of that name commits.
          const recredit = async (c: { size: number }, size: number) => {
            if (size >= c.size) return;
            c.size = size;
            await reservation.cover(before - credit());
          };
          const firstOfName = new Map<number, { key: StorageKey; size: number }>();
          for (const [name, c] of credited) firstOfName.set(partNames.indexOf(name), c);
          const entries = await commitAll(
            staged,
            async () => {
              for (const c of credited.values()) {
                const now = await storageCall(() => backend.stat(c.key));
                await recredit(c, now?.isFile ? now.size : 0);
              }
            },
            (i) => {
              const c = firstOfName.get(i);
              return (
                c && {
                  beforeReplace: async (freed) => {
                    if (versioning) await deps.versions?.keep(c.key);
                    else await recredit(c, freed);
                  },
                }
              );
            },
          );
          for (const entry of entries) written.push(entry);
        } finally {
          await reservation.release();
        }
      }
      if (written.length === 0) throw new AppError('bad_request', sentence('apiDetail.noFilePart'));
      return written;
    },

    /**
     * The one delete of every front end (API, WebDAV, the web UI, /basic/, a
     * grant's writer). With --trash-days the item goes to its owner's trash
     * (services/trash.ts); without, it is gone for good (the interface document's rule).
     */
    async delete(key: StorageKey, pre: WritePreconditions = {}): Promise<void> {
      if (isRoot(key)) throw new AppError('bad_request', sentence('apiDetail.rootDelete'));
      await checkPreconditions(key, pre);
      if (deps.trash?.enabled) return deps.trash.put(key);
      await storageCall(() => backend.delete(key, { recursive: true }));
    },

    /** A stored file takes the modification time its client set, where the backend keeps such times (its bytes, quota and versions untouched). */
    async redate(key: StorageKey, modified: Date): Promise<Entry> {
      return storageCall(() => backend.redate(key, modified));
    },

    async createFolder(key: StorageKey): Promise<void> {
      if (isRoot(key)) throw new AppError('already_exists', 'The root of your storage always exists.');
      await storageCall(() => backend.mkdir(key, { parents: true, existOk: false }), { already_exists: 'A file or folder already exists at this path.' });
    },

    /**
     * A move within one owner's tree, or between two (moveAcross). The caller has checked both keys
     * (the operation layer, src/services/operations.ts).
     */
    async move(from: StorageKey, to: StorageKey, overwrite: boolean, writer: Writer, pre: WritePreconditions = {}): Promise<void> {
      if (from.user !== to.user) return moveAcross(from, to, overwrite, writer, pre);
      if (isRoot(from)) throw new AppError('bad_request', sentence('apiDetail.rootMove'));
      if (isRoot(to)) throw new AppError('bad_request', sentence('apiDetail.toOwnRoot'));
      if (isSameOrInside(to, from)) throw new AppError('into_itself', 'A folder cannot be moved into itself.');
      await checkPreconditions(from, pre);
      const move = () => storageCall(() => backend.move(from, to, { overwrite }), { already_exists: 'The destination already exists; send "overwrite": true to replace it.' });
      if (!overwrite) return move();
      if (deps.trash?.enabled) {
        const [source, replacing] = await Promise.all([statOrThrow(from), storageCall(() => backend.stat(to))]);
        if (replacing && keptAs(replacing, source) === 'trash') await deps.trash.put(to);
      }
      await keepingReplaced(to, move);
    },

    /**
     * The API's Copy: a file or folder copied to `to`, in its owner's tree or, through a writable
     * grant the caller has checked, another's. Move's rules: the root is neither copied nor
     * replaced, nothing goes onto or into itself, a taken destination only with `overwrite`. The
     * bytes count against the destination owner's quota (copyReplacing: 507 keeps nothing), and
     * with --versions a file replaced by a file is kept as a version, as a Move's replace is.
     */
    async copy(from: StorageKey, to: StorageKey, overwrite: boolean, writer: Writer): Promise<void> {
      if (isRoot(from)) throw new AppError('bad_request', sentence('apiDetail.rootCopy'));
      if (isRoot(to)) throw new AppError('bad_request', sentence('apiDetail.toRoot'));
      if (isSameOrInside(to, from)) throw new AppError('into_itself', 'Nothing can be copied onto itself or into itself.');
      const source = await statOrThrow(from);
      const replacing = await storageCall(() => backend.stat(to));
      if (replacing && !overwrite) throw new AppError('already_exists', 'The destination already exists; send "overwrite": true to replace it.');
      // What it replaces is kept as a version or in the trash (removeReplaced), whoever copies.
      await copyReplacing(from, to, { source, replacing, writer });
    },

    copyReplacing,

    removeReplaced,

    statOrThrow,

    /** What is at a name and at its parent, as a write finds them: one look of the backend (on S3 its index), where two stats cost a HEAD and a listing each. */
    lookBeforeWrite: (key: StorageKey): Promise<WriteLook> => storageCall(() => backend.lookBeforeWrite(key)),
  };

  /**
   * A move between two owners' trees (one's own and a folder shared with write permission): no
   * backend moves across roots, so the item is copied under the destination owner's quota (each
   * file committed whole, as an upload; 507 keeps nothing) and then removed from the source.
   * The caller has checked both keys (decide, with the grants).
   */
  async function moveAcross(from: StorageKey, to: StorageKey, overwrite: boolean, writer: Writer, pre: WritePreconditions = {}): Promise<void> {
    if (isRoot(from)) throw new AppError('bad_request', sentence('apiDetail.rootMove'));
    if (isRoot(to)) throw new AppError('bad_request', sentence('apiDetail.toRoot'));
    await checkPreconditions(from, pre);
    const source = await statOrThrow(from);
    const replacing = await storageCall(() => backend.stat(to));
    if (replacing && !overwrite) throw new AppError('already_exists', 'The destination already exists; send "overwrite": true to replace it.');
    await copyReplacing(from, to, { source, replacing, writer });
    await storageCall(() => backend.delete(from, { recursive: true }));
  }

  /**
   * Where what an overwrite replaces goes, whoever overwrites it (CONTRACT "Trash and versions";
   * docs/security.md "The owner's safety net"): a file replaced by a file is kept as a version
   * (--versions), as a PUT keeps it; anything else (a folder, or any replace with versions off) goes
   * to the owner's trash (--trash-days), as a DELETE would; undefined: it is gone for good.
   */
  function keptAs(replacing: { isFile: boolean }, source: { isFile: boolean }): 'version' | 'trash' | undefined {
    if (replacing.isFile && source.isFile && deps.versions?.enabled) return 'version';
    return deps.trash?.enabled ? 'trash' : undefined;
  }

  /** Takes away what is at `to` before a COPY or MOVE puts `source` there, keeping it where keptAs says. */
  async function removeReplaced(to: StorageKey, replacing: { isFile: boolean }, source: { isFile: boolean }): Promise<void> {
    const remove = () => storageCall(() => backend.delete(to, { recursive: true }));
    switch (keptAs(replacing, source)) {
      case 'version':
        return keepingReplaced(to, remove);
      case 'trash':
        return deps.trash?.put(to);
      default:
        return remove();
    }
  }

  /** Bytes of the files at key (a file's own, a folder's walked; links are not followed, as the copy does not follow them). */
  async function bytesAt(key: StorageKey, entry: { isFile: boolean; size: number } | undefined): Promise<number> {
    if (!entry) return 0;
    if (entry.isFile) return entry.size;
    let size = 0;
    for await (const w of backend.walk(key)) if (w.entry.isFile) size += w.entry.size;
    return size;
  }

  /**
   * Copies a file or folder within one owner's tree onto `to`, first removing
   * `replacing` (what is there now), under the owner's quota (WebDAV COPY).
   * A copy that does not fit as things stand is refused (507) before anything
   * changes. Past that look, nothing measured earlier is trusted: the replaced
   * destination is removed first, so usage drops by what its removal really
   * freed (it may have shrunk since), and the copy is metered file by file
   * (CopyOptions.beforeFile) at the exact version each is copied at (files
   * grown in the source meanwhile are charged what they hold). A file that no
   * longer fits stops the copy with 507, and what it had copied is removed.
   * `beforeChange` runs after the quota's look and before the first change;
   * `removed` after the destination is gone (the caller's own records of it).
   */
  async function copyReplacing(
    from: StorageKey,
    to: StorageKey,
    opts: { source: Entry; replacing: Entry | undefined; writer: Writer; beforeChange?: () => Promise<void>; removed?: () => Promise<void> },
  ): Promise<void> {
    const reservation = await usage.reserve(to.user, opts.writer);
    try {
      const metered = (await usage.quotaOf(to.user)) !== undefined;
      // What is replaced frees its bytes only when it is not kept (as a version or in the trash).
      const freed = opts.replacing && keptAs(opts.replacing, opts.source) === undefined ? await bytesAt(to, opts.replacing) : 0;
      if (metered) await reservation.cover((await bytesAt(from, opts.source)) - freed);
      await opts.beforeChange?.();
      if (opts.replacing) {
        await removeReplaced(to, opts.replacing, opts.source);
        await opts.removed?.();
        // Its removal's usage change must be in the store before the copy is metered against it.
        await usage.flush();
      }
      try {
        await storageCall(() => backend.copy(from, to, { overwrite: true, beforeFile: metered ? (total) => reservation.cover(total) : undefined }));
      } catch (e) {
        if (e instanceof AppError && e.code === 'quota_exceeded') {
          // Nothing is kept: the files copied before the one that did not fit go too.
          await storageCall(() => backend.delete(to, { recursive: true })).catch((gone: unknown) => {
            if (!(gone instanceof AppError && gone.code === 'not_found')) throw gone;
          });
        }
        throw e;
      }
    } finally {
      await reservation.release();
    }
  }
}

/**
 * An Opened with another entry (its digest added), the stream still the original's, made only when
 * asked for. A class: an object made with the opened one as its prototype, as this once was, made
 * V8 turn that object into a prototype on every GET, which cost far more than the rest of the read
 * (docs/performance.md, "The digest's copy of the opened file").
 */
class WithEntry implements Opened {
  constructor(
    private readonly opened: Opened,
    readonly entry: Entry,
  ) {}
  get stream() {
    return this.opened.stream;
  }
  get bytes() {
    return this.opened.bytes;
  }
}
