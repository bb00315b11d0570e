import { Readable } from 'node:stream';
import { recycles } from '../recycling.js';
import { CHUNK_SIZE, DecryptError, HEADER_SIZE, VERSION, chunkCount, chunkOverhead, newFileKey, openChunkPart, openParts, sealParts, storedChunk, type FileKey, type MasterKey } from './format.js';

/**
 * Cuts a byte stream into pieces of exactly `size` bytes, each given as the
 * parts of the incoming buffers it spans (never copied); the last piece
 * holds what is left (possibly nothing: the caller decides).
 */
export async function* pieceParts(source: AsyncIterable<Buffer | string> | Iterable<Buffer>, size: number): AsyncGenerator<{ parts: Buffer[]; last: boolean }> {
  let held: Buffer[] = [];
  let heldBytes = 0;
  for await (const raw of source) {
    let buf = typeof raw === 'string' ? Buffer.from(raw) : raw;
    while (heldBytes + buf.length > size) {
      const take = size - heldBytes;
      if (take > 0) held.push(buf.subarray(0, take));
      const parts = held;
      held = [];
      heldBytes = 0;
      buf = buf.subarray(take);
      // A piece is final only once the source has ended: bytes still follow it here.
      yield { parts, last: false };
    }
    if (buf.length > 0) {
      held.push(buf);
      heldBytes += buf.length;
    }
  }
  yield { parts: held, last: true };
}

/** pieceParts, each piece joined into one buffer (copied only where it spans several incoming buffers). */
export async function* pieces(source: AsyncIterable<Buffer | string> | Iterable<Buffer>, size: number): AsyncGenerator<{ piece: Buffer; last: boolean }> {
  for await (const { parts, last } of pieceParts(source, size)) yield { piece: parts.length === 1 ? parts[0]! : Buffer.concat(parts), last };
}

/**
 * The stored form of a plaintext stream under a new data key: the header,
 * then each chunk as soon as a byte after it has arrived or the stream has
 * ended (the last flag needs to know), so memory stays at about one chunk.
 */
export async function* encrypt(master: MasterKey, plain: AsyncIterable<Buffer | string>, version = VERSION): AsyncGenerator<Buffer> {
  const { header, key } = newFileKey(master, version);
  yield header;
  let index = 0;
  for await (const { parts, last } of pieceParts(plain, CHUNK_SIZE)) yield* sealParts(key, index++, last, parts);
}

/**
 * The plaintext bytes skip..skip+length-1 counted from the start of chunk
 * `first`, for a file of `size` plaintext bytes, out of its stored chunks
 * from `first` on, given one chunk at a time: what decryptStream and
 * decryptBytes share. Every chunk is authenticated before any of its bytes
 * are given out; `end` fails when the chunks given ended early.
 */
function chunkReader(key: FileKey, size: number, first: number, skip: number, length: number) {
  const total = chunkCount(size);
  let index = first;
  let toSkip = skip;
  let left = length;
  return {
    /** The wanted plaintext of the next stored chunk (given in parts, cut anywhere). */
    open(parts: readonly Buffer[]): Buffer[] {
      if (index >= total) throw new DecryptError('bad_size', 'the stored file runs past its last chunk');
      const plain = openParts(key, index, index === total - 1, parts);
      index++;
      const out: Buffer[] = [];
      for (const p of plain) {
        const piece = p.subarray(Math.min(toSkip, p.length), Math.min(p.length, toSkip + left));
        toSkip = Math.max(0, toSkip - p.length);
        left -= piece.length;
        if (piece.length > 0) out.push(piece);
      }
      return out;
    },
    /**
     * open() of a chunk in one buffer; when less than half of its plaintext is
     * wanted (a small range), only that part is decrypted, after the whole
     * chunk is authenticated as open() does.
     */
    openStored(stored: Buffer): Buffer[] {
      const text = stored.length - chunkOverhead(key.version);
      const from = Math.min(toSkip, Math.max(0, text));
      const to = Math.min(Math.max(0, text), toSkip + left);
      if ((to - from) * 2 >= text) return this.open([stored]);
      if (index >= total) throw new DecryptError('bad_size', 'the stored file runs past its last chunk');
      const piece = openChunkPart(key, index, index === total - 1, stored, from, to);
      index++;
      toSkip = Math.max(0, toSkip - text);
      left -= piece.length;
      return piece.length > 0 ? [piece] : [];
    },
    end(): void {
      if (left > 0) throw new DecryptError('bad_size', 'the stored file ends before its last chunk');
    },
  };
}

/**
 * The plaintext bytes skip..skip+length-1 counted from the start of chunk
 * `first`, for a file of `size` plaintext bytes, as a stream that pulls the
 * stored chunks first.. from `stored` (a file's read stream) itself: each storage read's whole chunks are opened
 * at once, synchronously, and pushed as one piece, with no promise per
 * chunk, and the next storage read is already under way meanwhile (the
 * source reads ahead up to its own high-water mark). Back-pressure is the
 * consumer's: nothing more is taken from `stored` while the output is full,
 * so memory stays at about the source's buffer and one storage read.
 * `discard` stored bytes come first and are dropped (a whole file's header).
 * A chunk that fails, or a source that ends early or runs long, destroys the
 * stream with `fail(error)` once the chunks before it are given out, before
 * any byte of that chunk.
 * Destroying the stream destroys `stored`.
 *
 * A source that recycles its reads (a local file's reader) gets each one
 * back as soon as its whole chunks are opened: the plaintext is the
 * decipher's own memory, and the partial chunk at a read's end is carried
 * over in a buffer of this stream's own. The next read then goes into that
 * buffer instead of fresh memory (whose page faults a big download pays per
 * read).
 */
