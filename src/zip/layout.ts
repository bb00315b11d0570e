import { createHash } from 'node:crypto';

/**
 * The byte layout of a folder zip, computed from the tree alone (names,
 * sizes, times), before any file is read, so Content-Length, ETag and every
 * Range are known up front and the same tree always gives the same bytes.
 *
 * Format choices (APPNOTE 6.3.10), all fixed so that bytes never depend on
 * the node, its time zone or the order a backend lists entries in:
 * - stored (method 0) only: sizes are known, nothing to compress or buffer;
 * - general purpose bit 11 (UTF-8 names) on every entry;
 * - files carry bit 3: the local header holds zeros and a data descriptor
 *   after the data holds the CRC-32, so the first byte goes out before any
 *   file was read (the CRC of a file is learnt while it streams);
 * - ZIP64 only where a value does not fit: an entry's size ≥ 0xFFFFFFFF
 *   (ZIP64 extra in local and central header, 8-byte descriptor sizes), an
 *   offset ≥ 0xFFFFFFFF (ZIP64 extra in the central header), or the end
 *   record's counts/offsets (≥ 0xFFFF entries or ≥ 0xFFFFFFFF bytes:
 *   ZIP64 end record and locator);
 * - times: DOS date/time from the UTC fields (never the server's zone), plus
 *   the extended-timestamp extra (0x5455) with the exact Unix mtime;
 * - entries sorted by path segment (UTF-16 code unit order), each folder
 *   (`name/`) before its contents, all below one top-level folder.
 */

export type ZipSourceEntry = {
  /** Segments below the zipped folder; empty for the folder itself. */
  readonly path: readonly string[];
  readonly isFolder: boolean;
  /** Bytes of a file (ignored for folders). */
  readonly size: number;
  readonly modified: Date;
  /** The file's strong content validator (the storage ETag); '' for folders. */
  readonly validator: string;
};

export type ZipEntry = {
  readonly source: ZipSourceEntry;
  /** UTF-8 name in the archive: `<root>/<path>` (+ `/` for folders). */
  readonly name: Buffer;
  /** Offset of the local header. */
  readonly local: number;
  /** Offset of the first data byte (end of the local header). */
  readonly dataStart: number;
  /** Offset just past the data (= dataStart + size). */
  readonly dataEnd: number;
  /** Offset just past the data descriptor (= dataEnd for folders). */
  readonly end: number;
  /** Offset of this entry's central directory header. */
  readonly central: number;
  readonly centralEnd: number;
  /** The entry needs ZIP64 sizes (size ≥ 0xFFFFFFFF). */
  readonly zip64Size: boolean;
  /** The local header offset needs ZIP64 in the central header. */
  readonly zip64Offset: boolean;
};

export type ZipLayout = {
  readonly entries: readonly ZipEntry[];
  readonly centralStart: number;
  readonly centralEnd: number;
  /** ZIP64 end record + locator + end record, which need no CRC. */
  readonly endRecords: Buffer;
  readonly size: number;
  /** A ZIP64 end record is present. */
  readonly zip64End: boolean;
};

export const MAX32 = 0xffffffff;
export const MAX16 = 0xffff;

const SIG_LOCAL = 0x04034b50;
const SIG_CENTRAL = 0x02014b50;
const SIG_DESCRIPTOR = 0x08074b50;
const SIG_ZIP64_END = 0x06064b50;
const SIG_ZIP64_LOCATOR = 0x07064b50;
const SIG_END = 0x06054b50;

const FLAG_DESCRIPTOR = 0x0008;
const FLAG_UTF8 = 0x0800;
/** Made by: Unix (3), spec 3.0 (30): external attributes hold a Unix mode. */
const MADE_BY = (3 << 8) | 30;
const EXTRA_ZIP64 = 0x0001;
const EXTRA_TIME = 0x5455;
const TIME_EXTRA_LEN = 4 + 5;
const MODE_FILE = 0o100644;
const MODE_DIR = 0o040755;
const DOS_DIR_ATTR = 0x10;

