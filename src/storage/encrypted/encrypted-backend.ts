import type { Readable } from 'node:stream';
import { keyChild, keyId } from '../../domain/storage-path.js';
import type { StorageKey } from '../../domain/storage-path.js';
import { HEADER_SIZE, plainSize, storedSize, type MasterKey } from '../../lib/encryption/format.js';
import { sealingStream } from '../../lib/encryption/seal-stream.js';
import type { Entry, ListedEntry, Opened, StagedFile, StorageBackend, WalkEntry, WriteOptions } from '../backend.js';
import { encryptedResumable } from './resumable.js';
import { mapLimit } from '../../lib/map-limit.js';
import { plainMemo } from './plain-memo.js';
import { bytesOf, knownKey, openDecrypted, plainEntry, type DecryptError, type Decryption, type StoredFile } from './open.js';

export type EncryptionKeys = {
  /** The key every new file's data key is wrapped with. */
  readonly current: MasterKey;
  /** Every key a stored header may name (the current one among them). */
  readonly all: readonly MasterKey[];
  /** Told of every stored file that fails to decrypt; the read fails too. */
  readonly onBadFile: (label: string, e: DecryptError) => void;
};

/**
 * The memo of small files' plaintext (plain-memo.ts): files of up to 16 KiB,
 * where a decipher's setup costs more than the AES; 16 MiB per process holds
 * about 2,000 of 4 KiB (stored and plain bytes both count).
 */
const MEMO_FILE_MAX = 16 * 1024;
const MEMO_BYTES = 16 * 1024 * 1024;

/** How many headers a listing page reads at once (one storage read each, on S3 a GET). */
const HEADER_READS = 16;
/** Walk entries whose headers are read together. */
const WALK_BATCH = 64;

/** The options of a plaintext write as the storage below sees them: limits in stored bytes. */
function storedOptions(opts: WriteOptions): WriteOptions {
  return {
    ...opts,
    ...(opts.maxBytes === undefined ? {} : { maxBytes: storedSize(opts.maxBytes) }),
    ...(opts.sizeHint === undefined ? {} : { sizeHint: storedSize(opts.sizeHint) }),
  };
}

/** The entry of an opened file whose bytes are not wanted. */
function drained(opened: Opened): Entry {
  if (!opened.bytes) opened.stream.destroy();
  return opened.entry;
}

/** An entry this layer wrote: the size is the plaintext's. */
const written = (e: Entry): Entry => (e.isFile ? { ...e, size: plainSize(e.size) ?? e.size } : e);

/**
 * Encryption at rest as a layer over any StorageBackend (CONTRACT
 * "Encryption at rest"): every file written through it is stored in the
 * format of src/lib/encryption/format.ts, every read gives plaintext (plain
 * files written before the key, told apart by the header's magic, as they
 * are), and every entry it reports has the plaintext size. Everything above
 * (uploads, tus, WebDAV, shares, zips, thumbnails, search, versions) goes through
 * it unaware; the backends below store bytes they cannot read.
 *
 * Moves, copies, the trash and deletes pass bytes through unchanged. The
 * sizes the backend below reports in its events, trash and versions are
 * plaintext sizes already (its SizeView, src/storage/size-view.ts), so usage,
 * quotas, search and the change feed count plaintext.
 */
