import type { Readable } from 'node:stream';
import { crc32 } from 'node:zlib';
import { centralHeader, dataDescriptor, localHeader, type ZipEntry, type ZipLayout } from './layout.js';

/** Inclusive byte range of the archive. */
export type ZipRange = { readonly start: number; readonly end: number };

/** The file changed between planning the layout and reading it: the bytes sent so far belong to another archive. */
export class TreeChangedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TreeChangedError';
  }
}

/**
 * Remembered CRC-32s of file contents, keyed by `ZipIO.crcKey` (which names
 * the content: path and storage ETag). Best effort: a miss means reading the
 * file once more, never different bytes, since a CRC is a function of the
 * content alone.
 */
export interface CrcCache {
  getMany(keys: readonly string[]): Promise<Map<string, number>>;
  putMany(rows: readonly { key: string; crc: number }[]): Promise<void>;
}

export type ZipIO = {
  /**
   * Opens bytes [start, end] of a file entry. Must throw TreeChangedError when
   * the file is no longer the one laid out (other ETag or size).
   */
  open(e: ZipEntry, range: ZipRange): Promise<Readable>;
  crcKey(e: ZipEntry): string;
  crcs?: CrcCache;
  /** A cache failure: the answer goes on without it. */
  warn?(err: unknown): void;
};

const CACHE_BATCH = 500;

/**
 * Exactly the bytes [range.start, range.end] of the archive, reading only
 * what they need: the file ranges inside the range, plus (only for CRCs not
 * known from the cache) the rest of a file whose descriptor or central
 * header is sent. Memory holds one chunk and the CRCs, never a whole file.
 */
