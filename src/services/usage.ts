import { isStorageError, type StorageBackend } from '../storage/backend.js';
import type { User } from '../store/types.js';

export type UsageFigures = { readonly used: number; readonly quota: number | null };

/**
 * Where the account endpoints (GET /api/me, the admin users API) get a user's
 * usage and quota, and where an admin's quota change goes. The quota work
 * (issue 16: usage kept current from storage events, quotas enforced with 507)
 * provides the real implementation; build-app takes it as `deps.usage`.
 */
export interface AccountUsage {
  of(user: Pick<User, 'id' | 'username'>): Promise<UsageFigures>;
  /**
   * Sets (bytes) or clears (null) a user's quota. Absent while quotas do not
   * exist: the admin API then refuses a quota (503) before changing anything.
   */
  readonly setQuota?: (user: Pick<User, 'id' | 'username'>, quota: number | null) => Promise<void>;
}

/**
 * Until the quota service lands: `used` measured honestly by walking the
 * user's storage (correct on every backend, but its cost grows with the
 * number of files, so it is for these account pages only), `quota` null,
 * and no quota can be set.
 */
export function walkedUsage(backend: StorageBackend): AccountUsage {
  return {
    async of(user) {
      let used = 0;
      try {
        for await (const { entry } of backend.walk({ user: user.username, segments: [] })) if (entry.isFile) used += entry.size;
      } catch (e) {
        // A user whose root folder is gone (removed by hand) uses nothing.
        if (!isStorageError(e, 'not_found')) throw e;
      }
      return { used, quota: null };
    },
  };
}
