import { randomBytes } from 'node:crypto';
import { AppError } from '../domain/errors.js';
import { keyName, type StorageKey } from '../domain/storage-path.js';
import { versionsToDrop } from '../domain/version-thinning.js';
import type { Clock } from '../lib/clock.js';
import type { ByteRange, Opened, StorageBackend } from '../storage/backend.js';
import type { FileVersion } from '../store/versions.js';
import type { MetadataStore } from '../store/metadata-store.js';
import { storageCall } from './storage-errors.js';

export type VersionService = ReturnType<typeof createVersionService>;

/** A version as the API shows it (docs/api.md "Versions"). */
export type VersionView = { readonly id: string; readonly size: number; readonly modified: string };

/**
 * File versions (--versions; CONTRACT "Trash and versions"). When a file is
 * replaced (PUT, WebDAV PUT, restore_version), the bytes it had are kept as
 * a version: `beforeReplace` runs as the new file takes the name, with the
 * name held, so exactly the replaced bytes are kept. The versions of a file
 * are then thinned (domain/version-thinning.ts) and capped by
 * --versions-max-days. Versions count against the owner's quota.
 */
export function createVersionService(deps: { store: MetadataStore; backend: StorageBackend; clock: Clock; enabled: boolean; maxDays: number; onError: (e: unknown) => void }) {
  const { store, backend, clock } = deps;
  const off = () => new AppError('not_found', 'File versions are off on this server (start it with --versions).');
  const missing = () => new AppError('not_found', 'This file has no version with this id.');
  const pathOf = (key: StorageKey) => key.segments.join('/');

  /** Removes a version for good; the bytes it freed (0 when someone else removed it first). */
  async function drop(v: FileVersion): Promise<number> {
    await storageCall(() => backend.versions.remove(v.owner, v.id));
    if (!(await store.versions.delete(v.id))) return 0;
    await store.usage.add(v.owner, -v.size);
    return v.size;
  }

  /** Thins the versions of one file now (after a new one was kept). */
  async function thin(owner: string, path: string): Promise<void> {
    const all = await store.versions.list(owner, path);
    const gone = new Set(versionsToDrop(all.map((v) => ({ id: v.id, at: v.createdAt })), clock.now(), deps.maxDays));
    for (const v of all) if (gone.has(v.id)) await drop(v);
  }

  // Versions belong to the file, not to its path: they follow a rename or move within the owner's tree, and go
  // with a file deleted for good or moved into another owner's tree (its bytes there are the other's, and
  // they must not surface under a new file at the old path). A file in the trash keeps them for its restore.
  // Files being replaced by a COPY or MOVE onto them (see `replacing`): their removal keeps their versions.
  const replaced = new Set<string>();
  const idOf = (key: StorageKey) => `${key.user}/${pathOf(key)}`;
  const unsubscribe = backend.events.subscribe(async (e) => {
    if (!deps.enabled) return;
    if (e.type === 'deleted' && replaced.has(idOf(e.key))) return;
    if (e.type === 'moved' && e.from.user === e.to.user) return store.versions.moveWithin(e.from.user, pathOf(e.from), pathOf(e.to));
    const gone = e.type === 'moved' ? e.from : e.type === 'deleted' && !e.kept ? e.key : undefined;
    if (!gone) return;
    for (const v of await store.versions.listWithin(gone.user, pathOf(gone))) await drop(v).catch(deps.onError);
  });

  async function versionOf(key: StorageKey, id: string): Promise<FileVersion> {
    if (!deps.enabled) throw off();
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(id)) throw missing();
    const v = await store.versions.get(id);
    if (!v || v.owner !== key.user || v.path !== pathOf(key)) throw missing();
    return v;
  }

  return {
    enabled: deps.enabled,

    /**
     * For CommitOptions.beforeReplace of a write to key: keeps what is there
     * as a version (nothing when no file is there), then thins that file's
     * versions, so the answer reflects them (a failed thinning is logged; it
     * is tried again at the next version).
     */
    async keep(key: StorageKey): Promise<void> {
      if (!deps.enabled) return;
      const id = randomBytes(16).toString('base64url');
      const size = await storageCall(() => backend.versions.keep(key, id));
      if (size === undefined) return;
      await store.versions.add({ id, owner: key.user, path: pathOf(key), size, createdAt: clock.now() });
      await store.usage.add(key.user, size);
      await thin(key.user, pathOf(key)).catch(deps.onError);
    },

    async list(key: StorageKey): Promise<VersionView[]> {
      if (!deps.enabled) throw off();
      return (await store.versions.list(key.user, pathOf(key))).map((v) => ({ id: v.id, size: v.size, modified: new Date(v.createdAt).toISOString() }));
    },

    async read(key: StorageKey, id: string, range?: ByteRange): Promise<Opened> {
      const v = await versionOf(key, id);
      return storageCall(() => backend.versions.read(v.owner, v.id, keyName(key), range), { not_found: 'This version is gone.' });
    },

    /** The size of a version (for Range checks before it is opened). */
    async sizeOf(key: StorageKey, id: string): Promise<number> {
      return (await versionOf(key, id)).size;
    },

    close(): void {
      unsubscribe();
    },

    /**
     * Runs `replace`, which puts another file where the file at key is (a COPY or MOVE onto it, whether
     * it removes the file first or moves over it), keeping that file as a version first; its versions,
     * and the one kept now, stay with the file that takes its place (in this process: storage events
     * reach the listener above in the process that made the change).
     */
    async replacing<T>(key: StorageKey, replace: () => Promise<T>): Promise<T> {
      if (!deps.enabled) return replace();
      await this.keep(key);
      const id = idOf(key);
      replaced.add(id);
      try {
        return await replace();
      } finally {
        replaced.delete(id);
      }
    },

    /** The owner's versions, oldest first, at most `limit` (what an upload that does not fit may purge). */
    oldest(owner: string, limit: number): Promise<FileVersion[]> {
      return deps.enabled ? store.versions.oldest(owner, limit) : Promise.resolve([]);
    },

    /** Purges one version for an upload's room (services/safety-net.ts); the bytes it freed (0 when it was gone already). */
    purge: drop,
  };
}
