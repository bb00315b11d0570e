import type { Entry, StorageBackend } from '../storage/backend.js';
import type { ChangeRepo } from '../store/changes.js';

/**
 * Folder ETags that change whenever anything beneath changes (issue 31): the
 * backends' own folder validators move only with the folder's direct members
 * (a directory's mtime) or not at all (an object store's folder marker), so a
 * sync client could not skip an unchanged subtree by them. The change journal
 * stamps every folder above a change with its cursor; a folder that has no
 * stamp yet (never indexed) keeps the backend's ETag. The ETag is the
 * cursor's tag (`tags`, change-cursor.ts), never the cursor itself: the
 * journal counts every user's writes, and a plain number in a folder's ETag
 * would let its reader count them. `"t-…"` is distinct from every backend's
 * own form.
 */
export function createFolderEtags(changes: Pick<ChangeRepo, 'treeCursors'>, tags: (positions: readonly number[]) => string[]) {
  /** The tree ETags of those of `paths` that are stamped, by path. */
  async function etags(owner: string, paths: readonly string[]): Promise<Map<string, string>> {
    const stamped = [...(await changes.treeCursors(owner, paths)).entries()];
    const tagged = tags(stamped.map(([, cursor]) => cursor));
    return new Map(stamped.map(([path], i) => [path, `"t-${tagged[i] as string}"`]));
  }
  async function apply<E extends Pick<Entry, 'isFile' | 'etag'>>(owner: string, items: readonly { path: string; entry: E }[]): Promise<E[]> {
    const folders = items.filter((i) => !i.entry.isFile).map((i) => i.path);
    if (folders.length === 0) return items.map((i) => i.entry);
    const tagged = await etags(owner, folders);
    return items.map((i) => {
      const etag = i.entry.isFile ? undefined : tagged.get(i.path);
      return etag === undefined ? i.entry : { ...i.entry, etag };
    });
  }
  return {
    /** The tree ETag of the folder at `path` ('' = the root), undefined when not stamped yet. */
    async tag(owner: string, path: string): Promise<string | undefined> {
      return (await etags(owner, [path])).get(path);
    },
    /** `entry` at `path` in `owner`'s tree ('' = the root) with its tree ETag when it is a folder. */
    async one<E extends Pick<Entry, 'isFile' | 'etag'>>(owner: string, path: string, entry: E): Promise<E> {
      return (await apply(owner, [{ path, entry }]))[0] as E;
    },
    /** A folder's members, page by page, each member folder with its tree ETag. */
    pages<E extends Pick<Entry, 'isFile' | 'etag' | 'name'>>(owner: string, dir: string, pages: AsyncIterable<E[]>): AsyncIterable<E[]> {
      return (async function* () {
        for await (const page of pages) yield await apply(owner, page.map((entry) => ({ path: dir === '' ? entry.name : `${dir}/${entry.name}`, entry })));
      })();
    },
  };
}

export type FolderEtags = ReturnType<typeof createFolderEtags>;

/**
 * Folder ETags under --changes off: nothing stamps folders, and stamps left from a time the
 * journal was on would stand still, so every folder has the backend's own ETag (docs/sync.md
 * "Without the feed"): on local disk it moves when a direct member is added, removed or renamed;
 * on S3 it is the folder marker's. It does not propagate up the tree. The listing's ETag then
 * costs one storage stat of the folder.
 */
export function backendFolderEtags(backend: Pick<StorageBackend, 'stat'>): FolderEtags {
  return {
    async tag(owner, path) {
      return (await backend.stat({ user: owner, segments: path === '' ? [] : path.split('/') }))?.etag;
    },
    async one(_owner, _path, entry) {
      return entry;
    },
    pages(_owner, _dir, pages) {
      return pages;
    },
  };
}
