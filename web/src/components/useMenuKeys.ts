import { useCallback, useEffect, type KeyboardEvent, type RefObject } from 'react';

/**
 * What every menu of the app does (the account menu, a user's ⋯ menu, a
 * row's actions menu): ↑/↓ move round the items, Home/End go to the ends,
 * Escape or Tab close it (giving the focus back to the button it hangs from,
 * if any), and a press outside it or a resize closes it. Returns the
 * keydown handler for the menu element.
 */
export function useMenuKeys(ref: RefObject<HTMLElement | null>, onClose: () => void, anchor?: HTMLElement): (e: KeyboardEvent) => void {
  useEffect(() => {
    const close = (e: Event) => {
      const t = e.target as Node;
      if (!ref.current?.contains(t) && !anchor?.contains(t)) onClose();
    };
    window.addEventListener('pointerdown', close, true);
    window.addEventListener('resize', onClose);
    return () => {
      window.removeEventListener('pointerdown', close, true);
      window.removeEventListener('resize', onClose);
    };
  }, [ref, anchor, onClose]);

  return useCallback(
    (e: KeyboardEvent) => {
      const items = Array.from(ref.current?.querySelectorAll<HTMLElement>('[role="menuitem"]') ?? []);
      const i = items.indexOf(document.activeElement as HTMLElement);
      const go = (n: number) => {
        e.preventDefault();
        items[(n + items.length) % items.length]?.focus();
      };
      if (e.key === 'ArrowDown') go(i + 1);
      else if (e.key === 'ArrowUp') go(i - 1);
      else if (e.key === 'Home') go(0);
      else if (e.key === 'End') go(items.length - 1);
      else if (e.key === 'Escape' || e.key === 'Tab') {
        e.preventDefault();
        e.stopPropagation();
        onClose();
        anchor?.focus();
      }
    },
    [ref, anchor, onClose],
  );
}
