import { Readable } from 'node:stream';
import { AppError } from '../domain/errors.js';
import type { Writer } from '../domain/principal.js';
import { formatSize } from '../domain/sizes.js';
import type { StorageKey } from '../domain/storage-path.js';
import { usageDeltas } from '../storage/usage-deltas.js';
import type { StorageBackend } from '../storage/backend.js';
import type { MetadataStore } from '../store/metadata-store.js';
import type { User } from '../store/users.js';
import { sentence } from '../lib/i18n/sentences.js';

export type UsageService = ReturnType<typeof createUsageService>;

/**
 * Bytes reserved ahead of a body of unknown length, so a stream costs one
 * database write per this many bytes, not one per chunk.
 */
const RESERVE_STEP = 8 * 1024 * 1024;

/** A body counted against a quota; `refusal` is the quota_exceeded error once a chunk did not fit. */
export type MeteredBody = Readable & { readonly refusal: AppError | undefined };

/**
 * The 507 of an upload that does not fit. The owner learns their quota; anyone else writing into
 * the owner's tree (a grantee, a share link's visitor) learns nothing of the owner's figures.
 */
export const quotaExceeded = (quota: number, own = true) =>
  own
    ? new AppError('quota_exceeded', `This upload would pass your storage quota (${formatSize(quota)}); delete files or ask an administrator for more space.`)
    : new AppError('quota_exceeded', 'This upload does not fit in the storage of the folder\'s owner.');

/**
 * Bytes set aside for one upload while its bytes arrive. Other uploads see
 * them as taken, so concurrent uploads that each fit alone cannot together
 * pass the quota. Release after the commit (whose storage event has then
 * been counted) or after a failure.
 */
export interface Reservation {
  /** Makes sure at least `bytes` are reserved in all; throws quota_exceeded (nothing more reserved) when they do not fit. */
  cover(bytes: number): Promise<void>;
  release(): Promise<void>;
  /** Bytes this reservation holds in the store right now. */
  readonly held: number;
  /**
   * The store already moved `bytes` of this reservation elsewhere in one of
   * its own transactions (a deferred tus upload's staged bytes, see
   * TusUploadRepo.advance): they are no longer this reservation's to release.
   */
  handedOver(bytes: number): void;
}

/**
 * Usage and quotas (CONTRACT "Search, thumbnails, usage"). Usage is kept
 * from the backend's storage events in this one place, each event one
 * atomic `used = used + delta` in the metadata store, so it is exact under
 * concurrent writers on every node. Quotas are enforced by reservations
 * (see Reservation) that every upload path takes through `meter` or
 * `reserve`.
 */
