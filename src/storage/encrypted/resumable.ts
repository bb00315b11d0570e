import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { CHUNK_SIZE, DecryptError, HEADER_SIZE, chunkCount, storedChunk, newFileKey, openChunk, openHeader, openTail, sealChunk, sealTail, storedSize, type FileKey, type MasterKey } from '../../lib/encryption/format.js';
import { chunkOffset, pieces } from '../../lib/encryption/stream.js';
import { StorageError } from '../errors.js';
import { chunkBytes, type AppendResult, type ChunkReading, type ResumableStaging } from '../resumable.js';

/** Upload ids whose unwrapped data key is kept (one header read saved per PATCH). */
const CACHE_MAX = 1024;

/**
 * Resumable (tus) uploads through the encryption layer: the staging below
 * holds the stored form as the bytes arrive (the header, written when the
 * upload is created, then each whole chunk sealed as not last), never a
 * byte of plaintext. Offsets above are plaintext offsets.
 *
 * The last chunk a PATCH brought (partial, or whole) is held back in a
 * record of its own (putTail, sealed under the file's key with a random iv
 * and bound to the offset), written before the offset is reported, so a
 * resume on any node after a restart continues exactly: the next append
 * reads it back and writes that chunk again, whole or longer. The staging
 * bytes past the last whole chunk are never trusted: an append starts
 * there, and the record of any offset but the recorded one is dropped.
 * Offsets reported while a long PATCH streams are whole-chunk boundaries,
 * which need no record.
 *
 * A crash after a whole chunk reached the staging but before the offset
 * past it was recorded makes the resume seal that index again, maybe from
 * other bytes: each sealing draws a nonce of its own (format version 2), so
 * no nonce seals two plaintexts. A staging begun under version 1 (before an
 * upgrade) goes on in version 1, as its header says.
 *
 * The commit seals the last chunk as last (from the record, or from the
 * staged whole chunk when a streaming PATCH's boundary became the length) and
 * has the staging below make the file of the stored size.
 */
