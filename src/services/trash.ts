import { randomBytes } from 'node:crypto';
import { AppError } from '../domain/errors.js';
import { collisionName } from '../domain/names.js';
import type { UserPrincipal } from '../domain/principal.js';
import { keyName, type StorageKey } from '../domain/storage-path.js';
import type { Clock } from '../lib/clock.js';
import type { StorageBackend } from '../storage/backend.js';
import { hold, tryHold, type Leasing } from '../storage/coordination.js';
import type { MetadataStore } from '../store/metadata-store.js';
import type { SearchRepo } from '../store/search.js';
import type { TrashedFile, TrashItem } from '../store/trash.js';
import { storageCall } from './storage-errors.js';


/** The lease a trash item's moves hold (restore, purge), and `file-cloud encryption` while it rewrites the item's files. */
export const trashItemLease = (id: string): string => `trash:${id}`;
export type TrashService = ReturnType<typeof createTrashService>;

const DAY_MS = 86_400_000;
/** Rows a purge or a settling pass takes at a time. */
const BATCH = 100;
/** `name (n).ext` tried on restore before giving up; far beyond any real folder. */
const MAX_COLLISIONS = 10_000;

/** A trashed item and when the purge takes it (epoch milliseconds; docs/api.md "Trash"). */
export type TrashEntry = TrashItem & { readonly expiresAt: number };

/**
 * The files of a trashed folder whose hash the index held for exactly the bytes that moved: the ETag it
 * held is the one each file had as it moved (a file written in between has another, and no hash).
 */
export function sameBytes(known: ReadonlyMap<string, { sha256: string; size: number; etag: string | null }>, moved: ReadonlyMap<string, string>): TrashedFile[] {
  const out: TrashedFile[] = [];
  for (const [path, etag] of moved) {
    const k = known.get(path);
    if (k && k.etag === etag) out.push({ path, sha256: k.sha256, size: k.size });
  }
  return out;
}

/**
 * The owners' trash (--trash-days N > 0; CONTRACT "Trash and versions"). The
 * one delete path of the files service (FilesService.delete) calls `put`, so
 * a delete through any front end (API, WebDAV, the web UI, /basic/, a grant's
 * writer) moves the item into its owner's trash instead of destroying it.
 * The bytes stay counted in the owner's usage (the storage events say `kept`)
 * until a purge, a "delete forever" or emptying the trash frees them.
 *
 * Crash safety: the row is written (`moving`) before the backend moves the
 * item, under a lease named after the item; a row left `moving` by a dead
 * process is settled by `settle` (run by the leader) once its lease is free,
 * from where the storage says the item is. The backend's move itself leaves
 * the item whole on one side (TrashArea).
 *
 * A trashed file keeps its SHA-256 (the sync client's "the server holds these bytes": docs/sync.md)
 * when the index held one for the ETag the file had as it moved, and so does each file of a trashed
 * folder (trash_files); never hashed by reading it again.
 */
