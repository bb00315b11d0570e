/** The outcome of reading a Range header against a representation of a known size. */
export type RangeResult =
  | { readonly kind: 'none' }
  | { readonly kind: 'range'; readonly start: number; readonly end: number }
  | { readonly kind: 'unsatisfiable' };

const NONE: RangeResult = { kind: 'none' };
const UNSATISFIABLE: RangeResult = { kind: 'unsatisfiable' };

/**
 * Reads a single-range `Range: bytes=…` header (RFC 9110 §14.1.2) for a file
 * of `size` bytes. Returns `none` when the whole file should be sent with 200,
 * `range` with inclusive `start`/`end` inside [0, size-1] for a 206, or
 * `unsatisfiable` for a 416.
 *
 * RFC 9110 lets a server ignore a Range header, and we do so (→ `none`) for
 * anything we do not serve: a unit other than `bytes`, garbage, an inverted
 * range (`bytes=5-1`), and multiple ranges (`bytes=0-1,5-6`), which would need
 * a multipart/byteranges body; a whole 200 is always a correct answer.
 */
export function parseRange(header: string | undefined, size: number): RangeResult {
  if (header === undefined) return NONE;
  const m = /^bytes[ \t]*=[ \t]*(\d*)-(\d*)$/i.exec(header.trim());
  if (!m) return NONE;
  const [, first = '', last = ''] = m;
  if (first === '' && last === '') return NONE;
  // Digits beyond Number.MAX_SAFE_INTEGER lose precision, but stay larger than
  // any real size, so a huge start is still unsatisfiable and a huge end or
  // suffix is still clamped to the file.

  if (first === '') {
    // Suffix range: the last N bytes. N = 0 asks for nothing, which RFC 9110 calls unsatisfiable.
    const n = Number(last);
    if (n === 0) return UNSATISFIABLE;
    // An empty file has no last byte to name; the whole (empty) body is the honest answer.
    if (size === 0) return NONE;
    return { kind: 'range', start: Math.max(0, size - n), end: size - 1 };
  }

  const start = Number(first);
  const end = last === '' ? Infinity : Number(last);
  if (end < start) return NONE;
  if (start >= size) return UNSATISFIABLE;
  return { kind: 'range', start, end: Math.min(end, size - 1) };
}

/** The Content-Range value of a 206 answer: `bytes start-end/size`. */
export function contentRange(start: number, end: number, size: number): string {
  return `bytes ${start}-${end}/${size}`;
}

/** The Content-Range value of a 416 answer: `bytes *\/size`. */
export function unsatisfiedRange(size: number): string {
  return `bytes */${size}`;
}
