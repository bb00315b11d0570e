import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash, type Hash } from 'node:crypto';
import { Readable } from 'node:stream';
import type { StorageKey } from '../domain/storage-path.js';
import type { StagedFile, StorageBackend } from './backend.js';
import type { Entry } from './entry.js';
import { createEventHub, type StorageEvent } from './events.js';
import type { ResumableStaging } from './resumable.js';

/**
 * What the write under way knows about the bytes it commits: their SHA-256 (hex, from its tap or a
 * resumable upload's running hash), or the item a copy comes from (the index gives the copies their
 * sources' hashes: src/services/search.ts).
 */
type Writing = { readonly tap?: HashTap; readonly sha256?: string; readonly copyOf?: { readonly from: StorageKey; readonly to: StorageKey } };

/**
 * The body as the backend reads it, hashed on the way: each chunk is pulled from the body only when
 * the backend asks for more, so a backend that stops reading (a size limit) leaves the rest of the
 * body unread, as it would without the tap (the server then closes that connection). `finish`: the
 * digest is taken at the end (`digest`); without, the hash stays open to go on with (a resumable
 * upload's). Destroying the tap (an abort) destroys the body, as destroying the body itself did.
 */
class HashTap extends Readable {
  readonly hash: Hash;
  readonly finish: boolean;
  digest: string | undefined;
  passed = 0;
  private readonly body: Readable;
  private readonly source: AsyncIterator<Buffer>;
  private pulling = false;
  constructor(body: Readable, hash: Hash = createHash('sha256'), finish = true) {
    // No read-ahead of its own: the tap takes a chunk from the body only when the backend asks for one,
    // so it leaves exactly as much of a refused body unread as the backend would alone.
    super({ highWaterMark: 0 });
    this.body = body;
    this.hash = hash;
    this.finish = finish;
    this.source = body.iterator({ destroyOnReturn: false });
    // Its reader (the backend) sees an error; one that already stopped reading must not crash the process with it.
    this.on('error', () => undefined);
  }
  override _read(): void {
    if (this.pulling) return;
    this.pulling = true;
    this.source.next().then(
      (r) => {
        this.pulling = false;
        if (r.done) {
          if (this.finish) this.digest = this.hash.digest('hex');
          this.push(null);
          return;
        }
        const chunk = Buffer.isBuffer(r.value) ? r.value : Buffer.from(r.value);
        this.hash.update(chunk);
        this.passed += chunk.length;
        this.push(chunk);
      },
      (e: unknown) => this.destroy(e instanceof Error ? e : new Error(String(e))),
    );
  }
  override _destroy(error: Error | null, done: (e?: Error | null) => void): void {
    if (!this.body.readableEnded && !this.body.destroyed) this.body.destroy();
    done(error);
  }
}

/** Resumable uploads whose hash is held at once, at most; past it the oldest go (their files are hashed by a rescan). */
const PARTIAL_MAX = 10_000;

const tapped = (body: Readable, hash?: Hash, finish?: boolean): HashTap => new HashTap(body, hash, finish);

/**
 * The hashing layer over any StorageBackend (local disk, S3, an encrypting
 * decorator): every write's bytes pass a SHA-256 tap on their way down, so
 * the hash is of the bytes the writer sent (the plaintext under
 * encryption), computed while they stream, never by reading the file again.
 * The hash reaches the index as a field of the write's `created` /
 * `replaced` event: the event is emitted inside the write's call, and an
 * AsyncLocalStorage ties it to that write (no table keyed by name, which
 * two concurrent writes of one name would share). Entries returned by
 * write and commit, and staged files, carry `sha256` too. A copy's
 * events say what they copy (`copyOf`), so the index gives the copies the
 * hashes of their sources. Resumable (tus) uploads are hashed chunk by
 * chunk while their chunks come to one process in order; otherwise their
 * file's hash is unknown until a rescan (docs/sync.md).
 */
