import { Readable } from 'node:stream';
import { compareCodePoints } from '../domain/names.js';
import { isRoot, keyParent, type StorageKey } from '../domain/storage-path.js';
import type { StorageEvents } from './events.js';
import type { Entry, ListedEntry, WalkEntry } from './entry.js';
import type { ResumableStaging } from './resumable.js';
import type { IndexedKind } from './name-index.js';
import { STORED_CHUNK } from '../lib/encryption/format.js';

/**
 * The storage seam, second edition: bytes and folders of every user,
 * addressed only by validated StorageKeys. Implementations: local disk
 * (src/storage/local/) and S3-compatible object storage (src/storage/s3/).
 * Every implementation passes src/storage/conformance/ (index.test-suite.ts).
 *
 * Failures a caller can act on are StorageErrors (src/storage/errors.ts);
 * anything else is an internal error.
 */
export { holdsSource, isStorageError, StorageError, type StorageErrorCode } from './errors.js';
export type { Entry, ListedEntry, WalkEntry } from './entry.js';

/** Inclusive byte range, already validated against the file's size. */
export type { IndexedKind } from './name-index.js';

export type ByteRange = {
  readonly start: number;
  readonly end: number;
  /**
   * Memory the caller lends for the bytes: a backend that reads the range
   * whole may read it into the start of this buffer (when it is big enough)
   * and give that view as Opened.bytes instead of fresh memory. The caller
   * uses the bytes before it lends the buffer again. Backends that stream or
   * fetch the bytes (S3) ignore it.
   */
  readonly into?: Buffer;
};

export type IfExists = 'fail' | 'replace' | 'rename';

export type WriteOptions = {
  /**
   * What to do when the key is taken:
   * - `fail`: throw `already_exists`;
   * - `replace`: replace a file atomically (readers see the old or the new bytes, whole);
   *   a folder there still gives `is_a_directory`;
   * - `rename`: keep the existing entry and claim the first free `collisionName(name, n)`,
   *   race-free against concurrent writers.
   */
  readonly ifExists: IfExists;
  /** More bytes than this → `too_large`, and nothing is left behind. */
  readonly maxBytes?: number;
  /** The body's length when the client declared it: lets a backend size its parts. */
  readonly sizeHint?: number;
  /**
   * The caller has just looked: the key's parent is a folder and nothing is at the key (a WebDAV
   * PUT must know, for 201 or 204 and RFC 4918's 409). A backend may skip looking again; whether
   * the name is still free when the file takes it, it decides as always (link(2), If-None-Match).
   */
  readonly freeNameInFolder?: boolean;
  /**
   * With freeNameInFolder: the caller's look also found every folder above the key in the index
   * (WriteLook.aboveIndexed), so the write makes none and its event says the folders were looked at.
   */
  readonly aboveIndexed?: boolean;
  /**
   * The file's modification time as its client set it (SFTP's setstat, `sftp -p`, `rsync -t` over
   * sshfs): on a backend whose capabilities say `keepsModified`, the entry written, stat and
   * listings show it (whole seconds and below, as the backend keeps them); elsewhere the file is
   * dated by its write.
   */
  readonly modified?: Date;
  readonly signal?: AbortSignal;
};

/**
 * Bytes received and durable but not yet visible: exactly one of commit or
 * discard must follow. A crash before either leaves staging that the
 * backend's init/sweep removes, never a partial file.
 */
/** What a caller may check at the instant a staged file takes its name. */
export type CommitOptions = {
  /**
   * Called with a `replace` commit's name held (its edit lease: no other
   * change of that name can come in between), just before the new file takes
   * it, with the size of the file it replaces (0 when none): what the commit
   * really frees. Throwing aborts the commit. Quotas use it to charge a
   * replacing upload exactly what it adds, however the name changed since
   * the upload looked.
   */
  readonly beforeReplace?: (previousSize: number) => Promise<void>;
};

