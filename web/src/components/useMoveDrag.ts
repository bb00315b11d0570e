import { useCallback, useEffect, useMemo, useRef, type DragEvent, type PointerEvent } from 'react';
import type { Segments } from '../api/paths';
import type { Entry } from '../api/storage';

import { ENTRY_DRAG_TYPE } from '../lib/drop';

export const isEntryDrag = (dt: DataTransfer | null): boolean => !!dt && Array.from(dt.types).includes(ENTRY_DRAG_TYPE);

export type MoveDrag = {
  /** Props for a row or tile: dragging it takes the selection if it is selected, else itself. */
  source(entry: Entry): { draggable: true; onDragStart(e: DragEvent): void; onDragEnd(): void; onPointerDown(e: PointerEvent): void };
  /** Props for a place that takes a drop (a folder row, a breadcrumb): `to` is that folder. */
  target(to: Segments): { 'data-drop-to': string; onDragEnter(e: DragEvent): void; onDragOver(e: DragEvent): void; onDragLeave(e: DragEvent): void; onDrop(e: DragEvent): void };
};

/** How long a finger rests on a row before it picks the row up (Android's long-press time). */
export const LONG_PRESS_MS = 500;
/** How far a finger may wander during the press and still be "resting" (beyond it, it is scrolling). */
const SLOP_PX = 8;

/** A finger's press on a row: waiting for the long press, then carrying the rows. */
type TouchPress = {
  id: number;
  entry: Entry;
  x: number;
  y: number;
  timer: number;
  /** Set once the long press picked the rows up. */
  ghost: HTMLElement | null;
  /** The finger went beyond the slop after the pick-up (a drag, not a press-and-let-go). */
  moved: boolean;
  over: HTMLElement | null;
  pickUp: () => void;
  stop: () => void;
};

/**
 * Dragging rows onto a folder (a folder row or tile, a breadcrumb) moves
 * them there through `onMove`, the Move dialog's own move. What is dragged
 * is kept here while the drag lasts (the drag data cannot be read before the
 * drop), so a folder refuses itself and the folder they are already in is no
 * target at all.
 */
