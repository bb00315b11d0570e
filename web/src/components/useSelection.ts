import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import type { Entry } from '../api/storage';
import type { SelectMode } from './list-order';
import type { ListingState } from './useListing';
import { useFolderScoped } from './useFolderScoped';

const NOTHING: ReadonlySet<string> = new Set();

/**
 * Which rows of the folder are selected and which one holds the keyboard
 * cursor, with the anchor a Shift-click or Shift-arrow extends a range from.
 * The selection belongs to `folder`: another folder starts with nothing selected.
 */
export function useSelection(folder: string, listing: ListingState, sorted: readonly Entry[]) {
  const [selected, setSelected] = useFolderScoped(folder, NOTHING);
  const [focused, setFocused] = useState<string | null>(null);
  const anchor = useRef<string | null>(null);

  // After a reload, forget selected names that are gone (keeping the same Set when none are, so nothing re-renders).
  useEffect(() => {
    if (listing.status !== 'ready') return;
    const names = new Set(listing.entries.map((e) => e.name));
    setSelected((s) => (Array.from(s).every((n) => names.has(n)) ? s : new Set(Array.from(s).filter((n) => names.has(n)))));
  }, [listing]);

  const select = useCallback(
    (name: string, mode: SelectMode) => {
      setFocused(name);
      setSelected((prev) => {
        if (mode === 'toggle') {
          const next = new Set(prev);
          if (next.has(name)) next.delete(name);
          else next.add(name);
          anchor.current = name;
          return next;
        }
        if (mode === 'range' && anchor.current !== null) {
          const a = sorted.findIndex((e) => e.name === anchor.current);
          const b = sorted.findIndex((e) => e.name === name);
          if (a >= 0 && b >= 0) return new Set(sorted.slice(Math.min(a, b), Math.max(a, b) + 1).map((e) => e.name));
        }
        anchor.current = name;
        return new Set([name]);
      });
    },
    [sorted],
  );

  /** A fresh start in a new folder: nothing selected, the cursor on `focus` (or nowhere). */
  const reset = useCallback((focus: string | null) => {
    setSelected(new Set());
    setFocused(focus);
    anchor.current = null;
  }, []);

  /** Cursor on `name` and only it selected — or, without a name, neither. The anchor stays. */
  const selectOnly = useCallback((name?: string) => {
    setFocused(name ?? null);
    setSelected(new Set(name ? [name] : []));
  }, []);

  const selectAll = () => setSelected(new Set(sorted.map((e) => e.name)));
  const clear = () => setSelected(new Set());

  const byName = useMemo(() => new Map(sorted.map((e) => [e.name, e])), [sorted]);
  const selectedEntries = sorted.filter((e) => selected.has(e.name));
  /** What an action applies to: the selection, or else the focused row. */
  const targets = (): Entry[] => {
    if (selectedEntries.length) return selectedEntries;
    const f = focused ? byName.get(focused) : undefined;
    return f ? [f] : [];
  };

  return { selected, selectedEntries, focused, setFocused, targets, select, selectOnly, selectAll, clear, reset };
}