/** Lays out the archive: `sources` in any order (they are sorted here), `root` the top-level folder's name. */
export function layoutZip(root: string, sources: readonly ZipSourceEntry[]): ZipLayout {
  const sorted = [...sources].sort((a, b) => comparePaths(a.path, b.path));
  for (let i = 1; i < sorted.length; i++) {
    if (comparePaths((sorted[i - 1] as ZipSourceEntry).path, (sorted[i] as ZipSourceEntry).path) === 0) throw new Error(`duplicate zip entry ${(sorted[i] as ZipSourceEntry).path.join('/')}`);
  }
  const entries: ZipEntry[] = [];
  let offset = 0;
  const partial: Omit<ZipEntry, 'central' | 'centralEnd' | 'zip64Offset'>[] = [];
  for (const source of sorted) {
    const name = entryName(root, source);
    const size = source.isFolder ? 0 : source.size;
    if (!Number.isSafeInteger(size) || size < 0) throw new Error(`bad size ${size}`);
    const zip64Size = size >= MAX32;
    const local = offset;
    const dataStart = local + 30 + name.length + localExtraLength(zip64Size);
    const dataEnd = dataStart + size;
    const end = source.isFolder ? dataEnd : dataEnd + (zip64Size ? 24 : 16);
    partial.push({ source, name, local, dataStart, dataEnd, end, zip64Size });
    offset = end;
  }
  const centralStart = offset;
  for (const p of partial) {
    const zip64Offset = p.local >= MAX32;
    const len = 46 + p.name.length + centralExtraLength(p.zip64Size, zip64Offset);
    entries.push({ ...p, zip64Offset, central: offset, centralEnd: offset + len });
    offset += len;
  }
  const centralEnd = offset;
  const count = entries.length;
  const centralSize = centralEnd - centralStart;
  const zip64End = count >= MAX16 || centralSize >= MAX32 || centralStart >= MAX32;
  const endRecords = endBytes(count, centralStart, centralSize, centralEnd, zip64End);
  return { entries, centralStart, centralEnd, endRecords, size: centralEnd + endRecords.length, zip64End };
}

/** Path order: segment by segment, a folder before everything inside it. */
export function comparePaths(a: readonly string[], b: readonly string[]): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a[i] as string;
    const y = b[i] as string;
    if (x !== y) return x < y ? -1 : 1;
  }
  return a.length - b.length;
}

export function entryName(root: string, source: ZipSourceEntry): Buffer {
  const path = [root, ...source.path].join('/');
  const name = Buffer.from(source.isFolder ? `${path}/` : path, 'utf8');
  if (name.length > MAX16) throw new Error('zip entry name longer than 65535 bytes');
  return name;
}

const localExtraLength = (zip64Size: boolean): number => TIME_EXTRA_LEN + (zip64Size ? 4 + 16 : 0);
const centralExtraLength = (zip64Size: boolean, zip64Offset: boolean): number => {
  const fields = (zip64Size ? 2 : 0) + (zip64Offset ? 1 : 0);
  return TIME_EXTRA_LEN + (fields > 0 ? 4 + 8 * fields : 0);
};