export type WalkOptions = {
  /**
   * Told of each file that a folder of the same name hides (only an object store has both at one name,
   * CONTRACT "Backends and nodes"): the walk leaves it out, and `file-cloud index` names it.
   */
  readonly onHidden?: (path: readonly string[]) => void;
  /**
   * Given by a rescan: the walk leaves out what a change of this deployment is in the middle of (an
   * object store's folder move copies key by key; its destination halfway is not a tree to index)
   * and names each such path here once ([] for the walked folder itself). The change's own event
   * indexes it. Local disk changes a folder in one rename and names none.
   */
  readonly onBusy?: (path: readonly string[]) => void;
};

/**
 * What is at a name and at its parent, as a write would find them (StorageBackend.lookBeforeWrite).
 * `aboveIndexed`: the index holds every folder above the name (a backend whose writes ask the index).
 */
export type WriteLook = { readonly at: IndexedKind | undefined; readonly parent: IndexedKind | undefined; readonly aboveIndexed?: boolean };

export type CopyOptions = {
  readonly overwrite: boolean;
  /**
   * Called before each file's bytes are copied, with the bytes the copy will
   * have written in all once that file is in: the exact size of the version
   * it is about to copy (a file that changes meanwhile is measured again, never
   * copied at a size it was not metered at). Throwing stops the copy there;
   * what it copied so far stays, for the caller to remove. Quotas meter a
   * copy with it: files written into the source while it is copied are
   * charged what they really hold.
   */
  readonly beforeFile?: (total: number) => Promise<void>;
};

export interface StagedFile {
  readonly size: number;
  /** SHA-256 (hex) of the staged bytes, when hashed on their way in (src/storage/hashing.ts). */
  readonly sha256?: string | undefined;
  /** Makes the file visible at its key under the WriteOptions' rule; returns the entry written. */
  commit(opts?: CommitOptions): Promise<Entry>;
  /** Drops the staged bytes. Safe to call after a failed commit. */
  discard(): Promise<void>;
}

export type Capabilities = {
  /** `write` with `replace` is atomic for concurrent readers. */
  readonly atomicReplace: boolean;
  /** Folders are emulated from key prefixes and markers (object stores) rather than real. */
  readonly emulatedDirs: boolean;
  /** A file moves without its bytes passing through File Cloud. */
  readonly serverSideMove: boolean;
  /**
   * A folder moves in one atomic step. When false, a folder move is a
   * journaled job: readers may see it in progress, and a crash halfway is
   * finished by `sweep` or `init`, never left half done without a record.
   */
  readonly atomicFolderMove: boolean;
  /** A write's `modified`, and `redate`, give a file its time from then on (until it is written again). */
  readonly keepsModified: boolean;
};

export interface StorageBackend {
  readonly capabilities: Capabilities;

  /** Every mutation is reported here after it happened (usage, search and thumbnails subscribe). */
  readonly events: StorageEvents;

  /** Prepares the backend and removes or finishes what a crash left. Called once at startup. */
  init(): Promise<void>;

  /**
   * Background upkeep, safe to run on any node at any time: removes staging
   * left by dead writers (older than `staleMs` without progress) and finishes
   * interrupted journaled work.
   */
  sweep(opts: { staleMs: number }): Promise<void>;

  /** The entry at key, or undefined when nothing is there. The root of a user is a folder. */
  stat(key: StorageKey): Promise<Entry | undefined>;

  /**
   * The folders on the way to key (its parents below the user root,
   * outermost first) as far as they exist as folders; the list stops at the
   * first missing one or one that is a file. One walk: its cost is linear in
   * the path's depth, where a stat of every parent would walk from the root
   * each time (quadratic; docs/security.md, "One request holding a worker with a deep path").
   */
  parents(key: StorageKey): Promise<Entry[]>;

  /**
   * The entries of a folder in pages, unsorted, so a folder of any size never
   * sits in memory whole. Errors (`not_found` / `not_a_directory`) surface on
   * the first page.
   */
  list(dir: StorageKey): AsyncIterable<Entry[]>;

