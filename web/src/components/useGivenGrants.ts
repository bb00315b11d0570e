import { useEffect, useMemo, useState } from 'react';
import { GrantsApi, type Grant } from '../api/grants';
import { movePath, type Segments } from '../api/paths';
import type { StorageApi } from '../api/storage';

/**
 * The names in `folder` that the user shared with people (`GET /api/grants`,
 * matched by path), for the badge. Read again when the folder changes; a
 * failure only means no badges.
 */
export function useGivenGrants(storage: StorageApi, folder: Segments, enabled: boolean): ReadonlySet<string> {
  const [grants, setGrants] = useState<readonly Grant[]>([]);
  const key = folder.join('\0');
  useEffect(() => {
    if (!enabled) return;
    const ctl = new AbortController();
    new GrantsApi(storage.client, storage.user).given(ctl.signal).then(
      (g) => setGrants(g),
      () => undefined,
    );
    return () => ctl.abort();
  }, [storage, key, enabled]);
  return useMemo(() => {
    const prefix = `${movePath(storage.user, folder)}/`.replace(/\/+$/, '/');
    const names = new Set<string>();
    for (const g of grants) {
      if (!g.path.startsWith(prefix)) continue;
      const rest = g.path.slice(prefix.length);
      if (rest !== '' && !rest.includes('/')) names.add(rest);
    }
    return names;
  }, [grants, storage.user, folder]);
}