/** The local header of entry e (no CRC needed: bit 3 defers it to the descriptor). */
export function localHeader(e: ZipEntry): Buffer {
  const b = Buffer.alloc(e.dataStart - e.local);
  const { time, date } = dosDateTime(e.source.modified);
  b.writeUInt32LE(SIG_LOCAL, 0);
  b.writeUInt16LE(versionNeeded(e), 4);
  b.writeUInt16LE(flags(e), 6);
  b.writeUInt16LE(0, 8); // stored
  b.writeUInt16LE(time, 10);
  b.writeUInt16LE(date, 12);
  // CRC and sizes: zero with bit 3 (in the descriptor); 0xFFFFFFFF points at the ZIP64 extra.
  b.writeUInt32LE(0, 14);
  b.writeUInt32LE(e.zip64Size ? MAX32 : 0, 18);
  b.writeUInt32LE(e.zip64Size ? MAX32 : 0, 22);
  b.writeUInt16LE(e.name.length, 26);
  b.writeUInt16LE(localExtraLength(e.zip64Size), 28);
  e.name.copy(b, 30);
  let at = 30 + e.name.length;
  at = writeTimeExtra(b, at, e.source.modified);
  if (e.zip64Size) {
    b.writeUInt16LE(EXTRA_ZIP64, at);
    b.writeUInt16LE(16, at + 2);
    // Sizes 0 as bit 3 asks; the extra's presence tells readers the descriptor has 8-byte sizes.
    writeU64(b, 0, at + 4);
    writeU64(b, 0, at + 12);
  }
  return b;
}

/** The data descriptor after a file's data. */
export function dataDescriptor(e: ZipEntry, crc: number): Buffer {
  const size = e.dataEnd - e.dataStart;
  const b = Buffer.alloc(e.end - e.dataEnd);
  b.writeUInt32LE(SIG_DESCRIPTOR, 0);
  b.writeUInt32LE(crc >>> 0, 4);
  if (e.zip64Size) {
    writeU64(b, size, 8);
    writeU64(b, size, 16);
  } else {
    b.writeUInt32LE(size, 8);
    b.writeUInt32LE(size, 12);
  }
  return b;
}

/** The central directory header of entry e; `crc` is 0 for folders. */
export function centralHeader(e: ZipEntry, crc: number): Buffer {
  const size = e.dataEnd - e.dataStart;
  const b = Buffer.alloc(e.centralEnd - e.central);
  const { time, date } = dosDateTime(e.source.modified);
  b.writeUInt32LE(SIG_CENTRAL, 0);
  b.writeUInt16LE(MADE_BY, 4);
  b.writeUInt16LE(versionNeeded(e), 6);
  b.writeUInt16LE(flags(e), 8);
  b.writeUInt16LE(0, 10);
  b.writeUInt16LE(time, 12);
  b.writeUInt16LE(date, 14);
  b.writeUInt32LE(crc >>> 0, 16);
  b.writeUInt32LE(e.zip64Size ? MAX32 : size, 20);
  b.writeUInt32LE(e.zip64Size ? MAX32 : size, 24);
  b.writeUInt16LE(e.name.length, 28);
  b.writeUInt16LE(centralExtraLength(e.zip64Size, e.zip64Offset), 30);
  b.writeUInt16LE(0, 32); // comment
  b.writeUInt16LE(0, 34); // disk
  b.writeUInt16LE(0, 36); // internal attributes
  const mode = e.source.isFolder ? MODE_DIR : MODE_FILE;
  b.writeUInt32LE(((mode << 16) | (e.source.isFolder ? DOS_DIR_ATTR : 0)) >>> 0, 38);
  b.writeUInt32LE(e.zip64Offset ? MAX32 : e.local, 42);
  e.name.copy(b, 46);
  let at = 46 + e.name.length;
  at = writeTimeExtra(b, at, e.source.modified);
  if (e.zip64Size || e.zip64Offset) {
    const fields = (e.zip64Size ? 2 : 0) + (e.zip64Offset ? 1 : 0);
    b.writeUInt16LE(EXTRA_ZIP64, at);
    b.writeUInt16LE(8 * fields, at + 2);
    at += 4;
    // APPNOTE 4.5.3: only the fields whose header value is 0xFFFFFFFF, in this order.
    if (e.zip64Size) {
      writeU64(b, size, at);
      writeU64(b, size, at + 8);
      at += 16;
    }
    if (e.zip64Offset) writeU64(b, e.local, at);
  }
  return b;
}