  /**
   * The entries of a folder in the listing order of the contract (folders
   * first, then names by code point: `compareListed`), in pages, under the
   * same rules as list (what list omits is omitted here). Each backend
   * sorts once, as cheaply as its storage allows: the local disk sorts
   * names before any stat, so only names are held while entries stream.
   * With `etags`, every entry carries its validator (WebDAV's getetag);
   * without, entries may lack it. Errors (`not_found` / `not_a_directory`)
   * surface on the first page.
   */
  listSorted(dir: StorageKey, opts: { etags: true }): AsyncIterable<Entry[]>;
  listSorted(dir: StorageKey, opts?: { etags?: boolean }): AsyncIterable<ListedEntry[]>;

  /**
   * Every file and folder below dir, each folder before its contents, links
   * never followed. For zips, search indexing and usage.
   */
  walk(dir: StorageKey, opts?: WalkOptions): AsyncIterable<WalkEntry>;

  /**
   * What a write to key would find at it and at its parent (the user root is a folder), asked where
   * the backend's writes ask (local disk: the disk; S3: the index in the metadata store, CONTRACT
   * "Backends and nodes"), for a caller that must answer before it writes (a WebDAV PUT's 201 or 204,
   * and 409 for a missing parent). The write itself still decides (link(2), If-None-Match).
   */
  lookBeforeWrite(key: StorageKey): Promise<WriteLook>;

  /**
   * Opens a file for reading. The entry describes exactly the bytes the stream
   * yields, even if the file is replaced meanwhile. `not_found` / `is_a_directory`.
   */
  read(key: StorageKey, range?: ByteRange): Promise<Opened>;

  /**
   * Receives body for key without making it visible. Checks that can be
   * made before the bytes arrive (a file in the parent path, `fail` onto a
   * taken name) may fail here early.
   */
  stage(key: StorageKey, body: Readable, opts: WriteOptions): Promise<StagedFile>;

  /**
   * stage + commit: streams body into a file at key, creating missing parent
   * folders. A failure, abort or limit leaves neither a partial file nor
   * staging garbage. Returns the entry written (its name differs from the
   * key's with `rename`).
   */
  write(key: StorageKey, body: Readable, opts: WriteOptions): Promise<Entry>;

  /** Staging for resumable (tus) uploads: bytes that arrive over many requests, outside every user's tree. */
  readonly resumable: ResumableStaging;

  /**
   * Creates a folder. `parents` creates missing parents; `existOk` makes an
   * existing folder a success. A file in the way → `not_a_directory`
   * (or `already_exists` when it is at the key itself).
   */
  /**
   * Gives a stored file the modification time its client set, its bytes untouched (SFTP's setstat
   * on a closed file, `rsync -t` through sshfs). On a backend that does not keep such times
   * (capabilities.keepsModified false) nothing changes. Returns the file's entry; reported as the
   * file replaced by its own bytes (`copyOf` itself: an index keeps its hash). Nothing there:
   * not_found; a folder: is_a_directory.
   */
  redate(key: StorageKey, modified: Date): Promise<Entry>;

  mkdir(dir: StorageKey, opts: { parents: boolean; existOk: boolean }): Promise<void>;

  /** Deletes a file, or a folder with everything in it when `recursive`. `not_found`. */
  delete(key: StorageKey, opts: { recursive: boolean }): Promise<void>;

  /**
   * Moves or renames a file or folder (same user; the service checks that).
   * Creates the destination's parents. Taken destination → `already_exists`
   * unless `overwrite`, which replaces it (a folder with all it holds).
   * `into_itself` when `to` is `from` or lies below it; `not_found` for a missing source.
   */
  move(from: StorageKey, to: StorageKey, opts: { overwrite: boolean }): Promise<void>;

  /** Copies a file or a folder with its contents; the same rules as move, the source stays. */
  copy(from: StorageKey, to: StorageKey, opts: CopyOptions): Promise<void>;

  /**
   * The owners' trash (--trash-days): an area outside every user's tree
   * (local: `data/trash/`, S3: `PREFIX.file-cloud/trash/`), where a deleted
   * item is kept under an id until it is restored or purged.
   */
  readonly trash: TrashArea;

