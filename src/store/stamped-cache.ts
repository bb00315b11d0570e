/**
 * A value that changes whenever what the cached lookups read may have
 * changed: after any commit to those tables by any connection, this
 * process's included. Reading it must cost far less than the query a cache
 * saves (SQLite: `PRAGMA data_version` plus a count of this connection's own
 * writes, and only after a commit the trigger-kept counter of sqliteAuthStamp;
 * the figures: docs/performance.md "Figures behind the code").
 * PostgreSQL has no such cheap signal, so its store offers none and caches
 * nothing.
 */
export type ChangeStamp = () => string;

/** A read-through lookup: cached under a change stamp when the store has one, else straight to the query. */
export type Lookup<V> = { get(key: string, load: () => Promise<V | undefined>): Promise<V | undefined> };

/** The lookup for a store with or without a change stamp (PostgreSQL has none: every lookup queries). */
export function stampedLookup<V>(stamp: ChangeStamp | undefined, max?: number): Lookup<V> {
  return stamp ? createStampedCache<V>(stamp, max) : { get: (_key, load) => load() };
}

/**
 * Results of read queries, kept only while the database is unchanged: every
 * lookup first reads the stamp, and any difference from the stamp the value
 * was read under drops the whole cache. A revocation (a deleted session, a
 * password change, a disabled user) is a commit that moves it, so the next lookup after it
 * — in this process or any other on the same database — queries again: the
 * contract's "at once". Negative answers are not kept (an unknown token
 * costs its query, as before). Bounded: least recently used out.
 */
export function createStampedCache<V>(stamp: ChangeStamp, max = 10_000) {
  let current = '';
  const entries = new Map<string, V>();

  /** The stamp now, clearing the cache when it moved. */
  function check(): string {
    const now = stamp();
    if (now !== current) {
      entries.clear();
      current = now;
    }
    return now;
  }

  return {
    /**
     * The cached value for `key`, or `load`'s (kept when defined). The stamp is
     * read before the query, so a commit that lands during it makes the next
     * lookup miss: a value is never kept under a stamp newer than its read.
     */
    async get(key: string, load: () => Promise<V | undefined>): Promise<V | undefined> {
      const before = check();
      const hit = entries.get(key);
      if (hit !== undefined) {
        entries.delete(key);
        entries.set(key, hit);
        return hit;
      }
      const value = await load();
      if (value !== undefined && current === before) {
        if (entries.size >= max) entries.delete(entries.keys().next().value as string);
        entries.set(key, value);
      }
      return value;
    },
    get size(): number {
      return entries.size;
    },
  };
}
