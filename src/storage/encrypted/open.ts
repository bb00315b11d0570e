import { Readable } from 'node:stream';
import { bufferPool } from '../../lib/buffer-pool.js';
import { DecryptError, HEADER_SIZE, STORED_CHUNK, chunkSpan, couldBeEncrypted, openHeader, plainSize, plainSizeOf, type FileKey, type MasterKey } from '../../lib/encryption/format.js';
import { chunkOffset, decryptBytes, decryptStream } from '../../lib/encryption/stream.js';
import { WHOLE_READ_MAX, openedBytes, type ByteRange, type Opened } from '../backend.js';
import type { Entry } from '../entry.js';
import { StorageError } from '../errors.js';
import type { PlainMemo } from './plain-memo.js';

/** How one stored file (in the tree, or a version) is opened and looked at, below the decryption. */
export type StoredFile = {
  /** Names the file in the log when it fails to decrypt. */
  readonly label: string;
  readonly open: (range?: ByteRange) => Promise<Opened>;
  readonly stat: () => Promise<Entry | undefined>;
};

export type Decryption = {
  readonly keys: readonly MasterKey[];
  /** Told of every stored file that fails to decrypt (the read fails too). */
  readonly onBadFile: (label: string, e: DecryptError) => void;
  /**
   * The unwrapped data key of the last version of each file read, by its
   * label, with that version's ETag and stored size: a ranged read of it
   * then asks for its chunks at once, and its stat reads no header.
   */
  readonly cache: Map<string, Known>;
  /** The plaintext of small files read lately, by label and their exact stored bytes (plain-memo.ts). */
  readonly memo: PlainMemo;
};

type Known = { readonly etag: string; readonly size: number; readonly key: FileKey };

const CACHE_MAX = 4096;
/** A file replaced between the reads of its header and its chunks is read again, a few times at most. */
const ATTEMPTS = 4;

export async function bytesOf(opened: Opened): Promise<Buffer> {
  if (opened.bytes) return opened.bytes;
  const parts: Buffer[] = [];
  for await (const b of opened.stream) parts.push(typeof b === 'string' ? Buffer.from(b) : (b as Buffer));
  return Buffer.concat(parts);
}

const drop = (opened: Opened): void => {
  if (!opened.bytes) opened.stream.destroy();
};

/** The data key of the stored file version `stored` (its entry) whose header this is. */
function fileKey(d: Decryption, file: StoredFile, stored: Entry, header: Buffer): FileKey {
  const { etag, size } = stored;
  const cached = d.cache.get(file.label);
  if (cached?.etag === etag) return cached.key;
  const key = guard(d, file, () => openHeader(header, d.keys));
  d.cache.delete(file.label);
  if (d.cache.size >= CACHE_MAX) d.cache.delete(d.cache.keys().next().value!);
  d.cache.set(file.label, { etag, size, key });
  return key;
}

/** The data key of this version of the file (label, ETag) when it was read here and is encrypted. */
export const knownKey = (d: Decryption, label: string, etag: string): FileKey | undefined => {
  const known = d.cache.get(label);
  return known?.etag === etag ? known.key : undefined;
};

function refusal(d: Decryption, file: StoredFile, e: DecryptError): StorageError {
  d.onBadFile(file.label, e);
  return new StorageError('failed', `The stored file cannot be decrypted (${e.message}); it is not served.`, { cause: e });
}

function guard<T>(d: Decryption, file: StoredFile, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    throw e instanceof DecryptError ? refusal(d, file, e) : e;
  }
}

/** A DecryptError as the refusal the read fails with (the file named in the log); any other error as it is. */
const failure = (d: Decryption, file: StoredFile) => (e: unknown): Error => (e instanceof DecryptError ? refusal(d, file, e) : (e as Error));

/**
 * The plaintext bytes skip..skip+length-1 from the start of chunk `first`
 * of an opened file (`body`, its stored bytes from that chunk on, after
 * `discard` bytes), gathered when small: a failed chunk is then an error
 * before any byte is sent.
 */