  /**
   * Earlier contents of files (--versions): kept outside every user's tree
   * (local: `data/versions/`, S3: `PREFIX.file-cloud/versions/`).
   */
  readonly versions: VersionArea;

  /** Resolves when the storage answers (for health checks); throws a StorageError when it does not. */
  ping(): Promise<void>;

  /** Releases resources (open handles, clients). */
  close(): Promise<void>;
}

/**
 * What a move into the trash took away from the owner's tree. `etag`: a file's ETag as it moved (taken
 * under the name's lock), so the caller can tell whether a hash it holds is of exactly these bytes;
 * `files`: the same for each file of a folder, by its path below the folder ('x/y.txt').
 */
export type Trashed = { readonly isFile: boolean; readonly size: number; readonly etag?: string | undefined; readonly files?: ReadonlyMap<string, string> | undefined };

/**
 * The trash area of a backend. An item is addressed by its owner and an id
 * the caller chose (a random one), and holds exactly one file or folder.
 * Moves in and out are crash-safe: after a kill the item is at its path or
 * in the trash (the local disk renames; S3 runs a journaled job that init or
 * sweep finishes), never both and never neither.
 */
export interface TrashArea {
  /**
   * Moves the file or folder at key into the trash as `<owner>/<id>`; emits a
   * `deleted` event with `kept: true`. `not_found` when nothing is there.
   */
  put(key: StorageKey, id: string): Promise<Trashed>;
  /**
   * The item `<owner>/<id>` when the trash holds it (a move in finished),
   * undefined when it does not; `busy` while a move in or out of that item is
   * still under way in a live process (ask again later). A move whose process
   * died is finished first.
   */
  find(owner: string, id: string): Promise<Trashed | undefined | 'busy'>;
  /**
   * Moves the item back to `to`, whose name must be free (`already_exists`
   * otherwise; parents are created); emits `created` with `kept: true`.
   */
  restore(owner: string, id: string, to: StorageKey): Promise<Trashed>;
  /** Deletes the item for good; nothing there is no error. Returns the bytes it held. */
  remove(owner: string, id: string): Promise<number>;
  /** Deletes every item of the owner (the account was removed). */
  removeOwner(owner: string): Promise<void>;
  /**
   * The stored files of item `<owner>/<id>`, each by its path in the item
   * (its name first: `report.pdf`, `photos/2024/a.jpg`); none when it is gone.
   * For `file-cloud encryption migrate` and `rotate`, which rewrite them.
   */
  files(owner: string, id: string): AsyncIterable<string>;
  /** Opens one of an item's files (a path `files` gave), whole; `not_found` when it is gone. */
  readFile(owner: string, id: string, path: string): Promise<Opened>;
  /**
   * Replaces one of an item's files with body's bytes in one atomic step, as
   * VersionArea.rewrite does (only for bytes that read back as the same
   * contents); `not_found` when it is gone.
   */
  rewriteFile(owner: string, id: string, path: string, body: Readable): Promise<void>;
}

/** The version store of a backend: a file's earlier bytes, by owner and an id the caller chose. */
export interface VersionArea {
  /**
   * Keeps the bytes of the file now at key as version `<key.user>/<id>`; for
   * CommitOptions.beforeReplace, whose caller holds the name (so the bytes
   * kept are exactly the ones being replaced). Returns their size, or
   * undefined when no file is there (nothing kept).
   */
  keep(key: StorageKey, id: string): Promise<number | undefined>;
  /** Opens a version; `name` is the file's name, for the entry. `not_found` when it is gone. */
  read(owner: string, id: string, name: string, range?: ByteRange): Promise<Opened>;
  /**
   * Replaces a version's bytes with body's, in one atomic step (readers see the old bytes or the new,
   * whole): `file-cloud encryption migrate` and `rotate` rewrite a version in its stored form. Only for
   * bytes that read back as the same contents; `not_found` when the version is gone.
   */
  rewrite(owner: string, id: string, body: Readable): Promise<void>;
  /** Deletes a version; a missing one is no error. */
  remove(owner: string, id: string): Promise<void>;
  /** Deletes every version of the owner's files (the account was removed). */
  removeOwner(owner: string): Promise<void>;
}

