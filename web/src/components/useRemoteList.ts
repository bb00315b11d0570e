import { useCallback, useEffect, useState } from 'react';
import { ApiError, networkError } from '../api/errors';

export type RemoteList<T> = { status: 'loading' } | { status: 'error'; error: ApiError } | { status: 'ready'; items: T[] };

/**
 * A list read from the server (sessions, app passwords, users): loading,
 * error or ready; `reload` reads it again while the old list stays shown;
 * `drop` removes an item as soon as the server has agreed to remove it.
 */
export function useRemoteList<T>(load: (signal: AbortSignal) => Promise<T[]>) {
  const [state, setState] = useState<RemoteList<T>>({ status: 'loading' });
  const [generation, setGeneration] = useState(0);
  const reload = useCallback(() => setGeneration((g) => g + 1), []);

  useEffect(() => {
    const ctl = new AbortController();
    setState((s) => (s.status === 'ready' ? s : { status: 'loading' }));
    load(ctl.signal).then(
      (items) => {
        if (!ctl.signal.aborted) setState({ status: 'ready', items });
      },
      (e: unknown) => {
        if (ctl.signal.aborted) return;
        setState({ status: 'error', error: e instanceof ApiError ? e : networkError() });
      },
    );
    return () => ctl.abort();
  }, [load, generation]);

  const drop = useCallback((keep: (item: T) => boolean) => setState((s) => (s.status === 'ready' ? { status: 'ready', items: s.items.filter(keep) } : s)), []);

  return { state, reload, drop };
}
