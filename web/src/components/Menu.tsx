import { useCallback, useEffect, useLayoutEffect, useRef, useState } from 'react';
import { Icon, type IconName } from './icons';
import { useMenuKeys } from './useMenuKeys';

export type MenuItem = { key: string; label: string; icon: IconName; danger?: boolean; disabled?: boolean; hint?: string; onSelect: () => void };

/**
 * A menu opened from a button (account menu, a user's actions): placed under
 * the button and kept on screen, the first item focused, arrow keys / Home /
 * End move, Escape or Tab closes and gives the focus back to the button.
 */
export function Menu({ anchor, label, items, onClose }: { anchor: HTMLElement; label: string; items: MenuItem[]; onClose: () => void }) {
  const ref = useRef<HTMLDivElement>(null);
  const [pos, setPos] = useState<{ left: number; top: number } | null>(null);

  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return;
    const a = anchor.getBoundingClientRect();
    const r = el.getBoundingClientRect();
    const below = a.bottom + 4;
    setPos({
      left: Math.max(8, Math.min(a.right - r.width, innerWidth - r.width - 8)),
      top: below + r.height > innerHeight - 8 ? Math.max(8, a.top - r.height - 4) : below,
    });
  }, [anchor]);

  // The first item takes the focus once the menu is placed (a hidden element cannot be focused).
  const placed = pos !== null;
  useEffect(() => {
    if (placed) ref.current?.querySelector<HTMLElement>('[role="menuitem"]:not([aria-disabled="true"])')?.focus();
  }, [placed]);

  const onKeyDown = useMenuKeys(ref, onClose, anchor);

  return (
    <div ref={ref} className="menu" role="menu" aria-label={label} style={pos ? { left: pos.left, top: pos.top } : { visibility: 'hidden', left: 0, top: 0 }} onKeyDown={onKeyDown}>
      {items.map((item) => (
        <button
          key={item.key}
          type="button"
          role="menuitem"
          tabIndex={-1}
          aria-disabled={item.disabled ? true : undefined}
          title={item.hint}
          className={`menu-item${item.danger ? ' danger-text' : ''}`}
          onClick={() => {
            if (item.disabled) return;
            onClose();
            item.onSelect();
          }}
        >
          <Icon name={item.icon} size={18} />
          {item.label}
        </button>
      ))}
    </div>
  );
}

/** State for a button that opens a Menu: the element it hangs from while open. */
export function useMenuAnchor() {
  const [anchor, setAnchor] = useState<HTMLElement | null>(null);
  const toggle = useCallback((el: HTMLElement) => setAnchor((a) => (a ? null : el)), []);
  const close = useCallback(() => setAnchor(null), []);
  return { anchor, toggle, close };
}