async function plainOpened(d: Decryption, file: StoredFile, entry: Entry, key: FileKey, body: Opened, first: number, skip: number, length: number, discard = 0): Promise<Opened> {
  // Read whole by the storage (a small file or range): decrypted at once.
  if (body.bytes) return openedBytes(entry, guard(d, file, () => decryptBytes(key, entry.size, first, [body.bytes!.subarray(discard)], skip, length)));
  const stream = decryptStream(key, entry.size, first, body.stream, { discard, skip, length, fail: failure(d, file) });
  return length <= WHOLE_READ_MAX ? openedBytes(entry, await bytesOf({ entry, stream })) : { entry, stream };
}

export async function* skipBytes(source: AsyncIterable<Buffer>, n: number): AsyncGenerator<Buffer> {
  let left = n;
  for await (const b of source) {
    if (left >= b.length) {
      left -= b.length;
      continue;
    }
    yield left > 0 ? b.subarray(left) : b;
    left = 0;
  }
}

/**
 * The first `n` bytes of a stream (fewer if it ends before), left unread in
 * it: they are put back, so the stream gives every byte from its start.
 */
function readHead(stream: Readable, n: number): Promise<{ head: Buffer; stream: Readable }> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let have = 0;
    const settle = (error: Error | undefined, ended: boolean) => {
      stream.off('readable', more).off('end', atEnd).off('error', failed);
      if (error) return reject(error);
      const all = Buffer.concat(parts);
      // After its end a stream takes nothing back: the bytes read are then all there is.
      if (ended) return resolve({ head: all, stream: Readable.from(all.length > 0 ? [all] : []) });
      if (all.length > 0) stream.unshift(all);
      resolve({ head: all.subarray(0, n), stream });
    };
    const more = () => {
      for (let b: Buffer | null; have < n && (b = stream.read() as Buffer | null) !== null; have += b.length) parts.push(b);
      if (have >= n) settle(undefined, false);
    };
    const atEnd = () => settle(undefined, true);
    const failed = (e: Error) => settle(e, false);
    stream.on('readable', more).once('end', atEnd).once('error', failed);
  });
}

/** A whole file: its header is read from the same stream as its chunks, one storage read. */
async function openWhole(d: Decryption, file: StoredFile): Promise<Opened> {
  const opened = await file.open();
  if (!couldBeEncrypted(opened.entry.size)) return opened;
  const body = opened.bytes ? { head: opened.bytes, opened } : await readHead(opened.stream, HEADER_SIZE).then(({ head, stream }) => ({ head, opened: { entry: opened.entry, stream } }));
  const size = plainSizeOf(opened.entry.size, body.head);
  if (size === undefined) return body.opened;
  const stored = opened.bytes;
  const entry = { ...opened.entry, size };
  // The very bytes opened here before: their plaintext, without a decipher.
  const seen = stored && d.memo.get(file.label, stored);
  if (seen) return openedBytes(entry, seen);
  const key = fileKey(d, file, opened.entry, body.head.subarray(0, HEADER_SIZE));
  const plain = await plainOpened(d, file, entry, key, body.opened, 0, 0, size, HEADER_SIZE);
  if (stored && plain.bytes) d.memo.set(file.label, stored, plain.bytes);
  return plain;
}

/**
 * Opens a stored file as its plaintext: encrypted files (the header's magic)
 * are decrypted, chunk by chunk, only the chunks a range touches; plain ones
 * (written before the key) are served as they are. A chunk that fails
 * authentication is never given out: the read fails and onBadFile names the file.
 */
export async function openDecrypted(d: Decryption, file: StoredFile, range?: ByteRange): Promise<Opened> {
  if (range === undefined) return openWhole(d, file);
  const known = d.cache.get(file.label);
  const quick = known && (await openKnown(d, file, known, range));
  if (quick) return quick;
  for (let attempt = 1; ; attempt++) {
    const entry = await file.stat();
    // Not there or a folder: the storage's own read says so.
    if (entry === undefined || !entry.isFile || !couldBeEncrypted(entry.size)) {
      const opened = await file.open(range);
      if (!couldBeEncrypted(opened.entry.size) || attempt === ATTEMPTS) return opened;
      drop(opened);
      continue;
    }
    const headOpened = await file.open({ start: 0, end: HEADER_SIZE - 1 });
    const head = await bytesOf(headOpened);
    const etag = headOpened.entry.etag;
    const size = plainSizeOf(headOpened.entry.size, head);
    if (size === undefined) {
      const opened = await file.open(range);
      if (opened.entry.etag === etag || attempt === ATTEMPTS) return opened;
      drop(opened);
      continue;
    }
    const key = fileKey(d, file, headOpened.entry, head);
    const end = Math.min(range.end, size - 1);
    if (range.start > end) return openedBytes({ ...headOpened.entry, size }, Buffer.alloc(0));
    const span = chunkSpan(size, range.start, end, key.version);
    const body = await file.open(span.stored);
    if (body.entry.etag !== etag) {
      drop(body);
      if (attempt === ATTEMPTS) throw new StorageError('failed', 'The file kept changing while it was read.');
      continue;
    }
    return plainOpened(d, file, { ...body.entry, size }, key, body, span.first, span.skip, span.length);
  }
}