export function useMoveDrag(
  folder: Segments,
  sorted: readonly Entry[],
  selected: ReadonlySet<string>,
  onMove: (entries: Entry[], to: Segments) => void,
  onHold?: (entry: Entry, at: { x: number; y: number }) => void,
): MoveDrag {
  const dragged = useRef<Entry[] | null>(null);
  // Read through refs, so the props handed to memoized rows stay the same between renders.
  const state = useRef({ folder, sorted, selected, onMove, onHold });
  state.current = { folder, sorted, selected, onMove, onHold };
  const press = useRef<TouchPress | null>(null);
  // Leaving the folder (or the page) mid-press drops what the finger held.
  const folderKey = folder.join('/');
  useEffect(() => () => press.current?.stop(), [folderKey]);
  // The browser's own long press on a row or tile (its context menu: during the press on Android, at the
  // release on desktop Chromium) is this press: it picks the rows up, and opens no menu of its own or ours.
  useEffect(() => {
    const onContextMenu = (ev: MouseEvent) => {
      if ((ev as Partial<globalThis.PointerEvent>).pointerType !== 'touch' || !(ev.target as Element | null)?.closest?.('[draggable="true"]')) return;
      ev.preventDefault();
      ev.stopPropagation();
      press.current?.pickUp();
    };
    document.addEventListener('contextmenu', onContextMenu, true);
    return () => document.removeEventListener('contextmenu', onContextMenu, true);
  }, []);

  const accepts = useCallback((to: Segments): boolean => {
    const entries = dragged.current;
    const { folder: here } = state.current;
    if (!entries) return false;
    if (to.length === here.length && to.every((s, i) => s === here[i])) return false;
    // Not into one of the folders being moved, nor below it.
    return !entries.some((e) => !e.is_file && to.length > here.length && here.every((s, i) => s === to[i]) && to[here.length] === e.name);
  }, []);

  /**
   * Touch: the browser sends no drag events for a finger, and a finger moving
   * on the list scrolls it. So a finger resting LONG_PRESS_MS on a row picks
   * it up (pointer events); from then on the page's scrolling is held off
   * (a non-passive touchmove listener, added only for the press), a ghost
   * follows the finger, and the folder under it (document.elementFromPoint)
   * is outlined and takes the drop, through the same `onMove` as a mouse drop.
   * A finger that moves before the long press is scrolling and is left alone;
   * the browser's long-press menu and text selection are held off;
   * a press let go where it started opens the row's menu (`onHold`), as a
   * right-click would; let go elsewhere, or a pointercancel, drops nothing.
   */
  const touchStart = useCallback(
    (entry: Entry, e: PointerEvent) => {
      if (e.pointerType !== 'touch' || !e.isPrimary || press.current) return;
      const p: TouchPress = { id: e.pointerId, entry, x: e.clientX, y: e.clientY, timer: 0, ghost: null, moved: false, over: null, pickUp: () => undefined, stop: () => undefined };
      const highlight = (el: HTMLElement | null) => {
        if (p.over === el) return;
        p.over?.classList.remove('drop-target');
        p.over = el;
        el?.classList.add('drop-target');
      };
      const targetAt = (x: number, y: number): { el: HTMLElement; to: Segments } | null => {
        const el = document.elementFromPoint(x, y)?.closest<HTMLElement>('[data-drop-to]');
        if (!el) return null;
        const to = JSON.parse(el.dataset.dropTo ?? '[]') as Segments;
        return accepts(to) ? { el, to } : null;
      };
      const place = (x: number, y: number) => {
        if (p.ghost) p.ghost.style.transform = `translate(${x}px, ${y}px)`;
      };
      const pickUp = () => {
        const { sorted: all, selected: sel } = state.current;
        const entries = sel.has(entry.name) ? all.filter((x) => sel.has(x.name)) : [entry];
        dragged.current = entries;
        const ghost = document.createElement('div');
        ghost.className = 'touch-drag-ghost';
        ghost.setAttribute('aria-hidden', 'true');
        ghost.textContent = entries.length === 1 ? (entries[0]?.name ?? '') : `${entries.length} items`;
        document.body.appendChild(ghost);
        p.ghost = ghost;
        place(p.x, p.y);
        document.body.classList.add('touch-dragging');
      };
      const onMovePointer = (ev: globalThis.PointerEvent) => {
        if (ev.pointerId !== p.id) return;
        const far = Math.hypot(ev.clientX - p.x, ev.clientY - p.y) > SLOP_PX;
        if (!p.ghost) {
          if (far) stop(); // scrolling: not ours
          return;
        }
        if (far) p.moved = true;
        place(ev.clientX, ev.clientY);
        highlight(targetAt(ev.clientX, ev.clientY)?.el ?? null);
      };
      const onUp = (ev: globalThis.PointerEvent) => {
        if (ev.pointerId !== p.id) return;
        const entries = dragged.current;
        const target = p.ghost ? targetAt(ev.clientX, ev.clientY) : null;
        const hold = p.ghost && !p.moved;
        stop();
        if (entries && target) state.current.onMove(entries, target.to);
        else if (hold) state.current.onHold?.(entry, { x: ev.clientX, y: ev.clientY });
      };
      const onCancel = (ev: globalThis.PointerEvent) => {
        if (ev.pointerId === p.id) stop();
      };
      // Once picked up, the finger drags the rows, not the page.
      const onTouchMove = (ev: TouchEvent) => {
        if (p.ghost && ev.cancelable) ev.preventDefault();
      };
      const onSelectStart = (ev: Event) => ev.preventDefault();
      // After a pick-up, the lift is no tap: no mousedown, no click on whatever is now under the finger
      // (the menu just opened there, or the folder dropped on). Touch events come after pointer events, so this outlives stop().
      const onTouchEnd = (ev: TouchEvent) => {
        if (p.ghost && ev.cancelable) ev.preventDefault();
        document.removeEventListener('touchend', onTouchEnd, true);
        document.removeEventListener('touchcancel', onTouchEnd, true);
      };
      const stop = () => {
        window.clearTimeout(p.timer);
        highlight(null);
        p.ghost?.remove();
        document.body.classList.remove('touch-dragging');
        if (p.ghost) dragged.current = null;
        document.removeEventListener('pointermove', onMovePointer);
        document.removeEventListener('pointerup', onUp);
        document.removeEventListener('pointercancel', onCancel);
        document.removeEventListener('touchmove', onTouchMove);
        document.removeEventListener('selectstart', onSelectStart, true);
        if (press.current === p) press.current = null;
      };
      p.stop = stop;
      p.pickUp = () => {
        window.clearTimeout(p.timer);
        if (!p.ghost) pickUp();
      };
      p.timer = window.setTimeout(pickUp, LONG_PRESS_MS);
      document.addEventListener('pointermove', onMovePointer);
      document.addEventListener('pointerup', onUp);
      document.addEventListener('pointercancel', onCancel);
      document.addEventListener('touchmove', onTouchMove, { passive: false });
      document.addEventListener('selectstart', onSelectStart, true);
      document.addEventListener('touchend', onTouchEnd, { capture: true, passive: false });
      document.addEventListener('touchcancel', onTouchEnd, true);
      press.current = p;
    },
    [accepts],
  );

  return useMemo<MoveDrag>(() => {
    const mark = (e: DragEvent, on: boolean) => (e.currentTarget as HTMLElement).classList.toggle('drop-target', on);
    return {
      source: (entry) => ({
        onPointerDown: (e) => touchStart(entry, e),
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
        // Where a finger's drop finds its folder (pointer events have no drop target of their own).
        'data-drop-to': JSON.stringify(to),
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
  }, [accepts, touchStart]);
}
