import { useLayoutEffect, useRef, useState } from 'react';
import type { Entry } from '../api/storage';
import { isEditable } from '../lib/file-kind';
import { Icon, type IconName } from './icons';
import { useMenuKeys } from './useMenuKeys';
import { t, type MessageKey } from '../lib/i18n';

export type MenuAction = 'open' | 'edit' | 'download' | 'zip' | 'details' | 'versions' | 'share' | 'rename' | 'move' | 'copy' | 'delete';

const ITEMS: { action: MenuAction; label: MessageKey; icon: IconName; fileOnly?: boolean; folderOnly?: boolean; editableOnly?: boolean; danger?: boolean }[] = [
  { action: 'open', label: 'action.open', icon: 'open' },
  { action: 'edit', label: 'action.edit', icon: 'pencil', editableOnly: true },
  { action: 'download', label: 'action.download', icon: 'download', fileOnly: true },
  { action: 'zip', label: 'action.zip', icon: 'archive', folderOnly: true },
  { action: 'details', label: 'action.details', icon: 'info' },
  // Only offered when the server keeps versions (--versions): Browser's `allowed`.
  { action: 'versions', label: 'action.versions', icon: 'retry', fileOnly: true },
  { action: 'share', label: 'action.shareMenu', icon: 'link' },
  { action: 'rename', label: 'action.rename', icon: 'pencil' },
  { action: 'move', label: 'action.move', icon: 'move' },
  { action: 'copy', label: 'action.copy', icon: 'copy' },
  { action: 'delete', label: 'action.delete', icon: 'trash', danger: true },
];

/** The actions menu of one entry (⋯ button, right click, Shift+F10): arrow keys move, Escape closes. */
export function RowMenu({ entry, at, onAction, onClose, allowed = () => true }: { entry: Entry; at: { x: number; y: number }; onAction: (a: MenuAction) => void; onClose: () => void; allowed?: (a: MenuAction) => boolean }) {
  const ref = useRef<HTMLDivElement>(null);
  const [pos, setPos] = useState({ left: at.x, top: at.y });
  const items = ITEMS.filter((i) => (entry.is_file ? !i.folderOnly : !i.fileOnly) && (!i.editableOnly || isEditable(entry)) && allowed(i.action));

  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return;
    const r = el.getBoundingClientRect();
    setPos({ left: Math.max(8, Math.min(at.x - r.width, innerWidth - r.width - 8)), top: Math.max(8, Math.min(at.y, innerHeight - r.height - 8)) });
    el.querySelector<HTMLElement>('[role="menuitem"]')?.focus();
  }, [at]);

  const onKeyDown = useMenuKeys(ref, onClose);

  return (
    <div ref={ref} className="menu" role="menu" aria-label={t('row.actionsFor', { name: entry.name })} style={{ left: pos.left, top: pos.top }} onKeyDown={onKeyDown}>
      {items.map((item) => (
        <button
          key={item.action}
          type="button"
          role="menuitem"
          tabIndex={-1}
          className={`menu-item${item.danger ? ' danger-text' : ''}`}
          onClick={() => {
            onClose();
            onAction(item.action);
          }}
        >
          <Icon name={item.icon} size={18} />
          {t(item.label)}
        </button>
      ))}
    </div>
  );
}
