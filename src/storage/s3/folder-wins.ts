const SLASH = 0x2f;

/**
 * A name that is a file and also a folder (`a` and `a/x`: another tool made
 * one of them, or a write the index did not know of) is the folder (CONTRACT
 * "Backends and nodes"): the file is hidden, and stays in the bucket untouched.
 *
 * Keys arrive in the store's order (UTF-8 bytes: code points), where a file
 * `a` comes before every key of a folder `a/`, and every key between the two
 * starts with `a` and a character below `/` (`a-b`, `a.txt`). So a file is
 * held back until the first key that is not of that kind: a key below `a/`
 * hides it, any other key lets it through. What is held is always a chain of
 * prefixes of the latest key (a few files, never a folder's worth).
 *
 * `next(key, file?)` takes every key in order — files, folder markers,
 * listing prefixes (ending in `/`), and keys that are no valid path (they make
 * folders too) — with the file it names, if it is one to show; it returns the
 * files now known to be visible. `end()` returns those still held.
 */
export function folderWins<T>(onHidden: (file: T) => void): { next(key: string, file?: T): T[]; end(): T[] } {
  let held: { key: string; file: T }[] = [];
  return {
    next(key, file) {
      const visible: T[] = [];
      const still: { key: string; file: T }[] = [];
      for (const h of held) {
        const n = h.key.length;
        if (key.length > n && key.startsWith(h.key) && key.charCodeAt(n) < SLASH) still.push(h);
        else if (key.length > n && key.startsWith(h.key) && key.charCodeAt(n) === SLASH) onHidden(h.file);
        else visible.push(h.file);
      }
      if (file !== undefined) still.push({ key, file });
      held = still;
      return visible;
    },
    end() {
      const visible = held.map((h) => h.file);
      held = [];
      return visible;
    },
  };
}