export function encryptedBackend(inner: StorageBackend, keys: EncryptionKeys): StorageBackend {
  const d: Decryption = { keys: keys.all, onBadFile: keys.onBadFile, cache: new Map(), memo: plainMemo(MEMO_BYTES, MEMO_FILE_MAX) };
  const seal = (body: Readable): Readable => sealingStream(keys.current, body);

  const treeFile = (key: StorageKey): StoredFile => ({ label: keyId(key), open: (range) => inner.read(key, range), stat: () => inner.stat(key) });

  async function header(key: StorageKey): Promise<Buffer | undefined> {
    try {
      return await bytesOf(await inner.read(key, { start: 0, end: HEADER_SIZE - 1 }));
    } catch {
      // Gone or changed since it was listed: the listing shows what it saw.
      return undefined;
    }
  }
  const plainIn = <E extends ListedEntry>(dir: StorageKey, page: readonly E[]) => mapLimit(page, HEADER_READS, (e) => plainEntry(e, () => header(keyChild(dir, e.name))));

  const staged = (s: StagedFile): StagedFile => ({
    size: plainSize(s.size) ?? s.size,
    commit: async (opts) => written(await s.commit(opts)),
    discard: () => s.discard(),
  });

  function listSorted(dir: StorageKey, opts: { etags: true }): AsyncIterable<Entry[]>;
  function listSorted(dir: StorageKey, opts?: { etags?: boolean }): AsyncIterable<ListedEntry[]>;
  async function* listSorted(dir: StorageKey, opts?: { etags?: boolean }): AsyncIterable<ListedEntry[]> {
    for await (const page of inner.listSorted(dir, opts)) yield await plainIn(dir, page);
  }

  return {
    capabilities: inner.capabilities,
    events: inner.events,
    init: () => inner.init(),
    sweep: (opts) => inner.sweep(opts),
    async stat(key) {
      const e = await inner.stat(key);
      // A version read here before is known to be encrypted: no header read (a Range request's stat).
      const known = e?.isFile ? knownKey(d, keyId(key), e.etag) : undefined;
      if (e && known) return { ...e, size: plainSize(e.size, known.version) ?? e.size };
      return e && plainEntry(e, () => header(key));
    },
    parents: (key) => inner.parents(key),
    async *list(dir) {
      for await (const page of inner.list(dir)) yield await plainIn(dir, page);
    },
    listSorted,
    lookBeforeWrite: (key) => inner.lookBeforeWrite(key),
    async *walk(dir, opts) {
      const plainWalked = (batch: readonly WalkEntry[]) => mapLimit(batch, HEADER_READS, async (w) => ({ path: w.path, entry: await plainEntry(w.entry, () => header(w.path.reduce((k, name) => keyChild(k, name), dir))) }));
      // In batches, so a walk's header reads overlap as a listing page's do; the order stays the walk's.
      let batch: WalkEntry[] = [];
      for await (const w of inner.walk(dir, opts)) {
        batch.push(w);
        if (batch.length === WALK_BATCH) {
          yield* await plainWalked(batch);
          batch = [];
        }
      }
      yield* await plainWalked(batch);
    },
    read: (key, range) => openDecrypted(d, treeFile(key), range),
    async stage(key, body, opts) {
      return staged(await inner.stage(key, seal(body), storedOptions(opts)));
    },
    async write(key, body, opts) {
      return written(await inner.write(key, seal(body), storedOptions(opts)));
    },
    resumable: encryptedResumable(inner.resumable, keys),
    mkdir: (dir, opts) => inner.mkdir(dir, opts),
    delete: (key, opts) => inner.delete(key, opts),
    // The file may be one written before this version of the format (or before the key): its header says.
    redate: async (key, modified) => plainEntry(await inner.redate(key, modified), () => header(key)),
    move: (from, to, opts) => inner.move(from, to, opts),
    copy: (from, to, opts) => inner.copy(from, to, opts),
    trash: {
      ...inner.trash,
      readFile(owner, id, path) {
        const open = () => inner.trash.readFile(owner, id, path);
        return openDecrypted(d, { label: `trash/${owner}/${id}/${path}`, open, stat: async () => drained(await open()) }, undefined);
      },
      rewriteFile: (owner, id, path, body) => inner.trash.rewriteFile(owner, id, path, seal(body)),
    },
    versions: {
      keep: (key, id) => inner.versions.keep(key, id),
      read(owner, id, name, range) {
        let entry: Entry | undefined;
        const file: StoredFile = {
          label: `versions/${owner}/${id}`,
          open: async (r) => {
            const opened = await inner.versions.read(owner, id, name, r);
            entry = opened.entry;
            return opened;
          },
          stat: async () => entry ?? drained(await inner.versions.read(owner, id, name, { start: 0, end: 0 })),
        };
        return openDecrypted(d, file, range);
      },
      rewrite: (owner, id, body) => inner.versions.rewrite(owner, id, seal(body)),
      remove: (owner, id) => inner.versions.remove(owner, id),
      removeOwner: (owner) => inner.versions.removeOwner(owner),
    },
    ping: () => inner.ping(),
    close: () => inner.close(),
  };
}
