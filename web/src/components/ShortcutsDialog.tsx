import { useEffect } from 'react';
import { Dialog } from './Dialog';
import { t, type MessageKey } from '../lib/i18n';

export const SHORTCUTS: [MessageKey, MessageKey][] = [
  ['shortcutKey.arrows', 'shortcut.moveSelect'],
  ['shortcutKey.shiftArrows', 'shortcut.extend'],
  ['shortcutKey.ctrlArrows', 'shortcut.moveOnly'],
  ['shortcutKey.space', 'shortcut.space'],
  ['shortcutKey.all', 'shortcut.all'],
  ['shortcutKey.enter', 'shortcut.enter'],
  ['shortcutKey.delete', 'shortcut.delete'],
  ['shortcutKey.f2', 'action.rename'],
  ['shortcutKey.menu', 'shortcut.menu'],
  ['shortcutKey.parent', 'shortcut.parent'],
  ['shortcutKey.leftRight', 'shortcut.preview'],
  ['shortcutKey.escape', 'shortcut.escape'],
  ['shortcutKey.slash', 'shortcut.search'],
  ['shortcutKey.question', 'shortcut.help'],
];

export function ShortcutsDialog({ onClose }: { onClose: () => void }) {
  return (
    <Dialog title={t('nav.shortcuts')} onClose={onClose}>
      <dl className="shortcuts">
        {SHORTCUTS.map(([k, v]) => (
          <div key={k}>
            <dt>
              <kbd>{t(k)}</kbd>
            </dt>
            <dd>{t(v)}</dd>
          </div>
        ))}
      </dl>
    </Dialog>
  );
}

/**
 * The page-wide "?" key that shows the shortcuts, unless `blocked` (a dialog
 * is already open) or the user is typing it into a field.
 */
export function useShortcutsKey(blocked: boolean, show: () => void) {
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== '?' || blocked || (e.target as HTMLElement).closest('input, textarea, select')) return;
      e.preventDefault();
      show();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [blocked, show]);
}