function endBytes(count: number, centralStart: number, centralSize: number, zip64At: number, zip64: boolean): Buffer {
  const b = Buffer.alloc((zip64 ? 56 + 20 : 0) + 22);
  let at = 0;
  if (zip64) {
    b.writeUInt32LE(SIG_ZIP64_END, 0);
    writeU64(b, 44, 4); // size of the rest of this record
    b.writeUInt16LE(MADE_BY, 12);
    b.writeUInt16LE(45, 14);
    b.writeUInt32LE(0, 16);
    b.writeUInt32LE(0, 20);
    writeU64(b, count, 24);
    writeU64(b, count, 32);
    writeU64(b, centralSize, 40);
    writeU64(b, centralStart, 48);
    b.writeUInt32LE(SIG_ZIP64_LOCATOR, 56);
    b.writeUInt32LE(0, 60);
    writeU64(b, zip64At, 64);
    b.writeUInt32LE(1, 72);
    at = 76;
  }
  b.writeUInt32LE(SIG_END, at);
  b.writeUInt16LE(0, at + 4);
  b.writeUInt16LE(0, at + 6);
  b.writeUInt16LE(Math.min(count, MAX16), at + 8);
  b.writeUInt16LE(Math.min(count, MAX16), at + 10);
  b.writeUInt32LE(Math.min(centralSize, MAX32), at + 12);
  b.writeUInt32LE(Math.min(centralStart, MAX32), at + 16);
  b.writeUInt16LE(0, at + 20);
  return b;
}

const versionNeeded = (e: ZipEntry): number => (e.zip64Size || e.zip64Offset ? 45 : 20);
const flags = (e: ZipEntry): number => FLAG_UTF8 | (e.source.isFolder ? 0 : FLAG_DESCRIPTOR);

function writeTimeExtra(b: Buffer, at: number, modified: Date): number {
  b.writeUInt16LE(EXTRA_TIME, at);
  b.writeUInt16LE(5, at + 2);
  b.writeUInt8(1, at + 4); // mtime only
  b.writeInt32LE(unixSeconds(modified), at + 5);
  return at + TIME_EXTRA_LEN;
}

function writeU64(b: Buffer, value: number, at: number): void {
  b.writeBigUInt64LE(BigInt(value), at);
}

/** Whole Unix seconds, clamped to the signed 32-bit range the 0x5455 field holds. */
export function unixSeconds(d: Date): number {
  const s = Math.floor(d.getTime() / 1000);
  if (Number.isNaN(s)) return 0;
  return Math.max(0, Math.min(0x7fffffff, s));
}

/**
 * MS-DOS date and time of d's UTC fields (2-second resolution, rounded down),
 * clamped to the representable 1980-01-01 … 2107-12-31 23:59:58.
 */
export function dosDateTime(d: Date): { time: number; date: number } {
  const ms = d.getTime();
  if (Number.isNaN(ms) || ms < Date.UTC(1980, 0, 1)) return { time: 0, date: (1 << 5) | 1 };
  if (ms >= Date.UTC(2108, 0, 1)) return { time: (23 << 11) | (59 << 5) | 29, date: (127 << 9) | (12 << 5) | 31 };
  const time = (d.getUTCHours() << 11) | (d.getUTCMinutes() << 5) | Math.floor(d.getUTCSeconds() / 2);
  const date = ((d.getUTCFullYear() - 1980) << 9) | ((d.getUTCMonth() + 1) << 5) | d.getUTCDate();
  return { time, date };
}

/**
 * Strong ETag of the archive: a hash of every input of the layout (names,
 * kinds, sizes, the times as encoded, the files' validators) and a format
 * version, so it changes exactly when the bytes may change.
 */
export function zipEtag(layout: ZipLayout): string {
  const h = createHash('sha256');
  h.update('fc-zip-1\n');
  for (const e of layout.entries) {
    const s = e.source;
    h.update(e.name);
    h.update(`\0${s.isFolder ? 'd' : 'f'}\0${e.dataEnd - e.dataStart}\0${unixSeconds(s.modified)}\0${s.validator}\n`);
  }
  return `"z-${h.digest('base64url')}"`;
}
