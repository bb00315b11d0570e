import { useCallback, useRef, useState } from 'react';

/**
 * State that belongs to one folder (the open menu, a dialog, the selection):
 * it is kept with the folder it was set in, and reads as `initial` in any
 * other folder, from the very render that shows the other folder. An effect
 * that clears it on navigation would come one render late, when a menu made
 * for the old folder's entry would already act on the new folder's path.
 */
export function useFolderScoped<T>(folder: string, initial: T): [T, (next: T | ((prev: T) => T)) => void] {
  const [held, setHeld] = useState<{ folder: string; value: T }>(() => ({ folder, value: initial }));
  const current = useRef(folder);
  current.current = folder;
  const first = useRef(initial);
  const set = useCallback((next: T | ((prev: T) => T)) => {
    setHeld((h) => {
      const here = h.folder === current.current;
      const value = typeof next === 'function' ? (next as (p: T) => T)(here ? h.value : first.current) : next;
      // The same value in the same folder keeps the same state, so nothing re-renders.
      return here && Object.is(value, h.value) ? h : { folder: current.current, value };
    });
  }, []);
  return [held.folder === folder ? held.value : initial, set];
}
