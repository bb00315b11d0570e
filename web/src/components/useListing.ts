import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { ApiError } from '../api/errors';
import type { Segments } from '../api/paths';
import type { Entry, StorageApi } from '../api/storage';
import type { Sort, SortKey } from './list-order';
import { t } from '../lib/i18n';

export type ListingState = { status: 'loading' } | { status: 'ready'; entries: Entry[]; loadedIn: number } | { status: 'error'; error: ApiError };

const SORT_KEY = 'file-cloud.sort';

function loadSort(): Sort {
  try {
    const v = JSON.parse(localStorage.getItem(SORT_KEY) ?? '') as Partial<Sort>;
    if ((v.key === 'name' || v.key === 'size' || v.key === 'modified') && (v.dir === 'asc' || v.dir === 'desc')) return { key: v.key, dir: v.dir };
  } catch {
    // No saved sort yet.
  }
  return { key: 'name', dir: 'asc' };
}

const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });

/** Folders first, then by the chosen column; name breaks ties. */
export function sortEntries(entries: readonly Entry[], sort: Sort): Entry[] {
  const sign = sort.dir === 'asc' ? 1 : -1;
  const byName = (a: Entry, b: Entry) => collator.compare(a.name, b.name) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  return [...entries].sort((a, b) => {
    if (a.is_file !== b.is_file) return a.is_file ? 1 : -1;
    let c = 0;
    if (sort.key === 'size') c = a.is_file ? a.size - b.size : 0;
    else if (sort.key === 'modified') c = Date.parse(a.modified) - Date.parse(b.modified);
    return sign * (c || byName(a, b));
  });
}

const LOADING: ListingState = { status: 'loading' };

/**
 * Loads the folder at `segments` (again on reload()), and keeps it sorted.
 * The answer is kept with the folder it is of: until the new folder's own
 * answer arrives, a new folder is loading, so no row of the folder left
 * behind is ever drawn (or asks for a thumbnail, or opens a menu) under the
 * new folder's path. A reload of the same folder keeps its rows meanwhile.
 * Reloads never cancel the read on its way: one asked for meanwhile is made
 * when it is in, so files landing one after another each show, even when a
 * listing takes longer than the time between them.
 */
export function useListing(storage: StorageApi, segments: Segments) {
  const [loaded, setLoaded] = useState<{ folder: string; state: ListingState } | null>(null);
  const [sort, setSort] = useState<Sort>(loadSort);
  const read = useRef<() => void>(() => undefined);
  const key = `${storage.user}/${segments.join('\0')}`;
  const state = loaded?.folder === key ? loaded.state : LOADING;

  useEffect(() => {
    const ctrl = new AbortController();
    let reading = false;
    let again = false;
    const start = () => {
      if (reading) {
        again = true;
        return;
      }
      reading = true;
      const started = performance.now();
      storage
        .list(segments, ctrl.signal)
        .then(
          (entries) => {
            if (!ctrl.signal.aborted) setLoaded({ folder: key, state: { status: 'ready', entries, loadedIn: performance.now() - started } });
          },
          (e: unknown) => {
            if (ctrl.signal.aborted) return;
            setLoaded({ folder: key, state: { status: 'error', error: e instanceof ApiError ? e : new ApiError(0, 'unknown', t('states.failed')) } });
          },
        )
        .finally(() => {
          reading = false;
          if (again && !ctrl.signal.aborted) {
            again = false;
            start();
          }
        });
    };
    read.current = start;
    start();
    return () => {
      ctrl.abort();
      read.current = () => undefined;
    };
    // segments is keyed by its content (key), not by identity.
  }, [storage, key]);

  const sorted = useMemo(() => (state.status === 'ready' ? sortEntries(state.entries, sort) : []), [state, sort]);

  const toggleSort = useCallback((k: SortKey) => {
    setSort((s) => {
      const next: Sort = s.key === k ? { key: k, dir: s.dir === 'asc' ? 'desc' : 'asc' } : { key: k, dir: k === 'modified' ? 'desc' : 'asc' };
      localStorage.setItem(SORT_KEY, JSON.stringify(next));
      return next;
    });
  }, []);

  const setSortTo = useCallback((next: Sort) => {
    localStorage.setItem(SORT_KEY, JSON.stringify(next));
    setSort(next);
  }, []);

  const reload = useCallback(() => read.current(), []);
  return { state, sorted, sort, toggleSort, setSortTo, reload };
}
