import { useCallback, useMemo, useRef, type DragEvent } from 'react';
import type { Segments } from '../api/paths';
import type { Entry } from '../api/storage';

import { ENTRY_DRAG_TYPE } from '../lib/drop';

export const isEntryDrag = (dt: DataTransfer | null): boolean => !!dt && Array.from(dt.types).includes(ENTRY_DRAG_TYPE);

export type MoveDrag = {
  /** Props for a row or tile: dragging it takes the selection if it is selected, else itself. */
  source(entry: Entry): { draggable: true; onDragStart(e: DragEvent): void; onDragEnd(): void };
  /** Props for a place that takes a drop (a folder row, a breadcrumb): `to` is that folder. */
  target(to: Segments): { onDragEnter(e: DragEvent): void; onDragOver(e: DragEvent): void; onDragLeave(e: DragEvent): void; onDrop(e: DragEvent): void };
};

/**
 * Dragging rows onto a folder (a folder row or tile, a breadcrumb) moves
 * them there through `onMove`, the Move dialog's own move. What is dragged
 * is kept here while the drag lasts (the drag data cannot be read before the
 * drop), so a folder refuses itself and the folder they are already in is no
 * target at all.
 */
export function useMoveDrag(folder: Segments, sorted: readonly Entry[], selected: ReadonlySet<string>, onMove: (entries: Entry[], to: Segments) => void): MoveDrag {
  const dragged = useRef<Entry[] | null>(null);
  // Read through refs, so the props handed to memoized rows stay the same between renders.
  const state = useRef({ folder, sorted, selected, onMove });
  state.current = { folder, sorted, selected, onMove };

  const accepts = useCallback((to: Segments): boolean => {
    const entries = dragged.current;
    const { folder: here } = state.current;
    if (!entries) return false;
    if (to.length === here.length && to.every((s, i) => s === here[i])) return false;
    // Not into one of the folders being moved, nor below it.
    return !entries.some((e) => !e.is_file && to.length > here.length && here.every((s, i) => s === to[i]) && to[here.length] === e.name);
  }, []);

  return useMemo<MoveDrag>(() => {
    const mark = (e: DragEvent, on: boolean) => (e.currentTarget as HTMLElement).classList.toggle('drop-target', on);
    return {
      source: (entry) => ({
        draggable: true,
        onDragStart(e) {
          const { sorted: all, selected: sel } = state.current;
          const entries = sel.has(entry.name) ? all.filter((x) => sel.has(x.name)) : [entry];
          dragged.current = entries;
          e.dataTransfer.effectAllowed = 'move';
          e.dataTransfer.setData(ENTRY_DRAG_TYPE, JSON.stringify(entries.map((x) => x.name)));
          e.dataTransfer.setData('text/plain', entries.map((x) => x.name).join('\n'));
        },
        onDragEnd() {
          dragged.current = null;
          for (const el of Array.from(document.querySelectorAll('.drop-target'))) el.classList.remove('drop-target');
        },
      }),
      target: (to) => ({
        onDragEnter(e) {
          if (isEntryDrag(e.dataTransfer) && accepts(to)) {
            e.preventDefault();
            mark(e, true);
          }
        },
        onDragOver(e) {
          if (!isEntryDrag(e.dataTransfer)) return;
          if (!accepts(to)) {
            e.dataTransfer.dropEffect = 'none';
            return;
          }
          e.preventDefault();
          e.dataTransfer.dropEffect = 'move';
        },
        onDragLeave(e) {
          if (!(e.currentTarget as HTMLElement).contains(e.relatedTarget as Node | null)) mark(e, false);
        },
        onDrop(e) {
          mark(e, false);
          const entries = dragged.current;
          if (!isEntryDrag(e.dataTransfer) || !entries || !accepts(to)) return;
          e.preventDefault();
          e.stopPropagation();
          dragged.current = null;
          state.current.onMove(entries, to);
        },
      }),
    };
  }, [accepts]);
}
