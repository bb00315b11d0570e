/**
 * The rules of name search (CONTRACT "Search, thumbnails, usage"): what a
 * name and a query are compared as, and how a match ranks. Pure; the store
 * applies the same rules in SQL (src/store/search-repo.ts).
 */

/** Longest query accepted, in characters (docs/api.md). */
export const MAX_QUERY_LENGTH = 256;
export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 1000;
/** Trigram indexes (SQLite FTS5 trigram, pg_trgm) need this many characters; shorter queries scan one user's names. */
export const TRIGRAM = 3;

/**
 * A name or query as search compares it: compatibility-decomposed (NFKD:
 * "ﬁ" → "fi", "①" → "1"), lower-cased, and without combining marks
 * ("É" → "e"), so matching is case- and accent-insensitive. Lower-casing
 * can itself produce marks ("İ" → "i̇"), hence decomposing once more after it.
 */
export function normalizeName(s: string): string {
  return s.normalize('NFKD').toLowerCase().normalize('NFKD').replace(/\p{M}/gu, '');
}

/** A LIKE pattern that matches `s` literally (escape character `\`): `%`, `_` and `\` lose their meaning. */
export function escapeLike(s: string): string {
  return s.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** Characters as SQLite and PostgreSQL count them (code points). */
export const charCount = (s: string): number => [...s].length;

/** An FTS5 string literal (phrase): the whole query as one substring, double quotes doubled. */
export const ftsPhrase = (s: string): string => `"${s.replace(/"/g, '""')}"`;

/**
 * How well a normalized name matches a normalized query: 0 exact, 1 prefix,
 * 2 substring, undefined no match. Results sort by this, then by depth
 * (shallower first), then by name and path.
 */
export function matchRank(name: string, query: string): 0 | 1 | 2 | undefined {
  if (name === query) return 0;
  if (name.startsWith(query)) return 1;
  if (name.includes(query)) return 2;
  return undefined;
}
