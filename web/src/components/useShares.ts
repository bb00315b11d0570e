import { useCallback, useEffect, useState } from 'react';
import { ApiError, networkError } from '../api/errors';
import type { Share, SharesApi } from '../api/shares';

export type SharesState = { status: 'loading' } | { status: 'error'; error: ApiError } | { status: 'ready'; shares: Share[] };

/** The caller's share links, newest first; revoking drops one from the list as soon as the server agrees. */
export function useShares(api: SharesApi) {
  const [state, setState] = useState<SharesState>({ status: 'loading' });
  const [generation, setGeneration] = useState(0);
  const reload = useCallback(() => setGeneration((g) => g + 1), []);

  useEffect(() => {
    const ctl = new AbortController();
    setState((s) => (s.status === 'ready' ? s : { status: 'loading' }));
    api.list(ctl.signal).then(
      (shares) => setState({ status: 'ready', shares: [...shares].sort((a, b) => b.created_at.localeCompare(a.created_at)) }),
      (e: unknown) => {
        if (ctl.signal.aborted) return;
        setState({ status: 'error', error: e instanceof ApiError ? e : networkError() });
      },
    );
    return () => ctl.abort();
  }, [api, generation]);

  const revoke = useCallback(
    async (id: string) => {
      await api.revoke(id);
      setState((s) => (s.status === 'ready' ? { status: 'ready', shares: s.shares.filter((x) => x.id !== id) } : s));
    },
    [api],
  );

  return { state, reload, revoke };
}