/**
 * A range of a file whose key was read before: the chunks it touches are
 * read at once, without a stat or a header read first. A small range across
 * a chunk edge reads each of its chunks whole (together), as a range inside
 * one chunk does, where one read of both would be a stream. Undefined when
 * the stored file is no longer that version, the range starts past its end
 * or the storage gave a chunk as a stream (openDecrypted's full path then
 * decides).
 */
async function openKnown(d: Decryption, file: StoredFile, known: Known, range: ByteRange): Promise<Opened | undefined> {
  const v = known.key.version;
  const size = plainSize(known.size, v);
  if (size === undefined || range.start >= size) return undefined;
  const span = chunkSpan(size, range.start, Math.min(range.end, size - 1), v);
  const eachChunk = span.last > span.first && span.length <= WHOLE_READ_MAX;
  const reads: ByteRange[] = eachChunk
    ? Array.from({ length: span.last - span.first + 1 }, (_, i) => ({ start: chunkOffset(span.first + i, v), end: Math.min(chunkOffset(span.first + i + 1, v), known.size) - 1 }))
    : [span.stored];
  // A small range's chunks are read into lent buffers: they are garbage once opened, below.
  const lent = span.length <= WHOLE_READ_MAX ? reads.map(() => chunkBuffers.take()) : [];
  try {
    const settled = await Promise.allSettled(reads.map((r, i) => file.open(lent[i] ? { ...r, into: lent[i] } : r)));
    const bodies = settled.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    if (bodies.length < reads.length || bodies.some((b) => b.entry.etag !== known.etag) || (eachChunk && bodies.some((b) => !b.bytes))) {
      bodies.forEach(drop);
      return undefined;
    }
    const entry = { ...bodies[0]!.entry, size };
    if (eachChunk) return openedBytes(entry, guard(d, file, () => decryptBytes(known.key, size, span.first, bodies.map((b) => b.bytes!), span.skip, span.length)));
    const body = bodies[0]!;
    // Opened now, while the lent buffer holds it (a stream would read it later).
    if (body.bytes && lent.length > 0) return openedBytes(entry, guard(d, file, () => decryptBytes(known.key, size, span.first, [body.bytes!], span.skip, span.length)));
    return plainOpened(d, file, entry, known.key, body, span.first, span.skip, span.length);
  } finally {
    lent.forEach((b) => chunkBuffers.give(b));
  }
}

/** Stored chunks of small encrypted ranges are read into these (a few: a request holds one only from its read to its decryption). */
const chunkBuffers = bufferPool(STORED_CHUNK, 16);

/** An entry with a file's plaintext size: the header tells whether the file is encrypted at all. */
export async function plainEntry<E extends { readonly isFile: boolean; readonly size: number }>(e: E, header: () => Promise<Buffer | undefined>): Promise<E> {
  if (!e.isFile || !couldBeEncrypted(e.size)) return e;
  const head = await header();
  const size = head && plainSizeOf(e.size, head);
  return size === undefined ? e : { ...e, size };
}

export { DecryptError };

/**
 * A stream of what `gen` yields from `source`. Destroying it destroys the
 * source at once: a generator waiting on a source that never ends (a client
 * that stalled) would otherwise never return, and the destroy never finish.
 */
export function streamFrom(gen: AsyncIterable<Buffer>, source: Readable): Readable {
  const out = Readable.from(gen, { objectMode: false });
  const destroy = out._destroy.bind(out);
  out._destroy = (err, cb) => {
    source.destroy();
    destroy(err, cb);
  };
  return out;
}
