/** The request headers that make a GET/HEAD conditional (RFC 9110 §13.1). */
export type ConditionalHeaders = {
  readonly 'if-none-match'?: string | undefined;
  readonly 'if-modified-since'?: string | undefined;
};

/**
 * Whether a GET/HEAD asks for less than the whole current file: a Range, or
 * a validator that may turn it into a 304. Without them a file can be opened
 * and sent at once, with no stat before (serve-file.ts, src/app/fast-read.ts).
 */
export function asksForPart(h: ConditionalHeaders & { readonly range?: string | undefined }): boolean {
  return h.range !== undefined || h['if-none-match'] !== undefined || h['if-modified-since'] !== undefined;
}

/**
 * Whether a GET/HEAD should be answered 304 Not Modified (RFC 9110 §13.2.2).
 * If-None-Match, when present, decides alone (weak comparison, `*` matches any
 * existing file, a comma-separated list matches if any member does), and
 * If-Modified-Since is then ignored. Otherwise If-Modified-Since compares at
 * one-second granularity, since HTTP dates carry no fractions; a value that
 * is not a valid HTTP-date is ignored.
 */
export function isNotModified(reqHeaders: ConditionalHeaders, etag: string, lastModified: Date): boolean {
  const inm = reqHeaders['if-none-match'];
  if (inm !== undefined && inm.trim() !== '') {
    if (inm.trim() === '*') return true;
    const mine = opaque(etag);
    return parseEtagList(inm).some((t) => t.opaque === mine);
  }
  const since = parseHttpDate(reqHeaders['if-modified-since']);
  const modified = seconds(lastModified);
  if (since === undefined || Number.isNaN(modified)) return false;
  return modified <= since;
}

/**
 * Whether a Range request may be served as a range given its If-Range header
 * (RFC 9110 §13.1.5); false means "send the whole file with 200". An absent
 * header is true. An entity tag must match by strong comparison (neither side
 * weak); a date must equal Last-Modified to the second; anything else is false.
 */
export function ifRangeMatches(ifRange: string | undefined, etag: string, lastModified: Date): boolean {
  if (ifRange === undefined) return true;
  const value = ifRange.trim();
  if (value.startsWith('"') || value.startsWith('W/')) {
    const [tag, ...rest] = parseEtagList(value);
    if (!tag || rest.length > 0 || tag.weak || etag.startsWith('W/')) return false;
    return tag.opaque === opaque(etag);
  }
  const date = parseHttpDate(value);
  return date !== undefined && date === seconds(lastModified);
}

/**
 * Whether a write may go ahead given its If-Match header (RFC 9110 §13.1.1):
 * absent → yes; `*` → only when a file is there; otherwise the current
 * file's ETag must be in the list by strong comparison (a weak tag never
 * matches), and nothing there never matches. A malformed header matches
 * nothing, so a broken client cannot overwrite by accident.
 */
export function ifMatchPasses(ifMatch: string | undefined, current: string | undefined): boolean {
  if (ifMatch === undefined) return true;
  const value = ifMatch.trim();
  if (value === '*') return current !== undefined;
  if (current === undefined || current.startsWith('W/')) return false;
  return parseEtagList(value).some((t) => !t.weak && t.opaque === current);
}

type EntityTag = { weak: boolean; opaque: string };

const ETAG = /^[ \t]*(W\/)?("[^"]*")[ \t]*(?:,|$)/;

/**
 * Parses `W/"a", "b"`. A comma may legally sit inside a quoted tag, so the
 * list cannot simply be split on commas; a malformed member ends the parse,
 * keeping the tags read so far (a broken header never matches by accident).
 */
function parseEtagList(header: string): EntityTag[] {
  const tags: EntityTag[] = [];
  let rest = header;
  for (;;) {
    rest = rest.replace(/^[ \t,]+/, '');
    if (rest === '') return tags;
    const m = ETAG.exec(rest);
    if (!m || m[2] === undefined) return tags;
    tags.push({ weak: m[1] !== undefined, opaque: m[2] });
    rest = rest.slice(m[0].length);
  }
}

const opaque = (etag: string): string => (etag.startsWith('W/') ? etag.slice(2) : etag);

const seconds = (d: Date): number => Math.floor(d.getTime() / 1000);

// The three forms RFC 9110 §5.6.7 accepts; Date.parse alone would also take
// "2020" or local times, which the RFC says to ignore.
const IMF_FIXDATE = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} GMT$/;
const RFC850 = /^(Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), \d{2}-(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)-\d{2} \d{2}:\d{2}:\d{2} GMT$/;
const ASCTIME = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ \d]\d \d{2}:\d{2}:\d{2} \d{4}$/;

/** Seconds since the epoch of a valid HTTP-date, else undefined. */
function parseHttpDate(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const v = value.trim();
  let ms = NaN;
  if (IMF_FIXDATE.test(v) || RFC850.test(v)) ms = Date.parse(v);
  // asctime carries no zone; it is GMT by definition, not the server's local time.
  else if (ASCTIME.test(v)) ms = Date.parse(`${v} GMT`);
  return Number.isNaN(ms) ? undefined : Math.floor(ms / 1000);
}

/** The validators a write may carry (RFC 9110 §13.1.1, §13.1.2), as the request sent them. */
export type WritePreconditions = { readonly ifMatch?: string | undefined; readonly ifNoneMatch?: string | undefined };

/**
 * Whether a state-changing request may go ahead on the item whose ETag is
 * `current` (undefined: nothing there). If-Match as ifMatchPasses;
 * If-None-Match: `*` → only when nothing is there; a list → only when the
 * current ETag is none of its members (weak comparison, RFC 9110 §13.1.2).
 * A malformed If-None-Match matches nothing (the write goes ahead only
 * where a well-formed one would not stop it: so it refuses nothing by
 * accident, and `*` is the form sync clients send).
 */
export function preconditionsPass(pre: WritePreconditions, current: string | undefined): boolean {
  if (!ifMatchPasses(pre.ifMatch, current)) return false;
  const inm = pre.ifNoneMatch?.trim();
  if (inm === undefined || inm === '') return true;
  if (inm === '*') return current === undefined;
  if (current === undefined) return true;
  const mine = opaque(current);
  return !parseEtagList(inm).some((t) => t.opaque === mine);
}