export async function* zipBytes(layout: ZipLayout, range: ZipRange, io: ZipIO): AsyncGenerator<Buffer> {
  const { start, end } = range;
  const hits = (from: number, to: number): boolean => from < to && from <= end && to > start; // [from, to) meets [start, end]
  const slice = (buf: Buffer, at: number): Buffer => buf.subarray(Math.max(0, start - at), Math.min(buf.length, end + 1 - at));

  const keys = new Map<ZipEntry, string>();
  const keyOf = (e: ZipEntry): string => {
    let k = keys.get(e);
    if (k === undefined) keys.set(e, (k = io.crcKey(e)));
    return k;
  };
  const known = new Map<ZipEntry, number>();
  const fresh: { key: string; crc: number }[] = [];
  const flush = async (): Promise<void> => {
    if (!io.crcs || fresh.length === 0) return;
    const rows = fresh.splice(0);
    await io.crcs.putMany(rows).catch((err: unknown) => io.warn?.(err));
  };
  const learn = async (e: ZipEntry, crc: number): Promise<void> => {
    if (known.has(e)) return;
    known.set(e, crc);
    fresh.push({ key: keyOf(e), crc });
    if (fresh.length >= CACHE_BATCH) await flush();
  };

  // Every CRC this answer needs, from the cache once, up front: a file whose CRC is known is sent
  // without hashing it again (a repeated download costs what a plain GET does), and one that a late
  // start does not send need not be read.
  const wanted = layout.entries.filter((e) => !e.source.isFolder && e.dataEnd > e.dataStart && (hits(e.dataEnd, e.end) || hits(e.central, e.centralEnd)));
  if (io.crcs && wanted.length > 0) {
    for (let i = 0; i < wanted.length; i += CACHE_BATCH) {
      const batch = wanted.slice(i, i + CACHE_BATCH);
      const found = await io.crcs.getMany(batch.map(keyOf)).catch((err: unknown) => {
        io.warn?.(err);
        return new Map<string, number>();
      });
      for (const e of batch) {
        const crc = found.get(keyOf(e));
        if (crc !== undefined) known.set(e, crc);
      }
    }
  }

  /** Reads a whole file for its CRC alone (its bytes are not part of this answer). */
  async function hashFile(e: ZipEntry): Promise<number> {
    const size = e.dataEnd - e.dataStart;
    const stream = await io.open(e, { start: 0, end: size - 1 });
    let crc = 0;
    let read = 0;
    try {
      for await (const chunk of stream as AsyncIterable<Buffer>) {
        crc = crc32(chunk, crc);
        read += chunk.length;
        if (read > size) throw new TreeChangedError('a file yielded more bytes than laid out');
      }
    } finally {
      stream.destroy();
    }
    if (read !== size) throw new TreeChangedError('a file yielded fewer bytes than laid out');
    return crc;
  }

  async function crcOf(e: ZipEntry): Promise<number> {
    if (e.source.isFolder || e.dataEnd === e.dataStart) return 0;
    const have = known.get(e);
    if (have !== undefined) return have;
    // Not sent here and not cached: read the file once for its CRC (e.g. a resume that starts in the central directory).
    const crc = await hashFile(e);
    await learn(e, crc);
    return crc;
  }

  // The file reads of this answer, in order. What each reads depends only on the range and on the
  // CRCs known now (a file's CRC is learnt only once its own data is past), so the next file can be
  // opened while the current one streams: an object store's request latency is hidden that way.
  const reads = new Map<ZipEntry, { from: number; hi: number; hash: boolean }>();
  const order: ZipEntry[] = [];
  for (const e of layout.entries) {
    const size = e.dataEnd - e.dataStart;
    if (size === 0 || !hits(e.dataStart, e.dataEnd)) continue;
    const lo = Math.max(start, e.dataStart) - e.dataStart;
    const hi = Math.min(end, e.dataEnd - 1) - e.dataStart;
    const whole = lo === 0 && hi === size - 1;
    // A late start into a file whose descriptor goes out needs the skipped prefix's CRC too: read it, send only the range.
    const from = whole || (hits(e.dataEnd, e.end) && !known.has(e)) ? 0 : lo;
    reads.set(e, { from, hi, hash: from === 0 && hi === size - 1 && !known.has(e) });
    order.push(e);
  }
  let ahead: { e: ZipEntry; opening: Promise<Readable> } | undefined;
  const openAhead = (i: number): void => {
    const e = order[i];
    const r = e && reads.get(e);
    if (!e || !r) return;
    const opening = io.open(e, { start: r.from, end: r.hi });
    opening.catch(() => undefined); // awaited when its turn comes; an early failure must not be "unhandled"
    ahead = { e, opening };
  };

  try {
    let nextRead = 0;
    for (const e of layout.entries) {
      if (e.end <= start) continue;
      if (e.local > end) break;
      if (hits(e.local, e.dataStart)) yield slice(localHeader(e), e.local);
      const r = reads.get(e);
      if (r) {
        // The hot loop of a zip: one chunk at a time straight from the file's stream (no generator
        // in between), hashing what is not known yet.
        const stream = await (ahead?.e === e ? ahead.opening : io.open(e, { start: r.from, end: r.hi }));
        ahead = undefined;
        // This one is open: open the next file meanwhile.
        openAhead(++nextRead);
        let crc = 0;
        let at = e.dataStart + r.from;
        const last = e.dataStart + r.hi + 1;
        try {
          for await (const chunk of stream as AsyncIterable<Buffer>) {
            if (r.hash) crc = crc32(chunk, crc);
            const next = at + chunk.length;
            if (next > last) throw new TreeChangedError('a file yielded more bytes than laid out');
            if (hits(at, next)) yield slice(chunk, at);
            at = next;
          }
        } finally {
          // Stopped early (the client went away): closes this file's stream; a no-op once it is done.
          stream.destroy();
        }
        if (at !== last) throw new TreeChangedError('a file yielded fewer bytes than laid out');
        if (r.hash) await learn(e, crc);
      }
      if (!e.source.isFolder && hits(e.dataEnd, e.end)) yield slice(dataDescriptor(e, await crcOf(e)), e.dataEnd);
    }
    if (hits(layout.centralStart, layout.centralEnd)) {
      for (const e of layout.entries) {
        if (e.centralEnd <= start) continue;
        if (e.central > end) break;
        yield slice(centralHeader(e, await crcOf(e)), e.central);
      }
    }
    if (hits(layout.centralEnd, layout.size)) yield slice(layout.endRecords, layout.centralEnd);
  } finally {
    // Cut off (or failed) with the next file already opened: close it.
    if (ahead) void ahead.opening.then((stream) => stream.destroy(), () => undefined);
    await flush();
  }
}