export function withHashes(inner: StorageBackend): StorageBackend {
  const writing = new AsyncLocalStorage<Writing>();
  const hub = createEventHub();
  inner.events.subscribe((e: StorageEvent) => {
    const w = writing.getStore();
    if (w && (e.type === 'created' || e.type === 'replaced')) {
      const sha256 = w.tap?.digest ?? w.sha256;
      if (sha256 !== undefined && (e.type === 'replaced' || e.isFile)) return hub.emit({ ...e, sha256 });
      if (w.copyOf) return hub.emit({ ...e, copyOf: w.copyOf });
    }
    return hub.emit(e);
  });

  const withSha = (entry: Entry, sha256: string | undefined): Entry => (sha256 === undefined ? entry : { ...entry, sha256 });

  const staged = (file: StagedFile, tap: HashTap): StagedFile => ({
    size: file.size,
    sha256: tap.digest,
    commit: async (opts) => withSha(await writing.run({ tap }, () => file.commit(opts)), tap.digest),
    discard: () => file.discard(),
  });

  // Resumable uploads: the hash of the bytes staged so far, per upload, while its chunks come here in order.
  const partial = new Map<string, { hash: Hash; offset: number }>();
  const resumable: ResumableStaging = {
    create: async (id) => {
      await inner.resumable.create(id);
      partial.set(id, { hash: createHash('sha256'), offset: 0 });
      if (partial.size > PARTIAL_MAX) partial.delete(partial.keys().next().value as string);
    },
    append: async (id, offset, body, opts) => {
      const known = partial.get(id);
      if (!known || known.offset !== offset) {
        partial.delete(id);
        return inner.resumable.append(id, offset, body, opts);
      }
      // A copy: a chunk that is not kept whole leaves the hash of what was staged before it.
      const tap = tapped(body, known.hash.copy(), false);
      const result = await inner.resumable.append(id, offset, tap, opts);
      if (result.outcome === 'complete' && result.offset === offset + tap.passed) {
        partial.delete(id);
        partial.set(id, { hash: tap.hash, offset: result.offset });
        if (partial.size > PARTIAL_MAX) partial.delete(partial.keys().next().value as string);
      } else if (result.offset !== offset) {
        partial.delete(id);
      }
      return result;
    },
    commit: async (id, size, key, opts) => {
      const known = partial.get(id);
      partial.delete(id);
      const sha256 = known && known.offset === size ? known.hash.digest('hex') : undefined;
      const entry = await writing.run(sha256 === undefined ? {} : { sha256 }, () => inner.resumable.commit(id, size, key, opts));
      return entry && withSha(entry, sha256);
    },
    remove: async (id) => {
      partial.delete(id);
      await inner.resumable.remove(id);
    },
    list: () => inner.resumable.list(),
    read: (id, range) => inner.resumable.read(id, range),
    putTail: (id, offset, bytes) => inner.resumable.putTail(id, offset, bytes),
    getTail: (id, offset) => inner.resumable.getTail(id, offset),
    dropTails: (id, keep) => inner.resumable.dropTails(id, keep),
  };

  return {
    get capabilities() {
      return inner.capabilities;
    },
    events: hub,
    init: () => inner.init(),
    sweep: (opts) => inner.sweep(opts),
    stat: (key) => inner.stat(key),
    parents: (key) => inner.parents(key),
    list: (dir) => inner.list(dir),
    listSorted: ((dir: StorageKey, opts?: { etags?: boolean }) => inner.listSorted(dir, opts as { etags: true })) as StorageBackend['listSorted'],
    walk: (dir, opts) => inner.walk(dir, opts),
    lookBeforeWrite: (key) => inner.lookBeforeWrite(key),
    read: (key, range) => inner.read(key, range),
    async stage(key, body, opts) {
      const tap = tapped(body);
      return staged(await inner.stage(key, tap, opts), tap);
    },
    async write(key, body, opts) {
      const tap = tapped(body);
      // The tap has ended before the commit, which emits the event: its digest is there by then.
      const entry = await writing.run({ tap }, () => inner.write(key, tap, opts));
      return withSha(entry, tap.digest);
    },
    resumable,
    mkdir: (dir, opts) => inner.mkdir(dir, opts),
    delete: (key, opts) => inner.delete(key, opts),
    redate: (key, modified) => inner.redate(key, modified),
    move: (from, to, opts) => inner.move(from, to, opts),
    copy: (from, to, opts) => writing.run({ copyOf: { from, to } }, () => inner.copy(from, to, opts)),
    trash: inner.trash,
    versions: inner.versions,
    ping: () => inner.ping(),
    close: () => inner.close(),
  };
}
