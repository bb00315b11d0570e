import type { BigIntStats } from 'node:fs';
import type { Entry } from '../backend.js';

/** The fields of node:fs's bigint stats that an entry is made of (a staged file's come from native/fs-ops.c too). */
export type FileStats = Pick<BigIntStats, 'ino' | 'size' | 'mtimeNs' | 'mtimeMs' | 'isFile'>;

/**
 * The seam's Entry from stats taken with `{ bigint: true }`, so the ETag can
 * use the nanosecond mtime: a replace writes a new inode, an in-place edit on
 * disk changes size or mtime, and either changes the validator.
 */
export function entryFromStats(name: string, s: FileStats): Entry {
  const isFile = s.isFile();
  const etag = `"${s.ino.toString(36)}-${s.size.toString(36)}-${s.mtimeNs.toString(36)}"`;
  return { name, isFile, size: Number(s.size), modified: new Date(Number(s.mtimeMs)), etag };
}