/**
 * An open file: a stream of the requested bytes, and the entry they belong
 * to. A backend that has already read a small range whole gives it as
 * `bytes` too (the same bytes the stream yields), so a server can send one
 * buffer instead of piping a stream; the stream is made only if asked for.
 */
export type Opened = { readonly stream: Readable; readonly entry: Entry; readonly bytes?: Buffer };

/**
 * Ranges up to this size are read whole by the backends (Opened.bytes) and
 * sent as one buffer: piping a stream was the largest cost of a 4 KiB GET
 * after the token check, on local disk and on S3 (docs/performance.md).
 * 64 KiB, or a little more: one stored chunk of an encrypted file (64 KiB of
 * plaintext and its nonce and tag), so a small range of one is read whole
 * too, where a stream costs many times the chunk's decryption.
 */
export const WHOLE_READ_MAX = Math.max(64 * 1024, STORED_CHUNK);

/** An Opened for bytes already in memory: the stream made only if someone asks for it. */
class BytesOpened implements Opened {
  #stream: Readable | undefined;
  constructor(
    readonly entry: Entry,
    readonly bytes: Buffer,
  ) {}
  get stream(): Readable {
    return (this.#stream ??= Readable.from([this.bytes]));
  }
}

/** An Opened for bytes already in memory. */
export function openedBytes(entry: Entry, bytes: Buffer): Opened {
  return new BytesOpened(entry, bytes);
}

/** All entries of a folder in one array: for small folders and tests; big listings should stream the pages. */
export async function listAll(backend: StorageBackend, dir: StorageKey): Promise<Entry[]> {
  const all: Entry[] = [];
  for await (const page of backend.list(dir)) all.push(...page);
  return all;
}

/** The contract's listing order (CONTRACT "GET / HEAD"): folders first, then names in code-point order. */
export function compareListed(a: Pick<Entry, 'isFile' | 'name'>, b: Pick<Entry, 'isFile' | 'name'>): number {
  if (a.isFile !== b.isFile) return a.isFile ? 1 : -1;
  return compareCodePoints(a.name, b.name);
}

/**
 * listSorted for a backend whose own order is not the contract's (S3 lists
 * keys by UTF-8 bytes with `a-b/` before `a/`): collects the entries of
 * `list` and sorts them once. Memory grows with the folder (the entries,
 * not the answer); yields pages of `pageSize`.
 */
export async function* collectAndSort(pages: AsyncIterable<Entry[]>, pageSize = 1000): AsyncGenerator<Entry[]> {
  const all: Entry[] = [];
  for await (const page of pages) for (const e of page) all.push(e);
  all.sort(compareListed);
  for (let i = 0; i < all.length; i += pageSize) yield all.slice(i, i + pageSize);
}

/** lookBeforeWrite for a backend whose writes ask storage itself: the two stats at once. */
export async function lookByStat(backend: Pick<StorageBackend, 'stat'>, key: StorageKey): Promise<WriteLook> {
  const kind = (e: Entry | undefined): IndexedKind | undefined => e && (e.isFile ? 'file' : 'folder');
  const [at, parent] = await Promise.all([backend.stat(key), isRoot(key) ? undefined : backend.stat(keyParent(key))]);
  return { at: kind(at), parent: kind(parent) };
}

/** write in terms of stage and commit, for backends with nothing faster. */
export async function stageAndCommit(backend: Pick<StorageBackend, 'stage'>, key: StorageKey, body: Readable, opts: WriteOptions): Promise<Entry> {
  const staged = await backend.stage(key, body, opts);
  try {
    return await staged.commit();
  } catch (e) {
    await staged.discard().catch(() => undefined);
    throw e;
  }
}