export function encryptedResumable(inner: ResumableStaging, keys: { readonly current: MasterKey; readonly all: readonly MasterKey[] }): ResumableStaging {
  const cache = new Map<string, FileKey>();
  const remember = (id: string, key: FileKey) => {
    cache.delete(id);
    cache.set(id, key);
    if (cache.size > CACHE_MAX) cache.delete(cache.keys().next().value!);
  };

  const unreadable = (e: unknown): never => {
    if (e instanceof DecryptError) throw new StorageError('failed', `The upload's staging cannot be decrypted (${e.message}).`, { cause: e });
    throw e;
  };

  /** The upload's data key from its staged header; undefined when the staging holds none (gone). */
  async function fileKey(id: string): Promise<FileKey | undefined> {
    const cached = cache.get(id);
    if (cached) return cached;
    const head = await inner.read(id, { start: 0, end: HEADER_SIZE - 1 }).catch((e: unknown) => {
      if (e instanceof StorageError && e.code === 'not_found') return undefined;
      throw e;
    });
    if (head === undefined || head.length < HEADER_SIZE) return undefined;
    let key: FileKey;
    try {
      key = openHeader(head, keys.all);
    } catch (e) {
      return unreadable(e);
    }
    remember(id, key);
    return key;
  }

  async function keyOf(id: string): Promise<FileKey> {
    const key = await fileKey(id);
    if (key === undefined) throw new StorageError('not_found', 'The upload has no staging.');
    return key;
  }

  /**
   * The plaintext of the last chunk an upload that stopped at `offset` holds
   * back (a PATCH's last piece, partial or whole); empty at a chunk boundary
   * reported while a PATCH streamed, where every chunk is staged.
   */
  async function tailAt(id: string, key: FileKey, offset: number): Promise<Buffer> {
    if (offset === 0) return Buffer.alloc(0);
    const record = await inner.getTail(id, offset);
    if (record === undefined && offset % CHUNK_SIZE === 0) return Buffer.alloc(0);
    if (record === undefined) throw new StorageError('failed', `The upload's staging lost its partial chunk at offset ${offset}.`);
    try {
      return openTail(key, offset, record);
    } catch (e) {
      return unreadable(e);
    }
  }

  return {
    async create(id) {
      await inner.create(id);
      const { header, key } = newFileKey(keys.current);
      await inner.append(id, 0, Readable.from([header]), { maxBytes: HEADER_SIZE });
      remember(id, key);
    },

    async append(id, offset, body, opts): Promise<AppendResult> {
      const key = await keyOf(id);
      // Records of offsets never recorded (a crash before the caller recorded them) or left behind.
      await inner.dropTails(id, offset);
      const tail = await tailAt(id, key, offset);
      const first = (offset - tail.length) / CHUNK_SIZE;
      const hash = opts.sha1 ? createHash('sha1') : undefined;
      const reading: ChunkReading = { cut: false, received: 0 };
      let failure: unknown;
      let held: Buffer = Buffer.alloc(0);
      let sent = 0;
      async function* plain(): AsyncGenerator<Buffer> {
        if (tail.length > 0) yield tail;
        try {
          // Nothing past the recorded offset is ever reported, so a chunk refused as too large needs no undoing here.
          yield* chunkBytes(body, { maxBytes: opts.maxBytes, hash, dropChunk: async () => undefined }, reading);
        } catch (e) {
          // The staging below would take a failed body for a cut one: the failure is kept and thrown after.
          failure = e;
        }
      }
      async function* sealed(): AsyncGenerator<Buffer> {
        // The last piece is held back even when whole: the staging below then always ends where a
        // resume or the commit writes on (on S3 a segment can only be followed, not cut).
        for await (const { piece, last } of pieces(plain(), CHUNK_SIZE)) {
          if (last) held = piece;
          else yield sealChunk(key, first + sent++, false, piece);
        }
      }
      let reported = offset;
      const onDurable = async (stored: number) => {
        const boundary = Math.floor((stored - HEADER_SIZE) / storedChunk(key.version)) * CHUNK_SIZE;
        if (boundary <= reported) return;
        reported = boundary;
        await opts.onDurable?.(boundary);
      };
      const start = chunkOffset(first, key.version);
      const result = await inner.append(id, start, Readable.from(sealed()), { maxBytes: Number.MAX_SAFE_INTEGER, ...(hash ? {} : { onDurable }) });
      if (failure !== undefined) throw failure;
      if (result.offset !== start + sent * storedChunk(key.version)) throw new StorageError('failed', `The upload staging kept ${result.offset - start} of ${sent * storedChunk(key.version)} bytes.`);
      if (hash && (reading.cut || !hash.digest().equals(opts.sha1 as Buffer))) return { offset, outcome: reading.cut ? 'cut' : 'checksum_mismatch' };
      const end = (first + sent) * CHUNK_SIZE + held.length;
      if (held.length > 0 && end !== offset) await inner.putTail(id, end, sealTail(key, end, held));
      if (!hash && end > reported) await opts.onDurable?.(end);
      return { offset: end, outcome: reading.cut ? 'cut' : 'complete' };
    },

    async commit(id, size, target, opts) {
      const key = await fileKey(id);
      // Without a header the staging is gone (an earlier commit made the file); an upload begun now is of this version.
      const stored = storedSize(size, key?.version);
      if (key !== undefined) {
        const last = chunkCount(size) - 1;
        const at = chunkOffset(last, key.version);
        const staged = await inner.read(id, { start: at, end: stored - 1 });
        // Sealed as last already: an earlier commit got this far and died (on local disk its file may share these bytes).
        if (!(staged.length === stored - at && opensAs(key, last, true, staged))) {
          let plain = await tailAt(id, key, size);
          // No record at a chunk boundary: the last chunk is staged whole, sealed as not last.
          if (plain.length === 0 && size > 0) {
            try {
              plain = openChunk(key, last, false, staged);
            } catch (e) {
              plain = unreadable(e);
            }
          }
          const chunk = sealChunk(key, last, true, plain);
          const put = await inner.append(id, at, Readable.from([chunk]), { maxBytes: chunk.length });
          // Read back as the commit will read it: a staging that cannot take the chunk there makes no file.
          if (put.offset !== stored || !(await inner.read(id, { start: at, end: stored - 1 })).equals(chunk)) {
            throw new StorageError('failed', 'The upload staging did not keep its last chunk.');
          }
        }
      }
      // Without a header the staging is gone: an earlier commit made the file, and the staging below says so.
      const entry = await inner.commit(id, stored, target, opts);
      cache.delete(id);
      await inner.dropTails(id).catch(() => undefined);
      return entry && { ...entry, size };
    },

    async remove(id) {
      cache.delete(id);
      await inner.remove(id);
    },
    list: () => inner.list(),
    read: (id, range) => inner.read(id, range),
    putTail: (id, offset, bytes) => inner.putTail(id, offset, bytes),
    getTail: (id, offset) => inner.getTail(id, offset),
    dropTails: (id, keep) => inner.dropTails(id, keep),
  };
}

function opensAs(key: FileKey, index: number, last: boolean, stored: Buffer): boolean {
  try {
    openChunk(key, index, last, stored);
    return true;
  } catch {
    return false;
  }
}
