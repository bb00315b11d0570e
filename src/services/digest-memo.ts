/**
 * The SHA-256 the search index gave for a file's exact bytes, remembered by
 * owner, path and ETag, so a GET of a file read before does not ask the
 * index again for its Repr-Digest (the query was most of a small GET's
 * database work: docs/performance.md "The 4 KiB GET's lost two thirds").
 *
 * Why it cannot go stale: the index's hash counts for an entry only while its
 * ETag is the entry's own (files.ts `withDigest`), and the ETag is part of the
 * key here. A replace, another tool's change, a restore or a move onto the
 * name gives the file another ETag, so the next GET misses and asks the index
 * as before; nothing needs telling, in this process or any other. Only hashes
 * the index had are kept (a file it has not hashed yet is asked again).
 * Bounded: least recently used out.
 */
export type DigestMemo = {
  get(user: string, path: string, etag: string): string | undefined;
  set(user: string, path: string, etag: string, sha256: string): void;
};

/** A memo of at most `max` hashes. */
export function createDigestMemo(max = 4096): DigestMemo {
  const entries = new Map<string, string>();
  // NUL separates the parts: no user name, path segment or ETag holds one.
  const keyOf = (user: string, path: string, etag: string) => `${user}\0${path}\0${etag}`;
  return {
    get(user, path, etag) {
      const key = keyOf(user, path, etag);
      const hit = entries.get(key);
      if (hit !== undefined) {
        entries.delete(key);
        entries.set(key, hit);
      }
      return hit;
    },
    set(user, path, etag, sha256) {
      const key = keyOf(user, path, etag);
      entries.delete(key);
      if (entries.size >= max) entries.delete(entries.keys().next().value as string);
      entries.set(key, sha256);
    },
  };
}