export function createTrashService(deps: { store: MetadataStore; backend: StorageBackend; clock: Clock; days: number; leasing?: Leasing; index?: Pick<SearchRepo, 'identities' | 'hashesBelow'> }) {
  const { store, backend, clock } = deps;
  const leasing: Leasing = deps.leasing ?? { leases: store.leases, now: () => clock.now() };
  const enabled = deps.days > 0;
  const keepMs = deps.days * DAY_MS;
  const off = () => new AppError('not_found', 'The trash is off on this server (--trash-days 0): deletions are permanent.');
  const missing = () => new AppError('not_found', 'No item with this id is in your trash.');

  /** The caller's trashed item, or not_found (someone else's id answers the same: ids reveal nothing). */
  async function own(principal: UserPrincipal, id: string): Promise<TrashItem> {
    if (!enabled) throw off();
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(id)) throw missing();
    const item = await store.trash.get(id);
    if (!item || item.owner !== principal.username || item.state !== 'trashed') throw missing();
    return item;
  }

  /** Deletes a trashed item for good; its bytes leave the owner's usage. The caller holds its lease. */
  async function destroy(item: TrashItem): Promise<void> {
    await storageCall(() => backend.trash.remove(item.owner, item.id));
    if (await store.trash.delete(item.id)) await store.usage.add(item.owner, -item.size);
  }

  return {
    enabled,
    days: deps.days,

    /** Moves the item at key into its owner's trash (FilesService.delete with the trash on). */
    async put(key: StorageKey): Promise<void> {
      const id = randomBytes(16).toString('base64url');
      const lease = await tryHold(leasing, trashItemLease(id));
      try {
        const path = key.segments.join('/');
        await store.trash.add({ id, owner: key.user, path, name: keyName(key), isFile: false, size: 0, deletedAt: clock.now(), state: 'moving' });
        // Asked before the move, whose event takes the rows out of the index; kept only if its ETag is the moved file's.
        const known = (await deps.index?.identities(key.user, [path]).catch(() => undefined))?.get(path);
        const knownBelow = known?.isFile === true ? undefined : await deps.index?.hashesBelow(key.user, path).catch(() => undefined);
        let found;
        try {
          found = await storageCall(() => backend.trash.put(key, id));
        } catch (e) {
          // Nothing moved (missing source, a failure before the move): the row goes, the item stays.
          await store.trash.delete(id).catch(() => undefined);
          throw e;
        }
        const sha256 = found.isFile && found.etag !== undefined && known?.sha256 && known.etag === found.etag ? known.sha256 : undefined;
        if (!found.isFile && knownBelow && found.files) await store.trash.addFiles(id, sameBytes(knownBelow, found.files));
        await store.trash.settle(id, { isFile: found.isFile, size: found.size, sha256 });
      } finally {
        await lease?.release();
      }
    },

    /** The hash and size of every file the caller's trash holds, whose hash is known (GET /api/trash/hashes). */
    async hashes(principal: UserPrincipal): Promise<{ sha256: string; size: number }[]> {
      if (!enabled) throw off();
      return store.trash.hashes(principal.username);
    },

    async list(principal: UserPrincipal): Promise<TrashEntry[]> {
      if (!enabled) throw off();
      return (await store.trash.list(principal.username)).map((t) => ({ ...t, expiresAt: t.deletedAt + keepMs }));
    },

    /**
     * Puts the item back where it was, or beside it as `name (n).ext` when
     * that name is taken now; its parents are made again if they are gone.
     * Returns the path it took, `/<owner>/<path>`.
     */
    async restore(principal: UserPrincipal, id: string): Promise<string> {
      const item = await own(principal, id);
      const lease = await hold(leasing, trashItemLease(id));
      try {
        if ((await store.trash.get(id))?.state !== 'trashed') throw missing();
        const segments = item.path.split('/');
        for (let n = 0; n <= MAX_COLLISIONS; n++) {
          const name = n === 0 ? item.name : collisionName(item.name, n);
          const to: StorageKey = { user: item.owner, segments: [...segments.slice(0, -1), name] };
          try {
            await storageCall(() => backend.trash.restore(item.owner, id, to), { not_a_directory: 'A file is now where a folder on the way to the item was; move it away first.' });
          } catch (e) {
            if (e instanceof AppError && e.code === 'already_exists') continue;
            // The trash no longer holds it (a restore whose process died was finished since): the row goes.
            if (e instanceof AppError && e.code === 'not_found' && (await storageCall(() => backend.trash.find(item.owner, id))) === undefined) {
              await store.trash.delete(id);
              throw missing();
            }
            throw e;
          }
          await store.trash.delete(id);
          return `/${item.owner}/${to.segments.join('/')}`;
        }
        throw new AppError('already_exists', 'Every name the item could take back is taken.');
      } finally {
        await lease.release();
      }
    },

    /** Deletes one item of the caller's trash for good. */
    async remove(principal: UserPrincipal, id: string): Promise<void> {
      const item = await own(principal, id);
      const lease = await hold(leasing, trashItemLease(id));
      try {
        if ((await store.trash.get(id))?.state !== 'trashed') throw missing();
        await destroy(item);
      } finally {
        await lease.release();
      }
    },

    /** Empties the caller's trash. */
    async empty(principal: UserPrincipal): Promise<void> {
      if (!enabled) throw off();
      for (const item of await store.trash.list(principal.username)) {
        const lease = await tryHold(leasing, trashItemLease(item.id));
        // Held: someone restores or deletes it right now; it leaves the trash either way.
        if (!lease) continue;
        try {
          if ((await store.trash.get(item.id))?.state === 'trashed') await destroy(item);
        } finally {
          await lease.release();
        }
      }
    },

    /** The owner's trashed items, oldest first, at most `limit` (what an upload that does not fit may purge). */
    oldest(owner: string, limit: number): Promise<TrashItem[]> {
      return enabled ? store.trash.oldest(owner, limit) : Promise.resolve([]);
    },

    /**
     * Deletes one trashed item for good for an upload's room (services/safety-net.ts); the bytes it
     * freed, 0 when someone restores or deletes it right now or it is gone already.
     */
    async purge(item: TrashItem): Promise<number> {
      const lease = await tryHold(leasing, trashItemLease(item.id));
      if (!lease) return 0;
      try {
        if ((await store.trash.get(item.id))?.state !== 'trashed') return 0;
        await destroy(item);
        return item.size;
      } finally {
        await lease.release();
      }
    },

    /**
     * Leader upkeep: purges items deleted more than --trash-days ago, and
     * settles rows left `moving` by a process that died mid-move (their lease
     * is free; a live mover holds it from before the row is written): trashed
     * if the trash holds the item, else the row goes (it never left its path).
     */
    async sweep(): Promise<void> {
      for (;;) {
        const stale = await store.trash.movingBefore(Number.MAX_SAFE_INTEGER, BATCH);
        let settled = 0;
        for (const item of stale) {
          const lease = await tryHold(leasing, trashItemLease(item.id));
          if (!lease) continue;
          try {
            if ((await store.trash.get(item.id))?.state !== 'moving') continue;
            const found = await storageCall(() => backend.trash.find(item.owner, item.id));
            if (found === 'busy') continue;
            if (found) await store.trash.settle(item.id, found);
            else {
              await storageCall(() => backend.trash.remove(item.owner, item.id));
              await store.trash.delete(item.id);
            }
            settled++;
          } finally {
            await lease.release();
          }
        }
        if (stale.length < BATCH || settled === 0) break;
      }
      if (!enabled) return;
      for (;;) {
        const expired = await store.trash.trashedBefore(clock.now() - keepMs, BATCH);
        let purged = 0;
        for (const item of expired) {
          const lease = await tryHold(leasing, trashItemLease(item.id));
          if (!lease) continue;
          try {
            if ((await store.trash.get(item.id))?.state !== 'trashed') continue;
            await destroy(item);
            purged++;
          } finally {
            await lease.release();
          }
        }
        if (expired.length < BATCH || purged === 0) break;
      }
    },
  };
}
