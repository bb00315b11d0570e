/**
 * A share link's download count in exact integers (CONTRACT "Share links", max_downloads): every
 * answer that sends bytes of a file, a zip or a thumbnail adds (bytes sent ÷ that file's or zip's
 * size) of a download. The database keeps the count as a whole number of units, UNITS_PER_DOWNLOAD
 * to a download, so a conditional UPDATE can compare it with the limit exactly on SQLite and
 * PostgreSQL alike (64-bit integers, no floating point).
 *
 * Rounding is up, per answer: an answer never counts less than it sent. Pieces of one download
 * (a resume, or any cutting into ranges) can so add up to a little more than one download: at
 * most one unit per piece. ROUNDING_ALLOWANCE lets the count go that far past the limit, so a
 * download cut into up to a million pieces still counts as one; it is 10⁻⁶ of a download, less
 * than one byte of any file up to a megabyte and a kilobyte of a gigabyte file.
 */
export const UNITS_PER_DOWNLOAD = 1_000_000_000_000;
export const ROUNDING_ALLOWANCE = 1_000_000;
/** The largest max_downloads: max × units + allowance stays below 2⁶³ (a signed 64-bit integer). */
export const MAX_DOWNLOAD_LIMIT = 1_000_000;

const UNITS = BigInt(UNITS_PER_DOWNLOAD);

/**
 * The units an answer costs that sends `bytes` of something `size` bytes long: ⌈bytes × U ÷ size⌉.
 * An answer of an empty file is one download (nothing else could count it); 0 bytes of anything else cost nothing.
 * The result can exceed one download (a thumbnail larger than its file).
 */
export function unitsFor(bytes: number, size: number): number {
  if (size <= 0) return UNITS_PER_DOWNLOAD;
  if (bytes <= 0) return 0;
  const b = BigInt(bytes);
  const s = BigInt(size);
  return Number((b * UNITS + s - 1n) / s);
}

/** The count the API shows: downloads with a fraction, to six decimals (`downloads` in the share object). */
export const downloadsOf = (units: number): number => Math.round((units / UNITS_PER_DOWNLOAD) * 1e6) / 1e6;

/** Used up: the count has reached the limit (a link at N − ε still serves up to ε of a download). */
export const isUsedUp = (units: number, maxDownloads: number | undefined): boolean => maxDownloads !== undefined && units >= maxDownloads * UNITS_PER_DOWNLOAD;
