import { sql, type RawBuilder, type SqlBool } from 'kysely';

/**
 * SQL conditions on the `path` column of resource tables (WebDAV locks and
 * properties): '' is the user's root, 'a/b.txt' a member of 'a'. Prefixes
 * are compared with substr, never LIKE (a name may hold % or _); lengths are
 * counted in code points, as SQLite and PostgreSQL both count them.
 */
export const codePoints = (s: string): number => [...s].length;

/** The paths above `path`, root first: 'a/b/c' → ['', 'a', 'a/b']. */
export function ancestorsOf(path: string): string[] {
  if (path === '') return [];
  const parts = path.split('/');
  return parts.map((_, i) => parts.slice(0, i).join('/'));
}

/** Strictly below `path`. */
export function below(path: string): RawBuilder<SqlBool> {
  if (path === '') return sql<SqlBool>`(path <> '')`;
  const prefix = `${path}/`;
  return sql<SqlBool>`(substr(path, 1, ${codePoints(prefix)}) = ${prefix})`;
}

/** `path` itself or anything below it. */
export const atOrBelow = (path: string): RawBuilder<SqlBool> => sql<SqlBool>`(path = ${path} or ${below(path)})`;

/** A direct member of collection `path`: below it, with no further '/'. */
export function memberOf(path: string): RawBuilder<SqlBool> {
  const start = path === '' ? 1 : codePoints(path) + 2;
  return sql<SqlBool>`(${below(path)} and length(replace(substr(path, ${start}), '/', '')) = length(substr(path, ${start})))`;
}

/** A row's path at or below `from`, carried over to `to`. */
export const rebased = (from: string, to: string): RawBuilder<string> => sql<string>`(${to} || substr(path, ${codePoints(from) + 1}))`;