export function createUsageService(deps: { store: MetadataStore; backend: StorageBackend; onError: (e: unknown) => void }) {
  const { store, backend } = deps;
  // Deltas of events not yet written, by user. Events that come while one UPDATE is on its way are
  // summed into the next: one statement (one round trip to PostgreSQL, one SQLite commit) for
  // however many uploads ended meanwhile. A reader of usage in this process waits for them (flush).
  const queued = new Map<string, number>();
  let running = false;
  let writing: Promise<void> = Promise.resolve();
  const kick = (): void => {
    if (running) return;
    running = true;
    writing = (async () => {
      try {
        while (queued.size > 0) {
          const batch = [...queued];
          queued.clear();
          for (const [user, delta] of batch) await store.usage.add(user, delta).catch(deps.onError);
        }
      } finally {
        // In the same step as the last look at the queue: an event after it starts a new writer.
        running = false;
      }
    })();
  };

  const unsubscribe = backend.events.subscribe((event) => {
    for (const { user, delta } of usageDeltas(event)) queued.set(user, (queued.get(user) ?? 0) + delta);
    if (queued.size > 0) kick();
  });

  /** Waits until every usage change this process has seen so far is in the store. */
  async function flush(): Promise<void> {
    while (running || queued.size > 0) {
      kick();
      await writing;
    }
  }

  /** Frees bytes of a user's kept data (versions, trash) for their own upload that does not fit; set once the services exist. */
  let reclaim: ((user: string, bytes: number) => Promise<number>) | undefined;

  /** The quota_exceeded error of an upload into `owner`'s tree by `writer` (see quotaExceeded). */
  async function refusal(owner: string, writer: Writer): Promise<AppError> {
    return writer === owner ? quotaExceeded((await store.usage.get(owner))?.quota ?? 0) : quotaExceeded(0, false);
  }

  /**
   * Purges the owner's kept bytes so that `more` bytes of the owner's own upload fit, when they can
   * be made to fit (services/safety-net.ts); anyone else's upload purges nothing. True when bytes were freed.
   */
  async function makeRoom(owner: string, writer: Writer, more: number): Promise<boolean> {
    if (writer !== owner || !reclaim) return false;
    await flush();
    const now = await store.usage.get(owner);
    const needed = now?.quota === undefined ? 0 : now.used + now.reserved + now.staged + more - now.quota;
    return needed > 0 && (await reclaim(owner, needed)) > 0;
  }

  /**
   * Bytes set aside for an upload into `owner`'s tree by `writer` (a username; null for a share
   * link's visitor). Only the owner's own upload may purge the owner's safety net (services/safety-net.ts)
   * to make room; anyone else's that does not fit is refused and touches nothing.
   */
  async function reserve(owner: string, writer: Writer, initial = 0): Promise<Reservation> {
    let held = 0;
    let unlimited = false;
    /** Reserves `asks` in turn until one fits; false when none does. */
    const take = async (asks: readonly number[]): Promise<boolean> => {
      for (const ask of asks) {
        const r = await store.usage.reserve(owner, ask);
        if (r === 'unlimited') unlimited = true;
        else if (r === 'reserved') held += ask;
        else continue;
        return true;
      }
      return false;
    };
    const reservation: Reservation = {
      async cover(bytes) {
        if (unlimited || bytes <= held) return;
        const more = bytes - held;
        // Ahead of the bytes by a step when that fits; exactly what is needed when only that does.
        if (await take(more < RESERVE_STEP ? [more + RESERVE_STEP, more] : [more])) return;
        if ((await makeRoom(owner, writer, more)) && (await take([more]))) return;
        throw await refusal(owner, writer);
      },
      async release() {
        // The commit's usage update must land before the reservation goes, or for a moment the bytes would count nowhere.
        await flush();
        const bytes = held;
        held = 0;
        if (bytes > 0) await store.usage.release(owner, bytes);
      },
      get held() {
        return held;
      },
      handedOver(bytes) {
        held = Math.max(0, held - bytes);
      },
    };
    if (initial > 0) await reservation.cover(initial);
    return reservation;
  }

  return {
    flush,

    /**
     * What the owner's own upload that would pass the quota may purge first (services/safety-net.ts):
     * frees at least the bytes asked for, or nothing; returns the bytes it freed.
     */
    setReclaim(fn: (user: string, bytes: number) => Promise<number>): void {
      reclaim = fn;
    },

    /** `{used, quota}` of a user; quota undefined when none is set. */
    async get(user: string): Promise<{ used: number; quota: number | undefined }> {
      await flush();
      const u = await store.usage.get(user);
      if (!u) throw new AppError('not_found', `No user "${user}" exists.`);
      return { used: u.used, quota: u.quota };
    },

    /** The user's quota in bytes, undefined when none is set (uploads then skip all metering). */
    async quotaOf(user: string): Promise<number | undefined> {
      return (await store.usage.get(user))?.quota;
    },

    /** Reserves `initial` bytes now (quota_exceeded when they do not fit); more as needed through cover. */
    reserve,

    makeRoom,

    refusal,

    /**
     * The body, counted against the user's quota as it streams: bytes beyond
     * `credit` (what the upload frees, such as the size of the file it
     * replaces; a function when it grows as the bytes arrive) are reserved
     * ahead of them, and the stream fails with
     * quota_exceeded at the first chunk that does not fit. The request under
     * it is never destroyed, so the 507 answer can still be sent.
     */
    meter(body: Readable, reservation: Reservation, credit: number | (() => number) = 0): MeteredBody {
      const credited = typeof credit === 'function' ? credit : () => credit;
      let received = 0;
      const state: { refusal: AppError | undefined } = { refusal: undefined };
      async function* counted() {
        for await (const chunk of body.iterator({ destroyOnReturn: false })) {
          const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
          received += bytes.length;
          try {
            await reservation.cover(received - credited());
          } catch (e) {
            if (e instanceof AppError) state.refusal = e;
            throw e;
          }
          yield bytes;
        }
      }
      return Object.defineProperty(Readable.from(counted(), { objectMode: false }), 'refusal', { get: () => state.refusal }) as MeteredBody;
    },

    /** Sets (bytes) or removes (null) a user's quota: the one method the CLI and the admin API call. */
    async setQuota(user: string, quota: number | null): Promise<void> {
      if (quota !== null && (!Number.isSafeInteger(quota) || quota < 0)) throw new AppError('bad_request', sentence('apiDetail.quota'));
      if (!(await store.usage.setQuota(user, quota))) throw new AppError('not_found', `No user "${user}" exists.`);
    },

    /**
     * Counts the user's bytes by walking their storage, adds what their
     * versions and trash hold, and sets usage to that (files put there by
     * other tools, or a count that went wrong). Versions and trash count
     * against the quota and leave usage only when purged (services/trash.ts,
     * services/versions.ts), so a recount of the tree alone would let them
     * fill the disk past the quota. Also clears reservations, so it belongs
     * to a quiet moment: an upload under way meanwhile is counted when it
     * commits but no longer reserved.
     */
    async recount(user: string): Promise<number> {
      await flush();
      const root: StorageKey = { user, segments: [] };
      let used = 0;
      for await (const w of backend.walk(root)) if (w.entry.isFile) used += w.entry.size;
      used += (await store.versions.bytesOf(user)) + (await store.trash.bytesOf(user));
      // A trash row still `moving` (its process died mid-move; the leader settles it) has no size yet:
      // what already reached the trash is measured there, the rest is still in the tree the walk counted.
      for (const item of await store.trash.movingBefore(Number.MAX_SAFE_INTEGER, 1000)) {
        if (item.owner !== user) continue;
        const found = await backend.trash.find(user, item.id);
        if (found && found !== 'busy') used += found.size;
      }
      await store.usage.setUsed(user, used);
      return used;
    },

    async close(): Promise<void> {
      unsubscribe();
      await flush();
    },
  };
}

export type UsageFigures = { readonly used: number; readonly quota: number | null };

/**
 * Where the account endpoints (GET /api/me, the admin users API) get a
 * user's usage and quota, and where an admin's quota change goes.
 */
export interface AccountUsage {
  of(user: Pick<User, 'id' | 'username'>): Promise<UsageFigures>;
  /** Sets (bytes) or clears (null) a user's quota. */
  setQuota(user: Pick<User, 'id' | 'username'>, quota: number | null): Promise<void>;
}

/** The usage service in the account endpoints' terms. */
export function accountUsage(usage: UsageService): AccountUsage {
  return {
    async of(user) {
      const { used, quota } = await usage.get(user.username);
      return { used, quota: quota ?? null };
    },
    setQuota: (user, quota) => usage.setQuota(user.username, quota),
  };
}