export function decryptStream(key: FileKey, size: number, first: number, stored: Readable, opts: { readonly discard?: number; readonly skip: number; readonly length: number; readonly fail: (e: unknown) => Error }): Readable {
  const reader = chunkReader(key, size, first, opts.skip, opts.length);
  const chunk = storedChunk(key.version);
  let toDiscard = opts.discard ?? 0;
  let held: Buffer[] = [];
  let heldBytes = 0;
  const recycling = recycles(stored) ? stored : undefined;
  /** Where a partial chunk is carried from one recycled read to the next (made at the first). */
  let carry: Buffer | undefined;
  /** Copies what is held (parts of reads about to be recycled) into `carry`. */
  function keepHeld(): void {
    if (heldBytes === 0) return;
    carry ??= Buffer.allocUnsafeSlow(chunk);
    let at = 0;
    for (const p of held) at += p.copy(carry, at);
    held = [carry.subarray(0, at)];
  }
  /** The plaintext of the chunks `buf` completes (a chunk is opened as soon as all its bytes are in: its index says whether it is the last). */
  function take(raw: Buffer | string, plain: Buffer[]): void {
    let buf = typeof raw === 'string' ? Buffer.from(raw) : raw;
    if (toDiscard > 0) {
      const n = Math.min(toDiscard, buf.length);
      toDiscard -= n;
      buf = buf.subarray(n);
    }
    while (heldBytes + buf.length >= chunk) {
      const need = chunk - heldBytes;
      held.push(buf.subarray(0, need));
      buf = buf.subarray(need);
      const parts = held;
      held = [];
      heldBytes = 0;
      plain.push(...reader.open(parts));
    }
    if (buf.length > 0) {
      held.push(buf);
      heldBytes += buf.length;
    }
  }
  /** Why a chunk failed: the stream ends with it once the chunks before it are handed on. */
  let failed: Error | undefined;
  const out = new Readable({
    read() {
      if (failed) out.destroy(failed);
      else stored.resume();
    },
    destroy(error, callback) {
      stored.destroy();
      callback(error);
    },
  });
  // Each storage read as it is (a paused stream's read() would join what waits); paused while the output is full.
  stored.on('data', (buf: Buffer | string) => {
    if (failed) return;
    const plain: Buffer[] = [];
    try {
      take(buf, plain);
      if (recycling && typeof buf !== 'string') {
        keepHeld();
        recycling.recycle(buf);
      }
    } catch (e) {
      failed = opts.fail(e);
      stored.pause();
      // Nothing authenticated is waiting: fail now. Else the chunks before the failed one go first (so a
      // download already answered is cut where the damage is), and the next read() fails.
      if (plain.length === 0) {
        out.destroy(failed);
        return;
      }
    }
    let more = true;
    for (const p of plain) more = out.push(p);
    if (!more && !failed) stored.pause();
  });
  stored.pause();
  stored.once('end', () => {
    if (failed) return;
    try {
      // The last chunk is short (or an empty file's): what is held is all of it.
      if (heldBytes > 0 || toDiscard > 0) {
        if (toDiscard > 0) throw new DecryptError('bad_size', 'the stored file ends inside its header');
        for (const p of reader.open(held)) out.push(p);
      }
      reader.end();
    } catch (e) {
      out.destroy(opts.fail(e));
      return;
    }
    out.push(null);
  });
  stored.once('error', (e) => out.destroy(e));
  return out;
}

/**
 * decryptStream of stored bytes already in memory (a small file or range),
 * at once: the same checks without a stream around them, which costs more
 * than opening a small chunk. `stored` may come in several
 * buffers (separate reads), each holding whole stored chunks.
 */
export function decryptBytes(key: FileKey, size: number, first: number, stored: readonly Buffer[], skip: number, length: number): Buffer {
  const reader = chunkReader(key, size, first, skip, length);
  const chunk = storedChunk(key.version);
  const out: Buffer[] = [];
  for (const bytes of stored) for (let at = 0; at < bytes.length; at += chunk) out.push(...reader.openStored(bytes.subarray(at, at + chunk)));
  reader.end();
  if (out.length !== 1) return Buffer.concat(out);
  // A small answer cut from a chunk's plaintext is copied out of it, into memory of its own size (not a
  // pool's slab): the chunk (64 KiB) is then garbage at once, young, instead of living as long as the
  // answer takes to send and being promoted with it.
  const [one] = out as [Buffer];
  if (one.length * 2 >= one.buffer.byteLength) return one;
  const own = Buffer.allocUnsafeSlow(one.length);
  one.copy(own);
  return own;
}

/** Where chunk `index`'s stored bytes begin in a format version. */
export const chunkOffset = (index: number, version = VERSION): number => HEADER_SIZE + index * storedChunk(version);
